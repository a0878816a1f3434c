// libFuzzer harness: pipeproof's native text reader (formats/native.hpp), then verify and simulate. A file
// that reads must also survive the writer: write_native's text reads back to the same ops.
#include "formats/native.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    const std::string_view text = fuzz::as_text(data, size);
    Schedule schedule;
    try {
        schedule = read_native(text, "fuzz.txt");
    } catch (const InputError&) {
        return 0;
    }
    fuzz::exercise(schedule);
    // Round trip: what we write, we read back, slot for slot.
    const std::string written = write_native(schedule);
    Schedule again;
    try {
        again = read_native(written, "rewritten.txt");
    } catch (const InputError& e) {
        fuzz::bug("write_native wrote a file read_native rejects", e.where() + ": " + e.what() + "\n" + written);
    }
    if (again.ranks.size() != schedule.ranks.size()) fuzz::bug("round trip changed the rank count", written);
    for (size_t r = 0; r < again.ranks.size(); ++r) {
        if (again.ranks[r].size() != schedule.ranks[r].size()) fuzz::bug("round trip changed a rank", written);
        for (size_t k = 0; k < again.ranks[r].size(); ++k)
            if (format_slot(again.ranks[r][k]) != format_slot(schedule.ranks[r][k])) fuzz::bug("round trip changed a slot", written);
    }
    return 0;
}
