#pragma once
// formats/ — reading and writing schedule files (native text, PyTorch CSV, JSON). Uses model/ only.
//
// Reading and writing schedule files in any of the three formats. The format comes from --format, else
// from the file name: ".csv" PyTorch CSV, ".json" JSON, anything else native.
#include "formats/torch_csv.hpp"
#include "model/schedule.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace pp {

enum class FileFormat { Native, TorchCsv, Json };

FileFormat format_from_name(const std::string& path);
// "native", "torch-csv" (or "csv"), "json"; throws std::invalid_argument otherwise.
FileFormat parse_format_name(const std::string& name);
// "native text", "PyTorch CSV", "JSON": for messages.
std::string format_display_name(FileFormat format);

// A file's bytes ("-": standard input), at most 2 GiB, without NUL bytes: what the readers parse.
// Pages mapped for one file's bytes (formats/load.cpp): unmapped with the text.
struct Unmap {
    std::size_t mapped_bytes;
    void operator()(char* bytes) const;
};

class FileText {
public:
    using MappedBytes = std::unique_ptr<char, Unmap>;

    explicit FileText(std::string text) : owned_(std::move(text)) {}
    FileText(MappedBytes bytes, std::size_t size) : bytes_(std::move(bytes)), size_(size) {}
    std::string_view view() const { return bytes_ ? std::string_view(bytes_.get(), size_) : std::string_view(owned_); }

private:
    std::string owned_;
    MappedBytes bytes_;
    std::size_t size_ = 0;
};
// Throws InputError (including for unreadable files).
FileText read_file(const std::string& path);
std::string read_file_text(const std::string& path);
Schedule load_schedule(const std::string& path, std::optional<FileFormat> format, const TorchCsvOptions& csv = {});
// PyTorch CSV lines end in CRLF as Python's csv module writes them; csv_crlf = false writes LF (as some
// published copies of PyTorch's artifacts are stored).
std::string render_schedule(const Schedule& schedule, FileFormat format, TorchEra era = TorchEra::Current,
                            bool csv_crlf = true);
// Writes to path ("-" = standard output); throws InputError when the file cannot be written.
void save_schedule(const Schedule& schedule, const std::string& path, std::optional<FileFormat> format,
                   TorchEra era = TorchEra::Current, bool csv_crlf = true);

}  // namespace pp
