"""Share of `simulate` spent outside field evaluations (goal < 10%), and adaptive evaluations against SciPy.

Run from the repository root:  python benchmarks/bench_simulate.py [--json]
(the same measurements as `attnflow bench --suite simulate` and `attnflow bench --suite adaptive`).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.cli import main  # noqa: E402

if __name__ == "__main__":
    rc = main(["bench", "--suite", "simulate", *sys.argv[1:]])
    sys.exit(rc or main(["bench", "--suite", "adaptive", *sys.argv[1:]]))
