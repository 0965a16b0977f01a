"""Benchmark of sweeps (numerics.sweeps): throughput with 1 and 2 Dask workers, and the per-cell overhead.

Run: nice python benchmarks/bench_sweeps.py [--cells 16] [--seconds-per-cell 1.0] [--block 4]

Goals (from the issues): at least 1.8x the throughput of 1 worker with 2 workers on two cores, for cells of a
second or more; the store and scheduler add under 5% per cell against a bare loop over the same ensembles.

What is timed:

- ``bare loop``: the same blocks (:func:`numerics.sweeps.runner.run_block`, ensembles of ``--block`` cells) in a
  Python loop, no store;
- ``store writes``: writing those finished blocks into a fresh store, one region each, timed alone (the store's
  share of the per-cell overhead, free of the noise of re-running the simulations);
- ``synchronous``: the sweep in-process, writing the Zarr store block by block (store overhead only);
- ``local 1 worker`` / ``local 2 workers``: a ``distributed.LocalCluster`` of single-threaded, pinned processes.

Every time excludes the one-time set-up of a sweep (creating the store, starting the cluster and waiting for
its workers: ``SweepReport.setup_seconds``), which is printed separately, with the thread CPU time of a cell
inside a worker against the driver's (``seconds`` per cell is wall time; a loaded machine inflates it).

The cell size is chosen so a cell takes about ``--seconds-per-cell`` on this machine (n is calibrated first).
A loaded machine (other jobs on the two cores) lowers the 2-worker ratio: say so when you report the numbers.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

# one BLAS thread per process, as Dask gives its workers: otherwise the bare loop (in this process) uses both
# cores through multithreaded BLAS and the comparison with one worker is unfair. Set before NumPy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.sweeps import runner  # noqa: E402
from numerics.sweeps.spec import SweepSpec  # noqa: E402


def spec_for(n: int, cells: int) -> SweepSpec:
    return SweepSpec.from_dict({
        "model": {"model": "sa", "d": 3, "beta": 4.0, "n": n},
        "sweep": {"seeds": cells},
        "run": {"t_end": 10.0, "dt": 0.05, "frames": 11, "backend": "direct"},
        "observables": {"clusters": {"eps": 1e-2}, "order_parameter": {}},
    })


def calibrate(target: float) -> int:
    """n such that one cell takes about ``target`` seconds of CPU here (O(n^2) field: scale from a probe)."""
    n = 64
    while True:
        spec = spec_for(n, 1)
        start = time.process_time()
        runner.run_cell(spec.to_json(), (0,))
        took = time.process_time() - start
        if took > 0.2 * target or n > 4096:
            return max(16, int(n * (target / took) ** 0.5))
        n *= 2


def quiet(*args, **kwargs):
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=16)
    ap.add_argument("--seconds-per-cell", type=float, default=1.0)
    ap.add_argument("--block", type=int, default=4, help="cells per task (one ensemble)")
    args = ap.parse_args()
    n = calibrate(args.seconds_per_cell)
    spec = spec_for(n, args.cells)
    load = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="bench-sweeps-")
    try:
        from numerics.sweeps.store import blocks_of, create_store, store_layout

        chunks, _ = store_layout(spec, args.block)
        blocks = blocks_of(spec.cells(), chunks)
        start = time.perf_counter()
        results = [runner.run_block(spec.to_json(), block) for block in blocks]
        bare = time.perf_counter() - start
        rows = [("bare loop", bare)]
        # the store's share alone: writing the finished blocks, one region each (no simulation noise in it)
        store = create_store(os.path.join(tmp, "writes.zarr"), spec, args.block)
        start = time.perf_counter()
        for result in results:
            store.write_block(result)
        writes = (time.perf_counter() - start) / args.cells
        report = runner.run_sweep(spec, os.path.join(tmp, "sync.zarr"), scheduler="synchronous", progress=quiet,
                                  block=args.block)
        rows.append(("synchronous + store", report.seconds - report.setup_seconds))
        startup = {0: report.setup_seconds}
        for workers in (1, 2):
            report = runner.run_sweep(spec, os.path.join(tmp, f"local{workers}.zarr"), scheduler="local",
                                      workers=workers, progress=quiet, block=args.block)
            startup[workers] = report.setup_seconds
            rows.append((f"local {workers} worker{'s' if workers > 1 else ''}", report.seconds - report.setup_seconds))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    per_cell = bare / args.cells
    print(f"cells={args.cells} in tasks of {args.block}  n={n} d=3 t_end=10 rk4 dt=0.05: {per_cell:.2f} s per cell "
          f"(bare)  load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    for name, seconds in rows:
        print(f"{name:22s} {seconds:8.2f} s  {args.cells / seconds:6.3f} cells/s  "
              f"overhead vs bare {100 * (seconds - bare) / bare:+6.1f}%")
    t1 = dict(rows)["local 1 worker"]
    t2 = dict(rows)["local 2 workers"]
    print(f"scaling 2 workers / 1 worker: {t1 / t2:.2f}x (goal >= 1.8x)")
    print(f"store writes per cell (timed alone): {writes * 1000:.1f} ms = {100 * writes / per_cell:.1f}% of a cell "
          f"(goal < 5%)")
    print(f"set-up, paid once per sweep (store creation + cluster start-up): synchronous {startup[0]:.1f} s, "
          f"1 worker {startup[1]:.1f} s, 2 workers {startup[2]:.1f} s")


if __name__ == "__main__":
    main()
