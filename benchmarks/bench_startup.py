"""CPU time of a plain CLI ``attnflow simulate`` (issue 39: under 1 s for n = 64, t = 1 on a 2-core machine).

Run from the repository root:  python benchmarks/bench_startup.py [--rounds R] [--tree DIR ...] [--json]

Each round starts ``python -m numerics simulate --model sa --beta 1 --n 64 --d 3 --t-end 1`` in a fresh process
(start-up, imports, the run and the file write: what a user pays) and reads that child's user + system CPU time from
``resource.getrusage(RUSAGE_CHILDREN)``; with several ``--tree`` folders (for example a checkout of the commit
before a change and the working tree) the trees alternate within every round, so that the machine's drift falls on
all of them alike. The child also reports whether SymPy was imported (a plain run must not import it: only a user
kernel, a derivation or code generation needs the parser). CPU time, not wall time: on a shared machine the wall
time measures the other processes.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the issue's target for the CPU time of one plain run (seconds)
TARGET_CPU_SECONDS = 1.0

#: run the command in-process after the interpreter starts, then say whether SymPy came with it
_CHILD = """
import sys
from numerics.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("SYMPY", "sympy" in sys.modules, file=sys.stderr)
"""


def one_run(tree: str, out: str) -> tuple[float, bool]:
    """CPU seconds (user + system) of one plain CLI simulate started from ``tree``, and whether it imported SymPy."""
    argv = ["simulate", "--model", "sa", "--beta", "1", "--n", "64", "--d", "3", "--t-end", "1", "--out", out]
    env = {**os.environ, "PYTHONPATH": tree}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", _CHILD, *argv], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "SYMPY" not in proc.stderr:
        raise SystemExit(f"error: the run in {tree} failed: {proc.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, "SYMPY True" in proc.stderr


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5, help="runs per tree (default 5); the median is reported")
    p.add_argument("--tree", action="append", help="a source tree to time (repeatable; default: this checkout)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    if args.rounds < 1:
        print("error: --rounds must be >= 1", file=sys.stderr)
        return 2
    trees = [os.path.abspath(t) for t in (args.tree or [ROOT])]
    for t in trees:
        if not os.path.isdir(os.path.join(t, "numerics")):
            print(f"error: {t} holds no numerics/ package", file=sys.stderr)
            return 2
    cpu: dict[str, list[float]] = {t: [] for t in trees}
    sympy: dict[str, bool] = {t: False for t in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for t in trees:
                seconds, imported = one_run(t, os.path.join(tmp, "x.npz"))
                cpu[t].append(seconds)
                sympy[t] = sympy[t] or imported
            print(f"  round {r + 1}/{args.rounds}: " + ", ".join(f"{cpu[t][-1]:.3f} s" for t in trees),
                  file=sys.stderr)
    rows = [{"tree": t, "median_cpu_seconds": statistics.median(cpu[t]), "min_cpu_seconds": min(cpu[t]),
             "max_cpu_seconds": max(cpu[t]), "imports_sympy": sympy[t],
             "met": statistics.median(cpu[t]) < TARGET_CPU_SECONDS and not sympy[t]} for t in trees]
    if args.json:
        print(json.dumps({"target_cpu_seconds": TARGET_CPU_SECONDS, "rounds": args.rounds, "trees": rows}))
        return 0
    print(f"plain CLI simulate (n = 64, d = 3, t = 1, rk4 dt = 0.05): CPU time of the whole process, "
          f"{args.rounds} rounds, trees alternating")
    print(f"{'tree':<40} {'median':>8} {'min':>8} {'max':>8}  sympy  met (< {TARGET_CPU_SECONDS:g} s, no SymPy)")
    for row in rows:
        print(f"{row['tree'][-40:]:<40} {row['median_cpu_seconds']:>7.3f}s {row['min_cpu_seconds']:>7.3f}s "
              f"{row['max_cpu_seconds']:>7.3f}s  {'yes' if row['imports_sympy'] else 'no':<5}  "
              f"{'yes' if row['met'] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
