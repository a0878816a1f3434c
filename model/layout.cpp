#include "model/layout.hpp"

#include <fmt/format.h>

namespace pp {
namespace {

constexpr int kMaxNesting = 64;
// Letters written while expanding, discarded pieces (`(..)*0`) included: bounds the work of any input.
constexpr long kMaxExpansionWork = 32 * (kMaxLayoutLayers + kMaxLayoutBlocks);

// A piece of the layout expanded: its letters and '|', and how many of each.
struct Expanded {
    std::string text;
    long layers = 0, bars = 0;
};

// The layout expanded to a flat string of layer letters and '|', every count bounded before it is made.
class LayoutExpander {
public:
    explicit LayoutExpander(std::string_view text) : text_(text) {}

    std::string expand() {
        Expanded out = sequence(0);
        if (pos_ < text_.size()) fail("')' without its '('", pos_);
        return std::move(out.text);
    }

private:
    [[noreturn]] void fail(const std::string& what, size_t at) const { throw CostSyntaxError{what, at}; }

    static std::string shown(char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte >= 0x20 && byte < 0x7f ? fmt::format("'{}'", c) : fmt::format("the byte 0x{:02X}", byte);
    }

    Expanded sequence(int depth) {
        Expanded out;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == ')') break;
            if (c == ',' || c == ' ' || c == '\t') {
                ++pos_;
                continue;
            }
            const size_t start = pos_;
            Expanded piece;
            if (c == '(') {
                if (depth + 1 > kMaxNesting) fail(fmt::format("more than {} nested '('", kMaxNesting), pos_);
                ++pos_;
                piece = sequence(depth + 1);
                if (pos_ >= text_.size()) fail("'(' without its ')'", start);
                ++pos_;  // ')'
                if (pos_ >= text_.size() || text_[pos_] != '*') fail("expected '*N' after a parenthesised piece", pos_);
            } else if (c == '|' || kLayerLetters.find(c) != std::string_view::npos) {
                piece.text = std::string(1, c);
                (c == '|' ? piece.bars : piece.layers) = 1;
                ++pos_;
            } else {
                fail("expected a layer (E embedding, t decoder, m MTP, L loss), '|', '(' or ',', got " + shown(c), pos_);
            }
            const size_t count_at = pos_ < text_.size() && text_[pos_] == '*' ? pos_ + 1 : start;
            const long times = repetition();
            if (out.layers + times * piece.layers > kMaxLayoutLayers)
                fail(fmt::format("the layout would hold more than {} layers", kMaxLayoutLayers), count_at);
            if (out.bars + times * piece.bars >= kMaxLayoutBlocks)
                fail(fmt::format("the layout would hold more than {} blocks", kMaxLayoutBlocks), count_at);
            work_ += times * static_cast<long>(piece.text.size());
            if (work_ > kMaxExpansionWork)
                fail(fmt::format("the layout takes more than {} letters of expansion (repeated pieces included)", kMaxExpansionWork),
                     count_at);
            for (long i = 0; i < times; ++i) out.text += piece.text;
            out.layers += times * piece.layers;
            out.bars += times * piece.bars;
        }
        return out;
    }

    // "*N" after a piece (1 without it).
    long repetition() {
        if (pos_ >= text_.size() || text_[pos_] != '*') return 1;
        const size_t star = pos_++;
        long value = 0, digits = 0;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
            value = value * 10 + (text_[pos_] - '0');
            if (value > kMaxLayoutLayers + kMaxLayoutBlocks)
                fail(fmt::format("a repetition count above {}", kMaxLayoutLayers + kMaxLayoutBlocks), star + 1);
            ++pos_;
            ++digits;
        }
        if (digits == 0) fail("expected a count after '*'", star + 1);
        return value;
    }

    std::string_view text_;
    size_t pos_ = 0;
    long work_ = 0;
};

int kind_index(char letter) { return static_cast<int>(kLayerLetters.find(letter)); }

}  // namespace

StageLayout parse_stage_layout(std::string_view text) {
    StageLayout layout;
    layout.text = std::string(text);
    const std::string flat = LayoutExpander(text).expand();
    layout.blocks.emplace_back();
    long layers = 0;
    for (const char c : flat) {  // the expander has bounded both counts
        if (c == '|') {
            layout.blocks.emplace_back();
            continue;
        }
        ++layers;
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
    if (k == static_cast<int>(LayerKind::Decoder))
        throw CostSyntaxError{"a decoder layer's costs are --costs; --layer-costs sets E, m and L", 0};
    if (costs_given[k]) throw CostSyntaxError{fmt::format("{} is given twice", item[0]), 0};
    if (item.find_first_not_of(" \t", colon + 1) == std::string_view::npos)
        throw CostSyntaxError{"expected costs after ':', e.g. F=1,I=1,W=1", colon + 1};
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
        std::string_view item = text.substr(start, end - start);
        pos = end + 1;
        const size_t first = item.find_first_not_of(" \t");
        if (first == std::string_view::npos) continue;
        const size_t at = start + first;  // the item's offset, blanks around it ignored as --costs does
        item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
        const size_t eq = item.find('=');
        if (eq != 1 || kLayerLetters.find(item[0]) == std::string_view::npos)
            throw CostSyntaxError{"expected LAYER=SIZE with LAYER one of E, t, m, L", at};
        const int k = kind_index(item[0]);
        if (size_given[k]) throw CostSyntaxError{fmt::format("{} is given twice", item[0]), at};
        const auto value = parse_rational(item.substr(2));
        if (!value) throw CostSyntaxError{"expected a non-negative number such as 1, 0.5 or 3/2", at + 2};
        sizes[k] = *value;
        size_given[k] = true;
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
