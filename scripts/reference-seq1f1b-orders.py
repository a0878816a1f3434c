#!/usr/bin/env python3
"""Writes reference orders of Seq1F1B (1F1B over k sequence segments of every micro-batch).

The reference is sail-sg/zero-bubble-pipeline-parallelism (Megatron-based), which runs Seq1F1B (`--num-seq-splits k`,
k > 1) through its pure-Python scheduler megatron/core/pipeline_parallel/zerobubble/scheduler/seq1f1b.py,
function create_schedule(config). This script reads that file and graph.py (FuncType, ScheduledNode, GraphConfig;
pure Python, stdlib imports only) and passes.py at a revision, executes graph.py, cuts create_schedule and
passes.add_time out with `ast` (no reference code is copied here), runs them with a stand-in for get_args, and
writes, per instance, each rank's order of compute ops.

    scripts/reference-seq1f1b-orders.py MIRROR [--rev REV] [--out FILE] [--thunlp THUNLP [--thunlp-rev REV]] [--dump DIR]

MIRROR is a checkout or a bare git repository / mirror of sail-sg/zero-bubble-pipeline-parallelism (files read with
`git show REV:path`, REV default HEAD). --dump DIR writes the extracted code there (a scratch directory outside
the repository) for inspection.

How an order is obtained, for P stages, M micro-batches, k segments:
  * config = GraphConfig.basic_config(f=1.0, b=1.0, w=1.0, n_stages=P, n_micro=M, max_chunks=1), as runtime.py's
    Seq1F1B scheduler builds it (n_micro is get_num_microbatches(), i.e. M, not M*k; the costs do not influence
    the order), get_args().num_seq_splits = k;
  * local_order = create_schedule(config): per stage a list of ScheduledNode(type F or BW, stage, microbatch,
    seq_split_idx); rank r's order is local_order[r] as is (runtime.py hands it to run_schedule_passes, which only
    adds timing and send/recv nodes around the compute nodes, never reordering them);
  * the line create_schedule prints per stage ("F0-0 ... BW0-1 ...") is captured and checked against the nodes;
  * passes.add_time(config, local_order) (the reference's own list scheduler, stage by stage over get_prev_key:
    F(m, j) at stage s after F(m, j) at s-1; BW(m, j) at s after BW(m, j) at s+1, or after F(m, j) at the last
    stage) is run on every instance and must complete (no deadlock) and keep each stage's order;
  * own checks: every F(m, j) and B(m, j) exactly once per rank; forwards in (m, j) order, backwards by m and
    within m in reverse segment order; each B(m, j) after the rank's last forward F(m, k-1); the order equals the
    closed form below; for k = 1 it is plain 1F1B (min(P-r-1, M) warm-up forwards, then F/B pairs, then the rest);
  * closed form: w = min(P - r - 2 + k, M*k); forward i is (i // k, i % k), backward i is (i // k, k-1 - i % k);
    rank r runs forwards 0..w-1, then for i < M*k - w forward w+i and backward i, then backwards M*k-w..M*k-1.
With --thunlp THUNLP (a checkout or mirror of thunlp/Seq1F1B, the authors' code), the same instances are also
derived from that code and must be identical: the warm-up statements of forward_backward_pipelining_without_interleaving
(megatron/core/pipeline_parallel/schedules.py) give w and the steady count; the forward segments come from
running get_batch_sp (pretrain_gpt.py: forward call i gets micro-batch i // k and segment offset i % k) with a
stand-in get_batch; the backward segments come from running the class sp_queue
(megatron/core/pipeline_parallel/sp_utils.py) as input_tensors: forwards append, backwards pop, in the function's
loop skeleton (w forwards; forward then backward, M*k - w times; w backwards).

File format:
  # header lines
  instance P=2 M=3 k=2
  rank 0: F0.0 F0.1 F1.0 B0.1 F1.1 B0.0 ...
  ...
OP = LETTER MICROBATCH . SEGMENT, both from 0; F forward, B full backward (the reference's BW: input and weight
gradients together; Seq1F1B does not split W off). Rank r is pipeline stage r.
"""
import argparse
import ast
import contextlib
import io
import os
import sys
import time
import types
from reference_source import commit_of, read_source, top_level

SAIL_REPO = "sail-sg/zero-bubble-pipeline-parallelism"
SCHED_DIR = "megatron/core/pipeline_parallel/zerobubble/scheduler"
SEQ1F1B = SCHED_DIR + "/seq1f1b.py"
GRAPH = SCHED_DIR + "/graph.py"
PASSES = SCHED_DIR + "/passes.py"

THUNLP_REPO = "thunlp/Seq1F1B"
TH_SCHEDULES = "megatron/core/pipeline_parallel/schedules.py"
TH_SP_UTILS = "megatron/core/pipeline_parallel/sp_utils.py"
TH_PRETRAIN = "pretrain_gpt.py"








# ---------------------------------------------------------------------------------------------------------------
# sail-sg/zero-bubble-pipeline-parallelism

class Args:
    """Stand-in for megatron.training.get_args() (create_schedule reads num_seq_splits only)."""
    num_seq_splits = 1


def load_sail(repo, rev, dump):
    graph_src = read_source(repo, rev, GRAPH)
    seq_src = read_source(repo, rev, SEQ1F1B)
    passes_src = read_source(repo, rev, PASSES)
    # graph.py imports dataclasses, enum and typing only: run it whole as a module of its own.
    for node in ast.parse(graph_src).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mod = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            if mod.split(".")[0] not in ("dataclasses", "enum", "typing"):
                raise SystemExit(f"graph.py imports {mod}: no longer stand-alone")
    graph = types.ModuleType("_seq1f1b_ref_graph")
    sys.modules[graph.__name__] = graph  # dataclasses looks the module up
    exec(compile(graph_src, "<graph.py>", "exec"), graph.__dict__)

    args = Args()
    ns = {"get_args": lambda: args}
    # seq1f1b.py: its imports must be get_args and graph names; the rest is create_schedule.
    seq_tree = ast.parse(seq_src)
    for node in seq_tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.module.endswith("scheduler.graph"):
                    ns[alias.asname or alias.name] = getattr(graph, alias.name)
                elif alias.name != "get_args":
                    raise SystemExit(f"seq1f1b.py imports {alias.name} from {node.module}: unexpected")
    create_src = top_level(seq_tree, seq_src, "create_schedule")
    exec(compile(create_src, "<seq1f1b.create_schedule>", "exec"), ns)

    add_time_src = top_level(ast.parse(passes_src), passes_src, "add_time")
    pns = {"dataclasses": __import__("dataclasses"), "List": list}
    pns.update({k: getattr(graph, k) for k in ("GraphConfig", "F", "B", "W", "BW", "R", "ScheduledNode")})
    exec(compile(add_time_src, "<passes.add_time>", "exec"), pns)

    if dump:
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, "sail_extracted.py"), "w") as f:
            f.write(create_src + "\n\n\n" + add_time_src + "\n")
    return types.SimpleNamespace(graph=graph, args=args, create_schedule=ns["create_schedule"],
                                 add_time=pns["add_time"])


def sail_orders(ref, P, M, k):
    g = ref.graph
    ref.args.num_seq_splits = k
    config = g.GraphConfig.basic_config(f=1.0, b=1.0, w=1.0, n_stages=P, n_micro=M, max_chunks=1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        local_order = ref.create_schedule(config)
    printed = buf.getvalue().splitlines()
    assert len(local_order) == P and len(printed) == P, (P, M, k)
    letter = {g.F: "F", g.BW: "B"}
    orders = []
    for r, nodes in enumerate(local_order):
        ops = []
        for n in nodes:
            assert n.stage == r and n.layer_group_idx == r and n.chunk == 0, n
            ops.append((letter[n.type], n.microbatch, n.seq_split_idx))
        assert printed[r].split() == [f"{n.type.value}{n.microbatch}-{n.seq_split_idx}" for n in nodes], (P, M, k, r)
        orders.append(ops)
    # The reference's own list scheduler over its dependency graph: must finish and keep every stage's order.
    with contextlib.redirect_stdout(io.StringIO()):
        timed = ref.add_time(config, local_order)
    for r in range(P):
        assert [n.get_key() for n in timed[r]] == [n.get_key() for n in local_order[r]], (P, M, k, r)
    return orders


# ---------------------------------------------------------------------------------------------------------------
# thunlp/Seq1F1B (cross-check)

class ThunlpArgs:
    pipe_sp_splits = 1
    pipe_sp_strategy = "average"  # the --pipe-sp-strategy default; the strategy only changes segment lengths


class FakeSeq:
    """Stand-in for one [batch, sequence] tensor of micro-batch `mb`: chunk(k, dim=1)[j] is (mb, j)."""

    def __init__(self, mb, length):
        self.mb, self.length = mb, length

    def size(self, dim):
        assert dim == 1
        return self.length

    def chunk(self, n, dim):
        assert dim == 1 and self.length % n == 0
        return [(self.mb, j) for j in range(n)]


def load_thunlp(repo, rev, dump):
    sched_src = read_source(repo, rev, TH_SCHEDULES)
    sp_src = read_source(repo, rev, TH_SP_UTILS)
    pre_src = read_source(repo, rev, TH_PRETRAIN)
    sched_tree = ast.parse(sched_src)
    fn = next(n for n in sched_tree.body
              if isinstance(n, ast.FunctionDef) and n.name == "forward_backward_pipelining_without_interleaving")
    picked = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in ("num_warmup_microbatches", "num_microbatches_remaining")
                for t in stmt.targets):
            picked.append(ast.get_source_segment(sched_src, stmt))
    if len(picked) != 3:
        raise SystemExit(f"expected 3 warm-up statements in thunlp schedules.py, found {len(picked)}")
    counts_src = ("def thunlp_counts(parallel_state, global_args, num_microbatches):\n"
                  + "\n".join("    " + line for s in picked for line in s.splitlines())
                  + "\n    return num_warmup_microbatches, num_microbatches_remaining\n")
    sp_queue_src = top_level(ast.parse(sp_src), sp_src, "sp_queue", ast.ClassDef)
    get_batch_sp_src = top_level(ast.parse(pre_src), pre_src, "get_batch_sp")

    args = ThunlpArgs()
    state = types.SimpleNamespace(L=None, next_mb=0)

    def get_batch(*_a, **_k):
        mb = state.next_mb
        state.next_mb += 1
        return tuple(FakeSeq(mb, state.L) for _ in range(5))

    def get_splits():
        raise AssertionError("get_splits is only used by the uniform_comp strategy")

    torch = types.SimpleNamespace(distributed=types.SimpleNamespace(get_rank=lambda: 0))
    ns = {"get_args": lambda: args, "get_batch": get_batch, "get_splits": get_splits, "torch": torch}
    exec(compile(counts_src, "<thunlp warm-up statements>", "exec"), ns)
    exec(compile(sp_queue_src, "<thunlp sp_queue>", "exec"), ns)
    exec(compile(get_batch_sp_src, "<thunlp get_batch_sp>", "exec"), ns)
    if dump:
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, "thunlp_extracted.py"), "w") as f:
            f.write("\n\n\n".join([counts_src, sp_queue_src, get_batch_sp_src]) + "\n")
    return types.SimpleNamespace(ns=ns, args=args, state=state)


def thunlp_orders(th, P, M, k):
    th.args.pipe_sp_splits, th.args.pipe_sp_strategy = k, "average"
    orders = []
    for r in range(P):
        pstate = types.SimpleNamespace(get_pipeline_model_parallel_world_size=lambda: P,
                                       get_pipeline_model_parallel_rank=lambda r=r: r)
        warmup, remaining = th.ns["thunlp_counts"](pstate, th.args, M)
        th.state.L, th.state.next_mb = 12 * k, 0
        get_data = th.ns["get_batch_sp"]()  # a fresh closure per rank process
        queue = th.ns["sp_queue"](k)
        ops = []

        def forward():
            tokens, _labels, _mask, _attn, _pos, offset = get_data(None)
            assert tokens[1] == offset
            ops.append(("F", tokens[0], offset))
            queue.append((tokens[0], offset))

        def backward():
            mb, seg = queue.pop(0)
            ops.append(("B", mb, seg))

        for _ in range(warmup):
            forward()
        for _ in range(remaining):
            forward()
            backward()
        for _ in range(warmup):
            backward()
        assert len(queue) == 0
        orders.append(ops)
    return orders


# ---------------------------------------------------------------------------------------------------------------

def closed_form(P, M, k, r):
    w = min(P - r - 2 + k, M * k)
    fwd = lambda i: ("F", i // k, i % k)
    bwd = lambda i: ("B", i // k, k - 1 - i % k)
    order = [fwd(i) for i in range(w)]
    for i in range(M * k - w):
        order += [fwd(w + i), bwd(i)]
    return order + [bwd(i) for i in range(M * k - w, M * k)]


def check(orders, P, M, k):
    for r, ops in enumerate(orders):
        want = {(l, m, j) for l in "FB" for m in range(M) for j in range(k)}
        assert len(ops) == len(want) and set(ops) == want, (P, M, k, r)
        fs = [(m, j) for l, m, j in ops if l == "F"]
        bs = [(m, -j) for l, m, j in ops if l == "B"]
        assert fs == sorted(fs) and bs == sorted(bs), (P, M, k, r)
        for m in range(M):
            assert ops.index(("B", m, 0)) > ops.index(("F", m, k - 1)), (P, M, k, r, m)
            assert all(ops.index(("B", m, j)) > ops.index(("F", m, k - 1)) for j in range(k))
        assert ops == closed_form(P, M, k, r), (P, M, k, r)
        if k == 1:
            w = min(P - r - 1, M)
            plain = [("F", i, 0) for i in range(w)]
            for i in range(M - w):
                plain += [("F", w + i, 0), ("B", i, 0)]
            plain += [("B", i, 0) for i in range(M - w, M)]
            assert ops == plain, (P, M, r)


def instances():
    """P 2..6; M in {1, P-1, P, P+1, 2P, 2P+1} (M < P exercises the cap of the warm-up at M*k); k 1..4."""
    for P in range(2, 7):
        for M in sorted({1, P - 1, P, P + 1, 2 * P, 2 * P + 1}):
            for k in (1, 2, 3, 4):
                yield P, M, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirror", help=f"checkout or bare clone of {SAIL_REPO}")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default="-")
    ap.add_argument("--thunlp", help=f"checkout or bare clone of {THUNLP_REPO}, for the cross-check")
    ap.add_argument("--thunlp-rev", default="HEAD")
    ap.add_argument("--dump")
    a = ap.parse_args()
    t0 = time.time()
    ref = load_sail(a.mirror, a.rev, a.dump)
    commit = commit_of(a.mirror, a.rev)
    th = load_thunlp(a.thunlp, a.thunlp_rev, a.dump) if a.thunlp else None
    lines = [
        f"# Seq1F1B reference orders, {SAIL_REPO}@{commit}",
        f"#   {SEQ1F1B}: create_schedule(GraphConfig.basic_config(1.0, 1.0, 1.0, P, M, 1)), num_seq_splits = k;",
        f"#   every instance also run through {PASSES}: add_time (completes, order kept)",
        "# generated by: python3 scripts/reference-seq1f1b-orders.py <zero-bubble-pipeline-parallelism mirror> "
        f"--rev {commit[:10]}" + (" --thunlp <Seq1F1B mirror>" if th else "")
        + " --out tests/reference/seq1f1b_orders.txt",
    ]
    if th:
        th_commit = commit_of(a.thunlp, a.thunlp_rev)
        lines.append(f"# cross-checked: {THUNLP_REPO}@{th_commit} ({TH_SCHEDULES} "
                     "forward_backward_pipelining_without_interleaving warm-up, sp_utils.py sp_queue, "
                     "pretrain_gpt.py get_batch_sp) gives identical orders on every instance")
    lines += [
        "# OP = LETTER MICROBATCH . SEGMENT (from 0); F forward, B full backward (reference BW, no W split); "
        "rank r = stage r",
        "# see tests/reference/SEQ1F1B.md",
    ]
    n = 0
    for P, M, k in instances():
        orders = sail_orders(ref, P, M, k)
        check(orders, P, M, k)
        if th:
            assert thunlp_orders(th, P, M, k) == orders, ("thunlp differs", P, M, k)
        n += 1
        lines.append(f"instance P={P} M={M} k={k}")
        for r, ops in enumerate(orders):
            lines.append(f"rank {r}: " + " ".join(f"{l}{m}.{j}" for l, m, j in ops))
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)
    print(f"{n} instances{' (thunlp identical)' if th else ''}, {time.time() - t0:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
