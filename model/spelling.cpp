#include "model/spelling.hpp"

#include <algorithm>
#include <cctype>

namespace pp {

std::string to_lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

std::optional<std::string> nearest_spelling(std::string_view wanted, const std::vector<std::string>& candidates) {
    std::optional<std::string> nearest;
    size_t best = std::max<size_t>(2, wanted.size() / 3) + 1;
    for (const std::string& candidate : candidates) {
        const bool prefix = wanted.size() >= 3 && candidate.rfind(wanted, 0) == 0;
        const size_t d = prefix ? 1 : edit_distance(wanted, candidate);
        if (d < best) best = d, nearest = candidate;
    }
    return nearest;
}

}  // namespace pp
