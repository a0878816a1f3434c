#pragma once
// The one way a JSON document becomes text. nlohmann's default dump throws on a string that is not valid
// UTF-8 -- a file name, a flag value or a quoted input byte in an error message can be any bytes -- and a
// throw while printing an error would end the process; invalid bytes are written as U+FFFD instead.
#include <nlohmann/json.hpp>

#include <string>

namespace pp {

// indent -1: compact, one line.
template <class Json>
std::string json_text(const Json& document, int indent = -1) {
    return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pp
