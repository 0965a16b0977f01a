"""Benchmark attention_field against the honest floor, the measured hardware bound and installed peers (n = 4096).

Run from the repository root:  python benchmarks/bench_field.py --suite field [--n 4096] [--repeats 5] [--json]
(the same measurement as `attnflow bench`). ``--suite energy`` times the standalone energy (interaction_energy)
against one field evaluation at n = 256, 1024, 4096 and d = 3, 16, 64, interleaved (numerics/bench/energy_cost.py).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
