// libFuzzer harness: the claim language of `refute --claim` (parse_claim, with its name suggestions from
// model/spelling.hpp), the linear assumptions of `--assume` (parse_constraints), cost grids of `refute --costs
// GRID` (parse_cost_grid) and the chunk claims of `refute --chunk-costs symbolic` (parse_chunk_claim). Each
// parses or throws ClaimError; a grid never has more points than the documented limit.
#include "fuzz/fuzz_common.hpp"
#include "proofs/chunk_claim.hpp"
#include "proofs/claim.hpp"

#include <stdexcept>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    if (size == 0) return 0;
    const std::uint8_t which = data[0] % 4;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        switch (which) {
            case 0: (void)parse_condition(text); break;
            case 1: (void)parse_constraints(text); break;
            case 2: {
                const auto points = parse_cost_grid(text);
                if (points.empty() || points.size() > kMaxGridPoints) fuzz::bug("grid size out of bounds", text);
                break;
            }
            case 3: (void)parse_chunk_claim(text); break;
        }
    } catch (const ClaimError&) {
    } catch (const std::overflow_error&) {
        // Exact arithmetic beyond 64 bits (model/rational.hpp): reported by the CLI with exit 2.
    }
    return 0;
}
