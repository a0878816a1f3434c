#!/usr/bin/env python3
"""An independent exact timing of a schedule, in Python's fractions (arbitrary precision).

Written from the README's definitions, sharing no code with pipeproof's simulator:
  * dependencies per pipeline: F(s-1,m) -> F(s,m); F(last,m) -> I/B(last,m); I/B(s+1,m) -> I/B(s,m)
    (whichever backward of stage s+1 the schedule has); I(s,m) -> W(s,m); plus each rank's order;
  * an overlapped pair is one slot; it costs FB of its forward's block when given, else the sum of its ops;
  * B costs B when given, else I + W;
  * "dataflow" timing: a slot starts when its rank is free and every input has arrived; a dependency
    between slots on different ranks adds comm;
  * idle = makespan - busy, bubble = largest idle, bubble_fraction = total idle / (ranks x makespan),
    span = end of the rank's last slot - start of its first.

Input: a schedule in pipeproof's JSON format (`pipeproof convert X -o x.json` or `generate --format json`).
Usage: exact_timing.py FILE.json [--costs F=..,I=..,W=..,B=..,FB=..,comm=..]  -> JSON with exact strings.
"""
import json
import sys
from fractions import Fraction


def parse_costs(text):
    costs = {}
    for item in text.replace(" ", ",").split(","):
        if not item:
            continue
        key, value = item.split("=")
        if key == "F&B":
            key = "FB"
        if key == "c":
            key = "comm"
        costs[key] = Fraction(value)
    return costs


def default_costs():
    return {"F": Fraction(1), "I": Fraction(1), "W": Fraction(1), "comm": Fraction(0)}


def file_costs(doc):
    costs = default_costs()
    for key, value in doc.get("costs", {}).items():
        costs[key] = Fraction(str(value))
    return costs


def op_cost(costs, kind):
    if kind == "B":
        return costs["B"] if "B" in costs else costs["I"] + costs["W"]
    return costs[kind]


def timing(doc, costs):
    """Exact dataflow timing of the JSON schedule `doc` under `costs` (a dict of Fractions)."""
    pipelines = doc["pipelines"]
    ranks = doc["ranks"]
    comm = costs.get("comm", Fraction(0))
    slots = []  # (rank, [op tuples])
    per_rank = [[] for _ in range(ranks)]
    where = {}  # (kind, pipeline, stage, mb) -> slot id
    for entry in doc["schedule"]:
        r = entry["rank"]
        for item in entry["ops"]:
            ops = item["overlap"] if "overlap" in item else [item]
            key_list = [(o["kind"], o.get("pipeline", 0), o["stage"], o["microbatch"]) for o in ops]
            sid = len(slots)
            slots.append((r, key_list))
            per_rank[r].append(sid)
            for key in key_list:
                where.setdefault(key, sid)

    def duration(keys):
        if len(keys) == 1:
            return op_cost(costs, keys[0][0])
        if "FB" in costs:
            return costs["FB"]
        return sum(op_cost(costs, k[0]) for k in keys)

    preds = [[] for _ in slots]  # (slot, latency)
    for r in range(ranks):
        for a, b in zip(per_rank[r], per_rank[r][1:]):
            preds[b].append((a, Fraction(0)))
    for sid, (r, keys) in enumerate(slots):
        for kind, p, s, m in keys:
            last = len(pipelines[p]["stage_ranks"]) - 1
            pred = None
            if kind == "F" and s > 0:
                pred = ("F", p, s - 1, m)
            elif kind in ("I", "B"):
                if s == last:
                    pred = ("F", p, s, m)
                elif ("B", p, s + 1, m) in where:
                    pred = ("B", p, s + 1, m)
                else:
                    pred = ("I", p, s + 1, m)
            elif kind == "W":
                pred = ("I", p, s, m)
            if pred is None or pred not in where:
                continue
            u = where[pred]
            preds[sid].append((u, comm if slots[u][0] != r else Fraction(0)))

    # Longest path by repeated relaxation in a topological order (Kahn).
    succ = [[] for _ in slots]
    indeg = [0] * len(slots)
    for v, plist in enumerate(preds):
        for u, lat in plist:
            succ[u].append(v)
            indeg[v] += 1
    order = [v for v in range(len(slots)) if indeg[v] == 0]
    for u in order:
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                order.append(v)
    if len(order) != len(slots):
        raise ValueError("the schedule deadlocks")
    start = [Fraction(0)] * len(slots)
    end = [Fraction(0)] * len(slots)
    for v in order:
        start[v] = max([end[u] + lat for u, lat in preds[v]], default=Fraction(0))
        end[v] = start[v] + duration(slots[v][1])

    makespan = max(end, default=Fraction(0))
    rank_rows = []
    for r in range(ranks):
        busy = sum((end[s] - start[s] for s in per_rank[r]), Fraction(0))
        span = end[per_rank[r][-1]] - start[per_rank[r][0]] if per_rank[r] else Fraction(0)
        rank_rows.append({"busy": busy, "idle": makespan - busy, "span": span})
    total_idle = sum((row["idle"] for row in rank_rows), Fraction(0))
    return {
        "makespan": makespan,
        "bubble": max(row["idle"] for row in rank_rows),
        "bubble_fraction": total_idle / (ranks * makespan) if makespan > 0 else Fraction(0),
        "ranks": rank_rows,
        "start": start,
        "end": end,
    }


def text(value):
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def main(argv):
    path = argv[1]
    doc = json.load(open(path))
    costs = file_costs(doc)
    if len(argv) > 3 and argv[2] == "--costs":
        costs = default_costs()
        costs.update(parse_costs(argv[3]))
    t = timing(doc, costs)
    out = {k: text(t[k]) for k in ("makespan", "bubble", "bubble_fraction")}
    out["ranks"] = [{k: text(v) for k, v in row.items()} for row in t["ranks"]]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv)
