#include "model/layout.hpp"

#include <fmt/format.h>

namespace pp {
namespace {

constexpr int kMaxNesting = 64;
constexpr size_t kMaxTokens = static_cast<size_t>(kMaxLayoutLayers) + kMaxLayoutBlocks;

// The layout expanded to a flat string of layer letters and '|', repetitions bounded before they are made.
class LayoutExpander {
public:
    explicit LayoutExpander(std::string_view text) : text_(text) {}

    std::string expand() {
        std::string out = sequence(0);
        if (pos_ < text_.size()) fail("')' without its '('", pos_);
        return out;
    }

private:
    [[noreturn]] void fail(const std::string& what, size_t at) const { throw CostSyntaxError{what, at}; }

    std::string sequence(int depth) {
        std::string out;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == ')') break;
            if (c == ',' || c == ' ' || c == '\t') {
                ++pos_;
                continue;
            }
            const size_t start = pos_;
            std::string piece;
            if (c == '(') {
                if (depth + 1 > kMaxNesting) fail(fmt::format("more than {} nested '('", kMaxNesting), pos_);
                ++pos_;
                piece = sequence(depth + 1);
                if (pos_ >= text_.size()) fail("'(' without its ')'", start);
                ++pos_;  // ')'
                if (pos_ >= text_.size() || text_[pos_] != '*') fail("expected '*N' after a parenthesised piece", pos_);
            } else if (c == '|' || kLayerLetters.find(c) != std::string_view::npos) {
                piece = std::string(1, c);
                ++pos_;
            } else {
                fail(fmt::format("expected a layer (E embedding, t decoder, m MTP, L loss), '|', '(' or ',', got '{}'", c),
                     pos_);
            }
            const size_t times = repetition();
            if (times > 0 && piece.size() > (kMaxTokens - out.size()) / times)
                fail(fmt::format("the layout would hold more than {} layers and {} blocks", kMaxLayoutLayers, kMaxLayoutBlocks),
                     start);
            for (size_t i = 0; i < times; ++i) out += piece;
        }
        return out;
    }

    // "*N" after a piece (1 without it).
    size_t repetition() {
        if (pos_ >= text_.size() || text_[pos_] != '*') return 1;
        const size_t star = pos_++;
        size_t value = 0, digits = 0;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
            value = value * 10 + static_cast<size_t>(text_[pos_] - '0');
            if (value > kMaxTokens) fail(fmt::format("a repetition count above {}", kMaxTokens), star + 1);
            ++pos_;
            ++digits;
        }
        if (digits == 0) fail("expected a count after '*'", star + 1);
        return value;
    }

    std::string_view text_;
    size_t pos_ = 0;
};

int kind_index(char letter) { return static_cast<int>(kLayerLetters.find(letter)); }

}  // namespace

StageLayout parse_stage_layout(std::string_view text) {
    StageLayout layout;
    layout.text = std::string(text);
    const std::string flat = LayoutExpander(text).expand();
    layout.blocks.emplace_back();
    long layers = 0;
    for (const char c : flat) {
        if (c == '|') {
            if (static_cast<int>(layout.blocks.size()) >= kMaxLayoutBlocks)
                throw CostSyntaxError{fmt::format("the layout holds more than {} blocks", kMaxLayoutBlocks), 0};
            layout.blocks.emplace_back();
            continue;
        }
        if (++layers > kMaxLayoutLayers)
            throw CostSyntaxError{fmt::format("the layout holds more than {} layers", kMaxLayoutLayers), 0};
        ++layout.blocks.back().count[kind_index(c)];
    }
    if (layers == 0) throw CostSyntaxError{"the layout holds no layer", 0};
    return layout;
}

std::string format_block_layers(const BlockLayers& block) {
    if (block.empty()) return "-";
    std::string out;
    for (int k = 0; k < kLayerKinds; ++k) {
        if (block.count[k] == 0) continue;
        if (!out.empty()) out += "+";
        if (block.count[k] > 1) out += std::to_string(block.count[k]);
        out += kLayerLetters[k];
    }
    return out;
}

LayerCosts::LayerCosts(const OpCosts& decoder) {
    const OpCosts nothing{Rational(0), Rational(0), Rational(0), std::nullopt, std::nullopt, std::nullopt};
    costs = {nothing, decoder, decoder, nothing};
}

void LayerCosts::apply_costs(std::string_view item) {
    const size_t colon = item.find(':');
    if (colon != 1 || kLayerLetters.find(item[0]) == std::string_view::npos)
        throw CostSyntaxError{"expected LAYER:F=..,I=..,W=.. with LAYER one of E, t, m, L", 0};
    const int k = kind_index(item[0]);
    try {
        apply_cost_items(item.substr(colon + 1), costs[k], nullptr);
    } catch (CostSyntaxError& e) {
        e.offset += colon + 1;
        throw;
    }
    costs_given[k] = true;
}

void LayerCosts::apply_sizes(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t start = pos;
        size_t end = text.find(',', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view item = text.substr(start, end - start);
        pos = end + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq != 1 || kLayerLetters.find(item[0]) == std::string_view::npos)
            throw CostSyntaxError{"expected LAYER=SIZE with LAYER one of E, t, m, L", start};
        const auto value = parse_rational(item.substr(2));
        if (!value) throw CostSyntaxError{"expected a non-negative number such as 1, 0.5 or 3/2", start + 2};
        sizes[kind_index(item[0])] = *value;
        size_given[kind_index(item[0])] = true;
    }
}

OpCosts block_costs(const BlockLayers& block, const LayerCosts& layers) {
    // Each layer's effective value where the block needs a total (OpCosts' defaults: B = I + W, a pair F + its
    // backward, FI = FB when given); a total is set only when some layer gives its own, else the default applies
    // to the sums and says the same.
    OpCosts sum{Rational(0), Rational(0), Rational(0), std::nullopt, std::nullopt, std::nullopt};
    Rational b(0), fb(0), fi(0);
    bool some_b = false, some_fb = false, some_fi = false;
    for (int k = 0; k < kLayerKinds; ++k) {
        if (block.count[k] == 0) continue;
        const OpCosts& c = layers.costs[k];
        const Rational n(block.count[k]);
        sum.F += n * c.F;
        sum.I += n * c.I;
        sum.W += n * c.W;
        b += n * c.full_backward();
        fb += n * (c.FB ? *c.FB : c.F + c.full_backward());
        fi += n * (c.FI ? *c.FI : c.FB ? *c.FB : c.F + c.I);
        some_b = some_b || c.B.has_value();
        some_fb = some_fb || c.FB.has_value();
        some_fi = some_fi || c.FI.has_value() || c.FB.has_value();
    }
    if (some_b) sum.B = b;
    if (some_fb) sum.FB = fb;
    if (some_fi) sum.FI = fi;
    return sum;
}

Rational block_stash(const BlockLayers& block, const LayerCosts& layers) {
    Rational total(0);
    for (int k = 0; k < kLayerKinds; ++k) total += Rational(block.count[k]) * layers.sizes[k];
    return total;
}

}  // namespace pp
