#include "cli/offload_options.hpp"

#include "cli/common.hpp"
#include "cli/report.hpp"
#include "render/chunks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <sstream>

namespace pp::cli {
namespace {

// A number >= 0 (parse_rational: decimals or p/q within the input limits, README "Input limits").
Rational parse_value(const std::string& text, const std::string& flag, const std::string& what) {
    const auto value = parse_rational(text);
    if (!value || *value < Rational(0))
        throw UsageError(fmt::format("{} expects {}: a number >= 0 such as 2, 0.5 or 3/2, within the input limits "
                                     "(README, \"Input limits\"), got '{}'",
                                     flag, what, text));
    return *value;
}

// The comma-separated items of `text`; an empty item (",," or a trailing comma) is refused.
std::vector<std::string> items_of(const std::string& text, const std::string& flag) {
    std::vector<std::string> items;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) items.push_back(item);
    if (items.empty() || text.back() == ',' || std::find(items.begin(), items.end(), "") != items.end())
        throw UsageError(fmt::format("{}: an empty item in '{}'", flag, text));
    return items;
}

// "T" (both ways) or "offload=T,reload=T" (both keys, each once).
void parse_host_link(const std::string& text, OffloadPolicy& policy) {
    const std::string what = "the time to move one unit of activation memory";
    if (text.find('=') == std::string::npos) {
        policy.offload_time = policy.reload_time = parse_value(text, "--host-link", what);
        return;
    }
    bool seen[2] = {false, false};
    for (const std::string& item : items_of(text, "--host-link")) {
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq);
        if (eq == std::string::npos || (key != "offload" && key != "reload"))
            throw UsageError(fmt::format("--host-link: expected offload=T and reload=T, got '{}'", item));
        const int k = key == "offload" ? 0 : 1;
        if (seen[k]) throw UsageError(fmt::format("--host-link: {} given twice in '{}'", key, text));
        seen[k] = true;
        (k == 0 ? policy.offload_time : policy.reload_time) = parse_value(item.substr(eq + 1), "--host-link " + key, what);
    }
    if (!seen[0] || !seen[1])
        throw UsageError(fmt::format("--host-link: give both offload=T and reload=T (or one T for both ways), got '{}'", text));
}

// "0" or "0,1": chunk numbers, each once.
std::vector<int> parse_chunks(const std::string& text) {
    std::vector<int> chunks;
    for (const std::string& item : items_of(text, "--offload-chunks")) {
        const auto value = parse_rational(item);
        if (!value || value->denominator() != 1 || *value < Rational(0) || *value > Rational(INT_MAX))
            throw UsageError(fmt::format("--offload-chunks expects chunk numbers 0, 1, ..., got '{}'", item));
        const int c = static_cast<int>(value->numerator().to_int64());
        if (std::find(chunks.begin(), chunks.end(), c) != chunks.end())
            throw UsageError(fmt::format("--offload-chunks: chunk {} given twice", c));
        chunks.push_back(c);
    }
    return chunks;
}

// Calls visit(rank, slot, global id) for every slot, rank after rank (the timing's numbering).
template <class Visit>
void each_slot(const Schedule& schedule, Visit&& visit) {
    size_t global = 0;
    for (size_t r = 0; r < schedule.ranks.size(); ++r)
        for (const Slot& slot : schedule.ranks[r]) visit(r, slot, global++);
}

std::string choice_text(const OffloadChoice& c) {
    if (c.status == ChoiceStatus::Infeasible)
        return fmt::format("offload choice: INFEASIBLE: {}; below, every one of the {} eligible stashes moved\n", c.reason, c.eligible);
    std::vector<std::string> names;  // the first 24 (the JSON lists all)
    for (size_t k = 0; k < c.moved.size() && k < 24; ++k) names.push_back(format_op(c.moved[k]));
    if (c.moved.size() > 24) names.push_back(fmt::format("... ({} more; --json lists all)", c.moved.size() - 24));
    return fmt::format("offload choice: {}: {} of {} eligible stashes move{}{}; makespan {}, lower bound {} ({}; {} Z3 "
                       "quer{})\n",
                       choice_status_name(c.status), c.moved.size(), c.eligible, names.empty() ? "" : ": ",
                       fmt::join(names, " "), format_rational(c.makespan), format_rational(c.lower_bound), c.reason,
                       c.queries, c.queries == 1 ? "y" : "ies");
}

std::string percent(const Rational& part, const Rational& whole) {
    if (whole == Rational(0)) return "";
    return fmt::format(" ({:+.2f} %)", 100.0 * to_double(part / whole));
}

}  // namespace

void OffloadInput::add_options(CLI::App& app, bool with_limits) {
    app.add_option("--offload", fraction,
                   "move this fraction (0..1, e.g. 1/2) of every stash whose backward is more than --reload-lookahead "
                   "slots after its forward to host memory, over the rank's host link (PipeOffload)");
    app.add_option("--host-link", host_link,
                   "with --offload: time to move one unit of activation memory (a whole stash at the default sizes) over "
                   "the host link, both ways (T) or per direction (offload=T,reload=T), in cost units");
    app.add_option("--reload-lookahead", lookahead,
                   "with --offload: a reload starts once the slot this many places before its backward has started "
                   "(default 1)")
        ->check(CLI::Range(1, INT_MAX));
    app.add_option("--offload-chunks", chunks,
                   "with --offload: move the stashes of these model chunks only (a rank's stages numbered from 0 in "
                   "pipeline order; on the loop map chunk 0 holds the first layers), e.g. 0 or 0,1");
    app.add_flag("--host-link-duplex", duplex, "with --offload: one host-link stream per direction (default: one shared)");
    const std::string group = with_limits ? "Options" : "";  // "": registered (to be refused with a reason), not listed
    app.add_option("--host-memory", host_memory,
                   "with --offload: host memory per rank in activation units; a host peak above it is a violation")
        ->group(group);
    app.add_flag("--choose-offloads", choose,
                 "with --offload and --memory-limit: choose which eligible stashes move, for the least makespan that keeps "
                 "the limit (Z3: OPTIMAL with proof, or FEASIBLE with its gap)")
        ->group(group);
    app.add_option("--time-limit", time_limit, "with --choose-offloads: seconds for Z3 (default 60)")
        ->check(CLI::PositiveNumber)
        ->group(group);
}

OffloadPolicy OffloadInput::policy() const {
    if (!fraction) {
        if (host_link || host_memory || duplex || lookahead || chunks || choose || time_limit)
            throw UsageError("--host-link, --host-memory, --host-link-duplex, --offload-chunks, --reload-lookahead, "
                             "--choose-offloads and its --time-limit need --offload");
        return {};
    }
    if (!host_link) throw UsageError("--offload needs --host-link (the time to move one unit of activation memory to the host)");
    OffloadPolicy policy;
    const auto share = parse_rational(*fraction);
    if (!share || *share < Rational(0) || *share > Rational(1))
        throw UsageError("--offload expects the fraction of each stash to move, between 0 and 1 (e.g. 1, 1/2 or 0.25), got '" +
                         *fraction + "'");
    policy.fraction = *share;
    parse_host_link(*host_link, policy);
    policy.lookahead = lookahead.value_or(1);
    policy.duplex = duplex;
    if (chunks) policy.chunks = parse_chunks(*chunks);
    if (host_memory) policy.host_memory = parse_value(*host_memory, "--host-memory", "activation units per rank");
    if (time_limit && !choose) throw UsageError("--time-limit is for --choose-offloads");
    return policy;
}

OffloadReport offload_report(const Schedule& schedule, const Costs& costs, const ActivationModel& sizes,
                             const OffloadPolicy& policy, const Rational& makespan_without,
                             std::vector<Rational> peak_without, const std::optional<Rational>& device_limit) {
    OffloadTiming timing;
    try {
        timing = time_with_offload(schedule, costs, sizes, policy);
    } catch (const OffloadError& e) {  // a chunk the placement does not have, or sequence segments
        throw UsageError(e.what());
    }
    OffloadReport report{policy, std::move(timing), makespan_without, std::move(peak_without), device_limit, {}};
    for (size_t r = 0; r < report.timing.ranks.size(); ++r) {
        const RankOffload& rank = report.timing.ranks[r];
        auto add = [&](ViolationKind kind, std::string message) {
            Violation v;
            v.kind = kind;
            v.rank = static_cast<int>(r);
            v.message = std::move(message);
            report.violations.push_back(std::move(v));
        };
        if (device_limit && rank.device_peak > *device_limit)
            add(ViolationKind::MemoryLimit,
                fmt::format("rank {}: resident activations with offload peak at {}, above the memory limit {}", r,
                            format_rational(rank.device_peak), format_rational(*device_limit)));
        if (policy.host_memory && rank.host_peak > *policy.host_memory)
            add(ViolationKind::HostMemoryLimit, fmt::format("rank {}: offloaded activations peak at {} in host memory, above --host-memory {}",
                                                            r, format_rational(rank.host_peak), format_rational(*policy.host_memory)));
    }
    return report;
}

OffloadReport offload_report(const OffloadInput& input, const Schedule& schedule, const Costs& costs,
                             const ActivationModel& sizes, const Rational& makespan_without,
                             std::vector<Rational> peak_without, const std::optional<Rational>& device_limit) {
    OffloadPolicy policy = input.policy();
    if (!input.choose) return offload_report(schedule, costs, sizes, policy, makespan_without, std::move(peak_without), device_limit);
    if (!device_limit) throw UsageError("--choose-offloads needs --memory-limit (the device cap the choice keeps)");
    OffloadChoice choice;
    try {
        choice = choose_offloads(schedule, costs, sizes, policy, *device_limit, input.time_limit.value_or(OffloadInput::kChoiceSeconds));
    } catch (const OffloadError& e) {
        throw UsageError(e.what());
    }
    if (choice.status == ChoiceStatus::Unknown)
        throw UndecidedError("--choose-offloads: " + choice.reason + " (give a larger --time-limit)");
    if (choice.status != ChoiceStatus::Infeasible) policy.only = choice.moved;  // else every eligible stash, as given
    OffloadReport report = offload_report(schedule, costs, sizes, policy, makespan_without, std::move(peak_without), device_limit);
    report.choice = std::move(choice);
    return report;
}

std::optional<OffloadReport> offload_for_timed(const OffloadInput& input, const Schedule& schedule, const Costs& costs,
                                               const ActivationModel& sizes, Timed& timed,
                                               const std::optional<Rational>& device_limit) {
    if (!input.active() || !timed.valid()) return std::nullopt;
    std::vector<Rational> peaks;
    for (const RankTiming& rank : timed.sim.ranks) peaks.push_back(rank.peak_activations);
    OffloadReport report = offload_report(input, schedule, costs, sizes, timed.sim.scale.to_units(timed.sim.makespan),
                                          std::move(peaks), device_limit);
    for (const Violation& v : report.violations) timed.verdict.violations.push_back(v);
    return report;
}

void check_table_offload_flags(const OffloadInput& input, const std::string& comm_model) {
    if (!input.active()) {
        (void)input.policy();  // refuses the other offload flags without --offload
        return;
    }
    if (input.choose)
        throw UsageError("--choose-offloads needs a device cap per schedule: use simulate --memory-limit X "
                         "--choose-offloads on each (compare and report time the policy given)");
    if (input.host_memory)
        throw UsageError("--host-memory is a limit to check: use verify --offload ... --host-memory X (compare and report "
                         "show each row's host peak)");
    if (comm_model != "dataflow") throw UsageError("--offload times the dataflow model only");
}

std::optional<OffloadReport> offload_for_row(const OffloadInput& input, const Schedule& schedule, const CompareRow& row,
                                             const ActivationModel& sizes) {
    if (!input.active()) return std::nullopt;
    try {
        return offload_report(input, schedule, row.stage_costs, scaled_sizes(sizes, row.stage_share), row.makespan,
                              row.peak_activations, std::nullopt);
    } catch (const UsageError& e) {
        throw UsageError(row.name + ": " + e.what());  // which row the offload does not fit
    }
}

namespace {

// "a" or "a..b" over the ranks.
std::string spread(std::vector<Rational> values) {
    if (values.empty()) return "-";
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return *lo == *hi ? format_rational(*lo) : format_rational(*lo) + ".." + format_rational(*hi);
}

}  // namespace

std::string offload_cell(const OffloadReport& report, const CompareRow& row) {
    const OffloadTiming& t = report.timing;
    std::vector<Rational> device, host;
    for (const RankOffload& rank : t.ranks) device.push_back(rank.device_peak), host.push_back(rank.host_peak);
    const Rational makespan = t.scale.to_units(t.makespan);
    return fmt::format("makespan {}{}; device peak {} (without: {}); host peak {}", format_rational(makespan),
                       percent(makespan - row.makespan, row.makespan), spread(device), spread(row.peak_activations),
                       spread(host));
}

std::string offload_summary(const OffloadReport& report) {
    const OffloadPolicy& p = report.policy;
    return fmt::format("offload {} over a link of {}/{} per unit: host peak {}, makespan {} without", format_rational(p.fraction),
                       format_rational(p.offload_time), format_rational(p.reload_time),
                       format_rational(report.timing.host_peak()), format_rational(report.makespan_without));
}

std::string offload_text(const Schedule& schedule, const OffloadReport& report, bool ops) {
    const OffloadPolicy& p = report.policy;
    const OffloadTiming& t = report.timing;
    std::string chunks = "every chunk";
    if (!p.chunks.empty()) {
        chunks = "chunk";
        for (size_t i = 0; i < p.chunks.size(); ++i) chunks += (i ? "," : " ") + std::to_string(p.chunks[i]);
    }
    std::string out = fmt::format(
        "offload: {} of each stash of {} whose backward is more than {} slot(s) after its forward; host link {} (offload) "
        "and {} (reload) per unit of activation memory, {}\n",
        format_rational(p.fraction), chunks, p.lookahead, format_rational(p.offload_time), format_rational(p.reload_time),
        p.duplex ? "one stream per direction" : "one stream shared by both directions");
    if (report.choice) out += choice_text(*report.choice);
    const Rational makespan = t.scale.to_units(t.makespan);
    out += fmt::format("makespan with offload: {} (without: {}, {}{})\n", format_rational(makespan),
                       format_rational(report.makespan_without),
                       (makespan >= report.makespan_without ? "+" : "") + format_rational(makespan - report.makespan_without),
                       percent(makespan - report.makespan_without, report.makespan_without));
    out += "rank  offloaded  kept  device peak  without  host peak  link busy\n";
    for (size_t r = 0; r < t.ranks.size(); ++r) {
        const RankOffload& rank = t.ranks[r];
        out += fmt::format("{:<5} {:<10} {:<5} {:<12} {:<8} {:<10} {}\n", r, rank.offloaded, rank.kept,
                           format_rational(rank.device_peak), format_rational(report.peak_without.at(r)),
                           format_rational(rank.host_peak), t.scale.format(rank.link_busy));
    }
    if (!ops) return out;
    out += "with offload, every slot (rank, slot, start, end) and every transfer (rank, direction, stash, amount, start, end):\n";
    each_slot(schedule, [&](size_t r, const Slot& slot, size_t s) {
        out += fmt::format("rank {} {} {} {}\n", r, format_slot(slot), t.scale.format(t.start[s]), t.scale.format(t.end[s]));
    });
    for (const Transfer& x : t.transfers)
        out += fmt::format("rank {} {} {} {} {} {}\n", x.rank, x.to_host ? "offload" : "reload", format_op(x.forward),
                           format_rational(x.amount), t.scale.format(x.start), t.scale.format(x.end));
    return out;
}

nlohmann::json offload_json(const Schedule& schedule, const OffloadReport& report, bool ops) {
    const OffloadPolicy& p = report.policy;
    const OffloadTiming& t = report.timing;
    nlohmann::json j = {{"lookahead", p.lookahead}, {"duplex", p.duplex}, {"selected_chunks", p.chunks}};
    put_number(j, "fraction", p.fraction);
    put_number(j, "offload_time", p.offload_time);
    put_number(j, "reload_time", p.reload_time);
    if (p.host_memory) put_number(j, "host_memory", *p.host_memory);
    else j["host_memory"] = nullptr;
    put_number(j, "makespan", t.scale.to_units(t.makespan));
    put_number(j, "makespan_without", report.makespan_without);
    if (report.choice) {
        const OffloadChoice& c = *report.choice;
        nlohmann::json choice = {{"status", c.status == ChoiceStatus::Optimal      ? "optimal"
                                            : c.status == ChoiceStatus::Feasible   ? "feasible"
                                                                                   : "infeasible"},
                                 {"eligible", c.eligible},
                                 {"queries", c.queries},
                                 {"reason", c.reason},
                                 {"moved", nlohmann::json::array()}};
        for (const Op& op : c.moved) choice["moved"].push_back(format_op(op));
        put_number(choice, "lower_bound", c.lower_bound);
        j["choice"] = std::move(choice);
    }
    put_number(j, "device_peak", t.device_peak());
    put_number(j, "host_peak", t.host_peak());
    for (size_t r = 0; r < t.ranks.size(); ++r) {
        const RankOffload& rank = t.ranks[r];
        nlohmann::json one = {{"rank", r}, {"offloaded", rank.offloaded}, {"kept", rank.kept}};
        put_number(one, "device_peak", rank.device_peak);
        put_number(one, "peak_activations", report.peak_without.at(r));
        put_number(one, "host_peak", rank.host_peak);
        put_number(one, "link_busy", t.scale.to_units(rank.link_busy));
        j["per_rank"].push_back(std::move(one));
    }
    if (!ops) return j;
    j["slots"] = nlohmann::json::array();
    each_slot(schedule, [&](size_t r, const Slot& slot, size_t s) {
        nlohmann::json one = {{"rank", r}, {"slot", format_slot(slot)}};
        put_number(one, "start", t.scale.to_units(t.start[s]));
        put_number(one, "end", t.scale.to_units(t.end[s]));
        j["slots"].push_back(std::move(one));
    });
    j["transfers"] = nlohmann::json::array();
    for (const Transfer& x : t.transfers) {
        nlohmann::json one = {{"rank", x.rank}, {"direction", x.to_host ? "offload" : "reload"}, {"stash", format_op(x.forward)}};
        put_number(one, "amount", x.amount);
        put_number(one, "start", t.scale.to_units(x.start));
        put_number(one, "end", t.scale.to_units(x.end));
        j["transfers"].push_back(std::move(one));
    }
    return j;
}

Simulation offload_simulation(const Schedule& schedule, const OffloadReport& report) {
    const OffloadTiming& t = report.timing;
    Simulation sim;
    sim.scale = t.scale;
    sim.start = t.start;
    sim.end = t.end;
    sim.makespan = t.makespan;
    sim.ranks.resize(schedule.ranks.size());
    each_slot(schedule, [&](size_t r, const Slot&, size_t s) {
        RankTiming& rank = sim.ranks[r];
        rank.first_start = rank.busy == 0 ? t.start[s] : std::min(rank.first_start, t.start[s]);
        rank.busy += t.end[s] - t.start[s];
        rank.last_end = std::max(rank.last_end, t.end[s]);
        ++sim.ops;
    });
    for (size_t r = 0; r < sim.ranks.size(); ++r) {
        sim.ranks[r].idle = t.makespan - sim.ranks[r].busy;
        sim.ranks[r].peak_activations = t.ranks[r].device_peak;
    }
    return sim;
}

std::vector<std::vector<LinkBox>> offload_link_rows(const Schedule& schedule, const OffloadReport& report) {
    std::vector<ChunkNumbers> chunks;
    for (const auto& slots : schedule.ranks) chunks.push_back(chunk_numbers(slots));
    std::vector<std::vector<LinkBox>> rows(schedule.ranks.size());
    for (const Transfer& x : report.timing.transfers) {
        const bool odd = chunks[x.rank].at({x.forward.pipeline, x.forward.stage}) % 2 == 1;
        const char letter = x.to_host ? (odd ? 'o' : 'O') : (odd ? 'r' : 'R');
        rows[x.rank].push_back({x.start, x.end, fmt::format("{}{}", letter, x.forward.microbatch), x.to_host, format_op(x.forward)});
    }
    return rows;
}

}  // namespace pp::cli
