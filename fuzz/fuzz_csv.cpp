// libFuzzer harness: the PyTorch schedule CSV reader (formats/torch_csv.hpp), then verify and simulate.
// The first byte picks the letter era and whether -P/-M/--stages are given, so those paths are reached too.
#include "formats/torch_csv.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    TorchCsvOptions options;
    if (size > 0) {
        const std::uint8_t flags = data[0];
        options.era = flags & 1 ? TorchEra::Y2024 : TorchEra::Current;
        if (flags & 2) options.ranks = 1 + (flags >> 4) % 8;
        if (flags & 4) options.microbatches = 1 + (flags >> 3) % 16;
        if (flags & 8) options.stages = 1 + (flags >> 5) % 8;
        ++data, --size;
    }
    fuzz::read_and_exercise([&] { return read_torch_csv(fuzz::as_text(data, size), "fuzz.csv", options); });
    return 0;
}
