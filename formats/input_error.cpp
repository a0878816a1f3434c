#include "formats/input_error.hpp"

namespace pp {

std::string InputError::where() const {
    if (line <= 0) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace pp
