#include "model/op.hpp"

#include "model/size_budget.hpp"

namespace pp {

void throw_index_limit(const char* what, int value, int limit) {
    if (value < 0) throw SizeLimitError(std::string("negative ") + what + " index " + std::to_string(value));
    throw SizeLimitError(std::string(what) + " " + std::to_string(value) + " is past the limit: at most " +
                         std::to_string(limit + 1) + " " + what + "s, numbered 0.." + std::to_string(limit));
}

char kind_letter(OpKind kind) {
    switch (kind) {
        case OpKind::F: return 'F';
        case OpKind::I: return 'I';
        case OpKind::W: return 'W';
        case OpKind::B: return 'B';
    }
    return '?';
}

bool is_backward(OpKind kind) { return kind == OpKind::I || kind == OpKind::B; }

std::string format_op(const Op& op) { return format_op(op.kind, op.pipeline, op.stage, op.microbatch); }

std::string format_op(OpKind kind, int pipeline, int stage, int microbatch) {
    std::string text = std::to_string(stage);
    text += kind_letter(kind);
    text += std::to_string(microbatch);
    if (pipeline != 0) text += "@" + std::to_string(pipeline);
    return text;
}

std::string format_slot(const Slot& slot) {
    if (!slot.is_pair()) return format_op(slot.ops[0]);
    return "(" + format_op(slot.ops[0]) + ";" + format_op(slot.ops[1]) + ")";
}

}  // namespace pp
