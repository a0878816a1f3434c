#pragma once
// The vocabulary of pipeline work, with PyTorch's letters:
//   F forward, I input-gradient backward, W weight-gradient backward, B full backward (= I + W).
// (DeepSeek's "B" is also the full backward; the Zero Bubble paper's "B" is our I.)
// A Slot is what a rank executes as one unit: a single op, or an overlapped pair of one F and one
// backward (DeepSeek's "F&B", PyTorch's OVERLAP_F_B) that starts and ends together.
#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace pp {

enum class OpKind : std::uint8_t { F = 0, I = 1, W = 2, B = 3 };
inline constexpr int kOpKinds = 4;

char kind_letter(OpKind kind);
bool is_backward(OpKind kind);  // I or B: the op that carries the gradient to the previous stage

// An Op is 8 bytes, so that a Slot is 28 and a schedule of millions of ops is read and walked at memory speed
// (docs/benchmarks.md, "Reading speed against awk"). Hence the limits: at most kMaxPipelines pipelines,
// kMaxStagesPerPipeline stages in each, micro-batch numbers up to INT32_MAX. Placement::validate and the
// readers refuse larger ones with the reason; storing an index out of range anywhere else throws
// SizeLimitError, never wraps.
inline constexpr int kMaxPipelines = 256;
inline constexpr int kMaxStagesPerPipeline = 65536;

[[noreturn]] void throw_index_limit(const char* what, int value, int limit);

// A non-negative index stored in `Rep`: reads as an int, and is checked whenever an int is stored in it.
template <class Rep, const char* What>
class SmallIndex {
public:
    static constexpr int kMax = std::numeric_limits<Rep>::max();
    constexpr SmallIndex() = default;
    constexpr SmallIndex(int value) : value_(checked(value)) {}  // NOLINT: an int converts, checked
    constexpr operator int() const { return value_; }             // NOLINT: and reads as one

private:
    static constexpr Rep checked(int value) {
        if (value < 0 || value > kMax) throw_index_limit(What, value, kMax);
        return static_cast<Rep>(value);
    }
    Rep value_ = 0;
};

inline constexpr char kPipelineWord[] = "pipeline";
inline constexpr char kStageWord[] = "stage";
using PipelineIndex = SmallIndex<std::uint8_t, kPipelineWord>;
using StageIndex = SmallIndex<std::uint16_t, kStageWord>;
static_assert(PipelineIndex::kMax + 1 == kMaxPipelines && StageIndex::kMax + 1 == kMaxStagesPerPipeline);

struct Op {
    OpKind kind = OpKind::F;
    PipelineIndex pipeline = 0;
    StageIndex stage = 0;  // position along its own pipeline
    std::int32_t microbatch = 0;
    friend bool operator==(const Op&, const Op&) = default;
};
static_assert(sizeof(Op) == 8);

// Where a slot came from in a file (line and column are 1-based; 0 = not from a file).
struct SourceLoc {
    int line = 0;
    int column = 0;
    bool known() const { return line > 0; }
};

struct Slot {
    std::array<Op, 2> ops{};
    std::uint8_t count = 1;  // 1 = single op, 2 = overlapped pair (ops[0] is the F)
    SourceLoc loc{};

    static Slot single(Op op, SourceLoc loc = {}) { return Slot{{op, Op{}}, 1, loc}; }
    static Slot pair(Op forward, Op backward, SourceLoc loc = {}) { return Slot{{forward, backward}, 2, loc}; }
    bool is_pair() const { return count == 2; }
    const Op* begin() const { return ops.data(); }
    const Op* end() const { return ops.data() + count; }
};
static_assert(sizeof(Slot) == 28);

// PyTorch action syntax, extended with "@k" for pipeline k > 0: "3F1", "0W2@1".
std::string format_op(const Op& op);
// The same text from numbers that may not fit an Op (a reader's message about an op out of range).
std::string format_op(OpKind kind, int pipeline, int stage, int microbatch);
// "(0F7;7B3)" for a pair, the op text otherwise.
std::string format_slot(const Slot& slot);

}  // namespace pp
