#include "formats/json_schedule.hpp"

#include "formats/chunks_json.hpp"
#include "formats/input_error.hpp"
#include "formats/json_stream.hpp"
#include "formats/text_lines.hpp"
#include "model/size_budget.hpp"

#include <algorithm>
#include <fmt/format.h>

#include <limits>
#include <set>
#include <sstream>

namespace pp {

using nlohmann::json;

nlohmann::ordered_json op_to_json(const Op& op) {
    return {{"kind", std::string(1, kind_letter(op.kind))},
            {"pipeline", static_cast<int>(op.pipeline)},
            {"stage", static_cast<int>(op.stage)},
            {"microbatch", op.microbatch}};
}

namespace {

nlohmann::ordered_json costs_to_json(const OpCosts& c) {
    nlohmann::ordered_json j = {{"F", format_rational(c.F)}, {"I", format_rational(c.I)}, {"W", format_rational(c.W)}};
    if (c.B) j["B"] = format_rational(*c.B);
    if (c.FB) j["FB"] = format_rational(*c.FB);
    if (c.FI) j["FI"] = format_rational(*c.FI);
    return j;
}

// Structural errors carry the JSON pointer of the offending value in place of a line number.
class JsonReader {
public:
    explicit JsonReader(std::string file) : file_(std::move(file)) {}

    Schedule read(std::string_view text) {
        json root = parse(text);
        Schedule s;
        s.source = file_;
        if (!root.is_object()) fail("", "expected a JSON object at the top level");
        if (root.contains("format") && root["format"] != "pipeproof-schedule")
            fail("/format", "expected \"pipeproof-schedule\"");
        s.placement.ranks = count(root, "", "ranks", 1);
        const json& pipes = member(root, "", "pipelines");
        if (!pipes.is_array() || pipes.empty()) fail("/pipelines", "expected a non-empty array of pipelines");
        for (size_t k = 0; k < pipes.size(); ++k) s.placement.pipelines.push_back(pipeline(pipes[k], fmt::format("/pipelines/{}", k)));
        if (root.contains("segments")) split_into_segments(count(root, "", "segments", 1), s);
        if (root.contains("segment_costs")) read_segment_costs(root["segment_costs"], s);
        try {
            s.placement.validate();
        } catch (const std::invalid_argument& e) {
            fail("/pipelines", e.what());
        }
        // Nothing proportional to the declared size is allocated before this check (model/size_budget.hpp).
        if (const std::string problem = size_problem(placement_ops(s.placement), placement_size_text(s.placement));
            !problem.empty())
            fail(fmt::format("/pipelines/{}/microbatches", largest_pipeline(s.placement)), problem);
        if (root.contains("costs")) s.costs = costs(root["costs"]);
        if (root.contains("chunks")) {
            if (root.contains("costs")) fail("/chunks", "a file gives either \"costs\" or \"chunks\" (chunk costs derive the op costs)");
            s.chunks = chunks_from_json(root["chunks"], file_);
        }
        if (root.contains("stage_costs")) {
            if (!s.costs) fail("/stage_costs", "stage costs override \"costs\", which the file does not give");
            read_stage_costs(root["stage_costs"], *s.costs);
        }
        if (root.contains("memory_limit")) s.memory_limit = rational(root["memory_limit"], "/memory_limit");
        if (root.contains("activation_sizes")) s.activation_sizes = activation_sizes(root["activation_sizes"]);
        read_slots(root, s);
        return s;
    }

private:
    std::string file_;

    // "segments": k -- each pipeline's micro-batches become k segment units (ops number units, Schedule::segments).
    void split_into_segments(int k, Schedule& s) const {
        for (size_t p = 0; p < s.placement.pipelines.size(); ++p) {
            Pipeline& pipe = s.placement.pipelines[p];
            const long long units = static_cast<long long>(pipe.microbatches) * k;
            if (units > std::numeric_limits<std::int32_t>::max())
                fail(fmt::format("/pipelines/{}/microbatches", p),
                     fmt::format("{} micro-batches x {} segments pass the largest micro-batch number", pipe.microbatches, k));
            pipe.microbatches = static_cast<int>(units);
        }
        s.segments = k;
    }

    // "segment_costs": "1/4,3/4" or "attention=A", as the native line.
    void read_segment_costs(const json& j, Schedule& s) const {
        if (!j.is_string()) fail("/segment_costs", "expected a string such as \"1/4,3/4\" or \"attention=0.3\"");
        if (s.segments < 2) fail("/segment_costs", "segment costs need \"segments\" of at least 2");
        try {
            s.segment_cost_shares = parse_segment_cost_shares(j.get<std::string>(), s.segments);
        } catch (const CostSyntaxError& e) {
            fail("/segment_costs", e.message);
        }
    }

    [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
        throw InputError(file_, 0, 0, fmt::format("at {}: {}", pointer.empty() ? "/" : pointer, message));
    }

    static size_t largest_pipeline(const Placement& placement) {
        size_t largest = 0;
        for (size_t k = 0; k < placement.pipelines.size(); ++k)
            if (saturating_mul(placement.pipelines[k].stages(), placement.pipelines[k].microbatches) >
                saturating_mul(placement.pipelines[largest].stages(), placement.pipelines[largest].microbatches))
                largest = k;
        return largest;
    }

    // Where the parser is, as a JSON pointer: nlohmann's out-of-range errors (a number such as 1e400) carry
    // no position, so the parse callback keeps the path of the value being read.
    struct PathFrame {
        bool array = false;
        size_t index = 0;  // arrays: the element being read
        std::string key;   // objects: the member being read
    };
    static std::string pointer_of(const std::vector<PathFrame>& path) {
        std::string pointer;
        for (const PathFrame& frame : path) {
            pointer += '/';
            if (frame.array) {
                pointer += std::to_string(frame.index);
                continue;
            }
            for (char c : frame.key) pointer += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
        }
        return pointer.empty() ? "/" : pointer;
    }

    json parse(std::string_view text) const {
        check_text_size(text, file_);
        std::vector<PathFrame> path;
        const json::parser_callback_t track = [&path](int, json::parse_event_t event, json& parsed) {
            using E = json::parse_event_t;
            const auto next_element = [&path] {
                if (!path.empty() && path.back().array) ++path.back().index;
            };
            switch (event) {
                case E::object_start: path.push_back({false, 0, {}}); break;
                case E::array_start: path.push_back({true, 0, {}}); break;
                case E::key:
                    if (!path.empty() && parsed.is_string()) path.back().key = parsed.get<std::string>();
                    break;
                case E::object_end:
                case E::array_end:
                    if (!path.empty()) path.pop_back();
                    next_element();
                    break;
                case E::value: next_element(); break;
            }
            return true;
        };
        try {
            return json::parse(text, track);
        } catch (const json::out_of_range& e) {
            std::string what = e.what();
            if (auto bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
            fail(pointer_of(path), "invalid JSON: " + what + " (out of range)");
        } catch (const json::parse_error& e) {
            // Turn the byte offset into line:column.
            const size_t offset = e.byte == 0 ? 0 : e.byte - 1;
            int line = 1, column = 1;
            for (size_t i = 0; i < offset && i < text.size(); ++i) {
                if (text[i] == '\n') ++line, column = 1;
                else ++column;
            }
            std::string what = e.what();
            if (auto colon = what.rfind(": "); colon != std::string::npos) what = what.substr(colon + 2);
            throw InputError(file_, line, column, "invalid JSON: " + what);
        }
    }

    const json& member(const json& object, const std::string& at, const char* name) const {
        if (!object.is_object() || !object.contains(name)) fail(at, fmt::format("missing \"{}\"", name));
        return object[name];
    }

    int count(const json& object, const std::string& at, const char* name, int minimum) const {
        const json& value = member(object, at, name);
        if (!value.is_number_integer() || value.get<long long>() < minimum || value.get<long long>() > 1'000'000)
            fail(at + "/" + name, fmt::format("expected a whole number from {} to 1000000", minimum));
        return value.get<int>();
    }

    std::vector<int> int_list(const json& value, const std::string& at) const {
        if (!value.is_array()) fail(at, "expected an array of whole numbers");
        std::vector<int> list;
        for (size_t i = 0; i < value.size(); ++i) {
            if (!value[i].is_number_integer() || value[i].get<long long>() < 0 || value[i].get<long long>() > 1'000'000)
                fail(fmt::format("{}/{}", at, i), "expected a whole number >= 0");
            list.push_back(value[i].get<int>());
        }
        return list;
    }

    Pipeline pipeline(const json& j, const std::string& at) const {
        Pipeline p;
        p.microbatches = count(j, at, "microbatches", 1);
        p.stage_rank = int_list(member(j, at, "stage_ranks"), at + "/stage_ranks");
        if (j.contains("stage_blocks")) p.stage_block = int_list(j["stage_blocks"], at + "/stage_blocks");
        else
            for (int s = 0; s < p.stages(); ++s) p.stage_block.push_back(s);
        return p;
    }

    Rational rational(const json& value, const std::string& at) const {
        std::optional<Rational> parsed;
        if (value.is_number_unsigned()) {
            // A whole number above 2^63 - 1 would wrap in the conversion (2^64 - 1 read as -1).
            const auto whole = value.get<std::uint64_t>();
            if (whole > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                fail(at, fmt::format("{} is out of range (at most 2^63 - 1 = {}; exact values can be strings)", whole,
                                     std::numeric_limits<std::int64_t>::max()));
            parsed = Rational(static_cast<std::int64_t>(whole));
        }
        else if (value.is_string()) parsed = parse_rational(value.get<std::string>());
        if (!parsed) fail(at, "expected an exact non-negative number such as \"1.5\" or \"7/4\"");
        return *parsed;
    }

    Costs costs(const json& j) const {
        if (!j.is_object()) fail("/costs", "expected an object of durations");
        Costs c;
        for (const auto& [key, value] : j.items()) {
            const std::string at = "/costs/" + key;
            if (key == "F") c.base.F = rational(value, at);
            else if (key == "I") c.base.I = rational(value, at);
            else if (key == "W") c.base.W = rational(value, at);
            else if (key == "B") c.base.B = rational(value, at);
            else if (key == "FB") c.base.FB = rational(value, at);
            else if (key == "FI") c.base.FI = rational(value, at);
            else if (key == "comm") c.comm = rational(value, at);
            else fail(at, "unknown cost key (expected F, I, W, B, FB, FI or comm)");
        }
        return c;
    }

    // [{"block": 0, "F": "1/3", ...}, ...]: each block's costs, starting from the file's base costs.
    void read_stage_costs(const json& j, Costs& c) const {
        if (!j.is_array()) fail("/stage_costs", "expected an array of {\"block\": N, \"F\": .., ...} objects");
        for (size_t k = 0; k < j.size(); ++k) {
            const std::string at = fmt::format("/stage_costs/{}", k);
            if (!j[k].is_object()) fail(at, "expected an object");
            const int block = count(j[k], at, "block", 0);
            OpCosts one = c.base;
            for (const auto& [key, value] : j[k].items()) {
                if (key == "block") continue;
                const Rational v = rational(value, at + "/" + key);
                if (key == "F") one.F = v;
                else if (key == "I") one.I = v;
                else if (key == "W") one.W = v;
                else if (key == "B") one.B = v;
                else if (key == "FB") one.FB = v;
                else if (key == "FI") one.FI = v;
                else fail(at + "/" + key, "unknown cost key (expected block, F, I, W, B, FB or FI)");
            }
            if (!c.per_block.emplace(block, one).second) fail(at + "/block", fmt::format("block {} appears twice", block));
        }
    }

    // Explicit idle cells (a compute_only CSV's empty cells): gaps[k] before op k, the last after the ops.
    void read_gaps(const json& j, const std::string& at, int r, Schedule& s) const {
        const std::vector<int> gaps = int_list(j, at);
        if (gaps.size() != s.ranks[r].size() + 1)
            fail(at, fmt::format("expected {} counts (before each of the {} ops, and after them)", s.ranks[r].size() + 1,
                                 s.ranks[r].size()));
        s.gaps.resize(static_cast<size_t>(s.placement.ranks));
        s.gaps[r] = gaps;
    }

    ActivationModel activation_sizes(const json& j) const {
        if (!j.is_object()) fail("/activation_sizes", "expected {\"F\": .., \"I\": ..}");
        ActivationModel sizes;
        for (const auto& [key, value] : j.items()) {
            const std::string at = "/activation_sizes/" + key;
            if (key == "F") sizes.forward_alloc = rational(value, at);
            else if (key == "I") sizes.input_grad_free = rational(value, at);
            else fail(at, "unknown key (expected F, allocated by F, or I, released by I)");
        }
        if (sizes.input_grad_free > sizes.forward_alloc) fail("/activation_sizes/I", "I cannot release more than F allocated");
        return sizes;
    }

    Op op(const json& j, const std::string& at, const OpIndex& index) const {
        if (!j.is_object()) fail(at, "expected an op object");
        const json& kind = member(j, at, "kind");
        static const std::map<std::string, OpKind> kinds = {{"F", OpKind::F}, {"I", OpKind::I}, {"W", OpKind::W}, {"B", OpKind::B}};
        if (!kind.is_string() || !kinds.count(kind.get<std::string>())) fail(at + "/kind", "expected \"F\", \"I\", \"W\" or \"B\"");
        const OpKind k = kinds.at(kind.get<std::string>());
        const int pipeline = j.contains("pipeline") ? count(j, at, "pipeline", 0) : 0;
        const int stage = count(j, at, "stage", 0);
        const int microbatch = count(j, at, "microbatch", 0);
        if (!index.in_range(pipeline, stage, microbatch))
            fail(at, fmt::format("{} is outside the placement", format_op(k, pipeline, stage, microbatch)));
        return Op{k, pipeline, stage, microbatch};
    }

    void read_slots(const json& root, Schedule& s) const {
        const OpIndex index(s.placement);
        const json& ranks = member(root, "", "schedule");
        if (!ranks.is_array()) fail("/schedule", "expected an array with one entry per rank");
        s.ranks.assign(s.placement.ranks, {});
        std::vector<bool> rank_seen(s.placement.ranks, false);
        for (size_t i = 0; i < ranks.size(); ++i) {
            const std::string at = fmt::format("/schedule/{}", i);
            const int r = count(ranks[i], at, "rank", 0);
            if (r >= s.placement.ranks) fail(at + "/rank", fmt::format("rank {} is not in 0..{}", r, s.placement.ranks - 1));
            if (rank_seen[r]) fail(at + "/rank", fmt::format("rank {} appears twice", r));
            rank_seen[r] = true;
            const json& ops = member(ranks[i], at, "ops");
            if (!ops.is_array()) fail(at + "/ops", "expected an array of ops");
            for (size_t k = 0; k < ops.size(); ++k) {
                const std::string op_at = fmt::format("{}/ops/{}", at, k);
                Slot slot;
                if (ops[k].is_object() && ops[k].contains("overlap")) {
                    const json& pair = ops[k]["overlap"];
                    if (!pair.is_array() || pair.size() != 2) fail(op_at + "/overlap", "expected exactly two ops");
                    Op first = op(pair[0], op_at + "/overlap/0", index), second = op(pair[1], op_at + "/overlap/1", index);
                    // Either order, as the native and CSV readers take it (F is stored first).
                    if (first.kind != OpKind::F && second.kind == OpKind::F) std::swap(first, second);
                    slot = Slot::pair(first, second);
                    if (slot.ops[0].kind != OpKind::F || !is_backward(slot.ops[1].kind))
                        fail(op_at + "/overlap", "an overlapped pair is one F and one backward (B or I)");
                } else {
                    slot = Slot::single(op(ops[k], op_at, index));
                }
                s.ranks[r].push_back(slot);
            }
            if (ranks[i].contains("gaps")) read_gaps(ranks[i]["gaps"], at + "/gaps", r, s);
        }
        if (!s.gaps.empty())  // ranks without "gaps" have none
            for (int r = 0; r < s.placement.ranks; ++r) s.gaps[r].resize(s.ranks[r].size() + 1, 0);
        for (int r = 0; r < s.placement.ranks; ++r)
            if (!rank_seen[r]) fail("/schedule", fmt::format("rank {} has no entry", r));
    }
};

}  // namespace

namespace {

// Everything but the ops: the head of the document.
nlohmann::ordered_json schedule_head_json(const Schedule& schedule) {
    using json = nlohmann::ordered_json;
    json j = {{"format", "pipeproof-schedule"}, {"version", 1}, {"ranks", schedule.placement.ranks}};
    json pipes = json::array();
    for (const auto& p : schedule.placement.pipelines)  // micro-batches, not segment units
        pipes.push_back({{"microbatches", p.microbatches / schedule.segments}, {"stage_ranks", p.stage_rank},
                         {"stage_blocks", p.stage_block}});
    j["pipelines"] = pipes;
    if (schedule.segments > 1) j["segments"] = schedule.segments;
    if (!schedule.segment_cost_shares.empty()) j["segment_costs"] = format_segment_cost_shares(schedule.segment_cost_shares);
    if (schedule.costs) {
        j["costs"] = costs_to_json(schedule.costs->base);
        j["costs"]["comm"] = format_rational(schedule.costs->comm);
    }
    if (schedule.costs && !schedule.costs->per_block.empty()) {
        json blocks = json::array();
        for (const auto& [block, c] : schedule.costs->per_block) {
            json one = {{"block", block}};
            one.update(costs_to_json(c));
            blocks.push_back(std::move(one));
        }
        j["stage_costs"] = std::move(blocks);
    }
    if (schedule.chunks) j["chunks"] = chunks_to_json(*schedule.chunks);
    if (schedule.memory_limit) j["memory_limit"] = format_rational(*schedule.memory_limit);
    if (schedule.activation_sizes)
        j["activation_sizes"] = {{"F", format_rational(schedule.activation_sizes->forward_alloc)},
                                 {"I", format_rational(schedule.activation_sizes->input_grad_free)}};
    return j;
}

bool has_gaps(const Schedule& schedule, size_t r) {
    if (r >= schedule.gaps.size()) return false;
    return std::any_of(schedule.gaps[r].begin(), schedule.gaps[r].end(), [](int g) { return g > 0; });
}

nlohmann::ordered_json slot_to_json(const Slot& slot) {
    if (slot.is_pair()) return {{"overlap", {op_to_json(slot.ops[0]), op_to_json(slot.ops[1])}}};
    return op_to_json(slot.ops[0]);
}

}  // namespace

nlohmann::ordered_json schedule_to_json(const Schedule& schedule) {
    using json = nlohmann::ordered_json;
    json j = schedule_head_json(schedule);
    json ranks = json::array();
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        json ops = json::array();
        for (const Slot& slot : schedule.ranks[r]) ops.push_back(slot_to_json(slot));
        ranks.push_back({{"rank", r}, {"ops", ops}});
        if (has_gaps(schedule, r)) ranks.back()["gaps"] = schedule.gaps[r];
    }
    j["schedule"] = ranks;
    return j;
}

void write_json(std::ostream& out, const Schedule& schedule) {
    JsonStream stream(out, 1);
    stream.begin_object();
    stream.members(schedule_head_json(schedule));
    stream.key("schedule");
    stream.begin_array();
    for (size_t r = 0; r < schedule.ranks.size(); ++r) {
        stream.begin_object();
        stream.key("rank");
        stream.value(nlohmann::ordered_json(r));
        stream.key("ops");
        stream.begin_array();
        for (const Slot& slot : schedule.ranks[r]) stream.value(slot_to_json(slot));
        stream.end_array();
        if (has_gaps(schedule, r)) {
            stream.key("gaps");
            stream.value(nlohmann::ordered_json(schedule.gaps[r]));
        }
        stream.end_object();
    }
    stream.end_array();
    stream.end_object();
    out << "\n";
}

std::string write_json(const Schedule& schedule) {
    std::ostringstream out;
    write_json(out, schedule);
    return out.str();
}

Schedule read_json(std::string_view text, const std::string& file_name) { return JsonReader(file_name).read(text); }

}  // namespace pp
