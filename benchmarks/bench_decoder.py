"""The NumPy decoder's forward pass (512 tokens, 30 blocks, one thread) against its dgemm bound, and its memory.

Run from the repository root:  python benchmarks/bench_decoder.py [--n 512] [--repeats 3] [--json]
(the same measurement as `attnflow decoder bench`; goals: within 2x of the bound, under 1.5 GB in float64).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["decoder", "bench", *sys.argv[1:]]))
