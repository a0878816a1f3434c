#include "formats/load.hpp"

#include "formats/input_error.hpp"
#include "formats/json_schedule.hpp"
#include "formats/native.hpp"
#include "formats/text_lines.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace pp {

FileFormat format_from_name(const std::string& path) {
    auto ends_with = [&](const std::string& suffix) {
        return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(".csv")) return FileFormat::TorchCsv;
    if (ends_with(".json")) return FileFormat::Json;
    return FileFormat::Native;
}

FileFormat parse_format_name(const std::string& name) {
    if (name == "native") return FileFormat::Native;
    if (name == "torch-csv" || name == "csv") return FileFormat::TorchCsv;
    if (name == "json") return FileFormat::Json;
    throw std::invalid_argument("unknown format '" + name + "' (expected native, torch-csv or json)");
}

namespace {

[[noreturn]] void refuse_nul(std::string_view text, size_t nul, const std::string& path) {
    const size_t line_start = text.rfind('\n', nul);
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    const size_t column = line_start == std::string::npos ? nul + 1 : nul - line_start;
    throw InputError(path, static_cast<int>(line), static_cast<int>(column), "a NUL byte: this is not a text file");
}

// Reads at most kMaxTextBytes + 1 bytes: a larger file (or an endless one, such as /dev/zero or a pipe that
// never ends) is refused once it passes the limit, instead of filling the memory.
std::string read_bounded(std::istream& in, const std::string& path) {
    std::string text;
    std::vector<char> chunk(1 << 20);
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const size_t before = text.size();
        text.append(chunk.data(), static_cast<size_t>(in.gcount()));
        // No format allows a NUL byte: say so at once (/dev/zero) rather than after reading 2 GiB of it.
        if (const size_t nul = text.find('\0', before); nul != std::string::npos) refuse_nul(text, nul, path);
        if (text.size() > kMaxTextBytes) check_text_size(text, path);  // throws: over 2 GiB
    }
    if (in.bad()) throw InputError(path, 0, 0, "cannot read the file");
    return text;
}

// Room for a file's bytes, its pages faulted in by one call (MAP_POPULATE) rather than one trap per page as
// read() fills them: on a 931 KB CSV that is 228 traps, about 1.4 ms of a 16 ms `simulate` on a VM
// (docs/benchmarks.md, "Against PyTorch's dry run"). Not the file itself mapped: a file truncated by
// another process while mapped would end the process with SIGBUS.
FileText::MappedBytes map_room(std::size_t bytes, const std::string& path) {
    void* room = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (room == MAP_FAILED) throw InputError(path, 0, 0, "not enough memory to read the file");
    return FileText::MappedBytes(static_cast<char*>(room), Unmap{bytes});
}

// A regular file straight into one buffer of its size: no stream, no second copy. Nullopt when the file is
// not regular, or changed size while being read (the stream path reads it then).
std::optional<FileText> read_regular(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path, 0, 0, "cannot open the file");
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    const auto size = static_cast<std::uint64_t>(info.st_size);
    check_file_size(size, path);  // throws over 2 GiB
    auto bytes = map_room(size + 1, path);
    size_t got = 0;
    while (got <= size) {  // one byte past the size: a file that grew is read again by the stream path
        const ssize_t n = ::read(fd, bytes.get() + got, size + 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(path, 0, 0, "cannot read the file");
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    if (got != size) return std::nullopt;
    FileText text(std::move(bytes), size);
    if (const void* nul = std::memchr(text.view().data(), '\0', size))
        refuse_nul(text.view(), static_cast<size_t>(static_cast<const char*>(nul) - text.view().data()), path);
    return text;
}

}  // namespace

std::string format_display_name(FileFormat format) {
    switch (format) {
        case FileFormat::Native: return "native text";
        case FileFormat::TorchCsv: return "PyTorch CSV";
        case FileFormat::Json: return "JSON";
    }
    throw std::logic_error("unreachable");
}

void Unmap::operator()(char* bytes) const { ::munmap(bytes, mapped_bytes); }

FileText read_file(const std::string& path) {
    if (path == "-") return FileText(read_bounded(std::cin, "-"));
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) throw InputError(path, 0, 0, "is a directory, not a schedule file");
    if (auto text = read_regular(path)) return std::move(*text);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, 0, "cannot open the file");
    return FileText(read_bounded(in, path));
}

std::string read_file_text(const std::string& path) { return std::string(read_file(path).view()); }

Schedule load_schedule(const std::string& path, std::optional<FileFormat> format, const TorchCsvOptions& csv) {
    const FileText file = read_file(path);
    const std::string_view text = file.view();
    switch (format.value_or(format_from_name(path))) {
        case FileFormat::TorchCsv: return read_torch_csv(text, path, csv);
        case FileFormat::Json: return read_json(text, path);
        case FileFormat::Native: return read_native(text, path);
    }
    throw std::logic_error("unreachable");
}

std::string render_schedule(const Schedule& schedule, FileFormat format, TorchEra era, bool csv_crlf) {
    switch (format) {
        case FileFormat::TorchCsv: {
            std::string text = write_torch_csv(schedule, detect_torch_csv_format(schedule), era);
            if (!csv_crlf) std::erase(text, '\r');  // cells never contain CR, so every CR is a line end's
            return text;
        }
        case FileFormat::Json: return write_json(schedule);
        case FileFormat::Native: return write_native(schedule);
    }
    throw std::logic_error("unreachable");
}

void save_schedule(const Schedule& schedule, const std::string& path, std::optional<FileFormat> format, TorchEra era,
                   bool csv_crlf) {
    const FileFormat chosen = format.value_or(format_from_name(path));
    // JSON is written as it is produced (nlohmann's document would take about 700 bytes per op).
    const auto write = [&](std::ostream& out) {
        if (chosen == FileFormat::Json) write_json(out, schedule);
        else out << render_schedule(schedule, chosen, era, csv_crlf);
    };
    if (path == "-") {
        write(std::cout);
        return;
    }
    // A format that cannot hold the schedule refuses before the file is opened (an existing file stays as it was).
    std::string text;
    if (chosen != FileFormat::Json) text = render_schedule(schedule, chosen, era, csv_crlf);
    std::ofstream out(path, std::ios::binary);
    if (out) {
        if (chosen == FileFormat::Json) write_json(out, schedule);
        else out << text;
    }
    if (!out || !out.flush()) throw InputError(path, 0, 0, "cannot write the file");
}

}  // namespace pp
