"""The benchmark gate of the core: two source trees timed interleaved, A / B / A / B, and a table of medians.

Run: python benchmarks/bench_gate.py BEFORE_TREE AFTER_TREE [--pairs 2] [--only ensembles fields field simulate]
[--fixed-malloc] [--json]

Each tree runs its own copy of the benchmarks in a fresh process (``PYTHONPATH`` = the tree, one BLAS thread,
Numba's on-disk cache in a directory of its own, ``--cache-a``/``--cache-b``: the cache is per source file, and
compile time is excluded by the benchmarks themselves, which warm up before timing):

- ``ensembles``: ``benchmarks/bench_ensembles.py --fraction 0.25 --rounds 3 --skip torch --loop-systems 8``:
  systems per CPU second of the ``numba`` (compiled member kernels) and ``ensemble`` (NumPy batch) contenders,
  per case;
- ``fields``: ``benchmarks/bench_ensembles.py --fields --rounds 5``: microseconds per member and evaluation of
  the 8-head case (single system, compiled kernel, NumPy batch);
- ``field``: ``attnflow bench --suite field --repeats 5``: seconds of one field evaluation (NumPy tiles, general
  score map, fused kernel) at n = 4096;
- ``simulate``: ``attnflow bench --suite simulate --repeats 3``: seconds of an rk4 run and of its bare fields.

``--fixed-malloc`` sets glibc's ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` for both trees. Without
it, glibc adapts its mmap threshold to what the process freed so far, and the NumPy block path (several heads)
allocates tiles of a few MB per evaluation: whether they come back as fresh pages (a minor page fault per 4 KiB,
measured 60 % of that field's CPU time) depends on the allocations and frees that happened before, not on the
field. Measured on the 8-head ensemble: 3.6 s a round in the first round of both trees, 1.3 s in later rounds of
one tree only; 0.9 s for both with the thresholds fixed.

The runs alternate (A, B, A, B, ... ``--pairs`` times each): on a shared machine the load drifts, and
interleaving spreads it over both trees. The table gives, per measure, the median over the runs of each tree and
the speed ratio after/before (rates: B/A; times: A/B), so a ratio below 0.95 means B is more than 5 % slower.
The issue "One core" asks for every ratio within 5 %; a case slower by more than that in every pair points to a
routing cause (a compiled engine no longer chosen, a copy added per call), not to noise.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

#: job -> (arguments after the interpreter, with {tree} for the tree's path)
JOBS = {
    "ensembles": ["{tree}/benchmarks/bench_ensembles.py", "--fraction", "0.25", "--rounds", "3", "--skip", "torch",
                  "--loop-systems", "8", "--json"],
    "fields": ["{tree}/benchmarks/bench_ensembles.py", "--fields", "--rounds", "5", "--json"],
    "field": ["-m", "numerics", "bench", "--suite", "field", "--repeats", "5", "--json"],
    "simulate": ["-m", "numerics", "bench", "--suite", "simulate", "--repeats", "3", "--json"],
}


def measures(job: str, out: dict) -> dict[str, tuple[float, bool]]:
    """The measures of one run: name -> (value, higher_is_better)."""
    found: dict[str, tuple[float, bool]] = {}
    if job == "ensembles":
        for row in out["rows"]:
            case = row["case"].split(",")[0] + ("" if "heads" not in row["case"] else ", 8 heads")
            for who in ("numba", "ensemble", "loop"):
                value = row.get(f"{who}_systems_per_s")
                if value:
                    found[f"{case}: {who} systems/CPU s"] = (float(value), True)
    elif job == "fields":
        for who, row in out["per_member_evaluation"].items():
            if isinstance(row, dict):
                found[f"8 heads field: {who} us/member (median)"] = (float(row["median_us"]), False)
    elif job == "field":
        for row in out["results"]:
            for key in ("field_seconds", "general_seconds", "fused_seconds"):
                if row.get(key):
                    found[f"field n={row['n']} d={row['d']}: {key.replace('_seconds', '')} s"] = (float(row[key]), False)
    else:
        for row in out["simulate"]:
            for key in ("simulate_seconds", "field_seconds"):
                found[f"simulate n={row['n']} d={row['d']}: {key.replace('_seconds', '')} s"] = (float(row[key]),
                                                                                                   False)
    return found


#: glibc's allocator thresholds of ``--fixed-malloc`` (256 MiB: every tile of the benchmarks stays on the heap)
FIXED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)}


def run(job: str, tree: Path, cache: str, fixed_malloc: bool = False) -> dict[str, tuple[float, bool]]:
    """One run of ``job`` on ``tree`` in a fresh process; its measures."""
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=cache, OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", **(FIXED_MALLOC if fixed_malloc else {}))
    args = [sys.executable] + [a.format(tree=tree) for a in JOBS[job]]
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(args)} failed in {tree}: {done.stderr.strip().splitlines()[-1:]}")
    return measures(job, json.loads(done.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="the tree before the change (A)")
    ap.add_argument("after", type=Path, help="the tree after the change (B)")
    ap.add_argument("--pairs", type=int, default=2, help="runs of each tree per job, interleaved (default 2)")
    ap.add_argument("--only", nargs="*", default=list(JOBS), choices=list(JOBS), help="jobs to run (default all)")
    ap.add_argument("--cache-a", default="/tmp/numba-gate-a", help="NUMBA_CACHE_DIR of tree A")
    ap.add_argument("--cache-b", default="/tmp/numba-gate-b", help="NUMBA_CACHE_DIR of tree B")
    ap.add_argument("--fixed-malloc", action="store_true",
                    help="fix glibc's mmap and trim thresholds in both trees (module docstring)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    trees = {"A": (args.before.resolve(), args.cache_a), "B": (args.after.resolve(), args.cache_b)}
    for label, (tree, _) in trees.items():
        if not (tree / "numerics").is_dir():
            ap.error(f"tree {label} ({tree}) has no numerics/ package")
    values: dict[str, dict[str, list[float]]] = {}
    higher: dict[str, bool] = {}
    start = time.time()
    for job in args.only:
        for pair in range(max(1, args.pairs)):
            for label in ("A", "B"):
                tree, cache = trees[label]
                print(f"  {job} {label} run {pair + 1}/{args.pairs} ({time.time() - start:.0f} s)", file=sys.stderr,
                      flush=True)
                for name, (value, up) in run(job, tree, cache, args.fixed_malloc).items():
                    values.setdefault(name, {"A": [], "B": []})[label].append(value)
                    higher[name] = up
    rows = []
    for name, runs in values.items():
        if not runs["A"] or not runs["B"]:
            continue
        a, b = float(np.median(runs["A"])), float(np.median(runs["B"]))
        speed = b / a if higher[name] else a / b  # > 1: B is faster
        rows.append({"measure": name, "before": a, "after": b, "speed_after_over_before": speed,
                     "within_5_percent": speed >= 0.95, "runs_before": runs["A"], "runs_after": runs["B"]})
    if args.json:
        print(json.dumps({"before": str(trees["A"][0]), "after": str(trees["B"][0]), "pairs": args.pairs,
                          "fixed_malloc": args.fixed_malloc,
                          "rows": rows, "load_average": os.getloadavg()}, indent=1))
        return
    print(f"A = {trees['A'][0]}, B = {trees['B'][0]}; medians of {args.pairs} interleaved runs each; speed = B/A "
          "for rates, A/B for times (>= 0.95: within 5 %)")
    width = max(len(r["measure"]) for r in rows) if rows else 10
    print(f"{'measure':{width}s} {'before':>11s} {'after':>11s} {'speed':>6s}  within 5 %")
    for r in rows:
        print(f"{r['measure']:{width}s} {r['before']:11.4g} {r['after']:11.4g} {r['speed_after_over_before']:6.3f}  "
              f"{'yes' if r['within_5_percent'] else 'NO'}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine: noisy)")


if __name__ == "__main__":
    main()
