"""The compiled standalone energy of an earlier commit against the current one, in one process (issue 42).

Run from the repository root:  python benchmarks/bench_energy_kernels.py [--rev 6736421] [--repeats 7] [--json FILE]

The earlier ``numerics/core/_energy_kernels.py`` is read with ``git show REV:...`` into a temporary module (its
``shifted_row_sums``: the first kernel's interface) and timed in interleaved rounds (the order alternating, one
thread) with the field ``make_field(d, 1.0)``, the NumPy energy ``interaction_energy(X, 1.0)``, the current
kernel (``pack`` and ``shifted_pair_sum``, called directly, also at d = 64 where ``interaction_energy`` routes to
NumPy) and ``interaction_energy(X, 1.0, backend="numba")``, at n = 256, 1024, 4096 and d = 3, 16, 64. Printed:
each contender's time over the field's, as the ratio of the minima over the rounds, the median of the per-round
ratios and the ratio of the minimal CPU times; the load averages before and after each size. A benchmark: nothing
is asserted. The numbers of one run are in proofs_notes/core-energy-kernel.md.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from numerics.common.timing import interleaved_rounds  # noqa: E402
from numerics.core import _energy_kernels as current  # noqa: E402
from numerics.core.field import interaction_energy, make_field  # noqa: E402
from numerics.core.sampling import uniform_sphere  # noqa: E402

NAMES = ("numpy", "previous", "current", "current_via_interaction_energy")


def _previous_kernel(rev: str):
    source = subprocess.run(["git", "show", f"{rev}:numerics/core/_energy_kernels.py"], check=True,
                            capture_output=True, text=True).stdout
    path = os.path.join(tempfile.mkdtemp(prefix="attnflow-energy-"), "previous_energy_kernels.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("previous_energy_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rev", default="6736421", help="the commit whose kernel is the previous one")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--json", help="write the rows to this file")
    args = p.parse_args()
    old = _previous_kernel(args.rev)
    rows = []
    with threadpool_limits(1):
        for d in (3, 16, 64):
            for n in (256, 1024, 4096):
                X = uniform_sphere(n, d, 0)
                calls = max(1, 4_000_000 // (n * n))
                field = make_field(d, 1.0)

                def previous():
                    return 0.5 * float(np.sum(old.shifted_row_sums(X, np.ascontiguousarray(X.T), 1.0))) / n**2

                def kernel():
                    B, P = current.pack(X, 1.0)
                    return 0.5 * current.shifted_pair_sum(B, P, d, current.tile_width(n, d),
                                                          current.flush_rows(n)) / n**2

                fns = [lambda: field(X), lambda: interaction_energy(X, 1.0), previous, kernel,
                       lambda: interaction_energy(X, 1.0, backend="numba")]
                timed = [lambda f=f: [f() for _ in range(calls)] for f in fns]
                for t in timed:  # warm-up, compilation
                    t()
                load = [os.getloadavg()[0]]
                rounds = interleaved_rounds(timed, args.repeats, alternate=True)
                load.append(os.getloadavg()[0])
                wall = [[r[k][0] for r in rounds] for k in range(len(fns))]
                cpu = [min(r[k][1] for r in rounds) for k in range(len(fns))]
                row = {"n": n, "d": d, "field_seconds": min(wall[0]) / calls, "load_average": load}
                for k, name in enumerate(NAMES, start=1):
                    row[name] = {"ratio": min(wall[k]) / min(wall[0]),
                                 "ratio_median": float(np.median([a / b for a, b in zip(wall[k], wall[0])])),
                                 "ratio_cpu": cpu[k] / cpu[0]}
                rows.append(row)
                print(f"n={n:5d} d={d:2d} field {1e3 * row['field_seconds']:8.3f} ms | "
                      + " | ".join(f"{name} {row[name]['ratio']:.2f} / {row[name]['ratio_median']:.2f} / "
                                   f"{row[name]['ratio_cpu']:.2f}" for name in NAMES)
                      + f" | load {load[0]:.2f} -> {load[1]:.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"schema": 1, "rev": args.rev, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
