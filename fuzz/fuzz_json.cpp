// libFuzzer harness: the JSON schedule reader (formats/json_schedule.hpp), then verify and simulate; what
// reads also survives write_json and reads back.
#include "formats/json_schedule.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    pp::fuzz::init_budget();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pp;
    Schedule schedule;
    try {
        schedule = read_json(fuzz::as_text(data, size), "fuzz.json");
    } catch (const InputError&) {
        return 0;
    }
    fuzz::exercise(schedule);
    const std::string written = write_json(schedule);
    try {
        const Schedule again = read_json(written, "rewritten.json");
        if (again.op_count() != schedule.op_count()) fuzz::bug("JSON round trip changed the op count", written);
    } catch (const InputError& e) {
        fuzz::bug("write_json wrote a file read_json rejects", e.where() + ": " + e.what() + "\n" + written);
    }
    return 0;
}
