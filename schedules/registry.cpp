#include "schedules/registry.hpp"

#include <algorithm>
#include <cctype>

#include "model/spelling.hpp"
#include "schedules/families.hpp"

#include "model/size_budget.hpp"

#include <fmt/format.h>

namespace pp {

bool family_takes_group_size(std::string_view name) {
    return name == "interleaved-1f1b" || name == "combined-1f1b" || name == "group-interleaved";
}

bool family_takes_segments(std::string_view name) { return name == "seq1f1b"; }

namespace {

// How a family builds its ranks: straight from its order, or as PyTorch does for its interleaved and zero
// bubble classes, in lock-step rows of cells where rank r first waits r cells and a forward waits one more
// whenever its input is not ready -- about P x V idle cells per rank, P^2 V in all, whatever M is.
enum class Rows { Direct, LockStep };

// Before generating: P x V x M (stage, micro-batch) pairs -- and for lock-step rows their P^2 V idle cells --
// within the size budget (model/size_budget.hpp), so that `generate 1f1b -P 100000 -M 100000` or `generate
// zb1p -P 65536 -M 1` is refused with an estimate instead of filling the memory. `stages_per_rank` is the
// family's V when the caller gives none (bidirectional families hold one stage per rank per direction and
// split M in two halves, which is again P x M pairs).
void require_generated_size(const std::string& family, const GenerateParams& params, int stages_per_rank, Rows rows) {
    const int v = params.stages_per_rank.value_or(stages_per_rank);
    if (params.ranks < 1 || params.microbatches < 1 || v < 1) return;  // the generator says what is wrong
    const auto P = static_cast<std::uint64_t>(params.ranks), V = static_cast<std::uint64_t>(v),
               M = saturating_mul(static_cast<std::uint64_t>(params.microbatches),
                                  static_cast<std::uint64_t>(std::max(params.segments.value_or(1), 1)));
    // Every family's pipelines have at most P x V stages.
    if (saturating_mul(P, V) > static_cast<std::uint64_t>(kMaxStagesPerPipeline))
        throw SizeLimitError(fmt::format("{} with {} ranks x {} stages per rank = {} stages: a pipeline holds at most {}", family,
                                         P, V, saturating_mul(P, V), kMaxStagesPerPipeline));
    std::uint64_t ops = saturating_add(saturating_mul(saturating_mul(saturating_mul(P, V), M), 2), P);
    std::string what = family + " with " + std::to_string(P) + " ranks x " + (V > 1 ? std::to_string(V) + " stages per rank x " : "") +
                       std::to_string(M) + " micro-batches";
    if (rows == Rows::LockStep) {
        ops = saturating_add(ops, saturating_mul(saturating_mul(P, P), V));
        what += ", plus PyTorch's lock-step rows (ranks x ranks x stages per rank idle cells)";
    }
    require_size(ops, what);
}

// Every generated schedule names where it came from, for messages and file headers. Only the families
// family_takes_group_size names accept GenerateParams::group_size.
std::function<Schedule(const GenerateParams&)> named(std::string family, Schedule (*generate)(const GenerateParams&),
                                                     int stages_per_rank = 1, Rows rows = Rows::Direct) {
    return [family, generate, stages_per_rank, rows](const GenerateParams& params) {
        if (params.group_size && !family_takes_group_size(family))
            throw GenerateError(family + " has no micro-batch group size: --group-size applies to interleaved-1f1b "
                                         "(Megatron-Core's tunable order), combined-1f1b and group-interleaved");
        if (params.segments && !family_takes_segments(family))
            throw GenerateError(family + " has no sequence segments: --segments applies to seq1f1b");
        require_generated_size(family, params, stages_per_rank, rows);
        Schedule schedule = generate(params);
        if (schedule.source.empty())
            schedule.source = family + "(P=" + std::to_string(params.ranks) + "," +
                              (params.stages_per_rank ? "V=" + std::to_string(*params.stages_per_rank) + "," : "") +
                              "M=" + std::to_string(params.microbatches) + ")";
        return schedule;
    };
}

// The families whose generator is a step program expose it, for pipeproof-check to execute on its own (and the
// zone programs, for the prover to derive their zone words from).
void attach_step_programs(std::vector<ScheduleFamily>& families) {
    const std::pair<const char*, FamilyStepProgram (*)(const GenerateParams&)> programs[] = {
        {"1f1b", step_program_1f1b},       {"zb-h1", step_program_zb_h1},         {"zb-h2", step_program_zb_h2},
        {"dualpipe", step_program_dualpipe}, {"dualpipev", step_program_dualpipev}, {"chimera", step_program_chimera},
        {"interleaved-1f1b", step_program_interleaved_1f1b}, {"zb1p", step_program_zb1p},
        {"zbv", step_program_zbv}, {"combined-1f1b", step_program_combined_1f1b},
        {"seq1f1b", step_program_seq1f1b}, {"group-interleaved", step_program_group_interleaved},
    };
    const std::pair<const char*, FamilyStepProgram (*)(const GenerateParams&)> zone_programs[] = {
        {"gpipe", zone_program_gpipe}, {"looped-bfs", zone_program_looped_bfs}};
    for (ScheduleFamily& family : families) {
        for (const auto& [name, program] : programs)
            if (family.name == name) family.step_program = program;
        for (const auto& [name, program] : zone_programs)
            if (family.name == name) family.zone_program = program;
    }
}

}  // namespace

const std::vector<ScheduleFamily>& schedule_families() {
    static const std::vector<ScheduleFamily> families = [] {
        std::vector<ScheduleFamily> all = {
        {"gpipe", "all forwards, then all backwards", "P, M", "P >= 1, M >= 1", "PyTorch ScheduleGPipe",
         named("gpipe", generate_gpipe)},
        {"1f1b", "one forward, one backward after a warm-up of min(M, P-r) forwards", "P, M", "M >= P",
         "PyTorch Schedule1F1B (as executed)", named("1f1b", generate_1f1b)},
        {"interleaved-1f1b", "1F1B over V stages per rank (loop map), depth-first rounds; with --group-size G Megatron-Core's "
                             "tunable order (micro-batch groups of G per model chunk)",
         "P, M, V; G (--group-size: Megatron's --microbatch-group-size-per-virtual-pipeline-stage, default P there)",
         "M mod max(1, M/P rounded down) == 0; with G (Megatron's checks): P >= 2, V >= 2, P <= G <= M, and M mod G == 0 "
         "or M mod G >= P",
         "PyTorch ScheduleInterleaved1F1B; with G Megatron-Core get_schedule_table / get_pp_rank_microbatches (schedules.py)",
         named("interleaved-1f1b", generate_interleaved_1f1b, 2, Rows::LockStep)},
        {"looped-bfs", "all forwards of each local stage, then backwards in reverse", "P, M, V", "P >= 1, M >= 1",
         "PyTorch ScheduleLoopedBFS", named("looped-bfs", generate_looped_bfs, 2, Rows::LockStep)},
        {"zb1p", "interleaved zero bubble (I/W split, loop map)", "P, M, V", "as interleaved-1f1b",
         "PyTorch ScheduleInterleavedZeroBubble", named("zb1p", generate_zb1p, 2, Rows::LockStep)},
        {"zbv", "zero bubble V schedule (V map, 2 stages per rank)", "P, M", "V == 2",
         "PyTorch ScheduleZBVZeroBubble", named("zbv", generate_zbv, 2, Rows::LockStep)},
        {"zb-h1", "Zero Bubble handcrafted H1 (1F1B memory)", "P, M", "M >= P (sail-sg asserts M >= 2P for all hand schedules)",
         "Zero Bubble paper (ICLR 2024), sail-sg repository", named("zb-h1", generate_zb_h1)},
        {"zb-h2", "Zero Bubble handcrafted H2 (2x 1F1B memory, no bubble)", "P, M", "M >= 2P",
         "Zero Bubble paper (ICLR 2024), sail-sg repository", named("zb-h2", generate_zb_h2)},
        {"dualpipe", "bidirectional pipeline with overlapped F&B pairs", "P, M", "P even, M even, M >= 2P",
         "DeepSeek DualPipe step()", named("dualpipe", generate_dualpipe)},
        {"dualpipev", "DualPipe cut in half: V map, 2 stages per rank", "P, M", "M >= 2P",
         "DeepSeek DualPipeV (= PyTorch ScheduleDualPipeV)", named("dualpipev", generate_dualpipev, 2)},
        {"chimera", "two bidirectional pipelines (Li & Hoefler, SC'21)", "P, M", "P even, M a positive multiple of P",
         "Chimera (Li & Hoefler, SC'21), authors' training loop", named("chimera", generate_chimera)},
        {"combined-1f1b", "Megatron-Core combined 1F1B (EP A2A overlap): interleaved 1F1B, one more warm-up forward, steady "
                          "F&B pairs of different micro-batches",
         "P, M, V; G (--group-size, P > 1 only; default P)",
         "P = 1 (V = 1), or V >= 2, P <= G <= M and M mod G == 0 or M mod G >= P (Megatron's checks; at the default G = P: "
         "M a positive multiple of P)",
         "Megatron-Core --overlap-moe-expert-parallel-comm (combined_1f1b.py, schedules.py)",
         named("combined-1f1b", generate_combined_1f1b)},
        // The V families of "Pipeline Parallelism with Controllable Memory" (NeurIPS 2024), order-identical to the
        // authors' scheduler (tests/data/v-families). The scheduler accepts P = 1; the runtime asserts P > 1.
        {"v-min", "V-Min (Controllable Memory): V map, 6-slot building block compacted greedily; least activation memory",
         "P, M", "P >= 1, M >= 1, V = 2 (the reference's runtime also asserts P > 1)",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 zbv_greedy.py, mem-setup min", named("v-min", generate_v_min, 2), false, "v"},
        {"v-half", "V-Half (Controllable Memory): V map, 6-slot building block compacted greedily; half of 1F1B's memory",
         "P, M", "P >= 1, M >= 1, V = 2 (the reference's runtime also asserts P > 1)",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 zbv_greedy.py, mem-setup half", named("v-half", generate_v_half, 2), false, "v"},
        {"v-zb", "ZB-V greedy (Controllable Memory, mem-setup zb): V map, order adapted to the costs within a memory limit",
         "P, M, costs F, I, W, comm (--costs; default F=I=W=1, comm=0; the reference's runtime orders for "
         "F=I=W=1000, comm=1 before profiling), activation sizes (--activation-sizes; default F=1, I=1/2), memory "
         "limit (generate --memory-limit; default 2P activations)",
         "P >= 1, M >= 1, V = 2 (the runtime also asserts P > 1); one cost set for every stage (no --stage-costs); "
         "memory deltas as F allocates, I frees part, W the rest (the reference's f_mem, b_mem, w_mem that do not sum "
         "to 0 are not expressible); a limit the greedy cannot keep fails, as the reference asserts",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 zbv.py, mem-setup zb", named("v-zb", generate_v_zb, 2), true, "v"},
        {"1f1b-v", "1F1B-V: 1F1B on the V map with a fused full backward B per chunk", "P, M",
         "P >= 1, M >= 1, V = 2 (the reference's runtime also asserts P > 1)",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 v1f1b.py (--enable-1f1b-v)", named("1f1b-v", generate_1f1b_v, 2), false, "v"},
        {"group-interleaved", "group-interleaved 1F1B (PipeOffload's compute order): groups of G micro-batches sweep the V "
                              "chunks forward then backward, I and W split; loop map",
         "P, M, V; G (--group-size, the reference's --interleave-group-size; default ceil(P/2))",
         "P, M, V >= 1, 1 <= G <= P; the order is the reference's at equal F, I, W costs (its min group size grows when F "
         "or I dominates, not modelled)",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 group_interleaved_1f1b.py (PipeOffload, ICML 2025)",
         named("group-interleaved", generate_group_interleaved, 2)},
        {"seq1f1b", "Seq1F1B: 1F1B over k sequence segments per micro-batch (forwards in segment order, backwards in "
                    "reverse); ops number segment units m*k + j, each at 1/k of the costs and stash",
         "P, M; k (--segments, default 2)",
         "P >= 1, M >= 1, k >= 1 (k = 1 is 1F1B); equal segments unless --segment-costs gives their shares (attention=A: causal attention's growth); prove: M >= ceil((P-2+k)/k), equal segments, a unit's costs (1/k of a micro-batch's)",
         "sail-sg/zero-bubble-pipeline-parallelism@39f2c186 seq1f1b.py; thunlp/Seq1F1B@68934661 (identical orders)",
         named("seq1f1b", generate_seq1f1b)},
        };
        attach_step_programs(all);
        return all;
    }();
    return families;
}

namespace {

// The spelling families are compared in: lower case, '_' as '-' ("ZB_H1" is "zb-h1").
std::string normalized(std::string_view name) {
    std::string out;
    for (char c : name) out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

const ScheduleFamily* find_family(std::string_view name) {
    const std::string wanted = normalized(name);
    for (const auto& family : schedule_families())
        if (family.name == wanted) return &family;
    return nullptr;
}

std::string unknown_family_message(std::string_view name) {
    std::vector<std::string> names;
    for (const auto& family : schedule_families()) names.push_back(family.name);
    std::string message = "unknown schedule family '" + std::string(name) + "'";
    if (auto nearest = nearest_spelling(normalized(name), names)) message += "; did you mean '" + *nearest + "'?";
    return message + " (families: " + fmt::format("{}", fmt::join(names, ", ")) + ")";
}

}  // namespace pp
