#pragma once
// The vocabulary of pipeline work, with PyTorch's letters:
//   F forward, I input-gradient backward, W weight-gradient backward, B full backward (= I + W).
// (DeepSeek's "B" is also the full backward; the Zero Bubble paper's "B" is our I.)
// A Slot is what a rank executes as one unit: a single op, or an overlapped pair of one F and one
// backward (DeepSeek's "F&B", PyTorch's OVERLAP_F_B) that starts and ends together.
#include <array>
#include <cstdint>
#include <string>

namespace pp {

enum class OpKind : std::uint8_t { F = 0, I = 1, W = 2, B = 3 };
inline constexpr int kOpKinds = 4;

char kind_letter(OpKind kind);
bool is_backward(OpKind kind);  // I or B: the op that carries the gradient to the previous stage

struct Op {
    OpKind kind = OpKind::F;
    int pipeline = 0;
    int stage = 0;  // position along its own pipeline
    int microbatch = 0;
    friend bool operator==(const Op&, const Op&) = default;
};

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

// PyTorch action syntax, extended with "@k" for pipeline k > 0: "3F1", "0W2@1".
std::string format_op(const Op& op);
// "(0F7;7B3)" for a pair, the op text otherwise.
std::string format_slot(const Slot& slot);

}  // namespace pp
