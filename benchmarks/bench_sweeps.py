"""Benchmark of sweeps (numerics.sweeps): throughput with 1 and 2 Dask workers, and the per-cell overhead.

Run: nice python benchmarks/bench_sweeps.py [--cells 16] [--seconds-per-cell 1.0] [--block 4] [--n 256]

Goals (from the issues): at least 1.8x the throughput of 1 worker with 2 workers on two cores, for cells of a
second or more; the store and scheduler add under 5% per cell against a bare loop over the same ensembles.

What is timed:

- ``bare loop``: the same blocks (:func:`numerics.sweeps.runner.run_block`, ensembles of ``--block`` cells) in a
  Python loop, no store;
- ``store writes``: writing those finished blocks into a fresh store, one region each, timed alone (the store's
  share of the per-cell overhead, free of the noise of re-running the simulations);
- ``synchronous``: the sweep in-process, writing the Zarr store block by block (store overhead only);
- ``local 1 worker`` / ``local 2 workers``: a ``distributed.LocalCluster`` of single-threaded, pinned processes;
- ``two bare processes``: the bare loop's blocks split between two plain processes running at once (no Dask, no
  store): the machine's own two-process ceiling, against which the two-worker ratio is read. Two processes do not
  run at twice one process's speed when their working sets share the last-level cache and the memory bus.

Every time excludes the one-time set-up of a sweep (creating the store, starting the cluster and waiting for
its workers: ``SweepReport.setup_seconds``) and its tear-down (closing the cluster:
``SweepReport.teardown_seconds``), which are printed separately, with the thread CPU time of a cell
inside a worker against the driver's (``seconds`` per cell is wall time; a loaded machine inflates it).

The cell size is chosen so a cell takes about ``--seconds-per-cell`` on this machine: n is fixed (``--n``,
default 256: an n x n float64 tile of 0.5 MB stays in one core's 1 MB L2) and t_end is calibrated on a block of
``--block`` cells run as one ensemble, as the sweep runs it (a single-cell probe overestimates a cell in an
ensemble, which shares the per-step Python work: the first version calibrated n on one cell and aimed 1 s cells
at 0.14 s). A large ``--n`` (1222 made 7 s cells of 12 MB tiles) measures the memory system as much as the sweep.
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


def spec_for(n: int, cells: int, t_end: float = 10.0) -> SweepSpec:
    return SweepSpec.from_dict({
        "model": {"model": "sa", "d": 3, "beta": 4.0, "n": n},
        "sweep": {"seeds": cells},
        "run": {"t_end": t_end, "dt": 0.05, "frames": 11, "backend": "direct"},
        "observables": {"clusters": {"eps": 1e-2}, "order_parameter": {}},
    })


def calibrate(n: int, block: int, target: float) -> float:
    """t_end (a multiple of 10 dt) such that one cell, run in an ensemble of ``block`` cells, takes about
    ``target`` seconds of CPU here: the cost is linear in the number of steps, so one probe of 2 time units
    (40 RK4 steps; the ensemble set-up is part of it and makes the estimate slightly high) suffices."""
    probe = 2.0
    spec = spec_for(n, block, probe)
    runner.run_block(spec.to_json(), [(i,) for i in range(block)])        # warm-up: imports, caches
    start = time.process_time()
    runner.run_block(spec.to_json(), [(i,) for i in range(block)])
    per_cell = (time.process_time() - start) / block
    return max(0.5, round(probe * target / per_cell / 0.5) * 0.5)


def _bare_part(spec_json: str, blocks: list, barrier, out) -> None:
    """Child process: warm up (the lazy imports of a first run), wait for the other child, run ``blocks``, report
    the start and end times (``time.monotonic`` is one system-wide clock on Linux, comparable across processes)."""
    runner.run_block(spec_for(8, 1, 0.5).to_json(), [(0,)])
    barrier.wait()
    start = time.monotonic()
    for block in blocks:
        runner.run_block(spec_json, block)
    out.put((start, time.monotonic()))


def two_bare_processes(spec_json: str, blocks: list) -> float:
    """Wall time of the blocks split between two plain processes running at once (spawned, one BLAS thread each
    as above): from the first child's start to the last child's end, after both are warm."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    children = [ctx.Process(target=_bare_part, args=(spec_json, blocks[k::2], barrier, out)) for k in range(2)]
    for child in children:
        child.start()
    spans = [out.get() for _ in children]
    for child in children:
        child.join()
    return max(end for _, end in spans) - min(start for start, _ in spans)


def quiet(*args, **kwargs):
    return None


def busy_core_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (everything but idle and I/O wait; psutil, a dependency of
    Dask's distributed). Read around each timed phase, it tells how many cores the whole machine kept busy: a phase
    of ours with one process busy on more than about one core shared the machine with other jobs."""
    import psutil

    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


class Phase:
    """Wall time of a block of code and the machine's average busy cores during it; says on stderr when the phase
    starts and how long it took (the phases take 10-60 s each)."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        print(f"  {self.name} ...", file=sys.stderr, flush=True)
        self.busy0, self.start = busy_core_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        self.cores = (busy_core_seconds() - self.busy0) / self.seconds
        print(f"  {self.name}: {self.seconds:.1f} s", file=sys.stderr, flush=True)
        return False


def steady(report) -> float:
    """A sweep's seconds without its one-time set-up (store, cluster start-up, the workers' imports) and tear-down
    (closing the cluster)."""
    return report.seconds - report.setup_seconds - report.teardown_seconds


def in_run_overhead(path: str, report, workers: int) -> float:
    """(workers x the sweep's wall time without set-up and tear-down - the sum of the cells' ``seconds``) / that
    sum: the share of the run that its scheduler, store and idle workers took, from one run alone. ``seconds`` is
    each cell's share of its ensemble's wall time, measured inside the task around the simulation
    (numerics.sweeps.runner.run_block)."""
    import numpy as np

    from numerics.sweeps.store import open_store

    compute = float(np.nansum(np.asarray(open_store(path).group["seconds"][...], dtype=float)))
    return (workers * steady(report) - compute) / compute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=16)
    ap.add_argument("--seconds-per-cell", type=float, default=1.0)
    ap.add_argument("--block", type=int, default=4, help="cells per task (one ensemble)")
    ap.add_argument("--n", type=int, default=256, help="tokens per cell (default 256; t_end is calibrated)")
    args = ap.parse_args()
    n = args.n
    print(f"  calibrating t_end for {args.seconds_per_cell:g} s cells (n = {n}) ...", file=sys.stderr, flush=True)
    t_end = calibrate(n, args.block, args.seconds_per_cell)
    spec = spec_for(n, args.cells, t_end)
    load = os.getloadavg()[0]
    tmp = tempfile.mkdtemp(prefix="bench-sweeps-")
    try:
        from numerics.sweeps.store import blocks_of, create_store, store_layout

        chunks, _ = store_layout(spec, args.block)
        blocks = blocks_of(spec.cells(), chunks)
        with Phase("bare loop") as bare_phase:
            results = [runner.run_block(spec.to_json(), block) for block in blocks]
        bare = bare_phase.seconds
        with Phase("two bare processes") as two_bare:   # its seconds include spawning the children: their own span is timed inside
            two_wall = two_bare_processes(spec.to_json(), blocks)
        rows = [("bare loop", bare, bare_phase.cores, 1), ("two bare processes", two_wall, two_bare.cores, 2)]
        # the store's share alone: writing the finished blocks, one region each (no simulation noise in it)
        store = create_store(os.path.join(tmp, "writes.zarr"), spec, args.block)
        start = time.perf_counter()
        for result in results:
            store.write_block(result)
        writes = (time.perf_counter() - start) / args.cells
        with Phase("synchronous sweep + store") as phase:
            report = runner.run_sweep(spec, os.path.join(tmp, "sync.zarr"), scheduler="synchronous", progress=quiet,
                                      block=args.block)
        rows.append(("synchronous + store", steady(report), phase.cores, 1))
        startup = {0: report.setup_seconds}
        teardown = {0: report.teardown_seconds}
        in_run = {"synchronous + store": in_run_overhead(os.path.join(tmp, "sync.zarr"), report, 1)}
        for workers in (1, 2):
            with Phase(f"local cluster, {workers} worker{'s' if workers > 1 else ''}") as phase:
                report = runner.run_sweep(spec, os.path.join(tmp, f"local{workers}.zarr"), scheduler="local",
                                          workers=workers, progress=quiet, block=args.block)
            startup[workers] = report.setup_seconds
            teardown[workers] = report.teardown_seconds
            name = f"local {workers} worker{'s' if workers > 1 else ''}"
            in_run[name] = in_run_overhead(os.path.join(tmp, f"local{workers}.zarr"), report, workers)
            rows.append((name, steady(report), phase.cores, workers))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    per_cell = bare / args.cells
    print(f"cells={args.cells} in tasks of {args.block}  n={n} d=3 t_end={t_end:g} rk4 dt=0.05: {per_cell:.2f} s per cell "
          f"(bare)  load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    print("phase                  wall       cells/s   against the bare loop        machine busy (ours)")
    for name, seconds, cores, ours in rows:
        against = ("(two processes' ceiling)" if name == "two bare processes" else
                   f"overhead {100 * (seconds - bare) / bare:+6.1f}%")
        print(f"{name:22s} {seconds:8.2f} s  {args.cells / seconds:6.3f}    {against:28s} {cores:4.2f} cores ({ours})")
    busiest = max(cores - ours for _, _, cores, ours in rows)
    if busiest > 0.15:
        print(f"note: other jobs kept up to {busiest:.2f} more cores busy during a phase: the times are not clean")
    seconds_of = {name: seconds for name, seconds, _, _ in rows}
    t1 = seconds_of["local 1 worker"]
    t2 = seconds_of["local 2 workers"]
    ceiling = bare / seconds_of["two bare processes"]
    print(f"scaling 2 workers / 1 worker: {t1 / t2:.2f}x (goal >= 1.8x); two bare processes / bare loop: "
          f"{ceiling:.2f}x (the machine's ceiling for this cell size)")
    print(f"store writes per cell (timed alone): {writes * 1000:.1f} ms = {100 * writes / per_cell:.1f}% of a cell "
          f"(goal < 5%)")
    print("in-run overhead (the same run's wall time, times the workers, against the sum of its cells' own compute "
          "time, measured inside the tasks: free of the run-to-run noise of the comparison with the bare loop):")
    for name, share in in_run.items():
        print(f"  {name:22s} {100 * share:+6.1f}% (goal < 5%)")
    print(f"set-up, paid once per sweep (store creation + cluster start-up): synchronous {startup[0]:.1f} s, "
          f"1 worker {startup[1]:.1f} s, 2 workers {startup[2]:.1f} s; tear-down (closing the cluster): "
          f"1 worker {teardown[1]:.1f} s, 2 workers {teardown[2]:.1f} s")


if __name__ == "__main__":
    main()
