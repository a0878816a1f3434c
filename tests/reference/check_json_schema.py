#!/usr/bin/env python3
"""Every command's --json document against its JSON Schema (docs/schema/, docs/json.md).

Runs PIPEPROOF with a broad set of command lines -- every command and mode, valid and invalid inputs,
usage errors -- parses what each prints (sweep: every line) and validates it with `jsonschema` against the
schema of its command (the error document when it has an exit_code). On top of the schemas it checks
what a schema cannot say across documents:

- one type per name: ranks, microbatches, stages, ... have the same JSON type wherever they appear, in
  every command (an integer is a JSON integer, never 8.0);
- exact texts: every text under an `exact` object is the exact value of the number (or list) next to it,
  under the same key;
- per-rank lists have one entry per rank;
- one instance: verify, simulate and show of the same input report the same instance and memory limit,
  compare its row the same instance;
- status and exit code agree.

It also checks itself: documents broken on purpose (ranks as a list, status "UNKNOWN", memory_limit
as a string, ...) must be rejected, so the test cannot pass by accepting everything.

Usage: check_json_schema.py PIPEPROOF    (exit 0 = every document valid; 1 = a violation, each named by
command line and JSON path; 2 = cannot run: jsonschema missing, schema files unreadable)
Needs python3-jsonschema (Debian bookworm: 4.10; newer versions work too). Runtime: about 12 s of CPU, 8 to 18 s
on a 2-core VM (two commands per core at a time).
"""
import concurrent.futures
import copy
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from fractions import Fraction

try:
    import jsonschema
    from jsonschema.exceptions import best_match
except ImportError:
    print("check_json_schema: the Python module jsonschema is missing (Debian: apt-get install python3-jsonschema)",
          file=sys.stderr)
    sys.exit(2)

HERE = os.path.dirname(os.path.realpath(__file__))
SCHEMA_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "docs", "schema"))
COMMANDS = ["verify", "simulate", "show", "compare", "sweep", "search", "prove", "formula", "refute", "plan", "list",
            "chunk", "equiv"]

CHUNK = "attn_f=2,dispatch_f=1,mlp_f=3,combine_f=1,combine_b=1,mlp_i=3,mlp_w=2,dispatch_b=4,attn_i=2,attn_w=1"

FILES = {
    # 1F1B, P = 3, M = 4: valid.
    "ok.txt": "ranks 3\nmicrobatches 4\n"
              "rank 0: 0F0 0F1 0F2 0B0 0F3 0B1 0B2 0B3\n"
              "rank 1: 1F0 1F1 1B0 1F2 1B1 1F3 1B2 1B3\n"
              "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3\n",
    # the same with rank 0's first backward moved before its second forward: a deadlock (exit 1).
    "bad.txt": "ranks 3\nmicrobatches 4\n"
               "rank 0: 0F0 0B0 0F1 0F2 0F3 0B1 0B2 0B3\n"
               "rank 1: 1F0 1F1 1B0 1F2 1B1 1F3 1B2 1B3\n"
               "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3\n",
    # valid, with a fractional memory limit of its own (peaks 3 2 1 <= 3.5).
    "limit.txt": "ranks 3\nmicrobatches 4\nmemory-limit 7/2\n"
                 "rank 0: 0F0 0F1 0F2 0B0 0F3 0B1 0B2 0B3\n"
                 "rank 1: 1F0 1F1 1B0 1F2 1B1 1F3 1B2 1B3\n"
                 "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3\n",
    # 1F1B's two warm-up forwards on rank 0 exceed the file's limit of 1: timed, but invalid (exit 1).
    "over.txt": "ranks 2\nmicrobatches 2\nmemory-limit 1\nrank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n",
    # a parse error at line 3, column 14 (exit 2).
    "parse.txt": "ranks 2\nmicrobatches 1\nrank 0: 0F0 0X0\nrank 1: 1F0 1B0\n",
    # PyTorch CSV: the reader infers ranks, stages, micro-batches and placement.
    "ok.csv": "0F0,0F1,0F2,0B0,0F3,0B1,0B2,0B3\n1F0,1F1,1B0,1F2,1B1,1F3,1B2,1B3\n2F0,2B0,2F1,2B1,2F2,2B2,2F3,2B3\n",
    "bad.cfg": "gpus = 8\nlayers = many\n",
}

# (schema, command line, exit codes accepted). A command line is split with shlex; it runs in a scratch
# directory holding FILES. Several exits are accepted only where the answer depends on the machine's speed.
CASES = [
    ("verify", "verify ok.txt --json", {0}),
    ("verify", "verify bad.txt --json", {1}),
    ("verify", "verify ok.txt --json --offload 1/2 --host-link 1", {0}),
    ("verify", "verify 1f1b -P 4 -M 8 --memory-limit 2 --offload 1 --host-link 3 --host-memory 1 --json", {1}),
    ("verify", "verify over.txt --json", {1}),
    ("verify", "verify limit.txt --json", {0}),
    ("verify", "verify ok.csv --json --pytorch-compat", {0}),
    ("verify", "verify zbv -P 2 -M 4 --units rank --memory-limit 5/2 --json", {0}),
    ("verify", "verify dualpipe -P 4 -M 8 --comm-model batched --json", {0}),
    ("verify", "verify parse.txt --json", {2}),
    ("verify", "verify --json", {2}),
    ("simulate", "simulate ok.txt --json --time-unit ms", {0}),
    ("simulate", "simulate ok.csv --json", {0}),
    ("simulate", "simulate bad.txt --json", {1}),
    ("simulate", "simulate over.txt --json", {1}),
    ("simulate", "simulate limit.txt --json", {0}),
    ("simulate", "simulate 1f1b -P 2 -M 2 --json --ops --costs F=1/3,I=1/7,W=1", {0}),
    ("simulate", f"simulate dualpipev -P 2 -M 4 --chunk-costs {CHUNK} --json", {0}),
    ("simulate", "simulate dualpipe -P 4 -M 8 --comm-model batched --costs F=1,I=1,W=1,comm=1/2 --json --ops", {0}),
    ("simulate", "simulate zbv -P 2 -M 4 --units rank --json", {0}),
    ("simulate", "simulate group-interleaved -P 4 -M 8 -V 2 --costs F=1,I=1,W=1 --offload 1/2 --host-link 3 "
                 "--offload-chunks 0 --json", {0}),
    ("simulate", "simulate 1f1b -P 2 -M 3 --offload 1 --host-link offload=1,reload=2 --host-memory 1/2 --memory-limit 1 "
                 "--host-link-duplex --json --ops", {1}),
    ("simulate", "simulate 1f1b -P 2 -M 3 --offload 1 --host-link 1 --offload-chunks 3 --json", {2}),
    ("simulate", "simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --offload 1 --host-link 3/2 --memory-limit 3 --choose-offloads "
                 "--json", {0}),
    ("simulate", "simulate 1f1b -P 4 -M 8 --costs F=1,B=2 --offload 1 --host-link 3/2 --memory-limit 2 --choose-offloads "
                 "--json", {1}),
    ("simulate", "simulate 1f1b -P 4 -M 1 --json", {2}),
    ("simulate", "simulate 1f1b -P 2 -M 2 --costs F=x --json", {2}),
    ("show", "show ok.txt --json", {0}),
    ("show", "show over.txt --json", {1}),
    ("show", "show limit.txt --json --time-unit s", {0}),
    ("show", "show bad.txt --json", {1}),
    ("show", "show zbv -P 2 -M 4 --units rank --json", {0}),
    ("show", "show 1f1b -P 2 -M 3 --offload 1 --host-link 3 --json", {0}),
    ("show", "show 1f1b -P 2 -M 2 --json --svg x.svg", {2}),
    ("compare", "compare 1f1b zbv -P 4 -M 8 --json --time-unit ms --tokens-per-microbatch 4096", {0}),
    ("compare", "compare 1f1b group-interleaved -P 4 -M 8 --offload 1/2 --host-link 2 --json", {0}),
    ("compare", "compare ok.txt ok.csv limit.txt --json --units stage", {0}),
    ("compare", f"compare 1f1b dualpipev -P 2 -M 4 --chunk-costs {CHUNK} --json", {0}),
    ("compare", "compare 1f1b dualpipe -P 4 -M 8 --costs zb-1.5b --comm-model batched --json", {0}),
    ("compare", "compare ok.txt bad.txt --json", {1}),
    ("compare", "compare 1f1b --json", {2}),
    ("sweep", "sweep -P 2 -M 2,3 --memory-limit none,2 --instance-time-limit 5", {0}),
    ("sweep", "sweep --mode compare -P 2,4 -M 4 --placement 1f1b,v,dualpipe --memory-limit none,1 --time-unit us", {0}),
    ("sweep", "sweep -P 2 -M 4 --placement v,interleaved:2 --units rank --objective span --memory-limit 3 --time-unit ms", {0}),
    ("sweep", "sweep -P 2 -M 2 --placement nonsense,1f1b --costs F=0 --costs F=1", {2}),
    ("sweep", "sweep -P 3 -M 6 --memory-limit none,2,3 --time-limit 0.001", {0, 3}),
    ("sweep", "sweep -M 2", {2}),
    ("search", "search -P 2 -M 3 --memory-limit 2 --json -q", {0}),
    ("search", "search -P 2 -M 3 --memory-limit 0.5 --json -q", {1}),
    ("search", "search --placement v -P 2 -M 4 --json -q --periodic --objective span --time-unit us --time-limit 10", {0}),
    ("search", "search -P 3 -M 6 --costs F=1,I=2,W=1,comm=1/3 --memory-limit 2 -o best.txt --emit-proof proof --json -q "
               "--time-limit 10", {0}),
    ("search", f"search -P 2 -M 4 --chunk-costs {CHUNK} --overlap chunk --json -q --time-limit 10", {0}),
    ("search", "search --units rank --placement v -P 2 -M 4 --memory-limit 3 --json -q", {0}),
    ("search", "search -P 16 -M 256 --memory-limit 2 --json -q --time-limit 0.001", {0, 3}),
    ("search", "search -P 2 --json", {2}),
    ("search", "search --placement any -P 2 -M 4 --memory-limit 2 --json -q --time-limit 20", {0}),
    ("search", "search --placement 1f1b,dualpipe -P 2 -M 4 --memory-limit 0.5 --json -q", {1}),
    ("equiv", "equiv dualpipev dualpipev -P 4 -M 10 --json", {0}),
    ("equiv", "equiv ok.txt 1f1b -P 3 -M 4 --json", {0, 1}),
    ("equiv", "equiv 1f1b 1f1b -P 3 -M 4 -V 2 --json", {2}),
    ("equiv", "equiv 1f1b gpipe -P 3 -M 4 --json", {1}),
    ("prove", "prove 1f1b -P 2 --json", {0}),
    ("prove", "prove 1f1b -P 2 --costs F=1,I=1,W=1 --json", {0}),
    ("prove", "prove zb-h1 -P 2 --basis paper --json", {0}),
    ("prove", "prove v-min -P 2 --costs F=1,I=2,W=1 --json", {1}),
    ("prove", "prove dualpipe -P 16 --time-limit 0.01 --json", {3}),  # UNKNOWN: the time limit
    ("prove", "prove 1f1b -P 2 --property memory-bound --memory-bound 1 --json", {1}),
    ("prove", "prove v-half -P 2 --property memory-bound --units rank --json", {0}),
    ("prove", "prove 1f1b -P 2 --property dependencies --json", {0}),
    ("prove", "prove 1f1b -P 2 --costs F=1,I=1,W=1 --layout 'E,t|t,L' --layer-sizes E=1 --property memory-bound --json", {0}),
    ("prove", "prove 1f1b-v -P 2 --json", {0}),
    ("prove", "prove dualpipe -P 4 --model batched --costs F=1,I=1,W=1,comm=1 --json", {1}),
    ("prove", "prove nosuchfamily -P 2 --json", {2}),
    ("prove", "prove interleaved-1f1b -P 2 --group-size 2 --costs F=1,I=1,W=1 --json", {0}),
    ("prove", "prove seq1f1b -P 3 --segments 2 --symbolic-comm --assume 'comm == 0' --json", {0}),
    ("refute", "refute --claim 'bubble == 3' 1f1b -P 2 -M 2..3 --costs F=1,I=1,W=1 --layout 't|tt' --json", {1}),
    ("formula", "formula 1f1b -P 2 --json", {0}),
    ("formula", "formula seq1f1b -P 3 --segments 3 --json", {0}),
    ("formula", "formula zb-h1 -P 2 --basis paper --json", {0}),
    ("formula", "formula dualpipe -P 16 --time-limit 0.01 --json", {3}),
    ("formula", "formula 1f1b -P 2 --chunk-costs symbolic --json", {2}),
    ("formula", "formula interleaved-1f1b -P 2 -V 3 --group-size 2 --json", {0}),
    ("refute", "refute --claim 'bubble <= 0' 1f1b -P 2 -M 2..3 --json", {1}),
    ("refute", "refute --claim 'bubble == (P-1)*(F+B)' 1f1b -P 2..3 --json", {0}),
    ("refute", "refute --claim 'bubble <= 2*F' 1f1b -P 2 -M 2..4 --costs 'F=1,I=1..2@0.5,W=1' --json", {1}),
    ("refute", "refute --claim 'bubble >= 0' v-zb -P 2 --json", {3}),
    ("refute", "refute --claim 'bubble <= 0' interleaved-1f1b -P 2 --group-size 3 --json", {1}),
    ("refute", "refute --claim 'peak <= P/2 + 1' v-half -P 2 --units rank --costs F=1,I=1,W=1 --json", {0, 1}),
    ("refute", "refute --claim 'exposed_comm == 0' dualpipe -P 2 --chunk-costs symbolic --json", {1}),
    ("refute", "refute --claim 'pair_exposed >= 0' dualpipe -P 2 --chunk-costs symbolic --json", {3}),
    ("refute", "refute --claim 'bubble >= 0' 1f1b -P 2..40 --json --time-limit 0.2", {0, 3}),
    ("refute", "refute --claim 'bubble <=' 1f1b -P 2 --json", {2}),
    ("plan", "plan --preset deepseek-v3 --gpus 2048 --json", {0}),
    ("plan", "plan --preset dense-70b --gpus 64 --families seq1f1b,1f1b --pp 16 --json", {0}),
    ("plan", "plan --preset dense-70b --gpus 64 --exclude-families v-half,v-min --json", {1}),
    ("plan", "plan --preset dense-70b --gpus 64 --pp 3 --json", {1}),
    ("plan", "plan --preset dense-70b --gpus 64 --op-costs-ms F=10,I=10,W=10 --json", {0}),
    ("plan", "plan --gpus 0 --json", {2}),
    ("plan", "plan --config bad.cfg --json", {2}),
    ("list", "list --json", {0}),
    ("list", "list --costs --json", {0}),
    ("chunk", f"chunk --chunk-costs {CHUNK} --json", {0}),
    ("chunk", f"chunk --chunk-costs {CHUNK} --pattern best --json", {0}),
    ("chunk", f"chunk --chunk-costs {CHUNK} --op F --json", {0}),
    ("chunk", "chunk --json", {2}),
    # Commands without --json answer a --json command line with the usage error document.
    ("error", "generate 1f1b -P 2 -M 2 --json", {2}),
    ("error", "convert ok.txt -o x.csv --json", {2}),
    ("error", "report 1f1b -P 2 -M 2 --json", {2}),
    ("error", "demo --json", {2}),
    ("error", "--json", {2}),
]

# Inputs whose instance every command reading them must report alike (key: what identifies the input).
SAME_INPUT = {
    "verify ok.txt --json": "ok.txt", "simulate ok.txt --json --time-unit ms": "ok.txt", "show ok.txt --json": "ok.txt",
    "verify over.txt --json": "over.txt", "simulate over.txt --json": "over.txt", "show over.txt --json": "over.txt",
    "verify limit.txt --json": "limit.txt", "simulate limit.txt --json": "limit.txt",
    "show limit.txt --json --time-unit s": "limit.txt",
    "verify ok.csv --json --pytorch-compat": "ok.csv", "simulate ok.csv --json": "ok.csv",
}
INSTANCE = ("ranks", "microbatches", "stages", "pipelines", "placement", "inferred")

# Status and exit code: one meaning everywhere (cli/json_status.hpp, README "Exit codes everywhere").
STATUS_EXIT = {"equivalent": {0}, "different": {1}, "valid": {0}, "invalid": {1}, "optimal": {0}, "feasible": {0}, "infeasible": {1}, "proved": {0},
               "refuted": {1}, "holds": {0}, "unknown": {3}, "ok": {0}, "error": {2}}
# Where a command's exit says more than its status (docs/json.md): plan exits 1 when nothing could be evaluated
# (status unknown).
STATUS_EXIT_ALSO = {"plan": {"unknown": {1}}}

# One type per name, in every document (pipeproof's JSON vocabulary, docs/json.md). Checked on every object
# of every document except inside `exact` (texts), `definitions` (sentences) and refute's `values` (keys are
# sub-expressions of the claim). A type is a Python type of json.load: int (a JSON integer: 8, never 8.0),
# float, str, bool, list, dict, None.
NUMBER = (int, float)
TYPES = {
    "ranks": (int,), "microbatches": (int,), "stages": (int,), "pipelines": (int,), "placement": (str,),
    "inferred": (list,), "memory_limit": NUMBER + (type(None),), "units": (str,), "units_detail": (str,),
    "time_unit": (str, type(None)), "status": (str,), "violations": (list,), "violation_count": (int,),
    "suppressed": (int,), "valid": (bool,), "rank": (int,), "line": (int, type(None)), "column": (int, type(None)),
    "position": (int,), "file": (str, type(None)), "family": (str, type(None)), "objective": (str,),
    "timing_model": (str,), "per_rank": (list,), "exact": (dict,), "makespan": NUMBER + (type(None),),
    "lower_bound": NUMBER + (type(None),), "stage_share": NUMBER, "bubble_fraction": NUMBER, "seconds": NUMBER,
    "tasks": (int,), "basis": (str,), "assumptions": (list,), "notes": (list,), "errors": (list,),
    "exit_code": (int,), "message": (str,), "kind": (str,), "op": (str,), "witness": (list,), "slot": (str,),
    "start": NUMBER, "end": NUMBER, "busy": NUMBER, "idle_per_rank": (list,), "peaks": (list,), "claim": (str,),
    "counterexample": (dict, type(None)), "other_microbatches": (int,), "valid_from_microbatches": (int,),
    "microbatches_from": (int,), "constant_from_microbatches": (int,), "blocks": (int,), "dp": (int,),
    "copies": (int,), "gpus": (int,), "ep": (int,), "fits": (bool,), "holds": (bool,), "optimal": (bool,),
    "origin": (str,), "schedule": (str,), "index": (int,), "mode": (str,), "gap_fraction": NUMBER,
    "bubble": NUMBER, "bubble_formula": (str,), "bubble_readable": (dict,), "peaks_from_microbatches": (int,),
    "exposed_comm": NUMBER, "network_comm": NUMBER, "hidden_share": NUMBER + (type(None),), "exposed_comm_total": NUMBER,
    "network_comm_total": NUMBER, "exposed_comm_per_rank": (list,), "network_comm_per_rank": (list,),
    "hidden_share_per_rank": (list,),
}
STRING_LISTS = ("inferred", "witness", "assumptions", "notes", "skipped")  # lists of objects: the schemas say so
SKIP_INSIDE = ("exact", "definitions", "values")

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


# --- schemas ---------------------------------------------------------------------------------------------------

def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"duplicate keys {dup}")
    return dict(pairs)


def load_schemas():
    schemas = {}
    for name in sorted(os.listdir(SCHEMA_DIR)):
        if not name.endswith(".schema.json"):
            continue
        path = os.path.join(SCHEMA_DIR, name)
        try:
            with open(path, encoding="utf-8") as f:
                schema = json.load(f, object_pairs_hook=no_duplicates)
            jsonschema.Draft202012Validator.check_schema(schema)
        except (OSError, ValueError, jsonschema.exceptions.SchemaError) as e:
            print(f"check_json_schema: {path}: {e}", file=sys.stderr)
            sys.exit(2)
        schemas[name] = schema
    missing = [c for c in COMMANDS + ["common", "error"] if f"{c}.schema.json" not in schemas]
    if missing:
        print(f"check_json_schema: no schema for {missing} in {SCHEMA_DIR}", file=sys.stderr)
        sys.exit(2)
    return schemas


def uri(name):
    return "file://" + os.path.join(SCHEMA_DIR, name)


class Validators:
    """A validator for `name.schema.json` or one of its $defs; references between the files resolve to the
    files themselves (each schema is known under its file:// URI)."""

    def __init__(self, schemas):
        self.schemas = schemas
        self.cache = {}
        try:  # jsonschema >= 4.18 resolves references through a registry
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012
            self.registry = Registry().with_resources(
                (uri(n), Resource.from_contents(s, default_specification=DRAFT202012)) for n, s in schemas.items())
            jsonschema.Draft202012Validator({}, registry=self.registry)
        except (ImportError, TypeError):  # Debian bookworm's 4.10: a RefResolver with the files in its store
            self.registry = None
            self.store = {uri(n): s for n, s in schemas.items()}

    def get(self, name, definition=None):
        key = (name, definition)
        if key not in self.cache:
            target = uri(name) + (f"#/$defs/{definition}" if definition else "")
            root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": target}
            if self.registry is not None:
                v = jsonschema.Draft202012Validator(root, registry=self.registry)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    resolver = jsonschema.RefResolver(uri("check-" + name), root, store=dict(self.store))
                v = jsonschema.Draft202012Validator(root, resolver=resolver)
            self.cache[key] = v
        return self.cache[key]


def json_path(path):
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def deepest(error):
    """The most specific error under an anyOf/oneOf: the one the document most nearly matches."""
    while error.context:
        error = best_match(error.context)
    return error


def schema_errors(validator, doc):
    errors = []
    for e in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        d = deepest(e)
        errors.append(f"{json_path(d.absolute_path)}: {d.message[:300]}")
    return errors


def pick(schema, doc):
    """(file, definition) of the schema a document is checked against."""
    if "exit_code" in doc:
        return "error.schema.json", None
    if schema in ("prove", "formula", "refute") and set(doc) == {"status", "missing"}:
        return "common.schema.json", "budget_stop"
    if schema == "sweep":
        return "sweep.schema.json", "line"
    if schema == "refute" and "claim_in_pytorch_letters" not in doc:
        return "refute.schema.json", "chunk_document"
    if schema == "error":
        return "error.schema.json", None
    return f"{schema}.schema.json", "document"


# --- checks a schema cannot make -------------------------------------------------------------------------------

def walk(value, path=()):
    """Yields (path, object) for every object, not descending into SKIP_INSIDE members."""
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            if k not in SKIP_INSIDE:
                yield from walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, path + (i,))


TYPE_NAMES = {bool: "boolean", int: "integer", float: "non-integer number", str: "string", list: "array",
              dict: "object", type(None): "null"}


def type_name(value):
    return TYPE_NAMES[type(value)]


def types_text(types):
    names = ["number" if t is int and float in types else TYPE_NAMES[t] for t in types if not (t is float and int in types)]
    return " or ".join(names)


def check_types(where, doc):
    for path, obj in walk(doc):
        for key, value in obj.items():
            # `costs`: the cost text of a timing, or a cost point (an object) in a counterexample or a
            # published formula's differs_at.
            if key == "costs":
                expected = (dict,) if path and path[-1] in ("counterexample", "differs_at") else (str,)
            else:
                expected = TYPES.get(key)
            if expected is None:
                continue
            ok = isinstance(value, expected) and not (isinstance(value, bool) and bool not in expected)
            if not ok:
                fail(where, f"{json_path(path + (key,))}: {key} is {type_name(value)} here; everywhere it is "
                            f"{types_text(expected)}")
        for key in STRING_LISTS:
            if isinstance(obj.get(key), list) and not all(isinstance(x, str) for x in obj[key]):
                fail(where, f"{json_path(path + (key,))}: items must be strings")


def same_number(number, text):
    try:
        exact = Fraction(text)
    except (TypeError, ValueError, ZeroDivisionError):
        return False  # not an exact text (the schema says so too)
    if isinstance(number, int):
        return Fraction(number) == exact
    return abs(number - float(exact)) <= 1e-9 * max(1.0, abs(float(exact)))


def check_exact(where, doc):
    """Every exact text is the exact value of the number next to it, under the same key."""
    for path, obj in walk(doc):
        exact = obj.get("exact")
        if not isinstance(exact, dict):
            continue
        for key, text in exact.items():
            here = json_path(path + ("exact", key))
            if key not in obj:
                fail(where, f"{here}: an exact text without the number {json_path(path + (key,))} next to it")
                continue
            value = obj[key]
            if text is None:
                if value is not None:
                    fail(where, f"{here}: null, but {key} is {value!r}")
                continue
            if isinstance(text, str):
                if isinstance(value, bool) or not isinstance(value, NUMBER) or not same_number(value, text):
                    fail(where, f"{here}: {text!r} is not the value of {key} = {value!r}")
                continue
            if not isinstance(text, list) or not isinstance(value, list) or len(value) != len(text):
                fail(where, f"{here}: {text!r} are not the texts of {key} = {value!r}")
                continue
            for i, (v, t) in enumerate(zip(value, text)):
                if isinstance(t, list):  # an interval [start, end]
                    if not isinstance(v, list) or len(v) != len(t) or not all(same_number(a, b) for a, b in zip(v, t)):
                        fail(where, f"{here}[{i}]: {t!r} against {v!r}")
                elif t is None:
                    if v is not None:
                        fail(where, f"{here}[{i}]: null, but {key}[{i}] is {v!r}")
                elif isinstance(v, bool) or not isinstance(v, NUMBER) or not same_number(v, t):
                    fail(where, f"{here}[{i}]: {t!r} is not the value of {key}[{i}] = {v!r}")


PER_RANK_LISTS = ("peak_activations", "idle_per_rank", "busy_per_rank", "span_per_rank", "model_fraction_per_rank",
                  "blocks_per_rank", "exposed_comm_per_rank", "network_comm_per_rank", "hidden_share_per_rank", "peaks",
                  "peaks_at_microbatches_from")


def check_per_rank(where, doc):
    """Per-rank lists and per_rank objects have one entry per rank, in rank order."""
    for path, obj in walk(doc):
        ranks = obj.get("ranks")
        if not isinstance(ranks, int) or isinstance(ranks, bool):
            continue
        for key in PER_RANK_LISTS:
            if isinstance(obj.get(key), list) and len(obj[key]) != ranks:
                fail(where, f"{json_path(path + (key,))}: {len(obj[key])} entries for {ranks} ranks")
        if isinstance(obj.get("per_rank"), list):
            got = [r.get("rank") for r in obj["per_rank"] if isinstance(r, dict)]
            if got != list(range(ranks)):
                fail(where, f"{json_path(path + ('per_rank',))}: ranks {got}, expected 0..{ranks - 1}")


def check_status_exit(where, schema, doc, code, is_line):
    status = doc.get("status")
    if not isinstance(status, str):
        return
    if is_line:  # a sweep line's status against the sweep's exit: an error line makes it 2, an unknown one 3
        return
    allowed = STATUS_EXIT.get(status, set()) | STATUS_EXIT_ALSO.get(schema, {}).get(status, set())
    if code not in allowed:
        fail(where, f"$.status: {status!r} with exit code {code} (expected exit {sorted(allowed)})")
    if "exit_code" in doc and doc["exit_code"] != code:
        fail(where, f"$.exit_code: {doc['exit_code']} but the process exited {code}")


def check_sweep_exit(where, docs, code):
    statuses = [d.get("status") for d in docs if "exit_code" not in d]
    if not statuses:
        return
    expected = 2 if "error" in statuses else 3 if "unknown" in statuses else 0
    if code != expected:
        fail(where, f"exit {code} for lines with status {sorted(set(statuses))} (expected {expected})")


def check_same_instance(results):
    """verify, simulate and show of one input report one instance and one memory limit; compare's rows too."""
    by_input = {}
    for command, (docs, _) in results.items():
        key = SAME_INPUT.get(command)
        if key and docs and "exit_code" not in docs[0]:
            d = docs[0]
            by_input.setdefault(key, []).append((command, {k: d.get(k) for k in INSTANCE + ("memory_limit",)}))
    compare = results.get("compare ok.txt ok.csv limit.txt --json --units stage")
    if compare and compare[0] and "rows" in compare[0][0]:
        for row, name in zip(compare[0][0]["rows"], ("ok.txt", "ok.csv", "limit.txt")):
            by_input.setdefault(name, []).append(
                (f"compare ... (row {row.get('schedule')})", {k: row.get(k) for k in INSTANCE}))
    for name, reports in by_input.items():
        first_command, first = reports[0]
        for command, members in reports[1:]:
            for k, v in members.items():
                if k in first and first[k] != v:
                    fail(f"one instance ({name})", f"$.{k}: `{first_command}` says {json.dumps(first[k])}, `{command}` says "
                                                  f"{json.dumps(v)}")


def check_document(where, schema, doc, validators):
    name, definition = pick(schema, doc)
    errors = schema_errors(validators.get(name, definition), doc)
    for message in errors:
        fail(where, f"{message}   [{name}{'#/$defs/' + definition if definition else ''}]")
    if not errors and not validators.get(f"{schema}.schema.json").is_valid(doc):  # the whole schema (its anyOf) too
        fail(where, f"$: valid against {name} but not against {schema}.schema.json as a whole")
    try:
        check_types(where, doc)
        check_exact(where, doc)
        check_per_rank(where, doc)
    except Exception as e:  # a document too malformed for these checks: the schema errors above say why
        fail(where, f"$: cannot check across documents ({type(e).__name__}: {e})")


# --- the self-test ---------------------------------------------------------------------------------------------

def broken(doc, *edits):
    """A copy of doc with edits applied: (path tuple, value) sets, (path tuple, DELETE) removes."""
    d = copy.deepcopy(doc)
    for path, value in edits:
        target = d
        for p in path[:-1]:
            target = target[p]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return d


DELETE = object()


def self_test(results, validators):
    """Documents broken on purpose must be rejected: by the schemas, or by the checks across documents."""
    def doc(command):
        docs = results.get(command, ([], None))[0]
        return docs[0] if docs else None

    verify = doc("verify limit.txt --json")
    simulate = doc("simulate ok.txt --json --time-unit ms")
    search = doc("search -P 2 -M 3 --memory-limit 2 --json -q")
    compare = doc("compare 1f1b zbv -P 4 -M 8 --json --time-unit ms --tokens-per-microbatch 4096")
    prove = doc("prove v-min -P 2 --costs F=1,I=2,W=1 --json")
    error = doc("verify parse.txt --json")
    sweep_docs = results.get("sweep -P 2 -M 2,3 --memory-limit none,2 --instance-time-limit 5", ([], None))[0]
    if None in (verify, simulate, search, compare, prove, error) or not sweep_docs:
        fail("self-test", "a document it breaks is missing (see the failures above)")
        return 0
    sweep = sweep_docs[0]
    cases = [
        ("verify", verify, "ranks as a list", [(("ranks",), [0, 1, 2])]),
        ("verify", verify, "ranks as a string", [(("ranks",), "3")]),
        ("verify", verify, "status UNKNOWN", [(("status",), "UNKNOWN")]),
        ("verify", verify, "status valid with valid false", [(("valid",), False)]),
        ("verify", verify, "memory_limit as a string", [(("memory_limit",), "3.5")]),
        ("verify", verify, "memory_limit without its exact text", [(("exact", "memory_limit"), DELETE)]),
        ("verify", verify, "units not stage or rank", [(("units",), "ranks")]),
        ("verify", verify, "units and units_detail disagree", [(("units",), "rank")]),
        ("verify", verify, "placement unknown", [(("placement",), "zigzag")]),
        ("verify", verify, "inferred an unknown member", [(("inferred",), ["costs"])]),
        ("verify", verify, "no microbatches", [(("microbatches",), DELETE)]),
        ("verify", verify, "a violation without its message",
         [(("status",), "invalid"), (("valid",), False), (("violation_count",), 1),
          (("violations",), [{"kind": "deadlock", "rank": 0}])]),
        ("simulate", simulate, "per_rank as numbers", [(("per_rank",), [12, 12, 12])]),
        ("simulate", simulate, "time_unit minutes", [(("time_unit",), "min")]),
        ("simulate", simulate, "makespan as its exact text", [(("makespan",), "18")]),
        ("simulate", simulate, "an exact text that is not a number", [(("exact", "makespan"), "eighteen")]),
        ("search", search, "optimal without a makespan", [(("makespan",), None)]),
        ("search", search, "status OPTIMAL", [(("status",), "OPTIMAL")]),
        ("search", search, "microbatches as a list", [(("microbatches",), [3])]),
        ("compare", compare, "a row's ranks as per-rank numbers", [(("rows", 0, "ranks"), [1, 1, 1, 1])]),
        ("compare", compare, "status valid", [(("status",), "valid")]),
        ("prove", prove, "a counterexample's ranks as a string", [(("counterexample", "ranks"), "2")]),
        ("prove", prove, "refuted without a counterexample", [(("counterexample",), DELETE)]),
        ("error", error, "error document with exit code 1", [(("exit_code",), 1)]),
        ("error", error, "error entry without its line", [(("errors", 0, "line"), DELETE)]),
        ("sweep", sweep, "a sweep line's memory_limit as a string", [(("memory_limit",), "none")]),
        ("sweep", sweep, "a sweep line in mode other", [(("mode",), "other")]),
    ]
    rejected = 0
    for schema, original, what, edits in cases:
        bad = broken(original, *edits)
        name, definition = pick(schema, bad)
        if validators.get(name, definition).is_valid(bad):
            fail("self-test", f"{schema}: a document with {what} passes {name}")
        else:
            rejected += 1
    # What only the checks across documents see: 8.0 for an integer (JSON Schema calls 8.0 an integer), an exact
    # text that is another number, a per-rank list one short, two commands disagreeing on an instance.
    probes = [
        ("a float for microbatches", lambda: check_types("probe", broken(verify, (("microbatches",), 4.0)))),
        ("an exact text of another value", lambda: check_exact("probe", broken(verify, (("exact", "peak_activations"),
                                                                                            ["3", "2", "2"])))),
        ("a per-rank list one short", lambda: check_per_rank("probe", broken(verify, (("peak_activations",), [3, 2])))),
        ("two memory limits for one input", lambda: check_same_instance({
            "verify limit.txt --json": ([verify], 0),
            "simulate limit.txt --json": ([broken(verify, (("memory_limit",), None))], 0)})),
        ("status ok with exit 1", lambda: check_status_exit("probe", "compare", compare, 1, False)),
    ]
    for what, probe in probes:
        before = len(failures)
        probe()
        if len(failures) == before:
            fail("self-test", f"the checks across documents accept {what}")
        else:
            del failures[before:]
            rejected += 1
    return rejected


# --- running ---------------------------------------------------------------------------------------------------

def run(pipeproof, scratch, schema, line, exits):
    argv = [pipeproof] + shlex.split(line)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return line, None, None, f"ran over 120 s", 120.0
    seconds = time.monotonic() - t0
    problem = None
    if proc.returncode not in exits:
        problem = f"exit {proc.returncode}, expected {sorted(exits)}; stderr: {proc.stderr.strip()[-400:]}"
    docs = []
    texts = [t for t in proc.stdout.split("\n") if t.strip()] if schema == "sweep" else [proc.stdout]
    if schema == "sweep" and texts and texts[0] == "{":  # a usage error: the error document, indented as everywhere
        texts = [proc.stdout]
    for k, text in enumerate(texts):
        try:
            docs.append(json.loads(text))
        except json.JSONDecodeError as e:
            return line, None, proc.returncode, f"output{f' line {k + 1}' if schema == 'sweep' else ''} is not JSON ({e}): " \
                                                f"{text[:200]!r}", seconds
    if schema != "sweep" and len(docs) != 1:
        problem = (problem or "") + "; expected exactly one JSON document on stdout"
    if not all(isinstance(d, dict) for d in docs):
        problem = (problem or "") + "; a document is not an object"
    return line, docs, proc.returncode, problem, seconds


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pipeproof = os.path.abspath(sys.argv[1])
    if not os.access(pipeproof, os.X_OK):
        print(f"check_json_schema: {pipeproof} is not an executable", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    validators = Validators(load_schemas())
    results = {}
    with tempfile.TemporaryDirectory(prefix="pipeproof-json-schema-") as scratch:
        for name, text in FILES.items():
            with open(os.path.join(scratch, name), "w", encoding="utf-8") as f:
                f.write(text)
        workers = max(2, min(8, 2 * (os.cpu_count() or 1)))  # two commands per core: some of them wait
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(run, pipeproof, scratch, schema, line, exits) for schema, line, exits in CASES]
            outcomes = [f.result() for f in futures]
    documents = 0
    slowest = max(outcomes, key=lambda o: o[4])
    for (schema, _, _), (line, docs, code, problem, _) in zip(CASES, outcomes):
        where = f"pipeproof {line}"
        if problem:
            fail(where, problem)
        if not docs:
            continue
        results[line] = (docs, code)
        for k, doc in enumerate(docs):
            if not isinstance(doc, dict):
                continue
            documents += 1
            here = f"{where} (line {k + 1})" if schema == "sweep" else where
            check_document(here, schema, doc, validators)
            check_status_exit(here, schema, doc, code, schema == "sweep")
        if schema == "sweep" and code is not None:
            check_sweep_exit(where, docs, code)
    check_same_instance(results)
    rejected = self_test(results, validators)
    elapsed = time.monotonic() - t0
    covered = sorted({s for s, _, _ in CASES})
    if failures:
        # One line per problem: the same message on the k-th item of a list is said once, with a count.
        groups = {}
        for f in failures:
            groups.setdefault(re.sub(r"\[[0-9]+\]|\(line [0-9]+\)", "*", f), []).append(f)
        print(f"check_json_schema: {len(groups)} problem(s) in the JSON of {pipeproof}:")
        for same in groups.values():
            print(f"  FAIL {same[0]}" + (f"   (and {len(same) - 1} more like it)" if len(same) > 1 else ""))
        print(f"({len(CASES)} command lines, {documents} documents; self-test: {rejected} broken documents rejected; "
              f"{elapsed:.1f} s)")
        return 1
    print(f"check_json_schema: {documents} documents of {len(CASES)} command lines valid against docs/schema/ "
          f"({', '.join(covered)}); one type per name; exact texts, per-rank lengths, instances and exit codes agree; "
          f"{rejected} broken documents rejected (self-test); {elapsed:.1f} s (slowest: {slowest[0]!r}, {slowest[4]:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
