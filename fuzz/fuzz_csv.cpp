// libFuzzer harness: the PyTorch schedule CSV reader (formats/torch_csv.hpp), then verify and simulate, and
// the writer: what reads is written back and must read back to the same slots.
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
    Schedule schedule;
    try {
        schedule = read_torch_csv(fuzz::as_text(data, size), "fuzz.csv", options);
    } catch (const InputError&) {
        return 0;
    }
    fuzz::exercise(schedule);
    // What we write, PyTorch's way, reads back to the same slots.
    const std::string written = write_torch_csv(schedule, detect_torch_csv_format(schedule), options.era);
    Schedule again;
    try {
        again = read_torch_csv(written, "rewritten.csv", options);
    } catch (const InputError& e) {
        fuzz::bug("write_torch_csv wrote a file read_torch_csv rejects", e.where() + ": " + e.what() + "\n" + written);
    }
    if (again.ranks.size() != schedule.ranks.size()) fuzz::bug("CSV round trip changed the rank count", written);
    for (size_t r = 0; r < again.ranks.size(); ++r)
        for (size_t k = 0; k < again.ranks[r].size() && k < schedule.ranks[r].size(); ++k)
            if (torch_slot_text(again.ranks[r][k]) != torch_slot_text(schedule.ranks[r][k]))
                fuzz::bug("CSV round trip changed a slot", written);
    return 0;
}
