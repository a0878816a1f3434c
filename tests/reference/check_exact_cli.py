#!/usr/bin/env python3
"""Regression tests for issue 10's arithmetic symptoms, at the command line, against exact_timing.py.

Every expected value is computed here, independently of pipeproof's arithmetic: exact_timing.py's
longest path in Python fractions, a brute force over rank orders for the search, and Python's own
decimal expansion. pipeproof is used only to write the schedules (generate / convert / search -o) and
to produce the output under test.

Usage: check_exact_cli.py PIPEPROOF CASE   (CASE from CASES below; exit 0 = pass)
"""
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exact_timing import default_costs, parse_costs, timing  # noqa: E402

PIPEPROOF = None
SCRATCH = tempfile.mkdtemp(prefix="pipeproof-exact-")
BIG = "F=10,I=1/1000003,W=1/1000033,comm=1/1000037"


class Failure(Exception):
    pass


def run(*args, expect=None):
    proc = subprocess.run([PIPEPROOF, *args], capture_output=True, text=True)
    if expect is not None and proc.returncode != expect:
        raise Failure(f"pipeproof {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stdout}\n{proc.stderr}")
    return proc


def check(condition, message):
    if not condition:
        raise Failure(message)


def decimal_text(x):
    """pipeproof's documented number text: an integer, a terminating decimal in full, else p/q."""
    if x.denominator == 1:
        return str(x.numerator)
    d, twos, fives = x.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{x.numerator}/{x.denominator}"
    digits = max(twos, fives)
    scaled = abs(x.numerator) * 10**digits // x.denominator
    sign = "-" if x < 0 else ""
    return f"{sign}{scaled // 10**digits}.{str(scaled % 10**digits).zfill(digits)}"


def costs_of(text):
    costs = default_costs()
    costs.update(parse_costs(text))
    return costs


def json_file(*generate_args):
    path = os.path.join(SCRATCH, "s%d.json" % len(os.listdir(SCRATCH)))
    run("generate", *generate_args, "--format", "json", "-o", path, expect=0)
    return path


def native_to_json(native_path):
    path = native_path + ".json"
    run("convert", native_path, "-o", path, expect=0)
    return path


def reference(json_path, cost_text):
    return timing(json.load(open(json_path)), costs_of(cost_text))


def check_number(obj, key, want, where):
    """A quantity of a --json document: a JSON number (never a string, whatever the value) that is the nearest
    double to the truth or within a rounding of it, and its exact text under "exact" equal to the truth."""
    got = obj[key]
    check(isinstance(got, (int, float)) and not isinstance(got, bool), f"{where} {key} is not a JSON number: {got!r}")
    check(abs(float(got) - float(want)) <= 1e-12 * max(1.0, abs(float(want))), f"{where} {key} number {got} != {float(want)}")
    check(Fraction(obj["exact"][key]) == want, f"{where} exact {key} {obj['exact'][key]} != {want}")


def check_simulate(json_path, cost_text):
    """simulate --json and the text output against the reference, every per-rank value included."""
    ref = reference(json_path, cost_text)
    out = json.loads(run("simulate", json_path, "--costs", cost_text, "--json", expect=0).stdout)
    for key in ("makespan", "bubble", "bubble_fraction"):
        check_number(out, key, ref[key], "simulate")
    for r, (got, want) in enumerate(zip(out["per_rank"], ref["ranks"])):
        for key in ("busy", "idle", "span"):
            check_number(got, key, want[key], f"rank {r}")
    text = run("simulate", json_path, "--costs", cost_text, expect=0).stdout
    check(f"makespan {decimal_text(ref['makespan'])} " in text,
          f"text output lacks 'makespan {decimal_text(ref['makespan'])}':\n{text[:400]}")
    check(".-" not in text and " -" not in text.replace(" -> ", " "), f"a negative or broken number in:\n{text[:600]}")
    return ref, text


# ---- the cases ---------------------------------------------------------------------------------------

def case_one_microbatch():
    # Issue: printed makespan 0 and a negative busy time; true 10 + 1/1000003 + 1/1000033.
    native = os.path.join(SCRATCH, "one.txt")
    open(native, "w").write("ranks 1\nmicrobatches 1\nrank 0: 0F0 0I0 0W0\n")
    ref, _ = check_simulate(native_to_json(native), BIG)
    check(ref["makespan"] == 10 + Fraction(1, 1000003) + Fraction(1, 1000033), "reference self-check")


def case_1f1b_p8_m64_large_costs():
    # Issue: printed about 33,069; true about 82,552.48.
    ref, _ = check_simulate(json_file("1f1b", "-P", "8", "-M", "64"),
                            "F=1000000/4093,I=1000000/4091,W=1000000/4079,comm=1000000/4073")
    check(82552 < ref["makespan"] < 82553, f"reference self-check {float(ref['makespan'])}")


def case_bubble_fraction_near_1e12():
    # Issue: bubble_fraction printed negative once makespan x ranks passed 2^63.
    ref, _ = check_simulate(json_file("1f1b", "-P", "8", "-M", "512"),
                            "F=1000000000000,I=1000000000000,W=1000000000000,comm=1/1000")
    check(ref["bubble_fraction"] > 0, "reference self-check")


def case_binary_fraction_decimals():
    # Issue: F=1/1048576 printed spans like 0.03875857... and idles like 0.-2914177404303649231.
    cost = "F=1/1048576"
    _, text = check_simulate(json_file("1f1b", "-P", "4", "-M", "8"), cost)
    check("F=0.00000095367431640625," in text, f"the cost is not printed exactly:\n{text[:300]}")


def case_f3_over_65536():
    # Issue: `simulate 1f1b -P 8 -M 512 --costs F=3/65536` printed makespan -806.-6506494363848491.
    ref, text = check_simulate(json_file("1f1b", "-P", "8", "-M", "512"), "F=3/65536")
    check(ref["makespan"] == Fraction(68027925, 65536), "reference self-check")
    check("makespan 1038.0237579345703125 " in text, "exact decimal makespan")
    out = run("simulate", "1f1b", "-P", "8", "-M", "512", "--costs", "F=3/65536", expect=0).stdout
    check("makespan 1038.0237579345703125 " in out, f"family-name form:\n{out[:300]}")


def case_timescale_primes_near_65500():
    # Issue: "TimeScale does not include value" (exit 134): the lcm of four such denominators passes 2^63.
    check_simulate(json_file("1f1b", "-P", "4", "-M", "8"), "F=1/65521,I=1/65519,W=1/65497,comm=1/65479")
    check_simulate(json_file("dualpipe", "-P", "4", "-M", "8"), "F=1/65521,I=1/65519,W=1/65497,comm=1/65479")


def case_compare_ratios():
    # compare's makespan and ratios past 64-bit ticks.
    out = json.loads(run("compare", "1f1b", "dualpipe", "-P", "4", "-M", "8", "--costs", BIG, "--json", expect=0).stdout)
    for row, family in zip(out["rows"], ("1f1b", "dualpipe")):
        ref = reference(json_file(family, "-P", "4", "-M", "8"), BIG)
        check(Fraction(row["exact"]["makespan"]) == ref["makespan"], f"{family} compare makespan")
        check(Fraction(row["exact"]["bubble_fraction"]) == ref["bubble_fraction"], f"{family} compare bubble_fraction")
        check(Fraction(row["exact"]["utilisation"]) == 1 - ref["bubble_fraction"], f"{family} compare utilisation")


def bubble_of(family, P, M, cost_text):
    return reference(json_file(family, "-P", str(P), "-M", str(M)), cost_text)["bubble"]


def check_prove_refuted(family, P, step):
    """prove with comm > 0: the bubble grows with M (every value checked against the reference)."""
    proc = run("prove", family, "-P", str(P), "--costs", BIG, "--json", expect=1)
    out = json.loads(proc.stdout)
    check(out["status"] == "refuted", f"status {out['status']}")
    what = out["counterexample"]["what"]
    m = re.search(r"bubble\((\d+)\) = (\S+) but bubble\((\d+)\) = (\S+)$", what)
    check(m is not None, f"no bubble values in: {what}")
    for M, text in ((int(m.group(1)), m.group(2)), (int(m.group(3)), m.group(4))):
        want = bubble_of(family, P, M, BIG)
        check(Fraction(text) == want, f"bubble({M}) printed {text}, reference {want}")
    # "bubble grows by S every K blocks ... for M >= M1": check it from M1 on, twice.
    g = re.search(r"bubble grows by (\S+) every (\d+) blocks .* for M >= (\d+)", out["result"])
    check(g is not None, f"no growth statement in: {out['result']}")
    growth, blocks, m1 = Fraction(g.group(1)), int(g.group(2)), int(g.group(3))
    for M in (m1, m1 + step):
        later = M + blocks * step
        diff = bubble_of(family, P, later, BIG) - bubble_of(family, P, M, BIG)
        check(diff == growth, f"bubble({later}) - bubble({M}) = {diff}, printed {growth}")


def case_prove_1f1b():
    # Issue: exit 134 ("rational arithmetic overflows 64 bits"). With comm > 0 the 1F1B bubble grows by
    # 6 comm every 4 micro-batches (the reference shows it), so REFUTED is right -- with exact values.
    check_prove_refuted("1f1b", 4, 1)


def case_prove_dualpipe():
    # Issue: bubble values computed from wrapped ticks (about 8e-6 where the truth is about 20.000009).
    check_prove_refuted("dualpipe", 4, 2)


def brute_force_optimum(P, M, cost_text):
    """Least makespan over every per-rank order of F, I, W (dataflow timing, ASAP, 1F1B placement)."""
    c = costs_of(cost_text)
    tasks = [(k, s, m) for s in range(P) for m in range(M) for k in "FIW"]

    def pred(task):
        k, s, m = task
        if k == "F":
            return ("F", s - 1, m) if s > 0 else None
        if k == "I":
            return ("F", s, m) if s == P - 1 else ("I", s + 1, m)
        return ("I", s, m)

    def orders(s):
        mine = [t for t in tasks if t[1] == s]

        def extend(prefix, rest):
            if not rest:
                yield prefix
                return
            for i, t in enumerate(rest):
                p = pred(t)
                if p is not None and p[1] == s and p not in prefix:
                    continue
                yield from extend(prefix + [t], rest[:i] + rest[i + 1:])
        return list(extend([], mine))

    per_rank = [orders(s) for s in range(P)]
    best = None
    for combo in itertools.product(*per_rank):
        end, free, pending = {}, [Fraction(0)] * P, [list(o) for o in combo]
        while any(pending):
            moved = False
            for s in range(P):
                while pending[s]:
                    t = pending[s][0]
                    p = pred(t)
                    if p is not None and p not in end:
                        break
                    ready = free[s] if p is None else max(free[s], end[p] + (c["comm"] if p[1] != s else 0))
                    end[t] = ready + c[t[0]]
                    free[s] = end[t]
                    pending[s].pop(0)
                    moved = True
            if not moved:
                break  # this order combination deadlocks
        if any(pending):
            continue
        makespan = max(end.values())
        best = makespan if best is None else min(best, makespan)
    return best


def check_search(cost_text):
    path = os.path.join(SCRATCH, "search.txt")
    out = json.loads(run("search", "-P", "2", "-M", "2", "--placement", "1f1b", "--costs", cost_text, "-o", path,
                         "--json", expect=0).stdout)
    value, lower = Fraction(out["exact"]["makespan"]), Fraction(out["exact"]["lower_bound"])
    check_number(out, "makespan", value, "search")
    check_number(out, "lower_bound", lower, "search")
    ref = reference(native_to_json(path), cost_text)
    check(value == ref["makespan"], f"search printed {value}, its schedule takes {ref['makespan']}")
    optimum = brute_force_optimum(2, 2, cost_text)
    check(lower <= optimum <= value, f"lower bound {lower}, optimum {optimum}, value {value}")
    check(out["status"] != "optimal" or value == optimum, f"OPTIMAL {value} but the optimum is {optimum}")


def case_search_small():
    # Issue: printed makespan 9 with exit 0 (its schedule takes about 27.0).
    check_search("F=9,I=1/1000003,W=1/1000033,comm=1/1000037")


def case_search_wrapped_cost():
    # Issue: "search needs positive durations" (exit 134): F=10 ticks wrapped negative.
    check_search(BIG)


def case_refute():
    # Issue: "rational arithmetic overflows 64 bits" in refute (exit 134).
    cost = "F=1099511627689/1000003,I=1/1000033,W=1/1000037"
    proc = run("refute", "--claim", "bubble_fraction <= 1/2", "1f1b", "-P", "2..3", "-M", "4", "--costs", cost, "--json")
    fractions = [reference(json_file("1f1b", "-P", str(P), "-M", "4"), cost)["bubble_fraction"] for P in (2, 3)]
    holds = all(f <= Fraction(1, 2) for f in fractions)
    check(proc.returncode == (0 if holds else 1), f"exit {proc.returncode}; reference fractions {fractions}")
    check(json.loads(proc.stdout)["status"] == ("holds" if holds else "refuted"), proc.stdout)
    # A claim that the reference breaks at the smallest instance, P = 2.
    proc = run("refute", "--claim", "bubble * bubble * bubble <= 1000000", "1f1b", "-P", "2..3", "-M", "4", "--costs",
               cost, "--json", expect=1)
    out = json.loads(proc.stdout)
    bubble = bubble_of("1f1b", 2, 4, cost)
    check(bubble**3 > 10**6, "reference self-check")
    check(out["counterexample"]["ranks"] == 2 and out["counterexample"]["microbatches"] == 4, proc.stdout)
    check(Fraction(out["counterexample"]["values"]["bubble * bubble * bubble"]) == bubble**3,
          f"printed {out['counterexample']['values']}, reference {bubble ** 3}")


def case_input_bounds():
    # README "Exact arithmetic": numerators and denominators up to 2^40 (a decimal once reduced) are accepted and
    # timed exactly; one past is a usage error (exit 2) naming the flag, never a silent rounding.
    native = os.path.join(SCRATCH, "bounds.txt")
    open(native, "w").write("ranks 1\nmicrobatches 1\nrank 0: 0F0 0I0 0W0\n")
    top = 2 ** 40
    ref, _ = check_simulate(native_to_json(native), f"F={top},I={top}/{top - 1},W=0.123456789")
    check(ref["makespan"] == top + Fraction(top, top - 1) + Fraction(123456789, 10 ** 9), "reference self-check")
    # 2^-40 is 40 digits after the point and reduces to 1/2^40: accepted, equal to the fraction.
    tiny = format(Fraction(1, top).numerator * 5 ** 40, "d").rjust(40, "0")
    ref, _ = check_simulate(native_to_json(native), f"F=0.{tiny},I=1,W=1")
    check(ref["makespan"] == 2 + Fraction(1, top), f"F=0.{tiny} is not 1/2^40")
    # 0.1234567891234 reduces to 1234567891234/10^13: both past 2^40.
    for bad in (f"F={top + 1}", f"F=1/{top + 1}", "F=0.1234567891234", f"F={top}.5"):
        proc = run("simulate", native, "--costs", bad, expect=2)
        check("--costs" in proc.stderr, f"--costs {bad}: the error does not name the flag:\n{proc.stderr}")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main(argv):
    global PIPEPROOF
    PIPEPROOF = argv[1]
    names = argv[2:] or sorted(CASES)
    for name in names:
        try:
            CASES[name]()
        except Exception as e:  # a Failure, or output that does not even parse
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            return 1
        print(f"ok {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
