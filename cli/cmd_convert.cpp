// pipeproof convert IN -o OUT [--to native|torch-csv|json] [--drop KEY]: between the three schedule formats;
// a conversion that would change what the file means is refused unless --drop names the loss.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "formats/faithful.hpp"

#include <memory>

namespace pp::cli {
namespace {

struct ConvertCommand {
    ScheduleInput input;
    std::string output = "-";
    std::optional<std::string> to;
    std::string out_era = "current";
    std::string line_end = "lf";
    std::vector<std::string> drop;  // what the output format may lose (formats/faithful.hpp)

    int run() {
        const Schedule schedule = input.load();
        auto format = parse_optional_format(to);
        if (!format && output == "-") format = FileFormat::Native;
        write_schedule_output(schedule, output, format, parse_era(out_era), line_end == "crlf", &drop);
        return kOk;
    }
};

}  // namespace

Runner add_convert(CLI::App& app) {
    auto cmd = std::make_shared<ConvertCommand>();
    auto* sub = app.add_subcommand("convert", "convert between native, PyTorch CSV and JSON");
    cmd->input.add_options(*sub);
    sub->add_option("-o,--output", cmd->output, "output file (format from its extension; - = stdout)");
    sub->add_option("--to", cmd->to, "output format: native, torch-csv or json");
    sub->add_option("--out-torch-era", cmd->out_era, "letters for a PyTorch CSV output: current or 2024")
        ->check(one_of({"current", "2024"}));
    sub->add_option("--csv-line-end", cmd->line_end, "PyTorch CSV line ends: lf (default, as the schedule files PyTorch and torchtitan ship) or crlf (as Python's csv module writes by default)")
        ->check(one_of({"crlf", "lf"}));
    sub->add_option("--drop", cmd->drop,
                    "write even though the output format loses this (repeatable): comms (SEND/RECV of a compute_comms CSV), "
                    "placement (a CSV's reader infers another), letters (ops that read back as others), costs, memory "
                    "(memory limit, activation sizes)")
        ->check(one_of(format_loss_keys()))
        ->delimiter(',');
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
