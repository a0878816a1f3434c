#!/usr/bin/env python3
"""Writes the per-rank compute orders of third-party ports of DeepSeek's DualPipeV (and DualPipe) schedule.

Each port's own order-producing code is read from a checkout, a bare mirror or a directory of excerpts, cut out with
`ast` (nothing of it is copied here) and executed with stand-ins for torch / paddle / megatron / jax and for the
communication, so no GPU and no framework is needed. Per (port, P, M) one file in pipeproof's native format is
written, to be compared with `pipeproof equiv dualpipev FILE -P P -M M` (`dualpipe` for the bidirectional files).

    scripts/reference-dualpipev-ports.py --out DIR --src PORT[:LABEL]=LOCATION[@REV] ... [--commit PORT[:LABEL]=HASH]
                                         [--ports a,b] [--ranks 2,4,6,8]

LOCATION is a git checkout or bare mirror (files read at REV, default HEAD, with `git show`) or a plain directory
holding the port's files at their repository paths (then give --commit for the header). LABEL (optional) runs a
port a second time, e.g. at another revision; it goes into the file names (--src spectrax:v0.1.2=MIRROR@v0.1.2 writes
spectrax-v0.1.2-build-p4-m8.txt). Only the ports given with --src are run. Instances: P in --ranks, M in
{2P, 2P+2, 3P, 4P} (DualPipeV needs M >= 2P; DualPipe needs P and M even, true here for even P).
Files: DIR/<port>[-<label>][-<variant>]-p<P>-m<M>.txt, each with a header naming repository, commit, files and the
functions executed. tests/reference/DUALPIPEV_PORTS.md has the command used, the locations and the verdicts.

Ports (PORT: repository, file, what is executed verbatim):
  deepseek       deepseek-ai/DualPipe dualpipe/dualpipev.py, dualpipe/dualpipe.py: DualPipeV.step / DualPipe.step and
                 _forward_chunk, _backward_chunk, _forward_backward_chunk, _weight_chunk; utils.WeightGradStore.
                 The reference itself, run through the same harness as a control. Variant dualpipe: DualPipe
                 (bidirectional), compared with `pipeproof equiv dualpipe`.
  megatron-pr    NVIDIA/Megatron-LM megatron/core/pipeline_parallel/dualpipe/{dualpipev,dualpipe,utils}.py (PR #5254,
                 refs/pull/5254/head; closed, not merged): the same methods as deepseek.
  paddle         PaddlePaddle/Paddle python/paddle/distributed/fleet/meta_parallel/dualpipev.py:
                 DualPipeVParallel.forward_backward_pipeline, _forward_pass, _backward_pass, _forward_backward_pass,
                 _weight_pass; WeightGradStore from .../meta_parallel/zero_bubble_utils.py.
  deepspeed      deepspeedai/DeepSpeed deepspeed/runtime/pipe/schedule.py (PR #8576 branch): DualPipeVSchedule
                 (steps() yields PipeInstructions; DualPipeVEngine's meaning of them is modelled: ForwardPass F,
                 BackwardPass B, or I plus one FIFO weight entry with enable_zb, ForwardBackwardPass a pair,
                 WeightPass the oldest entry). An earlier state of that code (tohtana/DeepSpeed 7687a78, run as
                 deepspeed:early) has neither ForwardBackwardPass nor WeightPass: F then whole B everywhere.
  mindspeed      Ascend/MindSpeed mindspeed/core/pipeline_parallel/dualpipev/dualpipev_schedules.py:
                 forward_backward_pipelining_with_cutinhalf, generate_dualpipev_schedule, the p2p wrappers
                 (send_forward ... send_forward_recv_slave_forward), detach_tensor, is_dualpipev_last_stgae,
                 set_dualpipe_chunk; and WeightGradStore (flush_chunk_grad, pop, pop_single, start/end_decouple) from
                 mindspeed/core/transformer/moe/moe_feature/fb_overlap/modules/weight_grad_store.py.
                 Variants: fbov-dwdetach (--moe-fb-overlap --dualpipev-dw-detach), fbov (--moe-fb-overlap; MindSpeed's
                 default keeps the cooldown backwards whole), plain (neither flag).
  flagscale      FlagOpen/FlagScale flagscale/train/dualpipev/dualpipev_schedules.py:
                 forward_backward_pipelining_with_dualpipev and the same helpers (adopted from MindSpeed; no
                 WeightGradStore: it disables TE's delayed wgrad). Variants: fbov (config.moe_fb_overlap), plain.
  d9d            d9d-project/d9d d9d/pipelining/infra/schedule/program/dualpipev.py: DualPipeVPipelineProgramBuilder
                 (compose, _build_for_rank) and component/program/topology.py build_stage_to_host_rank_topology.
  jaxpp          NVIDIA/jaxpp src/jaxpp/schedules.py (whole module; TaskType cut from src/jaxpp/types.py):
                 DualPipeV(2P, mpmd_dim=P).tasks(M) = dualpipev_tasks per rank; preprocess_schedule_tasks is run too.
  spectrax       erfanzar/Spectrax spectrax/runtime/schedules/{base,one_f_one_b,dualpipe}.py (whole modules):
                 variant build = DualPipeV(M).build(P), the grid the runtime executes (column r = rank r's order);
                 variant tasks = dualpipev_tasks(P, r, M) (at v0.1.2 the two differ; at HEAD build uses tasks).

Mapping onto pipeproof's ops (native format: STAGE LETTER MICROBATCH, pairs as (a;b), docs/formats.md):
  * Placement: the V map. Rank r holds local phase / chunk / virtual stage 0 = stage r (the descending leg) and
    phase 1 = stage 2P-1-r (the ascending leg, loss on rank 0) in every port; micro-batches 0..M-1 all enter at
    rank 0. MindSpeed and FlagScale number the phase-1 ("slave chunk") micro-batches M..2M-1: minus M here.
    DualPipe files: placement bidirectional; rank r's local phase p is direction p XOR (r >= P/2), as the
    reference's compute functions do; direction 0 = pipeline 0 stage r, direction 1 = pipeline 1 stage P-1-r
    (written @1), micro-batches 0..M/2-1 per direction.
  * Letters: F forward; B a whole backward (input and weight gradient in one op, DeepSeek's BW); I a backward whose
    weight gradient was deferred (zero bubble); W the deferred weight gradient, written where the port runs it.
  * Pairs: an overlapped forward of one phase with the whole backward of the other is one slot (F;B). DeepSeek,
    megatron-pr, paddle and deepspeed pair only when the model provides overlapped_forward_backward; that is the
    mode written here (without it they run F then B, same order). MindSpeed/FlagScale pair only under
    --moe-fb-overlap (forward_step with extra_block_kwargs carrying the backward's model graph); their plain
    variants run F then B. jaxpp's FusedTask(FWD, BWD_I, BWD_W) and d9d's ComposeAction(F, full B) are pairs;
    jaxpp's FusedTask(BWD_I, BWD_W) of one stage and micro-batch is a whole B; spectrax v0.1.2's
    FusedTask(BWD_I, BWD_W) is a whole B and its FusedTask(FWD, BWD_I) a pair (F;I).
  * Micro-batch numbers: class-based ports (deepseek, megatron-pr, paddle) take the next micro-batch of a phase in
    their compute functions (current_f/b_chunk_id, current_f/b_acc_id); the stand-ins here do exactly that and
    record the op; their step code, which decides which phase runs when, whether a backward is split and when a W
    runs, is the port's own. DeepSpeed: buffer_id = phase*M + micro-batch (its docstring). MindSpeed/FlagScale: a
    forward's micro-batch is the current_microbatch the port passes; a backward's (stage, micro-batch) is the
    label of the output tensor / model graph the port pops from its own queues. Builders (d9d, jaxpp, spectrax)
    carry (stage, micro-batch) in their actions.
  * Zero bubble: a backward is I when the port has weight-gradient deferral on (DeepSeek/Paddle: WeightGradStore
    .enabled = enable_zb, one queue entry per such backward, W = WeightGradStore.pop() FIFO; DeepSpeed:
    BackwardPass(enable_zb=True), WeightPass = oldest; MindSpeed: WeightGradStore.is_decoupleBlock while the
    backward runs puts its weight gradient in the cache, W is where pop()/pop_single() run it). The loss head's
    backward that MindSpeed/FlagScale run separately under --moe-fb-overlap (model_graph None) is part of B/I of
    stage 2P-1 and is not written as an op.
Comm calls are stand-ins that hand out fresh tensors; they do not change the compute order. Each run also checks
whether every stage runs F, and B or I+W, once per micro-batch; a file where it does not says INCOMPLETE in its header
(and on stderr), and is written as the port emits it.
"""
import argparse
import ast
import collections
import contextlib
import enum
import inspect
import os
import queue
import subprocess
import sys
import textwrap
import types
import typing

# --------------------------------------------------------------------------------------------------------------
# reading sources


class Source:
    def __init__(self, location, rev=None, commit=None):
        self.location, self.rev, self.given_commit = location, rev, commit
        self.git = self._is_git(location)

    @staticmethod
    def _is_git(loc):
        def q(*args):
            r = subprocess.run(["git", "-C", loc, *args], capture_output=True, text=True)
            return r.stdout.strip() if r.returncode == 0 else None
        if q("rev-parse", "--is-bare-repository") == "true":
            return True
        top = q("rev-parse", "--show-toplevel")
        return top is not None and os.path.realpath(top) == os.path.realpath(loc)

    def read(self, rel):
        if self.git:
            return subprocess.run(["git", "-C", self.location, "show", f"{self.rev or 'HEAD'}:{rel}"], check=True,
                                  capture_output=True, text=True).stdout
        with open(os.path.join(self.location, rel)) as f:
            return f.read()

    def commit(self):
        if self.given_commit:
            return self.given_commit
        if self.git:
            r = subprocess.run(["git", "-C", self.location, "rev-parse", (self.rev or "HEAD") + "^{commit}"],
                               capture_output=True,
                               text=True)
            if r.returncode == 0:
                return r.stdout.strip()
        return "unknown"


def cut(text, name):
    """Source of a top-level def/class `name` or of `Class.method`, with its decorators, dedented."""
    nodes, node = ast.parse(text).body, None
    for part in name.split("."):
        node = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part), None)
        if node is None:
            raise SystemExit(f"{name}: not found")
        nodes = node.body
    start = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return textwrap.dedent("\n".join(text.splitlines()[start - 1:node.end_lineno])) + "\n"


def define(ns, text, *names, filename="<port>"):
    for name in names:
        exec(compile(cut(text, name), f"{filename}:{name}", "exec"), ns)


# --------------------------------------------------------------------------------------------------------------
# recording


class Rejected(Exception):
    pass


class Recorder:
    """One rank's slots; a slot is a tuple of ops (letter, stage, micro-batch, pipeline)."""

    def __init__(self):
        self.slots = []

    def op(self, *ops):
        self.slots.append(tuple(ops))


def token(op):
    letter, stage, mb, pipe = op
    return f"{stage}{letter}{mb}" + ("@1" if pipe else "")


def slot_text(slot):
    return token(slot[0]) if len(slot) == 1 else "(" + ";".join(token(o) for o in slot) + ")"


def check_complete(ranks, stages_of_rank, M, pipes=1):
    """Problems found: an op twice, or a (pipeline, stage, micro-batch) of a rank without exactly one F and one B or
    one I and one W. An empty list means complete."""
    problems = []
    for r, slots in enumerate(ranks):
        seen = collections.Counter(op for slot in slots for op in slot)
        problems += [f"rank {r}: {token(o)} {n} times" for o, n in seen.items() if n != 1]
        for pipe, stage in stages_of_rank(r):
            for mb in range(M // pipes):
                has = lambda letter: (letter, stage, mb, pipe) in seen
                if not has("F"):
                    problems.append(f"rank {r}: no {token(('F', stage, mb, pipe))}")
                if has("B") + has("I") != 1:
                    problems.append(f"rank {r}: {'no' if not has('B') and not has('I') else 'both'} "
                                    f"{token(('B', stage, mb, pipe))}/{token(('I', stage, mb, pipe))}")
                if has("I") != has("W"):
                    problems.append(f"rank {r}: {token(('I', stage, mb, pipe))} without "
                                    f"{token(('W', stage, mb, pipe))}" if has("I") else
                                    f"rank {r}: {token(('W', stage, mb, pipe))} without an I")
    return problems


# --------------------------------------------------------------------------------------------------------------
# generic stand-ins


class Anything:
    """Attribute sink: any attribute is another Anything, any call returns None."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = Anything()
        setattr(self, name, value)
        return value

    def __call__(self, *a, **k):
        return None


class FakeTensor:
    def __init__(self, label=None):
        self.label, self.grad, self.requires_grad, self._base, self.data = label, None, False, None, None

    def detach(self):
        return FakeTensor(self.label)

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self

    def retain_grad(self):
        pass


class FakeScalar:
    def __init__(self, v=0):
        self.v = v

    def cuda(self):
        return self

    def item(self):
        return self.v

    def __iadd__(self, other):
        self.v += other
        return self


class FakeGraph(list):
    """A MindSpeed/FlagScale model graph: list of layer graphs; graph[-1].unperm2_graph[1] is the logits input."""

    def __init__(self, label):
        layer = Anything(unperm2_graph=(None, FakeTensor(label)), mlp_mhc_post_graph=(None, FakeTensor(label)))
        super().__init__([layer])
        self.label, self.layer_graphs = label, self


def fake_torch():
    t = types.SimpleNamespace()
    t.Tensor, t.Size, t.int, t.dtype = FakeTensor, tuple, int, object
    t.nn = types.SimpleNamespace(Module=object)
    t.is_grad_enabled = lambda: True
    t.stack = lambda xs: None
    t.tensor = lambda v=0, dtype=None, **k: FakeScalar(v)
    t.npu = types.SimpleNamespace(current_device=lambda: 0, Event=Anything)
    t.autocast = lambda *a, **k: contextlib.nullcontext()
    return t


TYPING = {n: getattr(typing, n) for n in ("Tuple", "List", "Union", "Callable", "Optional", "Iterator", "Any")}


# --------------------------------------------------------------------------------------------------------------
# DeepSeek-style classes: deepseek, megatron-pr (verbatim copy), paddle


def weightgradstore_from(text):
    ns = {"queue": queue, **TYPING}
    define(ns, text, "WeightGradStore", filename="utils.py")
    return ns["WeightGradStore"]


class DeepSeekHarness:
    """Instance state and stand-in compute/comm methods of DeepSeek's DualPipeV / DualPipe; step() and the chunk
    wrappers are attached from the port's source."""

    def __init__(self, P, r, M, dual, wgs, rec):
        self.P, self.M, self.dual, self.wgs, self.rec = P, M, dual, wgs, rec
        self.rank, self.num_ranks, self.batch_dim = r, P, 0
        self.is_first_rank, self.is_last_rank = r == 0, r == P - 1
        self.is_in_second_half = r >= P // 2
        self.is_middle_rank = r in (P // 2 - 1, P // 2)
        self.overlapped_forward_backward = True
        self.group = None

    def where(self, phase):
        """(pipeline, stage) of a local phase, as the reference's compute functions resolve it."""
        if self.dual:
            d = phase ^ self.is_in_second_half
            return (0, self.rank) if d == 0 else (1, self.P - 1 - self.rank)
        return (0, self.rank if phase == 0 else 2 * self.P - 1 - self.rank)

    def _reset_states(self):
        self.wgs.clear()
        self.f_id, self.b_id = {}, {}
        self.input_chunks, self.output_chunks, self.loss_chunks = ([], []), ([], []), []
        self.labels, self.criterion = None, None

    def _next(self, counters, phase):
        key = self.where(phase)
        mb = counters.get(key, 0)
        counters[key] = mb + 1
        return key, mb

    def fwd_op(self, phase):
        (pipe, stage), mb = self._next(self.f_id, phase)
        return ("F", stage, mb, pipe)

    def bwd_op(self, phase, enable_zb):
        (pipe, stage), mb = self._next(self.b_id, phase)
        # WeightGradStore.enabled = enable_zb during the backward: the layers put their weight-gradient work
        self.wgs.enabled = enable_zb
        if self.wgs.enabled:
            self.wgs.put(lambda op=("W", stage, mb, pipe): self.rec.op(op))
        self.wgs.enabled = False
        if enable_zb:
            self.wgs.flush()
        return ("I" if enable_zb else "B", stage, mb, pipe)

    # DeepSeek / Megatron names
    def _forward_compute_chunk(self, phase):
        self.rec.op(self.fwd_op(phase))

    def _backward_compute_chunk(self, phase, enable_zb=False):
        if self.forward_only:
            return
        self.rec.op(self.bwd_op(phase, enable_zb))

    def _forward_backward_compute_chunk(self, phase0, phase1):
        if not self.overlapped_forward_backward:
            self._forward_compute_chunk(phase0)
            self._backward_compute_chunk(phase1)
            return
        self.rec.op(self.fwd_op(phase0), self.bwd_op(phase1, False))

    def _recv_forward(self, phase):
        pass

    _send_forward = _recv_backward = _send_backward = _recv_forward

    def _commit_and_wait_comm(self, *a, **k):
        return None

    # Paddle names
    def _forward_compute(self, phase, micro_datasets=None):
        self._forward_compute_chunk(phase)

    def _backward_compute(self, phase, enable_zb=False):
        self._backward_compute_chunk(phase, enable_zb)

    def _forward_backward_compute(self, forward_phase, backward_phase, micro_datasets=None, **kw):
        self._forward_backward_compute_chunk(forward_phase, backward_phase)

    def is_pipeline_first_stage(self):
        return self.is_first_rank

    def is_pipeline_last_stage(self):
        return self.is_last_rank

    def _wrap_data(self, data, phase):
        return data

    def _broadcast_final_loss(self):
        return None


DEEPSEEK_METHODS = ["step", "_forward_chunk", "_backward_chunk", "_forward_backward_chunk", "_weight_chunk"]
PADDLE_METHODS = ["forward_backward_pipeline", "_forward_pass", "_backward_pass", "_forward_backward_pass",
                  "_weight_pass"]


def run_deepseek_like(cls_text, cls_name, methods, wgs, P, M, dual, paddle=False):
    ns = {"torch": fake_torch(), "WeightGradStore": wgs, **TYPING,
          "comm": types.SimpleNamespace(TENSOR_SHAPES=[(1,)], TENSOR_DTYPE=object),
          "scatter": lambda inputs, chunks, dim: [() for _ in range(chunks)], "gather": lambda *a: None,
          "paddle": types.SimpleNamespace(amp=types.SimpleNamespace(auto_cast=lambda **k: contextlib.nullcontext())),
          "deep_ep": None, "dist": None}
    Harness = type("Harness", (DeepSeekHarness,), {})
    for m in methods:
        exec(compile(cut(cls_text, f"{cls_name}.{m}"), f"<{cls_name}.{m}>", "exec"), ns)
        setattr(Harness, m, ns[m])
    ranks = []
    for r in range(P):
        rec = Recorder()
        h = Harness(P, r, M, dual, wgs, rec)
        if paddle:
            h.accumulate_steps, h.group_rank, h.num_ranks = M, r, P
            h._p2p_helper = Anything()
            h._layers = Anything()
            h.need_recv_meta, h.pp_group, h._overlap_p2p_comm = False, None, False
            h.forward_only = False
            h.forward_backward_pipeline(None, None)
        else:
            h.forward_only = False
            h.step(num_chunks=M, criterion=(lambda *a: None), labels=[])
        ranks.append(rec.slots)
    return ranks


# --------------------------------------------------------------------------------------------------------------
# DeepSpeed DualPipeVSchedule


def run_deepspeed(text, P, M):
    class Instr:
        def __init__(self, *args, **kwargs):
            self.args, self.kwargs = args, kwargs
            self.__dict__.update(kwargs)
            if args:
                self.buffer_id = args[0]

    class PipeSchedule:
        def __init__(self, micro_batches, stages, stage_id):
            self.micro_batches, self.stages, self.stage_id = micro_batches, stages, stage_id
            self.prev_stage, self.next_stage = stage_id - 1, stage_id + 1

    names = ["LoadMicroBatch", "ForwardPass", "BackwardPass", "SendActivation", "RecvActivation", "SendGrad",
             "RecvGrad", "ForwardBackwardPass", "WeightPass", "CommitP2P", "ReduceTiedGrads", "ReduceGrads",
             "OptimizerStep"]
    ns = {"PipeSchedule": PipeSchedule, **{n: type(n, (Instr,), {}) for n in names}}
    define(ns, text, "DualPipeVSchedule", filename="schedule.py")
    ranks = []
    for r in range(P):
        try:
            sched = ns["DualPipeVSchedule"](micro_batches=M, stages=P, stage_id=r)
        except ValueError as e:
            raise Rejected(f"ValueError: {e}")
        rec, wq = Recorder(), collections.deque()

        def op_of(cmd, letter):
            phase = cmd.kwargs["phase"]
            return (letter, r if phase == 0 else 2 * P - 1 - r, cmd.buffer_id - phase * M, 0)

        def backward(cmd):
            # DualPipeVEngine._exec_backward_pass: WeightGradStore.enabled = enable_zb; flush() one entry if enabled
            if getattr(cmd, "enable_zb", False):
                o = op_of(cmd, "I")
                wq.append(("W",) + o[1:])
                return o
            return op_of(cmd, "B")

        for cmds in sched.steps():
            for cmd in cmds:
                kind = type(cmd).__name__
                if kind == "ForwardPass":
                    rec.op(op_of(cmd, "F"))
                elif kind == "BackwardPass":
                    rec.op(backward(cmd))
                elif kind == "ForwardBackwardPass":
                    # DualPipeVModule with overlapped_forward_backward: the backward runs inside the forward;
                    # _backward_pass does not set WeightGradStore.enabled, so the backward is whole
                    rec.op(op_of(cmd.forward, "F"), op_of(cmd.backward, "B"))
                elif kind == "WeightPass":
                    rec.op(wq.popleft())  # WeightGradStore.pop(): funcs_queue.popleft()
        assert not wq
        ranks.append(rec.slots)
    return ranks


# --------------------------------------------------------------------------------------------------------------
# MindSpeed / FlagScale (Megatron-style schedule functions)


class ParallelState:
    def __init__(self, P, r):
        self.P, self.r = P, r

    def get_pipeline_model_parallel_world_size(self):
        return self.P

    def get_pipeline_model_parallel_rank(self):
        return self.r

    def is_pipeline_first_stage(self, *a, **k):
        return self.r == 0

    def is_pipeline_last_stage(self, *a, **k):
        return self.r == self.P - 1

    def get_context_parallel_world_size(self):
        return 1

    def get_tensor_model_parallel_world_size(self):
        return 1

    def is_pipeline_stage_after_split(self):
        return False


class Req:
    def wait(self):
        pass


def communicate(*, tensor_send_next=None, tensor_send_prev=None, recv_prev=False, recv_next=False, tensor_shape=None,
                config=None, wait_on_reqs=True):
    reqs = None if wait_on_reqs else {k: Req() for k, on in (("send_next", tensor_send_next is not None),
                                                               ("send_prev", tensor_send_prev is not None),
                                                               ("recv_prev", recv_prev), ("recv_next", recv_next))
                                      if on}
    return (FakeTensor() if recv_prev else None), (FakeTensor() if recv_next else None), reqs


def mindspeed_wgs(text, args):
    """MindSpeed's WeightGradStore (cut); only the matmul / all-gather of a cached entry are stood in."""
    ns = {"queue": queue, "get_args": lambda: args, "gather": None, "GMMFunction": None,
          "torch": fake_torch(), "torch_npu": types.SimpleNamespace(npu=types.SimpleNamespace(Stream=Anything))}
    define(ns, text, "WeightGradStore", filename="weight_grad_store.py")
    base = ns["WeightGradStore"]

    class WGS(base):
        recorder = None

        @classmethod
        def overlap_all_gather(cls):
            if len(cls.cache) > 0:
                return cls.cache.pop(0), None
            raise Exception("All Gather empty queue.")

        @classmethod
        def overlap_matmul(cls, grad_store_cache):
            cls.recorder.op(grad_store_cache[0])   # the W op the backward put

        @classmethod
        def reset(cls):
            cls.cache, cls.weight_grad_queue, cls.store_grad_cache = [], queue.Queue(), []
            cls.is_decoupleBlock, cls.gather_stream = False, None

    return WGS


def run_megatron_style(port, text, wgs_text, P, M, variant):
    fbov = variant.startswith("fbov")
    args = types.SimpleNamespace(moe_fb_overlap=fbov, dualpipev_dw_detach=variant == "fbov-dwdetach",
                                 overlap_grad_reduce=False, schedules_method="dualpipev")
    ranks = []
    for r in range(P):
        rec = Recorder()
        ps = ParallelState(P, r)
        stage_of = lambda chunk: r if chunk == 0 else 2 * P - 1 - r
        wgs = None
        if wgs_text is not None:
            wgs = mindspeed_wgs(wgs_text, args)
            wgs.reset()
            wgs.recorder = rec

        def backward_op(label):
            stage, mb = label
            if wgs is not None and wgs.is_decoupleBlock:
                wgs.put(("W", stage, mb, 0), None, object(), False, False)
                return ("I", stage, mb, 0)
            return ("B", stage, mb, 0)

        def fwd_label(chunk, current_microbatch):
            mb = current_microbatch - (M if chunk == 1 else 0)
            assert 0 <= mb < M, (chunk, current_microbatch)
            return (stage_of(chunk), mb)

        def forward_step_no_model_graph(forward_step_func, model_chunk_id, data_iterator, model, num_microbatches,
                                        input_tensor, forward_data_store, config, collect_non_loss_data=False,
                                        checkpoint_activations_microbatch=None, is_first_microbatch=False,
                                        current_microbatch=None):
            label = fwd_label(model_chunk_id, current_microbatch)
            rec.op(("F",) + label + (0,))
            return FakeTensor(label), FakeScalar(0)

        def forward_step_with_model_graph(forward_step_func, model_chunk_id, data_iterator, model, num_microbatches,
                                          input_tensor, forward_data_store, config, collect_non_loss_data=False,
                                          checkpoint_activations_microbatch=None, is_first_microbatch=False,
                                          current_microbatch=None, extra_block_kwargs=None):
            label = fwd_label(model_chunk_id, current_microbatch)
            out, graph = FakeTensor(label), FakeGraph(label)
            if extra_block_kwargs is None:
                rec.op(("F",) + label + (0,))
                return (out, graph), FakeScalar(0)
            bwd_graph = extra_block_kwargs.get("bwd_block_graphs", extra_block_kwargs.get("bwd_model_graph"))
            rec.op(("F",) + label + (0,), backward_op(bwd_graph.label))
            comm_out = Anything(input_tensor=FakeTensor(), fwd_wait_handles=None, output_tensor_grad=FakeTensor(),
                                bwd_wait_handles=None, input_tensor_grad=FakeTensor())
            return (out, graph, comm_out), FakeScalar(0)

        def backward_step(input_tensor, output_tensor, output_tensor_grad, model_type, config, *a, **k):
            rec.op(backward_op(output_tensor.label))
            return FakeTensor()

        def backward_step_with_model_graph(input_tensor, output_tensor, output_tensor_grad, model_type, config,
                                           model_graph=None):
            if model_graph is None:   # the loss head of stage 2P-1, before the block backward: part of that B
                assert r == 0
                return FakeTensor()
            rec.op(backward_op(model_graph.label))
            return FakeTensor()

        config = types.SimpleNamespace(batch_p2p_comm=True, finalize_model_grads_func=None, timers=None,
                                       no_sync_func=None, grad_sync_func=None, param_sync_func=None,
                                       sequence_parallel=False,
                                       hidden_size=8, deallocate_pipeline_outputs=False,
                                       calculate_per_token_loss=False, enable_mhc=False, moe_fb_overlap=fbov,
                                       barrier_with_L1_time=False)
        ns = {**TYPING, "contextlib": contextlib, "torch": fake_torch(), "parallel_state": ps, "get_args": lambda: args,
              "get_model_config": lambda m: config, "get_model_type": lambda m: "decoder",
              "ModelType": Anything(encoder_and_decoder="encoder_and_decoder"), "ModelParallelConfig": object,
              "Shape": list, "_communicate": communicate, "deallocate_output_tensor": lambda *a, **k: None,
              "forward_step_func_wrapper": lambda f: f, "set_shared_embedding_from_dual_chunk": lambda *a: None,
              "clear_embedding_activation_buffer": None, "finish_embedding_wgrad_compute": None,
              "P2PCommParams": Anything, "WeightGradStore": wgs, "GPTModel": object, "TransformerLayer": object,
              "gpt_model_forward_backward_overlapping": lambda *a, **k: None,
              "transformer_layer_forward_backward_overlapping": lambda *a, **k: None,
              "forward_step_no_model_graph": forward_step_no_model_graph,
              "forward_step_with_model_graph": forward_step_with_model_graph, "backward_step": backward_step,
              "backward_step_with_model_graph": backward_step_with_model_graph,
              "_DUALPIPE_CHUNK": None}
        names = ["generate_dualpipev_schedule", "is_dualpipev_last_stgae", "set_dualpipe_chunk", "send_forward",
                 "send_backward", "recv_forward", "recv_backward", "send_forward_recv_forward",
                 "send_forward_recv_slave_forward", port["function"]]
        names += [n for n in ("detach_tensor", "disable_dw_detach") if n in {x.name for x in ast.parse(text).body
                                                                            if isinstance(x, ast.FunctionDef)}]
        define(ns, text, *names, filename=port["path"])
        if "detach_tensor" not in ns:
            ns["detach_tensor"] = lambda t, checkpoint_forward=False: t.detach()
        model = [Anything(module=Anything(module=Anything(decoder=Anything(layers=[])))) for _ in range(2)]
        for m in model:
            m.modules = lambda: []
        ns[port["function"]](forward_step_func=None, data_iterator=[None, None], model=model, num_microbatches=M,
                             seq_length=4, micro_batch_size=1, forward_only=False)
        if wgs is not None:
            assert wgs.weight_grad_queue.empty() and not wgs.cache
        ranks.append(rec.slots)
    return ranks


# --------------------------------------------------------------------------------------------------------------
# builders: d9d, jaxpp, spectrax


def run_d9d(text, topo_text, P, M):
    class Action:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    ns = {"deque": collections.deque, "PipelineProgramBuilder": object, "StrEnum": enum.StrEnum,
          "defaultdict": collections.defaultdict, "add_communication_ops": lambda compute_actions, **k: compute_actions,
          **{n: type(n, (Action,), {}) for n in ("ActionBase", "ForwardComputeAction", "BackwardFullInputComputeAction",
                                                  "BackwardWeightComputeAction", "ComposeAction")}}
    define(ns, topo_text, "ScheduleStyle", "build_stage_to_host_rank_topology", filename="topology.py")
    define(ns, text, "DualPipeVPipelineProgramBuilder", filename="dualpipev.py")
    try:
        builder = ns["DualPipeVPipelineProgramBuilder"]()
        kwargs = dict(num_microbatches=M, pp_size=P)
        if "num_stages" in inspect.signature(builder.compose).parameters:   # before 5c7b5ba: compose(num_stages, ...)
            kwargs["num_stages"] = 2 * P
        program = builder.compose(**kwargs)
    except ValueError as e:
        raise Rejected(f"ValueError: {e}")

    def op(a):
        kind = type(a).__name__
        letter = {"ForwardComputeAction": "F", "BackwardWeightComputeAction": "W"}.get(kind)
        if kind == "BackwardFullInputComputeAction":
            letter = "B" if a.full_backward else "I"
        return (letter, a.stage_idx, a.microbatch_idx, 0)

    return [[tuple(op(x) for x in a.actions) if type(a).__name__ == "ComposeAction" else (op(a),)
             for a in program[r]] for r in range(P)]


def run_jaxpp(text, types_text, P, M):
    tmod = types.ModuleType("jaxpp.types")
    tns = tmod.__dict__
    tns.update({"Enum": enum.Enum, "NewType": typing.NewType})
    define(tns, types_text, "TaskType", filename="types.py")
    tns["MpmdIdx"] = typing.NewType("MpmdIdx", int)
    pkg = types.ModuleType("jaxpp")
    pkg.__path__ = []
    saved = {k: sys.modules.get(k) for k in ("jaxpp", "jaxpp.types", "jaxpp.schedules")}
    sys.modules.update({"jaxpp": pkg, "jaxpp.types": tmod})
    try:
        smod = types.ModuleType("jaxpp.schedules")
        sys.modules["jaxpp.schedules"] = smod
        exec(compile(text, "jaxpp/schedules.py", "exec"), smod.__dict__)
        S = smod.__dict__
        try:
            tasks = S["DualPipeV"](num_stages=2 * P, mpmd_dim=P).tasks(M)
        except ValueError as e:
            raise Rejected(f"ValueError: {e}")
        S["preprocess_schedule_tasks"](tasks, first_stage_id=0, unpack_fused_tasks=False)  # raises if not runnable
        TT = tns["TaskType"]
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    letter = {TT.FWD: "F", TT.BWD: "B", TT.BWD_I: "I", TT.BWD_W: "W"}

    def op(t):
        return (letter[t.fwd_or_bwd], t.stage_id, t.mubatch_idx, 0)

    def slot(t):
        if not isinstance(t, tuple):
            return (op(t),)
        parts = [op(x) for x in t]
        if [p[0] for p in parts] == ["I", "W"] and parts[0][1:] == parts[1][1:]:
            return (("B",) + parts[0][1:],)
        if [p[0] for p in parts] == ["F", "I", "W"] and parts[1][1:] == parts[2][1:]:
            return (parts[0], ("B",) + parts[1][1:])
        raise AssertionError(f"unexpected fused task {parts}")

    return [[slot(t) for t in rank_tasks if t is not None] for rank_tasks in tasks]


def load_package(name, files):
    pkg = types.ModuleType(name)
    pkg.__path__ = []
    sys.modules[name] = pkg
    mods = {}
    for mod_name, text in files:
        m = types.ModuleType(f"{name}.{mod_name}")
        m.__package__ = name
        sys.modules[m.__name__] = m
        exec(compile(text, f"{mod_name}.py", "exec"), m.__dict__)
        mods[mod_name] = m
    return mods


def run_spectrax(texts, P, M, variant):
    name = "_spectrax_schedules_%d" % id(texts)
    mods = load_package(name, [(n, t) for n, t in texts if t is not None])
    try:
        D, base = mods["dualpipe"].__dict__, mods["base"].__dict__
        Phase, FusedTask = base["Phase"], base["FusedTask"]
        letter = {Phase.FWD: "F", Phase.BWD: "B", Phase.BWD_I: "I", Phase.BWD_W: "W"}
        try:
            if variant == "build":
                grid = D["DualPipeV"](microbatches=M).build(P)
                per_rank = [[row[r] for row in grid if row[r] is not None] for r in range(P)]
            else:
                per_rank = [D["dualpipev_tasks"](P, r, M) for r in range(P)]
        except ValueError as e:
            raise Rejected(f"ValueError: {e}")
    finally:
        for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[k]

    def op(r, a):
        return (letter[a.phase], r if a.virtual_stage == 0 else 2 * P - 1 - r, a.microbatch, 0)

    def slot(r, t):
        if not isinstance(t, FusedTask):
            return (op(r, t),)
        f, b = op(r, t.fwd), op(r, t.bwd)
        if f[0] == "I" and b[0] == "W" and f[1:] == b[1:]:
            return (("B",) + f[1:],)      # v0.1.2 bwd(): FusedTask(fwd=BWD_I, bwd=BWD_W) of one micro-batch
        assert f[0] == "F", (f, b)
        return (f, b)

    return [[slot(r, t) for t in per_rank[r]] for r in range(P)]


# --------------------------------------------------------------------------------------------------------------
# ports

PORTS = {
    "deepseek": dict(repo="deepseek-ai/DualPipe", path="dualpipe/dualpipev.py", dual_path="dualpipe/dualpipe.py",
                     utils="dualpipe/utils.py", cls="DualPipeV", dual_cls="DualPipe",
                     what="DualPipeV.step/DualPipe.step with _forward_chunk, _backward_chunk, _forward_backward_chunk,"
                          " _weight_chunk; utils.WeightGradStore"),
    "megatron-pr": dict(repo="NVIDIA/Megatron-LM (PR #5254, closed unmerged)",
                        path="megatron/core/pipeline_parallel/dualpipe/dualpipev.py",
                        dual_path="megatron/core/pipeline_parallel/dualpipe/dualpipe.py",
                        utils="megatron/core/pipeline_parallel/dualpipe/utils.py", cls="DualPipeV", dual_cls="DualPipe",
                        what="DualPipeV.step/DualPipe.step with _forward_chunk, _backward_chunk,"
                             " _forward_backward_chunk, _weight_chunk; utils.WeightGradStore"),
    "paddle": dict(repo="PaddlePaddle/Paddle", path="python/paddle/distributed/fleet/meta_parallel/dualpipev.py",
                   wgs="python/paddle/distributed/fleet/meta_parallel/zero_bubble_utils.py", cls="DualPipeVParallel",
                   what="DualPipeVParallel.forward_backward_pipeline, _forward_pass, _backward_pass,"
                        " _forward_backward_pass, _weight_pass; zero_bubble_utils.WeightGradStore"),
    "deepspeed": dict(repo="deepspeedai/DeepSpeed (PR #8576 branch)", path="deepspeed/runtime/pipe/schedule.py",
                      what="DualPipeVSchedule.steps (PipeInstructions; DualPipeVEngine semantics modelled)"),
    "mindspeed": dict(repo="Ascend/MindSpeed", path="mindspeed/core/pipeline_parallel/dualpipev/dualpipev_schedules.py",
                      wgs="mindspeed/core/transformer/moe/moe_feature/fb_overlap/modules/weight_grad_store.py",
                      function="forward_backward_pipelining_with_cutinhalf",
                      variants=["fbov-dwdetach", "fbov", "plain"],
                      what="forward_backward_pipelining_with_cutinhalf, generate_dualpipev_schedule, p2p wrappers;"
                           " WeightGradStore"),
    "flagscale": dict(repo="FlagOpen/FlagScale", path="flagscale/train/dualpipev/dualpipev_schedules.py",
                      function="forward_backward_pipelining_with_dualpipev", variants=["fbov", "plain"],
                      what="forward_backward_pipelining_with_dualpipev, generate_dualpipev_schedule, p2p wrappers"),
    "d9d": dict(repo="d9d-project/d9d", path="d9d/pipelining/infra/schedule/program/dualpipev.py",
                topo="d9d/pipelining/infra/schedule/component/program/topology.py",
                what="DualPipeVPipelineProgramBuilder.compose/_build_for_rank, build_stage_to_host_rank_topology"),
    "jaxpp": dict(repo="NVIDIA/jaxpp", path="src/jaxpp/schedules.py", types="src/jaxpp/types.py",
                  what="DualPipeV.tasks -> dualpipev_tasks (module executed; TaskType from types.py)"),
    "spectrax": dict(repo="erfanzar/Spectrax", path="spectrax/runtime/schedules/dualpipe.py",
                     base="spectrax/runtime/schedules/base.py", fofb="spectrax/runtime/schedules/one_f_one_b.py",
                     variants=["build", "tasks"],
                     what="DualPipeV.build (runtime grid) and dualpipev_tasks (modules executed)"),
}


def instances(ranks):
    for P in ranks:
        for M in sorted({2 * P, 2 * P + 2, 3 * P, 4 * P}):
            yield P, M


def runners(name, src):
    """(variant, family, paths, fn(P, M) -> per-rank slots) for a port."""
    port = PORTS[name]
    out = []
    if name in ("deepseek", "megatron-pr"):
        wgs = weightgradstore_from(src.read(port["utils"]))
        vt, dt = src.read(port["path"]), src.read(port["dual_path"])
        out.append((None, "dualpipev", [port["path"], port["utils"]],
                    lambda P, M: run_deepseek_like(vt, port["cls"], DEEPSEEK_METHODS, wgs, P, M, dual=False)))
        out.append(("dualpipe", "dualpipe", [port["dual_path"], port["utils"]],
                    lambda P, M: run_deepseek_like(dt, port["dual_cls"], DEEPSEEK_METHODS, wgs, P, M, dual=True)))
    elif name == "paddle":
        text = src.read(port["path"])
        wgs = weightgradstore_from(src.read(port["wgs"]))
        out.append((None, "dualpipev", [port["path"], port["wgs"]],
                    lambda P, M: run_deepseek_like(text, port["cls"], PADDLE_METHODS, wgs, P, M, dual=False,
                                                   paddle=True)))
    elif name == "deepspeed":
        text = src.read(port["path"])
        out.append((None, "dualpipev", [port["path"]], lambda P, M: run_deepspeed(text, P, M)))
    elif name in ("mindspeed", "flagscale"):
        text = src.read(port["path"])
        wtext = src.read(port["wgs"]) if "wgs" in port else None
        for v in port["variants"]:
            out.append((v, "dualpipev", [port["path"]] + ([port["wgs"]] if wtext else []),
                        lambda P, M, v=v: run_megatron_style(port, text, wtext, P, M, v)))
    elif name == "d9d":
        text, topo = src.read(port["path"]), src.read(port["topo"])
        out.append((None, "dualpipev", [port["path"], port["topo"]], lambda P, M: run_d9d(text, topo, P, M)))
    elif name == "jaxpp":
        text, ttext = src.read(port["path"]), src.read(port["types"])
        out.append((None, "dualpipev", [port["path"], port["types"]], lambda P, M: run_jaxpp(text, ttext, P, M)))
    elif name == "spectrax":
        texts = [("base", src.read(port["base"]))]
        try:
            texts.append(("one_f_one_b", src.read(port["fofb"])))
        except (subprocess.CalledProcessError, OSError):
            texts.append(("one_f_one_b", None))
        texts.append(("dualpipe", src.read(port["path"])))
        for v in port["variants"]:
            out.append((v, "dualpipev", [port["path"]], lambda P, M, v=v: run_spectrax(texts, P, M, v)))
    return out


def write(path, header, P, M, family, ranks):
    lines = [f"# {h}" for h in header]
    lines += [f"ranks {P}", f"microbatches {M}"]
    if family == "dualpipev":
        lines += [f"stages {2 * P}", "placement v"]
    else:
        lines += ["placement bidirectional"]
    lines += [f"rank {r}: " + " ".join(slot_text(s) for s in slots) for r, slots in enumerate(ranks)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--src", action="append", default=[], help="PORT[:LABEL]=LOCATION[@REV]")
    ap.add_argument("--commit", action="append", default=[], help="PORT[:LABEL]=HASH for a plain directory")
    ap.add_argument("--ports", help="comma-separated subset of the ports given with --src")
    ap.add_argument("--ranks", default="2,4,6,8")
    args = ap.parse_args()
    commits = dict(c.split("=", 1) for c in args.commit)
    sources = {}
    for s in args.src:
        key, loc = s.split("=", 1)
        if key.split(":")[0] not in PORTS:
            raise SystemExit(f"unknown port {key}; known: {', '.join(PORTS)}")
        rev = None
        if "@" in os.path.basename(loc):
            loc, rev = loc.rsplit("@", 1)
        sources[key] = Source(loc, rev, commits.get(key))
    wanted = args.ports.split(",") if args.ports else list(sources)
    os.makedirs(args.out, exist_ok=True)
    ranks_list = [int(x) for x in args.ranks.split(",")]
    for key in wanted:
        src = sources[key]
        name, _, label = key.partition(":")
        port = PORTS[name]
        commit = src.commit()
        for variant, family, paths, fn in runners(name, src):
            tag = name + (f"-{label}" if label else "") + (f"-{variant}" if variant else "")
            written = 0
            for P, M in instances(ranks_list):
                if family == "dualpipe" and (P % 2 or M % 2):
                    continue
                try:
                    ranks = fn(P, M)
                except Rejected as e:
                    print(f"{tag} P={P} M={M}: rejected: {e}", file=sys.stderr)
                    continue
                if family == "dualpipev":
                    problems = check_complete(ranks, lambda r: [(0, r), (0, 2 * P - 1 - r)], M)
                else:
                    problems = check_complete(ranks, lambda r: [(0, r), (1, P - 1 - r)], M, pipes=2)
                if problems:
                    print(f"{tag} P={P} M={M}: INCOMPLETE ({len(problems)} problems): {problems[0]}", file=sys.stderr)
                header = [f"{tag}: {port['repo']} @ {commit}",
                          f"files: {', '.join(paths)}",
                          f"executed: {port['what']}" + (f"; variant {variant}" if variant else ""),
                          f"generated by scripts/reference-dualpipev-ports.py (P={P}, M={M}); compare with "
                          f"pipeproof equiv {family} FILE -P {P} -M {M}"]
                if problems:
                    header.append(f"INCOMPLETE as the port emits it ({len(problems)} problems), e.g. "
                                  + "; ".join(problems[:3]))
                write(os.path.join(args.out, f"{tag}-p{P}-m{M}.txt"), header, P, M, family, ranks)
                written += 1
            print(f"{tag}: {written} files ({commit[:12]})", file=sys.stderr)


if __name__ == "__main__":
    main()
