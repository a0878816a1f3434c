#!/usr/bin/env python3
"""Writes reference orders of Megatron-Core's tunable interleaved 1F1B (and its combined-1F1B variant).

Megatron-Core (NVIDIA/Megatron-LM) builds the per-rank order of its interleaved schedule from three pure-Python
functions: get_pp_rank_microbatches and get_schedule_table (megatron/core/pipeline_parallel/schedules.py) and
convert_schedule_table_to_order (megatron/core/transformer/cuda_graphs.py); the validity checks on
microbatch_group_size_per_vp_stage are the first statements of forward_backward_pipelining_with_interleaving.
This script reads those sources from a Megatron checkout or bare clone, cuts those functions and statements out
with `ast` (no Megatron code is copied here), executes them with stand-ins for torch, parallel_state and the
P2P communicator, and writes, per instance, each rank's order of compute ops.

    scripts/reference-megatron-orders.py MEGATRON [--rev REV] [--out FILE] [--dump DIR]

MEGATRON is a checkout or a bare git repository / mirror (files read with `git show REV:path`, REV default HEAD).
--dump DIR writes the extracted functions there (a scratch directory outside the repository) for inspection.

How an order is obtained, per rank r of P, with V model chunks, group size G, M micro-batches, overlap on/off:
  * w = get_pp_rank_microbatches(M, V, G, overlap_moe_expert_parallel_comm=overlap) at rank r
    (parallel_state stand-in answering P, r, V);
  * table = get_schedule_table(M, V, G): (micro-batch, chunk) per virtual micro-batch id;
  * order = convert_schedule_table_to_order(w, V, table): +c forward of chunk c-1, -c backward of chunk c-1;
  * micro-batches: the k-th forward takes table[k]'s micro-batch (get_microbatch_id_in_model_chunk); a backward of
    chunk c takes the oldest forward of chunk c not yet backpropagated (input_tensors[c].pop(0) in
    backward_step_helper_preprocess);
  * the order is checked against the loop skeleton of forward_backward_pipelining_with_interleaving (w warm-up
    forwards; for k < MV - w: forward k+w then backward k; then the last w backwards) -- they agree everywhere;
  * with the overlap on (combined 1F1B), each steady-state pair (forward k+w, backward k) is one call of
    combined_1f1b_schedule_for_interleaved_pipelining: written joined by '+'.
An instance Megatron rejects (its ValueError / RuntimeError from the checks above) is written with its message.

File format:
  # header lines
  instance P=2 V=2 G=3 M=5 overlap=0
  rank 0: F0.0 F1.0 ... F3.0+B1.1 ... B4.0
  ...
  or, for a rejected instance, one line `rejected: ValueError: <Megatron's message>`.
OP = LETTER MICROBATCH . CHUNK; F forward, B full backward; chunk c of rank r is virtual stage c*P + r.
"""
import argparse
import ast
import os
import sys
import types
from typing import Optional
from reference_source import commit_of, read_source, top_level

SCHEDULES = "megatron/core/pipeline_parallel/schedules.py"
CUDA_GRAPHS = "megatron/core/transformer/cuda_graphs.py"








def group_checks_source(tree, source):
    """The statements of forward_backward_pipelining_with_interleaving that check the group size and M."""
    fn = next(n for n in tree.body
              if isinstance(n, ast.FunctionDef) and n.name == "forward_backward_pipelining_with_interleaving")
    picked = []
    for stmt in fn.body:
        text = ast.get_source_segment(source, stmt)
        if isinstance(stmt, (ast.If, ast.Assign)) and (
                "microbatch_group_size_per_vp_stage" in text or "final_microbatch_group_size" in text):
            picked.append(text)
            if isinstance(stmt, ast.If) and "final_microbatch_group_size" in text:
                break  # the last check; later statements use G for buffer sizes
    if len(picked) != 3:
        raise SystemExit(f"expected 3 group-size check statements, found {len(picked)}")
    return "\n".join(picked)


class ParallelState:
    def __init__(self):
        self.P, self.r, self.V = 1, 0, None

    def get_pipeline_model_parallel_world_size(self):
        return self.P

    def get_pipeline_model_parallel_rank(self):
        return self.r

    def get_virtual_pipeline_model_parallel_world_size(self):
        return self.V


def load(repo, rev, dump):
    sched_src = read_source(repo, rev, SCHEDULES)
    graphs_src = read_source(repo, rev, CUDA_GRAPHS)
    sched_tree, graphs_tree = ast.parse(sched_src), ast.parse(graphs_src)
    parts = {
        "get_pp_rank_microbatches": top_level(sched_tree, sched_src, "get_pp_rank_microbatches"),
        "get_schedule_table": top_level(sched_tree, sched_src, "get_schedule_table"),
        "convert_schedule_table_to_order": top_level(graphs_tree, graphs_src, "convert_schedule_table_to_order"),
    }
    checks = "def group_checks(config, num_microbatches, pipeline_parallel_size):\n" + "\n".join(
        "    " + line for line in group_checks_source(sched_tree, sched_src).splitlines())
    state = ParallelState()
    ns = {"Optional": Optional, "P2PCommunicator": object, "parallel_state": state}
    for name, text in parts.items():
        exec(compile(text, f"<{name}>", "exec"), ns)
    exec(compile(checks, "<group_checks>", "exec"), ns)
    if dump:
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, "extracted.py"), "w") as f:
            f.write("\n\n".join(list(parts.values()) + [checks]) + "\n")
    return ns, state


def rank_order(ns, state, P, r, V, G, M, overlap):
    state.P, state.r, state.V = P, r, V
    total, _, warmup, _ = ns["get_pp_rank_microbatches"](M, V, G, overlap_moe_expert_parallel_comm=overlap)
    table = ns["get_schedule_table"](M, V, G)
    order = ns["convert_schedule_table_to_order"](warmup, V, table)
    assert len(order) == 2 * total
    ops, fwd_k, pending = [], 0, [[] for _ in range(V)]
    for o in order:
        if o > 0:
            mb, chunk = table[fwd_k]
            assert chunk == o - 1
            fwd_k += 1
            pending[chunk].append(mb)
            ops.append(("F", mb, chunk))
        else:
            chunk = -o - 1
            ops.append(("B", pending[chunk].pop(0), chunk))
    # The loop skeleton of forward_backward_pipelining_with_interleaving, as a check of the order above.
    fwd = lambda k: ("F", table[k][0], table[k][1])
    bwd = lambda k: ("B", table[k][0], V - 1 - table[k][1])
    skeleton = [fwd(k) for k in range(warmup)]
    steps = [[s] for s in skeleton]
    for k in range(total - warmup):
        skeleton += [fwd(k + warmup), bwd(k)]
        steps.append([fwd(k + warmup), bwd(k)] if overlap else None)
        if not overlap:
            steps[-1:] = [[fwd(k + warmup)], [bwd(k)]]
    for k in range(total - warmup, total):
        skeleton.append(bwd(k))
        steps.append([bwd(k)])
    assert skeleton == ops, (P, r, V, G, M, overlap)
    return " ".join("+".join(f"{l}{mb}.{c}" for l, mb, c in step) for step in steps)


def check(ns, P, V, G, M):
    config = types.SimpleNamespace(microbatch_group_size_per_vp_stage=G, virtual_pipeline_model_parallel_size=V)
    try:
        ns["group_checks"](config, M, P)
    except (ValueError, RuntimeError) as e:
        return f"{type(e).__name__}: {e}"
    return None


# V per P: every V in 2..4 up to P = 4, then fewer (file size).
V_VALUES = {2: (2, 3, 4), 3: (2, 3, 4), 4: (2, 3, 4), 5: (2, 3), 6: (2,), 7: (2,), 8: (2, 4)}


def instances():
    """Candidates: P 2..8, M around multiples of P, G from 1 (from P - 1 when P > 4) to M + 1, the overlap off and on. Instances Megatron
    rejects are kept only for V = 2 without the overlap (the checks depend on P, G and M alone)."""
    for P, vs in V_VALUES.items():
        for V in vs:
            ms = {P - 1, P, P + 1, 2 * P - 1, 2 * P, 2 * P + 1, 3 * P, 3 * P + 2, 4 * P + 1}
            if P > 4 and V > 2:
                ms = {P, 2 * P, 2 * P + 1, 3 * P + 2}
            for M in sorted(ms - {0}):
                gs = {1, P - 1, P, P + 1, 2 * P, M - 1, M, M + 1} if P <= 4 else {P - 1, P, 2 * P, M, M + 1}
                for G in sorted(gs - {0}):
                    for overlap in (0, 1):
                        yield P, V, G, M, overlap


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("megatron")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default="-")
    ap.add_argument("--dump")
    args = ap.parse_args()
    ns, state = load(args.megatron, args.rev, args.dump)
    commit = commit_of(args.megatron, args.rev)
    lines = [
        f"# Megatron-Core tunable interleaved 1F1B reference orders, NVIDIA/Megatron-LM@{commit}",
        "# generated by: python3 scripts/reference-megatron-orders.py <Megatron-LM checkout or bare clone> "
        f"--rev {commit[:10]} --out tests/reference/megatron_tunable_orders.txt",
        "# functions run: schedules.py get_pp_rank_microbatches, get_schedule_table, the group-size checks of",
        "#   forward_backward_pipelining_with_interleaving; cuda_graphs.py convert_schedule_table_to_order",
        "# OP = LETTER MICROBATCH . CHUNK (F forward, B backward; chunk c of rank r = stage c*P + r);",
        "# 'a+b' = one combined-1F1B step (overlap=1: forward and backward overlapped); see tests/reference/README.md",
    ]
    accepted = rejected = 0
    for P, V, G, M, overlap in instances():
        why = check(ns, P, V, G, M)
        if why and (V != 2 or overlap):
            continue
        lines.append(f"instance P={P} V={V} G={G} M={M} overlap={overlap}")
        if why:
            rejected += 1
            lines.append("rejected: " + why)
            continue
        accepted += 1
        for r in range(P):
            lines.append(f"rank {r}: " + rank_order(ns, state, P, r, V, G, M, bool(overlap)))
    text = "\n".join(lines) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)
    print(f"{accepted} accepted, {rejected} rejected instances", file=sys.stderr)


if __name__ == "__main__":
    main()
