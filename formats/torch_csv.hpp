#pragma once
// PyTorch's schedule CSV files (torch.distributed.pipelining, _dump_csv / _load_csv).
//
// One row per rank (row index = rank), one cell per slot, the cell text is PyTorch's action string:
// "0F1", "3I0", "2W5", "1B0", "(0F7;7B3)OVERLAP_F_B", "2SEND_B2", "1RECV_F1", "1UNSHARD", "0REDUCE_GRAD".
// Stage numbers are PyTorch's global stage indices; the file holds a single pipeline.
//
// Two formats: compute_only (compute actions, empty cells are bubbles) and compute_comms (every action
// of the lowered program, SEND/RECV/UNSHARD/RESHARD included, no empty cells).
//
// The reader is stricter than PyTorch's: PyTorch matches only a prefix of each cell ("1F0xyz" reads as
// 1F0, "1BW0" as a full backward without micro-batch); we reject such cells. Errors are InputError with
// a 1-based line and a 1-based byte column (after a UTF-8 BOM on line 1). The column points at the
// token for token-level errors (unknown action, letter of the wrong era, duplicate, missing micro-batch),
// at the number for number errors and at the character for character-level errors (trailing junk,
// parentheses, NUL or invalid UTF-8 bytes).
#include "model/schedule.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp {

// Which letters the file uses. Current (PyTorch >= 2.6, Dec 2024): I input-grad, W weight-grad, B full
// backward. Y2024 (Aug-Nov 2024): B input-grad, W weight-grad, BW full backward.
enum class TorchEra { Current, Y2024 };
enum class TorchCsvFormat { ComputeOnly, ComputeComms };

struct TorchCsvOptions {
    TorchEra era = TorchEra::Current;
    std::optional<int> ranks;         // default: number of rows
    std::optional<int> stages;        // default: largest stage + 1 (or stage_rank's size)
    std::optional<int> microbatches;  // default: largest micro-batch + 1
    // stage -> rank; default: the first rank (row) on which the stage appears, as PyTorch infers it.
    std::optional<std::vector<int>> stage_rank;
};

// Reads either format. A compute_comms file (any SEND_F/RECV_F/SEND_B/RECV_B/UNSHARD/RESHARD token)
// fills Schedule::actions with every action in order; REDUCE_GRAD is accepted in both formats but is
// kept only in `actions` (a compute_only schedule has no place for it, so it is dropped there).
// Empty cells of a compute_only file are kept in Schedule::gaps so that write_torch_csv reproduces them.
// Throws InputError.
Schedule read_torch_csv(std::string_view text, const std::string& file_name, const TorchCsvOptions& options = {});

// ComputeComms iff the schedule carries an action list.
TorchCsvFormat detect_torch_csv_format(const Schedule& schedule);

// PyTorch's text for one compute slot ("0F1", "(0F7;7B3)OVERLAP_F_B") in the given era.
std::string torch_slot_text(const Slot& slot, TorchEra era = TorchEra::Current);

// Writes the schedule as PyTorch's csv module does: comma-separated cells, CRLF line ends, empty cells
// for gaps (compute_only). ComputeComms needs Schedule::actions. Throws std::invalid_argument for
// schedules PyTorch's format cannot hold (more than one pipeline, ComputeComms without actions).
std::string write_torch_csv(const Schedule& schedule, TorchCsvFormat format, TorchEra era = TorchEra::Current);

}  // namespace pp
