"""Benchmark of the O(n K) Fourier field on the circle against the direct O(n^2) field (issue 4).

Run from the repository root:  python benchmarks/bench_fourier.py [--n 16384] [--beta 10] [--n-large 1000000]
Prints one JSON object (see numerics.circle.fourier.bench_fourier) and a summary on stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.circle.fourier import bench_fourier  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16384)
    p.add_argument("--beta", type=float, default=10.0)
    p.add_argument("--n-large", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    report = bench_fourier(args.n, args.beta, args.n_large, args.repeats)
    print(json.dumps(report, indent=2))
    for model, r in report["models"].items():
        print(f"{model}: n={report['n']} beta={report['beta']:g} K={r['harmonics']}: direct "
              f"{r['direct_seconds']:.3f}s, fourier {r['fourier_seconds'] * 1e3:.2f}ms, speed-up {r['speedup']:.0f}x, "
              f"relative error {r['relative_error']:.2e}", file=sys.stderr)
    big = report["large"]
    print(f"n={big['n']} (sa, K={big['harmonics']}): fourier {big['fourier_seconds']:.3f}s per evaluation",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
