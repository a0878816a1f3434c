#!/usr/bin/env python3
"""What a PyTorch user runs as a dry run of a schedule CSV, in plain Python: the yardstick of
`pipeproof_bench python-path`.

    python3 bench/pytorch_path.py FILE.csv [--stages S] [--microbatches M]
    python3 bench/pytorch_path.py --self-test

Our own re-implementation, written from the description of torch.distributed.pipelining's schedule code
(its behaviour, messages and algorithms; no PyTorch code is reproduced and PyTorch is not needed):

1. read the CSV into actions (`_load_csv`: the csv module, one row per rank, each cell parsed by
   `_Action.from_str`, an anchored regular expression; an empty cell is None, a bubble);
2. `_validate_schedule`: per-stage sets of forward / backward micro-batches, every B, I and W preceded by
   what it needs on its stage, one rank per stage (the stage-to-rank map it returns), the counts at the end;
3. `_add_send_recv`: lowering to compute + SEND/RECV lists in rounds over the ranks' heads, a RECV posted
   on the peer at once;
4. `_simulate_comms_compute`: the lock-step dry run (two passes per step), the number of steps.

The algorithms are PyTorch's, including their cost: actions are NamedTuples hashed into per-rank sets of
what has run, the readiness tests build the action they look for, and a rank's head is taken off the front
of a plain list (`list.pop(0)`, linear in the list's length), so the lowering and the dry run are quadratic
in the length of a rank's list, as PyTorch's are. Nothing is done that PyTorch does not do (no
`_add_unshard_reshard`, `_add_reduce_grad` or `_merge_bw` on the benchmark's path: a schedule read from
CSV is validated, lowered and simulated; `--self-test` uses `_merge_bw` where PyTorch's own test does).

Prints the number of ranks, stages, micro-batches, actions before and after the lowering, the simulated
steps, and the time of each phase on stderr. Exit 0, or 1 with PyTorch's exception text when a phase
raises (invalid schedule, deadlock in the lowering or the dry run).
"""

import argparse
import csv
import os
import re
import sys
import time
from enum import Enum
from typing import Callable, NamedTuple, Optional


class _ComputationType(str, Enum):
    FORWARD = "F"
    BACKWARD_INPUT = "I"
    BACKWARD_WEIGHT = "W"
    FULL_BACKWARD = "B"
    OVERLAP_F_B = "OVERLAP_F_B"
    SEND_F = "SEND_F"
    RECV_F = "RECV_F"
    SEND_B = "SEND_B"
    RECV_B = "RECV_B"
    UNSHARD = "UNSHARD"
    RESHARD = "RESHARD"
    REDUCE_GRAD = "REDUCE_GRAD"

    def __str__(self):
        return self.value

    @staticmethod
    def from_str(text):
        try:
            return _ComputationType(text)
        except ValueError:
            raise RuntimeError(f"Invalid computation type {text}") from None


F = _ComputationType.FORWARD
I = _ComputationType.BACKWARD_INPUT
W = _ComputationType.BACKWARD_WEIGHT
B = _ComputationType.FULL_BACKWARD
OVERLAP_F_B = _ComputationType.OVERLAP_F_B
SEND_F = _ComputationType.SEND_F
RECV_F = _ComputationType.RECV_F
SEND_B = _ComputationType.SEND_B
RECV_B = _ComputationType.RECV_B

# Anchored at the start only (re.match): trailing text after the micro-batch is ignored, as upstream.
_ACTION_TEXT = re.compile(r"(\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*)")


class _Action(NamedTuple):
    stage_index: int
    computation_type: _ComputationType
    microbatch_index: Optional[int] = None
    sub_actions: Optional[tuple] = None

    def __str__(self):
        if self.sub_actions is not None:
            return "(" + ";".join(str(a) for a in self.sub_actions) + ")" + str(self.computation_type)
        text = str(self.stage_index) + str(self.computation_type)
        return text if self.microbatch_index is None else text + str(self.microbatch_index)

    __repr__ = __str__

    @staticmethod
    def from_str(action_string):
        text = action_string.strip()
        if text == "":
            return None
        if text.startswith("(") and ")" in text:
            close = text.index(")")
            parts = [_Action.from_str(part) for part in text[1:close].split(";") if part.strip()]
            return _Action(-1, _ComputationType.from_str(text[close + 1:]), None, tuple(parts))
        match = _ACTION_TEXT.match(text)
        if match is None:
            raise RuntimeError(f"Invalid action string: {action_string}, should be formatted as "
                               "[stage][action type][(microbatch)] e.g. 2F0")
        stage, kind, microbatch = match.groups()
        return _Action(int(stage), _ComputationType.from_str(kind), int(microbatch) if microbatch else None)


def _load_csv(path):
    """rank -> list of actions (None for an empty cell), one CSV row per rank."""
    actions = {}
    with open(path, newline="") as f:
        for rank, row in enumerate(csv.reader(f)):
            actions[rank] = [_Action.from_str(cell) for cell in row]
    return actions


def _format_pipeline_order(order, error_step_number=None):
    """The text table PyTorch prints with a validation error: one column per rank, one line per step."""
    ranks = sorted(order)
    steps = max((len(order[r]) for r in ranks), default=0)
    width = len(str(max(steps - 1, 0)))
    columns = [[str(a) if a is not None else "" for a in order[r]] + [""] * (steps - len(order[r])) for r in ranks]
    col_width = [max([len(f"Rank {r}")] + [len(c) for c in col]) for r, col in zip(ranks, columns)]
    lines = [" " * (width + 7) + "  ".join(f"Rank {r}".ljust(w) for r, w in zip(ranks, col_width))]
    for step in range(steps):
        line = f"Step {str(step).zfill(width)}: " + "  ".join(col[step].ljust(w) for col, w in zip(columns, col_width))
        if step == error_step_number:
            line += "  <-- ERROR HERE"
        lines.append(line)
    return "\n".join(lines)


def _validate_schedule(actions, pp_group_size, num_stages, num_microbatches):
    """PyTorch's checks of a compute schedule; returns the stage -> rank map read from it."""
    assert len(actions) == pp_group_size, \
        f"Schedule has incorrect number of ranks - expected {pp_group_size}, actual {len(actions)}"
    for rank in range(pp_group_size):
        assert rank in actions, f"Schedule is missing actions for rank {rank}"

    seen = {stage: {F: set(), I: set(), W: set(), B: set()} for stage in range(num_stages)}
    owner = {}

    def check(action, rank, step):
        kind = action.computation_type
        if kind == OVERLAP_F_B:
            for sub in action.sub_actions:
                check(sub, rank, step)
            return
        stage = action.stage_index
        if kind == F:
            seen[stage][F].add(action.microbatch_index)
        elif kind == B:
            if action.microbatch_index not in seen[stage][F]:
                raise AssertionError(
                    f"Rank {rank}, step {step}: Running Full Backward for stage {stage}, microbatch "
                    f"{action.microbatch_index} without first running Forward\n"
                    + _format_pipeline_order(actions, error_step_number=step))
            seen[stage][B].add(action.microbatch_index)
        elif kind == I:
            if action.microbatch_index not in seen[stage][F]:
                raise AssertionError(
                    f"Rank {rank}, step {step}: Running Backward Input for stage {stage}, microbatch "
                    f"{action.microbatch_index} without first running Forward\n"
                    + _format_pipeline_order(actions, error_step_number=step))
            seen[stage][I].add(action.microbatch_index)
        elif kind == W:
            if action.microbatch_index not in seen[stage][I]:
                raise AssertionError(
                    f"Rank {rank}, step {step}: Running Backward Weight for stage {stage}, microbatch "
                    f"{action.microbatch_index} without first running Backward Input\n"
                    + _format_pipeline_order(actions, error_step_number=step))
            seen[stage][W].add(action.microbatch_index)
        if stage not in owner:
            owner[stage] = rank
        elif owner[stage] != rank:
            raise AssertionError(
                f"Rank {rank}, step {step}: Stage {stage} is assigned to both rank {rank} and rank {owner[stage]}")

    for rank in actions:
        for step, action in enumerate(actions[rank]):
            if action is None:
                continue
            assert isinstance(action, _Action), f"Rank {rank}, step {step}: Got an invalid action: {action}"
            check(action, rank, step)

    for stage, done in seen.items():
        forwards, inputs, weights, fulls = len(done[F]), len(done[I]), len(done[W]), len(done[B])
        assert forwards == num_microbatches, \
            f"Got {forwards} {F} microbatches for stage {stage}, expected {num_microbatches}"
        assert inputs == weights, \
            f"Invalid backward microbatches for stage {stage}: I and W must have equal counts, but got I={inputs}, W={weights}"
        assert fulls + (inputs + weights) // 2 == num_microbatches, \
            f"Invalid backward microbatches for stage {stage}: expected {num_microbatches} total backwards, " \
            f"but got B={fulls}, I={inputs}, W={weights}"
    return owner


def _merge_bw(actions):
    """One rank's list without Nones, an I followed (Nones ignored) by the W of its stage and micro-batch fused into B."""
    kept = [a for a in actions if a is not None]
    merged = []
    k = 0
    while k < len(kept):
        action = kept[k]
        after = kept[k + 1] if k + 1 < len(kept) else None
        if (action.computation_type == I and after is not None and after.computation_type == W
                and action.stage_index == after.stage_index and action.microbatch_index == after.microbatch_index):
            merged.append(_Action(action.stage_index, B, action.microbatch_index))
            k += 2
        else:
            merged.append(action)
            k += 1
    return merged


def _add_send_recv(compute_actions, stage_to_rank: Callable[[int], int], num_stages: int):
    """Lowers rank -> compute actions (Nones allowed; the lists are consumed) to rank -> compute + SEND/RECV."""
    lowered = {rank: [] for rank in compute_actions}
    posted = {rank: set() for rank in compute_actions}  # what each rank's lowered list holds

    def crosses(action):
        if action.computation_type == F:
            return action.stage_index != num_stages - 1 and \
                stage_to_rank(action.stage_index + 1) != stage_to_rank(action.stage_index)
        if action.computation_type in (I, B):
            return action.stage_index != 0 and \
                stage_to_rank(action.stage_index - 1) != stage_to_rank(action.stage_index)
        return False

    def ready(action, done):
        if action is None:
            return True
        if action.sub_actions is not None:
            return all(ready(sub, done) for sub in action.sub_actions)
        stage, kind, mb = action.stage_index, action.computation_type, action.microbatch_index
        if kind == F and stage != 0:
            return _Action(stage, RECV_F, mb) in done or _Action(stage - 1, F, mb) in done
        if kind in (I, B) and stage != num_stages - 1:
            return (_Action(stage, RECV_B, mb) in done or _Action(stage + 1, I, mb) in done
                    or _Action(stage + 1, B, mb) in done)
        return True

    def emit(rank, action):
        lowered[rank].append(action)
        posted[rank].add(action)
        if action.sub_actions is not None:
            for sub in action.sub_actions:
                posted[rank].add(sub)
        for part in (action.sub_actions if action.sub_actions is not None else (action,)):
            if not crosses(part):
                continue
            stage, mb = part.stage_index, part.microbatch_index
            if part.computation_type == F:
                send, recv = _Action(stage, SEND_F, mb), _Action(stage + 1, RECV_F, mb)
            else:
                send, recv = _Action(stage, SEND_B, mb), _Action(stage - 1, RECV_B, mb)
            lowered[rank].append(send)
            posted[rank].add(send)
            peer = stage_to_rank(recv.stage_index)
            lowered[peer].append(recv)
            posted[peer].add(recv)

    while compute_actions:
        progress = False
        for rank in sorted(compute_actions):
            head = compute_actions[rank][0]
            if not ready(head, posted[rank]):
                continue
            if head is not None:
                emit(rank, head)
            compute_actions[rank].pop(0)
            if not compute_actions[rank]:
                del compute_actions[rank]
            progress = True
        assert progress, "Malformed compute schedule, can't schedule sends/recvs"
    return lowered


def _simulate_comms_compute(pipeline_order, stage_to_rank: Callable[[int], int], num_stages: int):
    """The lock-step dry run of a compute + comms schedule: rank -> timeline, None where the rank waited."""
    pending = {rank: [a for a in pipeline_order[rank] if a is not None] for rank in sorted(pipeline_order)}
    timeline = {rank: [] for rank in pending}
    done = {rank: set() for rank in pending}

    def ready(action):
        stage, kind, mb = action.stage_index, action.computation_type, action.microbatch_index
        here = done[stage_to_rank(stage)]
        if kind == F:
            return stage == 0 or _Action(stage, RECV_F, mb) in here or _Action(stage - 1, F, mb) in here
        if kind in (I, B):
            return (stage == num_stages - 1 or _Action(stage, RECV_B, mb) in here
                    or _Action(stage + 1, I, mb) in here or _Action(stage + 1, B, mb) in here)
        if kind == W:
            return True
        if kind == SEND_F:
            return _Action(stage, F, mb) in here
        if kind == SEND_B:
            return _Action(stage, I, mb) in here or _Action(stage, B, mb) in here
        if kind == RECV_F:
            return _Action(stage - 1, SEND_F, mb) in done[stage_to_rank(stage - 1)]
        if kind == RECV_B:
            return _Action(stage + 1, SEND_B, mb) in done[stage_to_rank(stage + 1)]
        raise ValueError(f"Unsupported action type {action}")

    def drop_finished():
        for rank in sorted(pending, reverse=True):
            if not pending[rank]:
                del pending[rank]

    while pending:
        progress = False
        for rank in sorted(pending):  # pass 1: every rank runs its head if it can
            head = pending[rank][0]
            if ready(head):
                timeline[rank].append(head)
                done[rank].add(head)
                pending[rank].pop(0)
                progress = True
            else:
                timeline[rank].append(None)
        drop_finished()
        for rank in sorted(pending):  # pass 2: a rank that waited retries, using what later ranks just did
            if timeline[rank][-1] is not None:
                continue
            head = pending[rank][0]
            if ready(head):
                timeline[rank][-1] = head
                done[rank].add(head)
                pending[rank].pop(0)
        drop_finished()
        if not progress:
            print("WIP comms schedule:\n" + _format_pipeline_order(timeline))
            for rank in sorted(pending):
                print(f"rank={rank} next action= {pending[rank][0]}")
            raise ValueError("Schedule is not progressing")
    return timeline


def dry_run(path, num_stages=None, num_microbatches=None, out=sys.stdout, times=sys.stderr):
    """The user's dry run of a compute-only CSV; returns the number of simulated steps."""
    clock = time.process_time
    t0 = clock()
    actions = _load_csv(path)
    t1 = clock()
    computes = [a for rank in actions for slot in actions[rank] if slot is not None
                for a in (slot.sub_actions if slot.sub_actions is not None else (slot,))]
    # The user knows S and M; without them, read them off the file (not part of the timed phases' work).
    stages = num_stages if num_stages is not None else 1 + max(a.stage_index for a in computes)
    microbatches = num_microbatches if num_microbatches is not None else \
        1 + max(a.microbatch_index for a in computes if a.microbatch_index is not None)
    t2 = clock()
    stage_rank = _validate_schedule(actions, len(actions), stages, microbatches)
    t3 = clock()
    count_in = sum(1 for rank in actions for a in actions[rank] if a is not None)
    lowered = _add_send_recv(actions, lambda stage: stage_rank[stage], stages)
    t4 = clock()
    timeline = _simulate_comms_compute(lowered, lambda stage: stage_rank[stage], stages)
    t5 = clock()
    steps = max(len(t) for t in timeline.values())
    print(f"{path}: {len(timeline)} ranks, {stages} stages, {microbatches} microbatches, {count_in} actions, "
          f"{sum(len(l) for l in lowered.values())} after send/recv lowering, {steps} simulated steps", file=out)
    print(f"CPU s: load_csv {t1 - t0:.3f}, validate {t3 - t2:.3f}, add_send_recv {t4 - t3:.3f}, "
          f"simulate {t5 - t4:.3f}", file=times)
    return steps


def _rows(*lines):
    """Rows in the unit tests' notation: words, '_' for a None."""
    return {rank: [None if w == "_" else _Action.from_str(w) for w in line.split()] for rank, line in enumerate(lines)}


def _texts(schedule):
    return {rank: " ".join(str(a) for a in schedule[rank]) for rank in schedule}


def _steps(schedule, stage_rank, stages):
    timeline = _simulate_comms_compute(schedule, lambda s: stage_rank[s], stages)
    return max(len(t) for t in timeline.values())


def _era_2024(path):
    """A 2024 file (B = input gradient, BW = full backward) in today's letters (I, B)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    swap = re.compile(r"^(\d+)(BW|B)(\d+)$")
    return {rank: [None if not cell.strip() else _Action.from_str(
        swap.sub(lambda m: m.group(1) + ("B" if m.group(2) == "BW" else "I") + m.group(3), cell.strip()))
        for cell in row] for rank, row in enumerate(rows)}


def self_test(conformance):
    """PyTorch's unit-test vectors (test_schedule.py) and the conformance files; exit 1 on a mismatch."""
    failures = []

    def expect(name, got, want):
        shown = repr(got) if got != want or len(repr(got)) <= 100 else repr(got)[:97] + "..."
        print(f"{'ok  ' if got == want else 'FAIL'} {name}: {shown}" + ("" if got == want else f" (expected {want!r})"))
        if got != want:
            failures.append(name)

    # test_action_parse
    words = "1F0 2I1 0W3 0B3 1UNSHARD 3RESHARD 2SEND_B2 1RECV_F1 0REDUCE_GRAD (0F7;7B3)OVERLAP_F_B".split()
    expect("action strings print back", [str(_Action.from_str(w)) for w in words], words)
    expect("parse 1UNSHARD", tuple(_Action.from_str("1UNSHARD"))[:3], (1, _ComputationType.UNSHARD, None))
    expect("leading zeros, trailing text", str(_Action.from_str(" 01F02xyz ")), "1F2")
    for bad in ("1 F0", "F0", "(0F0;1B0)NOPE"):
        try:
            _Action.from_str(bad)
            expect(f"rejects {bad!r}", "accepted", "RuntimeError")
        except RuntimeError:
            expect(f"rejects {bad!r}", "RuntimeError", "RuntimeError")

    # test_merge_bw
    expect("merge_bw", " ".join(map(str, _merge_bw(_rows("0F0 0F1 0F2 0I0 0I1 0W0 _ 0I2 _ 0W2 0W1")[0]))),
           "0F0 0F1 0F2 0I0 0I1 0W0 0B2 0W1")

    # test_send_recv: simple_2_rank_2_stage
    compute = _rows("0F0 0F1 _ 0B0 _ 0B1", "_ 1F0 1B0 1F1 1B1 _")
    lowered = _add_send_recv(compute, lambda s: {0: 0, 1: 1}[s], 2)
    expect("simple_2_rank_2_stage lowering", _texts(lowered),
           {0: "0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1",
            1: "1RECV_F0 1RECV_F1 1F0 1B0 1SEND_B0 1F1 1B1 1SEND_B1"})
    expect("simple_2_rank_2_stage simulated steps", _steps(lowered, {0: 0, 1: 1}, 2), 11)

    # test_send_recv: v_2_rank_4_stage (W after a full B: the lowering does not validate)
    v_map = {0: 0, 1: 1, 2: 1, 3: 0}
    compute = _rows("0F0 0F1 _ 3F0 3B0 3F1 3B1 0B0 3W0 0B1 3W1 0W0 0W1",
                    "_ 1F0 2F0 1F1 2F1 2B0 1B0 2B1 1B1 2W0 2W1 1W0 1W1")
    lowered = _add_send_recv(compute, lambda s: v_map[s], 4)
    expect("v_2_rank_4_stage lowering", _texts(lowered),
           {0: "0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 3F0 3B0 3SEND_B0 3RECV_F1 3F1 3B1 3SEND_B1 0RECV_B0 0B0 3W0 "
               "0RECV_B1 0B1 3W1 0W0 0W1",
            1: "1RECV_F0 1RECV_F1 1F0 2F0 2SEND_F0 1F1 2RECV_B0 2F1 2SEND_F1 2B0 2RECV_B1 1B0 1SEND_B0 2B1 1B1 "
               "1SEND_B1 2W0 2W1 1W0 1W1"})
    expect("v_2_rank_4_stage simulated steps", _steps(lowered, v_map, 4), 24)

    # TestValidateSchedule
    expect("validate F/B", _validate_schedule(_rows("0F0 0B0", "1F0 1B0"), 2, 2, 1), {0: 0, 1: 1})
    expect("validate F/I/W", _validate_schedule(_rows("0F0 0I0 0W0", "1F0 1I0 1W0"), 2, 2, 1), {0: 0, 1: 1})
    for name, schedule in (("only rank 0", {0: _rows("0F0 0B0")[0]}), ("no backwards", _rows("0F0", "1F0")),
                           ("B before F", _rows("0B0 0F0", "1F0 1B0"))):
        try:
            _validate_schedule(schedule, 2, 2, 1)
            expect(f"validate rejects {name}", "valid", "AssertionError")
        except AssertionError:
            expect(f"validate rejects {name}", "AssertionError", "AssertionError")

    # test_csv zb1p_2rank_2stagep: the artifacts are of 2024 (B = input gradient, BW = full backward)
    zb1p = os.path.join(conformance, "pytorch")
    compute = _era_2024(os.path.join(zb1p, "zb1p_2rank_2stagep_compute.csv"))
    compute = {rank: _merge_bw(compute[rank]) for rank in compute}
    lowered = _add_send_recv(compute, lambda s: s % 2, 4)
    expect("zb1p_2rank_2stagep lowering equals the comms artifact", _texts(lowered),
           _texts(_era_2024(os.path.join(zb1p, "zb1p_2rank_2stagep_comms.csv"))))
    expect("zb1p_2rank_2stagep simulated steps", _steps(lowered, {s: s % 2 for s in range(4)}, 4), 113)

    # torchtitan's custom schedules: read, validated (stage map inferred), lowered, simulated
    for name, want in (("2-rank.csv", 114), ("4-rank.csv", 129), ("8-rank.csv", 108)):
        with open(os.devnull, "w") as quiet:
            expect(f"torchtitan/{name} simulated steps", dry_run(os.path.join(conformance, "torchtitan", name),
                                                                 out=quiet, times=quiet), want)

    # a deadlock: rank 0 waits for 1B0 before its second forward, which rank 1 needs first
    try:
        _add_send_recv(_rows("0F0 0B0 0F1 0B1", "1F0 1F1 1B0 1B1"), lambda s: s, 2)
        expect("lowering detects a deadlock", "lowered", "AssertionError")
    except AssertionError as e:
        expect("lowering detects a deadlock", str(e), "Malformed compute schedule, can't schedule sends/recvs")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} of the checks above failed" if failures
          else "self-test passed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="a compute-only PyTorch schedule CSV")
    parser.add_argument("--stages", type=int, help="number of stages (default: the largest stage in the file + 1)")
    parser.add_argument("--microbatches", type=int, help="number of micro-batches (default: largest + 1)")
    parser.add_argument("--self-test", action="store_true", help="check PyTorch's unit-test vectors")
    parser.add_argument("--conformance", default="/work/shared/conformance",
                        help="folder of the conformance CSVs (pytorch/, torchtitan/) for --self-test")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.conformance)
    if not args.file:
        parser.error("a FILE or --self-test is needed")
    try:
        dry_run(args.file, args.stages, args.microbatches)
    except (AssertionError, RuntimeError, ValueError, KeyError) as e:
        print(f"{args.file}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
