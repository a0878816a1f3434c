#include "formats/certificate_json.hpp"

#include "formats/input_error.hpp"
#include "formats/json_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <fstream>
#include <limits>
#include <sstream>

namespace pp {
namespace {

using nlohmann::json;

constexpr const char* kFormatName = "pipeproof-certificate";

// ---- writing

std::string slots_text(const std::vector<Slot>& slots) {
    std::string out;
    for (const Slot& slot : slots) out += (out.empty() ? "" : " ") + format_slot(slot);
    return out;
}

std::string op_costs_text(const OpCosts& costs) {
    Costs alone;
    alone.base = costs;
    std::string text = format_costs(alone);
    const size_t comm = text.find(",comm=");
    return comm == std::string::npos ? text : text.substr(0, comm);
}

json rationals(const std::vector<Rational>& values) {
    json out = json::array();
    for (const Rational& v : values) out.push_back(format_rational(v));
    return out;
}

constexpr std::array<const char*, kCertificateCostVars> kCostVarNames = {"F", "I", "W", "B", "FB", "comm"};

// {"F": 1, "FB": -2}: the non-zero coefficients.
json form_json(const CertificateForm& form) {
    json out = json::object();
    for (int i = 0; i < kCertificateCostVars; ++i)
        if (form[i] != 0) out[kCostVarNames[i]] = form[i];
    return out;
}

json forms_json(const std::vector<CertificateForm>& forms) {
    json out = json::array();
    for (const auto& f : forms) out.push_back(form_json(f));
    return out;
}

// {"F": "1", "I": "3/2", ...}: every variable.
json point_json(const CertificatePoint& point) {
    json out = json::object();
    for (int i = 0; i < kCertificateCostVars; ++i) out[kCostVarNames[i]] = format_rational(point[i]);
    return out;
}

json constraints_json(const std::vector<CertificateConstraint>& constraints) {
    json out = json::array();
    for (const auto& k : constraints) {
        json a = json::object();
        for (int i = 0; i < kCertificateCostVars; ++i)
            if (k.a[i] != Rational(0)) a[kCostVarNames[i]] = format_rational(k.a[i]);
        out.push_back({{"a", a}, {"rel", k.rel}, {"b", format_rational(k.b)}});
    }
    return out;
}

json claim_json(const Certificate& c) {
    json claim = {{"family", c.family},
                  {"ranks", c.ranks},
                  {"stages_per_rank", c.stages_per_rank ? json(*c.stages_per_rank) : json(nullptr)},
                  {"group_size", c.group_size ? json(*c.group_size) : json(nullptr)},
                  {"segments", c.segments ? json(*c.segments) : json(nullptr)},
                  {"admissible_m", {{"first", c.family_m0}, {"step", c.family_step}}},
                  {"property", c.property},
                  {"timing_model", c.timing_model},
                  {"activation_sizes", format_activation_sizes(c.activations)},
                  {"verdict", c.verdict},
                  {"statement", c.statement},
                  {"structure_lemma", c.structure_lemma},
                  {"region", c.region},
                  {"region_constraints", constraints_json(c.region_constraints)}};
    if (c.region_point) claim["region_point"] = point_json(*c.region_point);
    claim["costs"] = c.costs ? json(format_costs(*c.costs)) : json(nullptr);
    claim["ordered_for_costs"] = c.ordered_for_costs;
    claim["ordered_for_sizes"] = c.ordered_for_sizes ? json(format_activation_sizes(*c.ordered_for_sizes)) : json(nullptr);
    json blocks = json::object();
    if (c.costs)
        for (const auto& [block, costs] : c.costs->per_block) blocks[std::to_string(block)] = op_costs_text(costs);
    claim["block_costs"] = blocks;
    // Uneven stages (--layout): each stage's stash scale, per pipeline; null when every stash is one size.
    json scales = json::array();
    for (const auto& stages : c.activations.stage_scale) scales.push_back(rationals(stages));
    claim["stage_scale"] = c.activations.stage_scale.empty() ? json(nullptr) : scales;
    if (c.structure_check)
        claim["structure_check"] = {{"method", c.structure_check->method},
                                    {"from_m", c.structure_check->from_m},
                                    {"period_m", c.structure_check->period_m}};
    else
        claim["structure_check"] = nullptr;
    return claim;
}

json word_json(const CertificateWord& w) {
    json ranks = json::array();
    for (size_t r = 0; r < w.block.size(); ++r)
        ranks.push_back({{"prefix", slots_text(w.prefix[r])}, {"block", slots_text(w.block[r])}, {"suffix", slots_text(w.suffix[r])}});
    return {{"m_origin", w.m_origin}, {"step", w.step}, {"delta", w.delta}, {"ranks", ranks}};
}

// A zone word: per rank its fixed parts (slots, and the end-anchored ops as [slot, op] pairs) and its zones' blocks.
json zone_word_json(const CertificateZoneWord& w) {
    json ranks = json::array();
    for (size_t r = 0; r < w.fixed.size(); ++r) {
        json fixed = json::array(), zones = json::array();
        for (size_t part = 0; part < w.fixed[r].size(); ++part) {
            json anchored = json::array();
            for (size_t k = 0; k < w.end_anchored[r][part].size(); ++k)
                for (int op = 0; op < 2; ++op)
                    if (w.end_anchored[r][part][k][op]) anchored.push_back({k, op});
            fixed.push_back({{"slots", slots_text(w.fixed[r][part])}, {"end_anchored", anchored}});
        }
        for (const auto& block : w.block[r]) zones.push_back(slots_text(block));
        ranks.push_back({{"fixed", fixed}, {"zones", zones}});
    }
    return {{"m_origin", w.m_origin}, {"step", w.step}, {"delta", w.delta}, {"direction", w.direction}, {"ranks", ranks}};
}

// "send 1F3 to 2" (the activation of F at stage 1, micro-batch 3), "recv 2B3@1 from 3" (the input gradient of a
// backward at stage 2 of pipeline 1): the tensor named by the op that computes it.
std::string p2p_text(const P2POp& op) {
    Op named;
    named.kind = op.activation ? OpKind::F : OpKind::B;
    named.pipeline = op.pipeline;
    named.stage = op.stage;
    named.microbatch = op.microbatch;
    return fmt::format("{} {} {} {}", op.is_send ? "send" : "recv", format_op(named), op.is_send ? "to" : "from", op.peer);
}

json batches_json(const std::vector<std::vector<P2POp>>& batches) {
    json out = json::array();
    for (const auto& batch : batches) {
        json ops = json::array();
        for (const P2POp& op : batch) ops.push_back(p2p_text(op));
        out.push_back(ops);
    }
    return out;
}

json program_json(const CertificateProgram& p) {
    json ranks = json::array();
    for (size_t r = 0; r < p.block.size(); ++r)
        ranks.push_back({{"prefix", batches_json(p.prefix[r])}, {"block", batches_json(p.block[r])}, {"suffix", batches_json(p.suffix[r])}});
    return {{"delta", p.delta}, {"ranks", ranks}};
}

}  // namespace

std::string certificate_json_text(const Certificate& c) {
    json j = {{"format", kFormatName}, {"version", c.version}, {"tool", c.tool}, {"command", c.command}, {"claim", claim_json(c)}};
    j["word"] = c.word ? word_json(*c.word) : json(nullptr);
    if (c.zone_word) j["zone_word"] = zone_word_json(*c.zone_word);
    if (c.program) j["program"] = program_json(*c.program);
    j["potentials"] = c.potentials ? json{{"T", c.potentials->T},
                                          {"sigma", c.potentials->sigma},
                                          {"alpha", c.potentials->alpha},
                                          {"beta", c.potentials->beta}}
                                   : json(nullptr);
    if (c.window) {
        j["window"] = {{"T", c.window->T}, {"k0", c.window->k0}, {"cycle", c.window->cycle}};
        if (c.window->lambda_form) {
            j["window"]["lambda"] = nullptr;
            j["window"]["lambda_form"] = form_json(*c.window->lambda_form);
        } else {
            j["window"]["lambda"] = format_rational(c.window->lambda);
        }
    } else {
        j["window"] = nullptr;
    }
    if (c.bubble && !c.bubble->value_forms.empty()) {  // symbolic costs
        json early = json::array();
        for (const auto& [m, forms] : c.bubble->early_forms)
            early.push_back({{"microbatches", m}, {"bubble", nullptr}, {"bubble_forms", forms_json(forms)}});
        j["bubble"] = {{"value", nullptr},
                       {"value_forms", forms_json(c.bubble->value_forms)},
                       {"from_m", c.bubble->from_m},
                       {"early", early},
                       {"differs_at", c.bubble->differs_at ? point_json(*c.bubble->differs_at) : json(nullptr)}};
    } else if (c.bubble) {
        json early = json::array();
        for (const auto& [m, value] : c.bubble->early) early.push_back({{"microbatches", m}, {"bubble", format_rational(value)}});
        j["bubble"] = {{"value", format_rational(c.bubble->value)}, {"from_m", c.bubble->from_m}, {"early", early}};
    } else {
        j["bubble"] = nullptr;
    }
    if (c.memory) {
        json early = json::array();
        for (const auto& [m, peaks] : c.memory->early) early.push_back({{"microbatches", m}, {"peaks", rationals(peaks)}});
        j["memory"] = {{"peaks", rationals(c.memory->peaks)},
                       {"peaks_at_origin", rationals(c.memory->peaks_at_origin)},
                       {"bound", c.memory->bound ? json(format_rational(*c.memory->bound)) : json(nullptr)},
                       {"early", early}};
    } else {
        j["memory"] = nullptr;
    }
    json obligations = json::array();
    for (const auto& o : c.obligations) obligations.push_back({{"name", o.name}, {"statement", o.statement}, {"file", o.file}});
    j["obligations"] = obligations;
    j["not_carried"] = c.not_carried;
    return json_text(j, 2) + "\n";
}

void write_certificate(const Certificate& certificate, const std::filesystem::path& dir) {
    const auto path = dir / kCertificateFile;
    std::ofstream out(path, std::ios::binary);
    out << certificate_json_text(certificate);
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

// ---- reading: every field checked for presence and type; a message names the field's path.

namespace {

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw InputError(file_, 0, 0, fmt::format("{}: {}", path, what));
    }
    const json& field(const json& object, const std::string& path, const char* key) const {
        if (!object.is_object()) fail(path, "expected an object");
        const auto it = object.find(key);
        if (it == object.end()) fail(path + "." + key, "missing");
        return *it;
    }
    int integer(const json& object, const std::string& path, const char* key, int lo = 0,
                int hi = std::numeric_limits<int>::max()) const {
        return integer_value(field(object, path, key), path + "." + key, lo, hi);
    }
    int integer_value(const json& value, const std::string& path, int lo = 0, int hi = std::numeric_limits<int>::max()) const {
        if (!value.is_number_integer()) fail(path, "expected an integer");
        // An unsigned JSON integer above the signed range would wrap when read as signed.
        if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
            fail(path, fmt::format("{} is outside {}..{}", value.get<std::uint64_t>(), lo, hi));
        const auto v = value.get<long long>();
        if (v < lo || v > hi) fail(path, fmt::format("{} is outside {}..{}", v, lo, hi));
        return static_cast<int>(v);
    }
    std::string text(const json& object, const std::string& path, const char* key) const {
        const json& v = field(object, path, key);
        if (!v.is_string()) fail(path + "." + key, "expected a string");
        return v.get<std::string>();
    }
    Rational rational(const json& value, const std::string& path) const {
        if (!value.is_string()) fail(path, "expected an exact number as a string, e.g. \"3/2\"");
        const auto r = parse_rational(value.get<std::string>());
        if (!r) fail(path, "'" + value.get<std::string>() + "' is not an exact number");
        return *r;
    }
    Rational signed_rational(const json& value, const std::string& path) const {
        if (value.is_string() && value.get<std::string>().starts_with('-'))
            return Rational(0) - rational(json(value.get<std::string>().substr(1)), path);
        return rational(value, path);
    }
    std::vector<int> integers(const json& value, const std::string& path, int lo = std::numeric_limits<int>::min()) const {
        if (!value.is_array()) fail(path, "expected an array of integers");
        std::vector<int> out;
        for (size_t k = 0; k < value.size(); ++k)
            out.push_back(integer_value(value[k], fmt::format("{}[{}]", path, k), lo));
        return out;
    }
    std::vector<std::vector<int>> integer_rows(const json& value, const std::string& path) const {
        if (!value.is_array()) fail(path, "expected an array of arrays of integers");
        std::vector<std::vector<int>> out;
        for (size_t k = 0; k < value.size(); ++k) out.push_back(integers(value[k], fmt::format("{}[{}]", path, k)));
        return out;
    }
    std::vector<std::string> strings(const json& value, const std::string& path) const {
        if (!value.is_array()) fail(path, "expected an array of strings");
        std::vector<std::string> out;
        for (size_t k = 0; k < value.size(); ++k) {
            if (!value[k].is_string()) fail(fmt::format("{}[{}]", path, k), "expected a string");
            out.push_back(value[k].get<std::string>());
        }
        return out;
    }

    // {"F": 1, "FB": -2}: integer coefficients of the cost variables, absent ones 0.
    CertificateForm form(const json& value, const std::string& path) const {
        if (!value.is_object()) fail(path, "expected a linear form, e.g. {\"F\": 1, \"FB\": 2}");
        CertificateForm out{};
        for (const auto& [key, coefficient] : value.items()) {
            const int i = cost_var(key, path);
            if (!coefficient.is_number_integer()) fail(path + "." + key, "expected an integer coefficient");
            if (coefficient.is_number_unsigned() &&
                coefficient.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                fail(path + "." + key, "coefficient above 2^63 - 1");
            out[i] = coefficient.get<std::int64_t>();
        }
        return out;
    }
    std::vector<CertificateForm> forms(const json& value, const std::string& path) const {
        if (!value.is_array() || value.empty()) fail(path, "expected a non-empty array of linear forms");
        std::vector<CertificateForm> out;
        for (size_t k = 0; k < value.size(); ++k) out.push_back(form(value[k], fmt::format("{}[{}]", path, k)));
        return out;
    }
    // {"F": "1", "I": "3/2", ...}: exact numbers, absent ones 0.
    CertificatePoint point(const json& value, const std::string& path) const {
        if (!value.is_object()) fail(path, "expected a cost point, e.g. {\"F\": \"1\", \"I\": \"3/2\"}");
        CertificatePoint out{};
        for (const auto& [key, coordinate] : value.items()) out[cost_var(key, path)] = signed_rational(coordinate, path + "." + key);
        return out;
    }
    int cost_var(const std::string& key, const std::string& path) const {
        for (int i = 0; i < kCertificateCostVars; ++i)
            if (key == kCostVarNames[i]) return i;
        fail(path, "'" + key + "' is not a cost variable (F, I, W, B, FB, comm)");
    }

    // <stage><F|I|W|B><micro-batch>[@<pipeline>], or (<op>;<op>) for an overlapped pair.
    std::vector<Slot> slots(const std::string& line, const std::string& path) const {
        std::vector<Slot> out;
        std::istringstream words(line);
        for (std::string word; words >> word;) {
            if (word.front() == '(') {
                if (word.back() != ')' || word.find(';') == std::string::npos) fail(path, "bad pair '" + word + "'");
                const size_t semi = word.find(';');
                Op first = op(word.substr(1, semi - 1), path), second = op(word.substr(semi + 1, word.size() - semi - 2), path);
                if (first.kind != OpKind::F || !is_backward(second.kind))
                    fail(path, "a pair is one F and one backward (B or I), got '" + word + "'");
                out.push_back(Slot::pair(first, second));
            } else {
                out.push_back(Slot::single(op(word, path)));
            }
        }
        return out;
    }

    // "send 1F3 to 2", "recv 2B3@1 from 3" (p2p_text above).
    P2POp p2p(const std::string& text, const std::string& path) const {
        std::istringstream words(text);
        std::string direction, tensor, preposition, peer, extra;
        words >> direction >> tensor >> preposition >> peer;
        if (words >> extra || peer.empty()) fail(path, "expected 'send <op> to <rank>' or 'recv <op> from <rank>', got '" + text + "'");
        P2POp out;
        if (direction == "send" && preposition == "to") out.is_send = true;
        else if (direction == "recv" && preposition == "from") out.is_send = false;
        else fail(path, "expected 'send <op> to <rank>' or 'recv <op> from <rank>', got '" + text + "'");
        const Op named = op(tensor, path);
        if (named.kind != OpKind::F && named.kind != OpKind::B)
            fail(path, "a message is named by an F (activation) or a B (input gradient), got '" + tensor + "'");
        out.activation = named.kind == OpKind::F;
        out.pipeline = named.pipeline;
        out.stage = named.stage;
        out.microbatch = static_cast<int>(named.microbatch);
        if (peer.size() > 6 || peer.find_first_not_of("0123456789") != std::string::npos)
            fail(path, "expected a rank number, got '" + peer + "'");
        out.peer = std::stoi(peer);
        return out;
    }
    std::vector<std::vector<P2POp>> batches(const json& value, const std::string& path) const {
        if (!value.is_array()) fail(path, "expected an array of batches");
        std::vector<std::vector<P2POp>> out;
        for (size_t k = 0; k < value.size(); ++k) {
            const std::string at = fmt::format("{}[{}]", path, k);
            std::vector<P2POp> batch;
            for (const std::string& text : strings(value[k], at)) batch.push_back(p2p(text, at));
            out.push_back(std::move(batch));
        }
        return out;
    }

private:
    Op op(const std::string& word, const std::string& path) const {
        size_t i = 0;
        auto number = [&](int limit) {
            const size_t start = i;
            long long v = 0;
            while (i < word.size() && word[i] >= '0' && word[i] <= '9') {
                v = v * 10 + (word[i++] - '0');
                if (v > limit) fail(path, "number too large in '" + word + "'");
            }
            if (start == i) fail(path, "expected digits in '" + word + "'");
            return static_cast<int>(v);
        };
        Op op;
        op.stage = number(kMaxStagesPerPipeline - 1);
        if (i >= word.size()) fail(path, "expected F, I, W or B in '" + word + "'");
        switch (word[i++]) {
            case 'F': op.kind = OpKind::F; break;
            case 'I': op.kind = OpKind::I; break;
            case 'W': op.kind = OpKind::W; break;
            case 'B': op.kind = OpKind::B; break;
            default: fail(path, "expected F, I, W or B in '" + word + "'");
        }
        op.microbatch = number(std::numeric_limits<std::int32_t>::max());
        if (i < word.size()) {
            if (word[i++] != '@') fail(path, "unexpected text in '" + word + "'");
            op.pipeline = number(kMaxPipelines - 1);
        }
        if (i != word.size()) fail(path, "unexpected text in '" + word + "'");
        return op;
    }

    std::string file_;
};

Costs costs_of(const Reader& in, const json& claim) {
    const json& text = in.field(claim, "claim", "costs");
    if (!text.is_string()) in.fail("claim.costs", "expected a cost string");
    Costs costs;
    try {
        costs = parse_costs(text.get<std::string>());
    } catch (const CostSyntaxError& e) {
        in.fail("claim.costs", e.message);
    }
    const json& blocks = in.field(claim, "claim", "block_costs");
    if (!blocks.is_object()) in.fail("claim.block_costs", "expected an object");
    for (const auto& [key, value] : blocks.items()) {
        const auto block = parse_rational(key);
        if (!block || block->denominator() != 1 || *block < Rational(0) || *block > Rational(1 << 20))
            in.fail("claim.block_costs", "'" + key + "' is not a block number");
        if (!value.is_string()) in.fail("claim.block_costs." + key, "expected a cost string");
        OpCosts block_costs = costs.base;
        Rational ignored{0};
        try {
            apply_cost_items(value.get<std::string>(), block_costs, &ignored);
        } catch (const CostSyntaxError& e) {
            in.fail("claim.block_costs." + key, e.message);
        }
        costs.per_block[static_cast<int>(block->numerator().to_int64())] = block_costs;
    }
    return costs;
}

void read_claim(const Reader& in, const json& j, Certificate& c) {
    const json& claim = in.field(j, "", "claim");
    c.family = in.text(claim, "claim", "family");
    c.ranks = in.integer(claim, "claim", "ranks", 1, 1 << 16);
    const json& v = in.field(claim, "claim", "stages_per_rank");
    if (!v.is_null()) c.stages_per_rank = in.integer_value(v, "claim.stages_per_rank", 1, 1 << 10);
    if (claim.contains("group_size") && !claim["group_size"].is_null())
        c.group_size = in.integer_value(claim["group_size"], "claim.group_size", 1, 1 << 20);
    if (claim.contains("segments") && !claim["segments"].is_null())
        c.segments = in.integer_value(claim["segments"], "claim.segments", 1, 64);
    const json& admissible = in.field(claim, "claim", "admissible_m");
    c.family_m0 = in.integer(admissible, "claim.admissible_m", "first", 1);
    c.family_step = in.integer(admissible, "claim.admissible_m", "step", 1);
    c.property = in.text(claim, "claim", "property");
    c.timing_model = in.text(claim, "claim", "timing_model");
    try {
        c.activations = parse_activation_sizes(in.text(claim, "claim", "activation_sizes"));
    } catch (const CostSyntaxError& e) {
        in.fail("claim.activation_sizes", e.message);
    }
    if (claim.contains("stage_scale") && !claim["stage_scale"].is_null()) {  // optional in version 1
        const json& scales = claim["stage_scale"];
        if (!scales.is_array() || scales.empty()) in.fail("claim.stage_scale", "expected null or an array per pipeline");
        for (size_t k = 0; k < scales.size(); ++k) {
            const std::string path = fmt::format("claim.stage_scale[{}]", k);
            if (!scales[k].is_array() || scales[k].empty()) in.fail(path, "expected an array of exact numbers, one per stage");
            c.activations.stage_scale.emplace_back();
            for (size_t j = 0; j < scales[k].size(); ++j)
                c.activations.stage_scale.back().push_back(in.rational(scales[k][j], fmt::format("{}[{}]", path, j)));
        }
    }
    c.verdict = in.text(claim, "claim", "verdict");
    c.statement = in.text(claim, "claim", "statement");
    c.structure_lemma = in.text(claim, "claim", "structure_lemma");
    // Optional in version 1 (certificates written before it have no such member).
    if (claim.contains("structure_check") && !claim["structure_check"].is_null()) {
        const json& check = claim["structure_check"];
        CertificateStructureCheck sc;
        sc.method = in.text(check, "claim.structure_check", "method");
        sc.from_m = in.integer(check, "claim.structure_check", "from_m", 1);
        sc.period_m = in.integer(check, "claim.structure_check", "period_m", 1, 65536);
        c.structure_check = sc;
    }
    c.region = in.strings(in.field(claim, "claim", "region"), "claim.region");
    // Optional in version 1 (certificates of exact costs written before it have no such member).
    if (claim.contains("region_constraints")) {
        const json& rows = claim["region_constraints"];
        if (!rows.is_array()) in.fail("claim.region_constraints", "expected an array");
        for (size_t k = 0; k < rows.size(); ++k) {
            const std::string path = fmt::format("claim.region_constraints[{}]", k);
            CertificateConstraint row;
            row.a = in.point(in.field(rows[k], path, "a"), path + ".a");
            row.rel = in.text(rows[k], path, "rel");
            if (row.rel != ">=" && row.rel != ">" && row.rel != "=") in.fail(path + ".rel", "expected \">=\", \">\" or \"=\"");
            row.b = in.signed_rational(in.field(rows[k], path, "b"), path + ".b");
            c.region_constraints.push_back(std::move(row));
        }
    }
    if (claim.contains("region_point") && !claim["region_point"].is_null())  // optional in version 1
        c.region_point = in.point(claim["region_point"], "claim.region_point");
    if (!in.field(claim, "claim", "costs").is_null()) c.costs = costs_of(in, claim);
    const json& ordered = in.field(claim, "claim", "ordered_for_costs");
    if (!ordered.is_boolean()) in.fail("claim.ordered_for_costs", "expected true or false");
    c.ordered_for_costs = ordered.get<bool>();
    if (c.ordered_for_costs && !c.costs) in.fail("claim.ordered_for_costs", "a family ordered for its costs needs exact costs");
    if (const json& sizes = in.field(claim, "claim", "ordered_for_sizes"); !sizes.is_null()) {
        if (!sizes.is_string()) in.fail("claim.ordered_for_sizes", "expected activation sizes F=..,I=..");
        try {
            c.ordered_for_sizes = parse_activation_sizes(sizes.get<std::string>());
        } catch (const CostSyntaxError& e) {
            in.fail("claim.ordered_for_sizes", e.message);
        }
    }
}

CertificateWord read_word(const Reader& in, const json& w) {
    CertificateWord word;
    word.m_origin = in.integer(w, "word", "m_origin", 1);
    word.step = in.integer(w, "word", "step", 1);
    word.delta = in.integers(in.field(w, "word", "delta"), "word.delta", 0);
    const json& ranks = in.field(w, "word", "ranks");
    if (!ranks.is_array() || ranks.empty()) in.fail("word.ranks", "expected a non-empty array");
    for (size_t r = 0; r < ranks.size(); ++r) {
        const std::string path = fmt::format("word.ranks[{}]", r);
        word.prefix.push_back(in.slots(in.text(ranks[r], path, "prefix"), path + ".prefix"));
        word.block.push_back(in.slots(in.text(ranks[r], path, "block"), path + ".block"));
        word.suffix.push_back(in.slots(in.text(ranks[r], path, "suffix"), path + ".suffix"));
    }
    return word;
}

CertificateZoneWord read_zone_word(const Reader& in, const json& w) {
    CertificateZoneWord word;
    word.m_origin = in.integer(w, "zone_word", "m_origin", 1);
    word.step = in.integer(w, "zone_word", "step", 1);
    word.delta = in.integers(in.field(w, "zone_word", "delta"), "zone_word.delta", 0);
    word.direction = in.integers(in.field(w, "zone_word", "direction"), "zone_word.direction", -1);
    for (int d : word.direction)
        if (d != 1 && d != -1) in.fail("zone_word.direction", "expected +1 (ascending) or -1 (descending) per zone");
    const json& ranks = in.field(w, "zone_word", "ranks");
    if (!ranks.is_array() || ranks.empty()) in.fail("zone_word.ranks", "expected a non-empty array");
    for (size_t r = 0; r < ranks.size(); ++r) {
        const std::string path = fmt::format("zone_word.ranks[{}]", r);
        const json& fixed = in.field(ranks[r], path, "fixed");
        const json& zones = in.field(ranks[r], path, "zones");
        if (!fixed.is_array() || !zones.is_array()) in.fail(path, "expected arrays fixed and zones");
        word.fixed.emplace_back();
        word.end_anchored.emplace_back();
        word.block.emplace_back();
        for (size_t part = 0; part < fixed.size(); ++part) {
            const std::string at = fmt::format("{}.fixed[{}]", path, part);
            std::vector<Slot> slots = in.slots(in.text(fixed[part], at, "slots"), at + ".slots");
            std::vector<std::array<bool, 2>> anchored(slots.size(), {false, false});
            const json& marks = in.field(fixed[part], at, "end_anchored");
            if (!marks.is_array()) in.fail(at + ".end_anchored", "expected an array of [slot, op] pairs");
            for (size_t k = 0; k < marks.size(); ++k) {
                const std::vector<int> mark = in.integers(marks[k], fmt::format("{}.end_anchored[{}]", at, k), 0);
                if (mark.size() != 2 || mark[0] >= static_cast<int>(slots.size()) || mark[1] >= slots[mark[0]].count)
                    in.fail(fmt::format("{}.end_anchored[{}]", at, k), "expected [slot, op] naming an op of this part");
                anchored[mark[0]][mark[1]] = true;
            }
            word.fixed.back().push_back(std::move(slots));
            word.end_anchored.back().push_back(std::move(anchored));
        }
        for (size_t z = 0; z < zones.size(); ++z) {
            const std::string at = fmt::format("{}.zones[{}]", path, z);
            if (!zones[z].is_string()) in.fail(at, "expected a string of slots");
            word.block.back().push_back(in.slots(zones[z].get<std::string>(), at));
        }
    }
    return word;
}

CertificateProgram read_program(const Reader& in, const json& p) {
    CertificateProgram program;
    program.delta = in.integers(in.field(p, "program", "delta"), "program.delta", 0);
    const json& ranks = in.field(p, "program", "ranks");
    if (!ranks.is_array() || ranks.empty()) in.fail("program.ranks", "expected a non-empty array");
    for (size_t r = 0; r < ranks.size(); ++r) {
        const std::string path = fmt::format("program.ranks[{}]", r);
        program.prefix.push_back(in.batches(in.field(ranks[r], path, "prefix"), path + ".prefix"));
        program.block.push_back(in.batches(in.field(ranks[r], path, "block"), path + ".block"));
        program.suffix.push_back(in.batches(in.field(ranks[r], path, "suffix"), path + ".suffix"));
    }
    return program;
}

}  // namespace

Certificate parse_certificate(const std::string& text, const std::string& file_name) {
    const Reader in(file_name);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {  // a syntax error, or a number past a double (out_of_range.406)
        throw InputError(file_name, 0, 0, std::string("not JSON: ") + e.what());
    }
    if (!j.is_object()) in.fail("(document)", "expected an object");
    if (in.text(j, "", "format") != kFormatName) in.fail("format", std::string("expected \"") + kFormatName + "\"");
    Certificate c;
    c.version = in.integer(j, "", "version");
    if (c.version != kCertificateVersion)
        in.fail("version", fmt::format("version {} (this reader knows version {})", c.version, kCertificateVersion));
    c.tool = in.text(j, "", "tool");
    c.command = in.text(j, "", "command");
    read_claim(in, j, c);
    if (const json& w = in.field(j, "", "word"); !w.is_null()) c.word = read_word(in, w);
    if (j.contains("program") && !j["program"].is_null()) c.program = read_program(in, j["program"]);
    if (j.contains("zone_word") && !j["zone_word"].is_null()) c.zone_word = read_zone_word(in, j["zone_word"]);
    if (const json& p = in.field(j, "", "potentials"); !p.is_null()) {
        CertificatePotentials pot;
        pot.T = in.integer(p, "potentials", "T");
        pot.sigma = in.integers(in.field(p, "potentials", "sigma"), "potentials.sigma");
        pot.alpha = in.integer_rows(in.field(p, "potentials", "alpha"), "potentials.alpha");
        pot.beta = in.integer_rows(in.field(p, "potentials", "beta"), "potentials.beta");
        c.potentials = std::move(pot);
    }
    if (const json& w = in.field(j, "", "window"); !w.is_null()) {
        CertificateWindow window;
        window.T = in.integer(w, "window", "T");
        window.k0 = in.integer(w, "window", "k0", std::numeric_limits<int>::min());
        window.cycle = in.integer(w, "window", "cycle", 1, 1 << 16);
        if (const json& lambda = in.field(w, "window", "lambda"); !lambda.is_null())
            window.lambda = in.rational(lambda, "window.lambda");
        else
            window.lambda_form = in.form(in.field(w, "window", "lambda_form"), "window.lambda_form");
        c.window = window;
    }
    if (const json& b = in.field(j, "", "bubble"); !b.is_null()) {
        CertificateBubble bubble;
        const json& value = in.field(b, "bubble", "value");
        const bool symbolic = value.is_null();  // then max-plus polynomials: lists of forms
        if (symbolic)
            bubble.value_forms = in.forms(in.field(b, "bubble", "value_forms"), "bubble.value_forms");
        else
            bubble.value = in.rational(value, "bubble.value");
        bubble.from_m = in.integer(b, "bubble", "from_m", 1);
        const json& early = in.field(b, "bubble", "early");
        if (!early.is_array()) in.fail("bubble.early", "expected an array");
        for (size_t k = 0; k < early.size(); ++k) {
            const std::string path = fmt::format("bubble.early[{}]", k);
            const int m = in.integer(early[k], path, "microbatches", 1);
            if (symbolic)
                bubble.early_forms.emplace_back(m, in.forms(in.field(early[k], path, "bubble_forms"), path + ".bubble_forms"));
            else
                bubble.early.emplace_back(m, in.rational(in.field(early[k], path, "bubble"), path + ".bubble"));
        }
        if (symbolic)
            if (const json& at = in.field(b, "bubble", "differs_at"); !at.is_null()) bubble.differs_at = in.point(at, "bubble.differs_at");
        c.bubble = std::move(bubble);
    }
    if (const json& m = in.field(j, "", "memory"); !m.is_null()) {
        CertificateMemory memory;
        const json& peaks = in.field(m, "memory", "peaks");
        if (!peaks.is_array()) in.fail("memory.peaks", "expected an array");
        for (size_t k = 0; k < peaks.size(); ++k) memory.peaks.push_back(in.rational(peaks[k], fmt::format("memory.peaks[{}]", k)));
        const json& origin = in.field(m, "memory", "peaks_at_origin");
        if (!origin.is_array()) in.fail("memory.peaks_at_origin", "expected an array");
        for (size_t k = 0; k < origin.size(); ++k)
            memory.peaks_at_origin.push_back(in.rational(origin[k], fmt::format("memory.peaks_at_origin[{}]", k)));
        if (const json& bound = in.field(m, "memory", "bound"); !bound.is_null())
            memory.bound = in.rational(bound, "memory.bound");
        if (m.contains("early")) {  // optional: only a word from a later origin has early instances
            const json& early = m.at("early");
            if (!early.is_array()) in.fail("memory.early", "expected an array");
            for (size_t k = 0; k < early.size(); ++k) {
                const std::string path = fmt::format("memory.early[{}]", k);
                const json& at = in.field(early[k], path, "peaks");
                if (!at.is_array()) in.fail(path + ".peaks", "expected an array");
                std::vector<Rational> peaks;
                for (size_t r = 0; r < at.size(); ++r) peaks.push_back(in.rational(at[r], fmt::format("{}.peaks[{}]", path, r)));
                memory.early.emplace_back(in.integer(early[k], path, "microbatches", 1), std::move(peaks));
            }
        }
        c.memory = std::move(memory);
    }
    const json& obligations = in.field(j, "", "obligations");
    if (!obligations.is_array()) in.fail("obligations", "expected an array");
    for (size_t k = 0; k < obligations.size(); ++k) {
        const std::string path = fmt::format("obligations[{}]", k);
        CertificateObligation o{in.text(obligations[k], path, "name"), in.text(obligations[k], path, "statement"),
                                in.text(obligations[k], path, "file")};
        // A file name inside the certificate's directory: no absolute path, no way up.
        if (o.file.empty() || o.file.front() == '/' || o.file.find("..") != std::string::npos)
            in.fail(path + ".file", "expected a file name inside the certificate's directory");
        c.obligations.push_back(std::move(o));
    }
    c.not_carried = in.strings(in.field(j, "", "not_carried"), "not_carried");
    return c;
}

Certificate read_certificate(const std::filesystem::path& dir) {
    const auto path = dir / kCertificateFile;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path.string(), 0, 0, "cannot read the certificate (no such file, or not readable)");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_certificate(text.str(), path.string());
}

}  // namespace pp
