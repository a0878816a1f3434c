// pipeproof convert IN -o OUT [--to native|torch-csv|json]: between the three schedule formats.
#include "cli/commands.hpp"
#include "cli/common.hpp"

#include <memory>

namespace pp::cli {
namespace {

struct ConvertCommand {
    ScheduleInput input;
    std::string output = "-";
    std::optional<std::string> to;
    std::string out_era = "current";
    std::string line_end = "crlf";

    int run() {
        const Schedule schedule = input.load();
        auto format = parse_optional_format(to);
        if (!format && output == "-") format = FileFormat::Native;
        write_schedule_output(schedule, output, format, parse_era(out_era), line_end == "crlf");
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
        ->check(CLI::IsMember({"current", "2024"}));
    sub->add_option("--csv-line-end", cmd->line_end, "PyTorch CSV line ends: crlf (as PyTorch writes) or lf")
        ->check(CLI::IsMember({"crlf", "lf"}));
    return [cmd] { return cmd->run(); };
}

}  // namespace pp::cli
