#include "verifier/pytorch_compat.hpp"

#include <map>
#include <set>
#include <stdexcept>

namespace pp {
namespace {

// PyTorch's message texts, including the run of blanks its f-strings pick up from a backslash line
// continuation ("equal counts, \<newline><12 blanks>but got").
constexpr const char* kContinuation = "            ";

// PyTorch stops at the first failed assertion; so do we, by throwing this out of the scan.
struct Rejected {
    std::string message;
};

struct StageSets {
    std::set<int> F, I, W, B;
};

// One entry of a rank's list as _validate_schedule sees it: the step number and what it names.
struct Entry {
    int step = 0;
    const Slot* slot = nullptr;  // compute entry
    int comm_stage = -1;         // comm entry: its stage, which only takes part in the ownership check
};

std::vector<Entry> entries_of_rank(const Schedule& schedule, size_t rank) {
    std::vector<Entry> entries;
    if (schedule.actions) {
        const auto& actions = (*schedule.actions)[rank];
        for (size_t k = 0; k < actions.size(); ++k) {
            const RankAction& a = actions[k];
            entries.push_back(a.is_compute ? Entry{static_cast<int>(k), &schedule.ranks[rank][a.slot], -1}
                                           : Entry{static_cast<int>(k), nullptr, a.stage});
        }
        return entries;
    }
    // Steps count the empty cells, as PyTorch enumerates its list with the Nones in it.
    const auto& slots = schedule.ranks[rank];
    const std::vector<int>* gaps = rank < schedule.gaps.size() ? &schedule.gaps[rank] : nullptr;
    int step = 0;
    for (size_t k = 0; k < slots.size(); ++k) {
        if (gaps && k < gaps->size()) step += (*gaps)[k];
        entries.push_back(Entry{step++, &slots[k], -1});
    }
    return entries;
}

class Validation {
public:
    explicit Validation(const Schedule& schedule)
        : schedule_(schedule), sets_(schedule.placement.pipelines[0].stages()) {}

    // Throws Rejected at the first failed check.
    void run() {
        size_t rows = schedule_.actions ? schedule_.actions->size() : schedule_.ranks.size();
        int ranks = schedule_.placement.ranks;
        if (static_cast<int>(rows) != ranks)
            throw Rejected{"Schedule has incorrect number of ranks - expected " + std::to_string(ranks) + ", actual " +
                std::to_string(rows)};
        // PyTorch's "Schedule is missing actions for rank r" cannot happen here: rows are ranks 0..n-1.
        for (size_t r = 0; r < rows; ++r)
            for (const Entry& e : entries_of_rank(schedule_, r)) process(e, static_cast<int>(r));
        check_counts();
    }

private:
    const Schedule& schedule_;
    std::vector<StageSets> sets_;
    std::map<int, int> owner_;  // stage -> first rank seen

    std::string prefix(int rank, int step) const {
        return "Rank " + std::to_string(rank) + ", step " + std::to_string(step) + ": ";
    }

    void process(const Entry& e, int rank) {
        if (!e.slot) {
            claim(e.comm_stage, rank, e.step);
            return;
        }
        for (const Op& op : *e.slot) {  // a pair is checked through its halves, at the same step
            process_op(op, rank, e.step);
            claim(op.stage, rank, e.step);
        }
    }

    void process_op(const Op& op, int rank, int step) {
        // PyTorch indexes a dict built for range(num_stages): anything else is a bare KeyError.
        if (op.stage < 0 || op.stage >= static_cast<int>(sets_.size())) throw Rejected{"KeyError: " + std::to_string(op.stage)};
        StageSets& s = sets_[op.stage];
        std::string what = " for stage " + std::to_string(op.stage) + ", microbatch " + std::to_string(op.microbatch);
        switch (op.kind) {
            case OpKind::F: s.F.insert(op.microbatch); return;
            case OpKind::B:
                if (!s.F.count(op.microbatch))
                    throw Rejected{prefix(rank, step) + "Running Full Backward" + what + " without first running Forward"};
                s.B.insert(op.microbatch);
                return;
            case OpKind::I:
                if (!s.F.count(op.microbatch))
                    throw Rejected{prefix(rank, step) + "Running Backward Input" + what + " without first running Forward"};
                s.I.insert(op.microbatch);
                return;
            case OpKind::W:
                if (!s.I.count(op.microbatch))
                    throw Rejected{prefix(rank, step) + "Running Backward Weight" + what + " without first running Backward Input"};
                s.W.insert(op.microbatch);
                return;
        }
    }

    void claim(int stage, int rank, int step) {
        auto [it, inserted] = owner_.try_emplace(stage, rank);
        if (!inserted && it->second != rank)
            throw Rejected{prefix(rank, step) + "Stage " + std::to_string(stage) + " is assigned to both rank " +
                std::to_string(rank) + " and rank " + std::to_string(it->second)};
    }

    // Sizes of sets only: duplicates and out-of-range micro-batches are invisible here, as in PyTorch.
    void check_counts() const {
        int m = schedule_.placement.pipelines[0].microbatches;
        for (size_t id = 0; id < sets_.size(); ++id) {
            std::string stage = std::to_string(id);
            int f = static_cast<int>(sets_[id].F.size()), b = static_cast<int>(sets_[id].B.size());
            int i = static_cast<int>(sets_[id].I.size()), w = static_cast<int>(sets_[id].W.size());
            if (f != m)
                throw Rejected{"Got " + std::to_string(f) + " F microbatches for stage " + stage + ", expected " + std::to_string(m)};
            if (i != w)
                throw Rejected{"Invalid backward microbatches for stage " + stage + ": I and W must have equal counts, " +
                    kContinuation + "but got I=" + std::to_string(i) + ", W=" + std::to_string(w)};
            if (b + (i + w) / 2 != m)
                throw Rejected{"Invalid backward microbatches for stage " + stage + ": expected " + std::to_string(m) +
                    " total backwards, " + kContinuation + "but got B=" + std::to_string(b) + ", I=" +
                    std::to_string(i) + ", W=" + std::to_string(w)};
        }
    }
};

}  // namespace

std::optional<std::string> pytorch_validate_schedule(const Schedule& schedule) {
    if (schedule.placement.pipeline_count() != 1)
        throw std::invalid_argument("PyTorch's _validate_schedule covers one pipeline, this schedule has " +
                                    std::to_string(schedule.placement.pipeline_count()));
    try {
        Validation(schedule).run();
    } catch (const Rejected& rejected) {
        return rejected.message;
    }
    return std::nullopt;
}

}  // namespace pp
