// The SVG timeline, golden-free: it is well-formed XML, has one lane per rank, one slot group per slot
// with one box per op, pairs drawn as one bordered unit holding their two ops, and a memory curve per lane.
#include "render/svg_timeline.hpp"
#include "schedules/registry.hpp"
#include "verifier/simulate.hpp"
#include "test_render_xml.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace pp;
using pp::test::parse_xml;
using pp::test::XmlElement;

namespace {

Schedule generate(const std::string& family, int P, int M, std::optional<int> V = std::nullopt) {
    return find_family(family)->generate({P, M, V});
}

std::string draw(const Schedule& schedule, const Costs& costs, SvgOptions options = {}) {
    options.costs = &costs;
    return svg_timeline(schedule, simulate(schedule, costs), options);
}

// Checks the structure against the schedule: lanes, slots in order, ops in order, pair borders.
void check_structure(const Schedule& schedule, const XmlElement& svg) {
    const auto lanes = svg.with_class("g", "lane");
    REQUIRE(lanes.size() == schedule.ranks.size());
    for (size_t r = 0; r < lanes.size(); ++r) {
        CHECK(lanes[r]->attr("data-rank") == std::to_string(r));
        const auto slots = lanes[r]->with_class("g", "slot");
        REQUIRE(slots.size() == schedule.ranks[r].size());
        for (size_t k = 0; k < slots.size(); ++k) {
            const Slot& slot = schedule.ranks[r][k];
            const auto ops = slots[k]->with_class("rect", "op");
            REQUIRE(ops.size() == slot.count);
            for (size_t i = 0; i < ops.size(); ++i) {
                CHECK(ops[i]->attr("data-rank") == std::to_string(r));
                CHECK(ops[i]->attr("data-op") == format_op(slot.ops[i]));
                CHECK(ops[i]->attr("data-kind") == std::string(1, kind_letter(slot.ops[i].kind)));
            }
            CHECK(slots[k]->has_class("pair") == slot.is_pair());
            CHECK(slots[k]->with_class("rect", "pair-border").size() == (slot.is_pair() ? 1u : 0u));
        }
    }
}

size_t total_ops(const Schedule& s) { return s.op_count(); }

}  // namespace

TEST_CASE("svg: DualPipe P=4 M=8 parses and has one lane per rank, one box per op, bordered pairs", "[render]") {
    const Schedule schedule = generate("dualpipe", 4, 8);
    const std::string text = draw(schedule, parse_costs("F=1,I=1,W=1,FB=3"));
    const auto svg = parse_xml(text);
    REQUIRE(svg->name == "svg");
    CHECK(svg->attr("xmlns") == "http://www.w3.org/2000/svg");
    check_structure(schedule, *svg);
    CHECK(svg->with_class("rect", "op").size() == total_ops(schedule));
    // DualPipe has pairs, and both directions, so direction triangles are drawn.
    CHECK(!svg->with_class("g", "pair").empty());
    CHECK(!svg->with_class("polygon", "dir").empty());
    CHECK(svg->with_class("path", "memory").size() == 4);
}

TEST_CASE("svg: a one-way pipeline gets no direction marks -- memory curves can be switched off", "[render]") {
    const Schedule schedule = generate("1f1b", 4, 8);
    SvgOptions options;
    options.memory_curves = false;
    const auto svg = parse_xml(draw(schedule, Costs{}, options));
    check_structure(schedule, *svg);
    CHECK(svg->with_class("polygon", "dir").empty());
    CHECK(svg->with_class("path", "memory").empty());
    CHECK(svg->with_class("g", "pair").empty());
}

TEST_CASE("svg: legible at P=16 M=64 -- every op boxed, labels shrink or drop but never overflow", "[render]") {
    for (const char* family : {"dualpipe", "zbv", "interleaved-1f1b"}) {
        const Schedule schedule = generate(family, 16, 64);
        const std::string text = draw(schedule, parse_costs("F=1,I=1,W=1,FB=2.5"));
        const auto svg = parse_xml(text);
        check_structure(schedule, *svg);
        // A label is at least 7 px and at most 11 px; width is bounded so browsers keep it.
        std::vector<const XmlElement*> labels;
        svg->collect([](const XmlElement& e) { return e.name == "text"; }, labels);
        for (const auto* label : labels) {
            const double size = std::stod(label->attr("font-size"));
            CHECK(size >= 7);
            CHECK(size <= 15);
        }
        CHECK(std::stod(svg->attr("width")) <= 9600 + 200);
        // Two-digit micro-batch numbers stay on the boxes: most ops carry a label.
        CHECK(labels.size() > schedule.op_count() / 2);
    }
}

// Every text element inside one slot group, concatenated with spaces.
std::string slot_text(const XmlElement& slot) {
    std::vector<const XmlElement*> texts;
    slot.collect([](const XmlElement& e) { return e.name == "text"; }, texts);
    std::string all;
    for (const auto* t : texts) all += " " + t->text;
    return all;
}

TEST_CASE("svg: at P=16 M=64 every box carries its micro-batch number, pairs included", "[render]") {
    // FB = 1.5 makes the forward half of a DualPipe pair 1/3 of 1.5 units: too narrow for its own number, so
    // the pair is labelled "forward+backward" as one unit.
    for (const char* costs : {"F=1,I=1,W=1,FB=1.5", "F=1,I=1,W=1,FB=2.5"})
        for (const char* family : {"dualpipe", "dualpipev", "zbv", "interleaved-1f1b"}) {
            INFO(family << " " << costs);
            const Schedule schedule = generate(family, 16, 64);
            const auto svg = parse_xml(draw(schedule, parse_costs(costs)));
            const auto lanes = svg->with_class("g", "lane");
            REQUIRE(lanes.size() == 16);
            size_t unlabelled = 0;
            for (size_t r = 0; r < lanes.size(); ++r) {
                const auto slots = lanes[r]->with_class("g", "slot");
                REQUIRE(slots.size() == schedule.ranks[r].size());
                for (size_t k = 0; k < slots.size(); ++k) {
                    const Slot& slot = schedule.ranks[r][k];
                    const std::string text = slot_text(*slots[k]);
                    const std::string expected = slot.is_pair()
                                                     ? std::to_string(slot.ops[0].microbatch) + "+" +
                                                           std::to_string(slot.ops[1].microbatch)
                                                     : std::to_string(slot.ops[0].microbatch);
                    const bool separate = slot.is_pair() &&
                                          text.find(" " + std::to_string(slot.ops[0].microbatch)) != std::string::npos &&
                                          text.find(" " + std::to_string(slot.ops[1].microbatch)) != std::string::npos;
                    if (text.find(" " + expected) == std::string::npos && !separate) ++unlabelled;
                }
            }
            CHECK(unlabelled == 0);
        }
}

TEST_CASE("svg: direction marks follow each op's output -- a backward's gradient goes the other way", "[render]") {
    // DualPipe P=4: pipeline 0 flows toward higher ranks, so its F points down (the "dir" triangle with its
    // tip at the bottom) and its I/B up; pipeline 1 the reverse; W has no mark.
    const Schedule schedule = generate("dualpipe", 4, 8);
    const auto svg = parse_xml(draw(schedule, parse_costs("F=4,I=4,W=4,FB=12")));
    size_t checked = 0;
    for (const auto* lane : svg->with_class("g", "lane")) {
        const size_t r = std::stoul(lane->attr("data-rank"));
        const auto slots = lane->with_class("g", "slot");
        for (size_t k = 0; k < slots.size(); ++k) {
            const Slot& slot = schedule.ranks[r][k];
            if (slot.is_pair()) continue;
            const Op& op = slot.ops[0];
            const auto marks = slots[k]->with_class("polygon", "dir");
            if (op.kind == OpKind::W) {
                CHECK(marks.empty());
                continue;
            }
            if (marks.empty()) continue;  // no room for a mark
            // points="x,y1 x,y1 x,y3": the first two share the flat side; the tip is below them when pointing down.
            const std::string points = marks[0]->attr("points");
            const double flat_y = std::stod(points.substr(points.find(',') + 1));
            const double tip_y = std::stod(points.substr(points.rfind(',') + 1));
            const bool points_down = tip_y > flat_y;
            const bool toward_higher = (op.pipeline == 0) == (op.kind == OpKind::F);
            CHECK(points_down == toward_higher);
            ++checked;
        }
    }
    CHECK(checked > 20);
}

TEST_CASE("svg: text from the schedule is escaped -- V shapes and per-block costs draw", "[render]") {
    Schedule schedule = generate("dualpipev", 4, 8);
    schedule.source = "a<b & \"c\"";
    Costs costs = parse_costs("F=1,I=1,W=1");
    costs.per_block[3] = costs.base;
    costs.per_block[3].F = Rational(5, 2);
    SvgOptions options;
    options.subtitle = "x > y & z";
    const auto svg = parse_xml(draw(schedule, costs, options));
    check_structure(schedule, *svg);
    std::vector<const XmlElement*> texts;
    svg->collect([](const XmlElement& e) { return e.name == "text" && e.text == "a<b & \"c\""; }, texts);
    CHECK(texts.size() == 1);
}

TEST_CASE("svg: the XML checker itself rejects malformed input", "[render]") {
    CHECK_THROWS(parse_xml("<svg><g></svg>"));
    CHECK_THROWS(parse_xml("<svg a=\"1\" a=\"2\"/>"));
    CHECK_THROWS(parse_xml("<svg>a & b</svg>"));
    CHECK_THROWS(parse_xml("<svg x=1/>"));
    CHECK_THROWS(parse_xml("<svg/><svg/>"));
    CHECK_NOTHROW(parse_xml("<svg><title>a &amp; b &#39;</title><g class=\"x\"/></svg>"));
}

TEST_CASE("svg: the size limit counts slots and, with --offload, the host-link transfers drawn beside them", "[render]") {
    Schedule s;
    s.ranks.assign(2, std::vector<Slot>(kMaxSvgSlots / 2 - 5, Slot::single(Op{OpKind::F, 0, 0, 0})));
    CHECK(svg_size_problem(s).empty());      // 10 slots under the limit
    CHECK(svg_size_problem(s, 10).empty());  // exactly at it
    const std::string over = svg_size_problem(s, 11);
    CHECK_THAT(over, Catch::Contains(fmt::format("{} slots and 11 host-link transfers", kMaxSvgSlots - 10)));
    CHECK_THAT(over, Catch::Contains(fmt::format("limit of {} slots", kMaxSvgSlots)));
    s.ranks[0].push_back(s.ranks[0].back());
    s.ranks[0].insert(s.ranks[0].end(), 10, s.ranks[0].back());
    CHECK_THAT(svg_size_problem(s), Catch::StartsWith(fmt::format("{} slots, about", kMaxSvgSlots + 1)));
}
