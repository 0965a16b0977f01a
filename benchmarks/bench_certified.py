"""Benchmark of the certificates (issue 30): ``python benchmarks/bench_certified.py [--repeats R] [--all]``.

Times every ``certified.*`` claim (the default ones; with ``--all`` also the slow ``-full`` variants), each run
``--repeats`` times interleaved in one process (round-robin, so machine load hits all of them alike), and prints
the first (cold: SymPy derivation and compilation to Arb included, as in one ``attnflow verify`` run), minimum
and median seconds per certificate with its verdict. The goal: every default certificate under 5 s, cold.
"""
from __future__ import annotations

import argparse
import statistics
import time

GOAL_SECONDS = 5.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--all", action="store_true", help="also the slow certificates (default=False claims)")
    args = parser.parse_args(argv)
    from numerics.common.verification import select_claims

    claims = [c for c in select_claims(["certified."]) if c.default or args.all]
    times: dict[str, list[float]] = {c.id: [] for c in claims}
    status: dict[str, str] = {}
    for _ in range(args.repeats):
        for c in claims:
            start = time.perf_counter()
            status[c.id] = c.check().status
            times[c.id].append(time.perf_counter() - start)
    width = max(len(c.id) for c in claims)
    print(f"{'certificate'.ljust(width)}  status     first s  min s   median s  goal")
    slow = 0
    for c in claims:
        t = times[c.id]
        over = c.default and t[0] > GOAL_SECONDS
        slow += over
        print(f"{c.id.ljust(width)}  {status[c.id]:<9}  {t[0]:7.2f}  {min(t):6.2f}  {statistics.median(t):8.2f}  "
              f"{'OVER' if over else ('ok' if c.default else 'slow claim')}")
    print(f"\n{len(claims)} certificates, {args.repeats} interleaved rounds; default ones over {GOAL_SECONDS} s: {slow}")
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
