"""Benchmark of the S^2 spherical-harmonic field (issue 31): ``python benchmarks/bench_harmonic.py [--quick]``.

The same measurements as ``attnflow bench --suite harmonic`` (numerics.harmonic.bench): one sa field evaluation at
n = 10^6 (beta = 1, 4) with its error on 200 direct rows, the crossover n against the direct field (beta = 1, 4, 9),
and RK4 to t = 20 at n = 10^5, beta = 4 against the direct run's first step, extrapolated. ``--quick`` shrinks
the sizes (a smoke run). Prints the tables; ``--json FILE`` also writes the payload.
"""
from __future__ import annotations

import argparse
import json
import sys
from types import SimpleNamespace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the payload as JSON")
    args = parser.parse_args(argv)
    from numerics.bench.harmonic_suite import run_harmonic_suite
    from numerics.common.provenance import StderrProgress

    sizes = ((20_000, 2_000, 1.0) if args.quick else (1_000_000, 100_000, 20.0))
    ns = SimpleNamespace(harmonic_n=sizes[0], harmonic_sim_n=sizes[1], harmonic_t_end=sizes[2], repeats=args.repeats)
    payload, text = run_harmonic_suite(ns, StderrProgress("bench_harmonic"))
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
