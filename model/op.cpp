#include "model/op.hpp"

namespace pp {

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

std::string format_op(const Op& op) {
    std::string text = std::to_string(op.stage);
    text += kind_letter(op.kind);
    text += std::to_string(op.microbatch);
    if (op.pipeline != 0) text += "@" + std::to_string(op.pipeline);
    return text;
}

std::string format_slot(const Slot& slot) {
    if (!slot.is_pair()) return format_op(slot.ops[0]);
    return "(" + format_op(slot.ops[0]) + ";" + format_op(slot.ops[1]) + ")";
}

}  // namespace pp
