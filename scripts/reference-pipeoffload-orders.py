#!/usr/bin/env python3
"""Writes reference orders of PipeOffload: group-interleaved 1F1B with activation offload to host memory.

The reference is sail-sg/zero-bubble-pipeline-parallelism (the PipeOffload authors' Megatron fork). Its pure-Python
scheduler modules live in megatron/core/pipeline_parallel/zerobubble/scheduler/: graph.py (ScheduledNode,
GraphConfig), group_interleaved_1f1b.py (GroupBuildingBlockScheduler, create_schedule), offloading.py (add_offload
and its helpers), communication.py and passes.py (run_schedule_passes). This script reads those five files from a
checkout or bare mirror, registers them as modules under their own package name (stand-in parent packages and a
stand-in megatron.training whose get_args must never be called: none of the code run here calls it), executes them
unchanged, and calls them exactly as the reference's runtime.py does for an interleaved run (the branch "Interleaved
pipeline" of get_zero_bubble_forward_backward_func). No reference code is copied here; `ast` is used only to check
that the functions and classes named below exist at the given revision.

    scripts/reference-pipeoffload-orders.py MIRROR [--rev REV] [--out FILE] [--times]

MIRROR is a checkout or a bare git repository / mirror (files read with `git show REV:path`, REV default HEAD).

How an order is obtained, per instance (P ranks, V chunks per rank, M micro-batches, G = --interleave-group-size,
K = --offload-chunk-num, OT = --offload-time, costs f, b, w):
  * config = graph.GraphConfig.basic_config(f=f, b=b, w=w, n_stages=P, n_micro=M, max_chunks=V)
    (cost_comm stays 0.0, as in runtime.py);
  * local_order = group_interleaved_1f1b.create_schedule(config, cpu_offload=K > 0, recompute_granularity=None,
    recompute_method=None, recompute_num_layers=None, interleave_group_size=G, offload_chunk_num=K);
  * result = passes.run_schedule_passes(config, local_order, offload_time=OT if K > 0 else None)
    (pre_validate, add_send_recv_peer_stage, add_time, offloading.add_offload when K > 0,
    communication.add_communication_nodes_without_sorting, validate_communication);
  * rank r's line is result[r] in list order -- the order in which the reference's runtime dispatches the nodes --
    with the point-to-point communication nodes (SEND_/RECV_FORWARD/BACKWARD) left out. Nothing is reordered.
An instance whose run raises is written as `rejected:` with the exception type, the reference function that raised
it and its message: the reference's assertion "Unable to schedule offload..." (add_send_recv: a reload slot would
start before its offload ends), its IndexError in adjust_warmup (rank 2k of a pair left with no usable offload, or a
rank's transfers running out during the warm-up packing), or an assertion of the p2p pass (insert_recv_nodes).

Checks made on every accepted instance (the script stops if one fails):
  * every rank runs F, I and W of every (micro-batch, chunk) exactly once, and its compute order with offload equals
    the order of the same instance with K = 0 (offload inserts ops, it never moves compute);
  * for every offloaded activation (micro-batch m, chunk c) the rank has exactly one each of O, Of, Ra, R, Rf, in the
    order F < O < Of < Ra < R < I < W < Rf, and F/I carry should_offload exactly when O exists;
  * per chunk, the micro-batches of the offloaded F's, O, Of, Ra, R, I's and Rf appear in the same order (the
    runtime binds them to activation stores FIFO per chunk, runtime.py ActivationPoolCache / offload.py
    ActivationStorePool.pop_call_push, not by micro-batch number);
  * the two ranks of a host-link pair (2k, 2k+1) issue the same number of paired barriers (O + R + X).

File format:
  # header lines
  instance P=4 V=2 M=8 G=2 K=1 OT=0.5 f=1 b=1 w=1 T=1.5
  memory: before=[...] after=[...]
  rank 0: F0.0 O0.0 F1.0 ...
  ...
  or, for a rejected instance, one line `rejected: <Exception> in <function>: <message>`.
T = round(max_s(f+b+w) * OT, 2) is the reference's time of one one-way transfer (add_offload's
parallel_offload_time); K = 0 instances have no offload pass (OT and T are written as '-').
`memory:` is offloading.get_peak_memory per rank (in activations of one chunk of one micro-batch) of the order
without offload (before) and with it (after) -- the numbers add_offload prints.
OP = KIND MICROBATCH . CHUNK, or X:
  F   forward                                   (reference FuncType.F)
  I   input-gradient backward                   (reference FuncType.B)
  W   weight-gradient backward                  (reference FuncType.W)
  O   offload start: D2H copy issued            (OFFLOAD_SEND_START)
  Of  offload end: device copy freed            (OFFLOAD_SEND_END)
  Ra  reload prepare: device buffer allocated   (OFFLOAD_RECV_PREP)
  R   reload start: H2D copy issued             (OFFLOAD_RECV_START)
  Rf  reload end: reloaded buffer released      (OFFLOAD_RECV_END)
  X   paired barrier with the other rank of the host-link pair (OFFLOAD_BARRIER; the reference gives it
      micro-batch 0, chunk 0, no layer)
Chunk c of rank r is virtual stage (layer group) c*P + r (the reference's layer_group_idx; loop placement).
--times appends '@' and the reference's planned start time (repr of the float) to every op, for debugging.
"""
import argparse
import ast
import contextlib
import io
import os
import sys
import time
import types
from reference_source import commit_of, read_source

REPO_NAME = "sail-sg/zero-bubble-pipeline-parallelism"
SCHED = "megatron/core/pipeline_parallel/zerobubble/scheduler"
PKG = "megatron.core.pipeline_parallel.zerobubble.scheduler"
# module -> names that must exist at the revision
MODULES = {
    "graph": ["FuncType", "ScheduledNode", "GraphConfig"],
    "group_interleaved_1f1b": ["GroupBuildingBlockScheduler", "create_schedule", "transform_schedule"],
    "offloading": ["add_offload", "postpone_forward_in_warmup", "add_offload_passes", "add_send_recv",
                   "adjust_warmup", "add_send_recv_in_schedule", "remove_unnecessary_offload",
                   "add_barriers_before_offload", "get_peak_memory"],
    "communication": ["add_communication_nodes_without_sorting", "validate_communication"],
    "passes": ["run_schedule_passes", "add_time"],
}
KIND = {
    "F": "F", "B": "I", "W": "W", "BW": "B",
    "OFFLOAD_SEND_START": "O", "OFFLOAD_SEND_END": "Of", "OFFLOAD_RECV_PREP": "Ra",
    "OFFLOAD_RECV_START": "R", "OFFLOAD_RECV_END": "Rf", "OFFLOAD_BARRIER": "X",
}
COMM = {"SEND_FORWARD", "RECV_FORWARD", "SEND_BACKWARD", "RECV_BACKWARD"}






def load(repo, rev):
    """Registers the reference's scheduler modules under their package name and returns them."""
    parts = PKG.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        sys.modules[name] = pkg
    training = types.ModuleType("megatron.training")

    def get_args():
        raise RuntimeError("the reference called get_args(); this script does not model Megatron's arguments")

    training.get_args = get_args
    sys.modules["megatron.training"] = training
    mods = {}
    for mod, names in MODULES.items():
        rel = f"{SCHED}/{mod}.py"
        src = read_source(repo, rev, rel)
        tree = ast.parse(src)
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        missing = [n for n in names if n not in defined]
        if missing:
            raise SystemExit(f"{rel}@{rev}: {', '.join(missing)} not found")
        m = types.ModuleType(f"{PKG}.{mod}")
        m.__package__ = PKG
        m.__file__ = rel
        sys.modules[m.__name__] = m
        exec(compile(src, rel, "exec"), m.__dict__)
        setattr(sys.modules[PKG], mod, m)
        mods[mod] = m
    return mods


def num(x):
    return repr(x)[:-2] if isinstance(x, float) and x.is_integer() else repr(x)


def run(mods, P, V, M, G, K, OT, f, b, w):
    """The reference's result for one instance (a list of per-rank node lists), and what it printed."""
    config = mods["graph"].GraphConfig.basic_config(f=f, b=b, w=w, n_stages=P, n_micro=M, max_chunks=V)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        local_order = mods["group_interleaved_1f1b"].create_schedule(
            config, cpu_offload=K > 0, recompute_granularity=None, recompute_method=None,
            recompute_num_layers=None, interleave_group_size=G, offload_chunk_num=K)
        result = mods["passes"].run_schedule_passes(config, local_order, offload_time=OT if K > 0 else None)
    return result, out.getvalue()


def kept(nodes):
    out = []
    for n in nodes:
        t = n.type.value
        if t in COMM:
            continue
        if t not in KIND:
            raise SystemExit(f"unexpected node type {t}")
        out.append(n)
    return out


def token(n, times):
    k = KIND[n.type.value]
    s = k if k == "X" else f"{k}{n.microbatch}.{n.chunk}"
    return f"{s}@{n.start_time!r}" if times else s


def check(P, V, M, K, ranks, plain, label):
    """The sanity checks listed in the module docstring. ranks: per-rank kept nodes; plain: the K = 0 orders."""
    def fail(msg):
        raise SystemExit(f"{label}: {msg}")

    for r, nodes in enumerate(ranks):
        comp = [(KIND[n.type.value], n.microbatch, n.chunk) for n in nodes if n.type.value in ("F", "B", "W")]
        want = {(k, m, c) for k in "FIW" for m in range(M) for c in range(V)}
        if len(comp) != len(want) or set(comp) != want:
            fail(f"rank {r}: compute ops are not F/I/W of every (micro-batch, chunk) once")
        if plain is not None and comp != plain[r]:
            fail(f"rank {r}: the compute order differs from the order without offload")
        if any(n.stage != r for n in nodes if n.type.value != "OFFLOAD_BARRIER"):
            fail(f"rank {r}: a node of another stage")
        pos, offloaded = {}, set()
        for i, n in enumerate(nodes):
            k = KIND[n.type.value]
            if k == "X":
                continue
            key = (k, n.microbatch, n.chunk)
            if k in ("O", "Of", "Ra", "R", "Rf"):
                if key in pos:
                    fail(f"rank {r}: {k}{n.microbatch}.{n.chunk} twice")
                offloaded.add((n.microbatch, n.chunk))
            pos[key] = i
        for n in nodes:
            if n.type.value in ("F", "B") and n.should_offload != ((n.microbatch, n.chunk) in offloaded):
                fail(f"rank {r}: should_offload of {token(n, False)} disagrees with its offload ops")
        for m, c in offloaded:
            seq = [pos.get((k, m, c)) for k in ("F", "O", "Of", "Ra", "R", "I", "W", "Rf")]
            if None in seq or seq != sorted(seq):
                fail(f"rank {r}: activation {m}.{c}: not F < O < Of < Ra < R < I < W < Rf")
        for c in range(V):
            seqs = []
            for kinds in (("F",), ("O",), ("Of",), ("Ra",), ("R",), ("I",), ("Rf",)):
                seqs.append([n.microbatch for n in nodes if n.chunk == c and KIND[n.type.value] in kinds
                             and (n.microbatch, c) in offloaded and n.type.value != "OFFLOAD_BARRIER"])
            if any(s != seqs[0] for s in seqs):
                fail(f"rank {r} chunk {c}: offload ops not in one FIFO order")
        if K == 0 and offloaded:
            fail(f"rank {r}: offload ops without offload")
    if K > 0:
        for r in range(0, P, 2):
            cnt = [sum(KIND[n.type.value] in ("O", "R", "X") for n in ranks[q]) for q in (r, r + 1)]
            if cnt[0] != cnt[1]:
                fail(f"ranks {r},{r + 1}: {cnt[0]} and {cnt[1]} paired barriers")


COSTS = [(1.0, 1.0, 1.0), (1.0, 1.5, 0.5)]


def instances():
    """(P, V, M, G, K, OT, f, b, w). Without offload: P = 2..6. With offload (the reference needs P even): P = 2, 4, 6,
    V = 2..4, G = ceil(P/2) and P (the README's range), K = 1, 2 (and K = V = 3 at OT = 0.5), OT = 0.5, 1.0 (1.0 is
    the reference's default; its --auto-offload-time gives about 0.75 on A100 at hidden 4096, sequence 8192),
    M = 2P and 2P + 1, costs f = b = w = 1; and five shapes with f, b, w = 1, 1.5, 0.5."""
    out = []
    for P in range(2, 7):
        for V in (2, 3, 4):
            if V == 4 and P % 2:
                continue
            gs = sorted({1, (P + 1) // 2, P})
            for G in gs:
                for M in (2 * P, 2 * P + 1):
                    out.append((P, V, M, G, 0, None) + COSTS[0])
    for P in (2, 4, 6):
        for V in (2, 3, 4):
            for G in sorted({(P + 1) // 2, P}):
                for M in (2 * P, 2 * P + 1):
                    for K in (1, 2):
                        for OT in (0.5, 1.0):
                            out.append((P, V, M, G, K, OT) + COSTS[0])
                    if V == 3:  # every chunk offloaded
                        out.append((P, V, M, G, V, 0.5) + COSTS[0])
    # uneven costs (T = 3 * OT as well): a few
    for P, V, M, G in ((2, 3, 5, 2), (4, 3, 9, 2), (4, 3, 8, 4), (6, 3, 12, 3), (6, 2, 13, 6)):
        out.append((P, V, M, G, 0, None) + COSTS[1])
        for K, OT in ((1, 0.5), (1, 1.0), (2, 0.5)):
            out.append((P, V, M, G, K, OT) + COSTS[1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirror")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default="-")
    ap.add_argument("--times", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    mods = load(args.mirror, args.rev)
    commit = commit_of(args.mirror, args.rev)
    lines = [
        f"# PipeOffload reference orders (group-interleaved 1F1B + activation offload), {REPO_NAME}@{commit}",
        f"#   {SCHED}/: group_interleaved_1f1b.py create_schedule, offloading.py add_offload, passes.py",
        "#   run_schedule_passes, communication.py, graph.py -- called as runtime.py does (see the script's docstring):",
        "#   create_schedule(GraphConfig.basic_config(f, b, w, P, M, V), cpu_offload=K>0, recompute_granularity=None,",
        "#   interleave_group_size=G, offload_chunk_num=K); run_schedule_passes(config, order, offload_time=OT or None)",
        "# generated by: python3 scripts/reference-pipeoffload-orders.py <zero-bubble-pipeline-parallelism mirror> "
        f"--rev {commit[:10]} --out tests/reference/pipeoffload_orders.txt",
        "# P ranks, V chunks per rank (chunk c of rank r = layer group c*P+r), M micro-batches, G interleave group size,",
        "#   K offload chunk num (chunks c < K offloaded; 0 = no offload pass), OT offload-time ratio, f b w op costs,",
        "#   T = round(max(f+b+w)*OT, 2) one transfer's time; memory: offloading.get_peak_memory before/after offload",
        "# OP: F forward, I input-grad backward (ref B), W weight-grad backward; O offload start (D2H issued), Of offload",
        "#   end (device copy freed), Ra reload prepare (device buffer allocated), R reload start (H2D issued), Rf reload",
        "#   end (buffer released); X paired barrier with rank r^1; OP = KIND MICROBATCH.CHUNK; see PIPEOFFLOAD.md",
    ]
    plain_cache = {}
    accepted = rejected = 0
    for P, V, M, G, K, OT, f, b, w in instances():
        label = f"P={P} V={V} M={M} G={G} K={K} OT={'-' if OT is None else num(OT)} f={num(f)} b={num(b)} w={num(w)}"
        T = "-" if OT is None else num(round((f + b + w) * OT, 2))  # add_offload's parallel_offload_time
        lines.append(f"instance {label} T={T}")
        base = (P, V, M, G, f, b, w)
        if base not in plain_cache:
            res, _ = run(mods, P, V, M, G, 0, None, f, b, w)
            ranks0 = [kept(x) for x in res]
            plain_cache[base] = ([[(KIND[n.type.value], n.microbatch, n.chunk) for n in x] for x in ranks0],
                                 mods["offloading"].get_peak_memory(res))
        plain, before = plain_cache[base]
        try:
            res, _ = run(mods, P, V, M, G, K, OT, f, b, w)
        except Exception as e:  # the reference's refusal
            tb = e.__traceback__
            while tb.tb_next is not None:
                tb = tb.tb_next
            lines.append(f"rejected: {type(e).__name__} in {tb.tb_frame.f_code.co_name}: {e}")
            rejected += 1
            continue
        ranks = [kept(x) for x in res]
        check(P, V, M, K, ranks, plain, label)
        after = mods["offloading"].get_peak_memory(res)
        fmt = lambda xs: "[" + ",".join(map(str, xs)) + "]"
        lines.append(f"memory: before={fmt(before)} after={fmt(after)}")
        for r, nodes in enumerate(ranks):
            lines.append(f"rank {r}: " + " ".join(token(n, args.times) for n in nodes))
        accepted += 1
    text = "\n".join(lines) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(f"{accepted} accepted, {rejected} rejected instances, {time.time() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
