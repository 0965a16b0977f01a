"""The issue's phase diagram: P(one cluster at t = 50) over 100 betas x 1000 seeds (1e5 trajectories, n = 32, d = 2).

Run: nice python benchmarks/bench_phase_diagram.py [--seeds 1000] [--betas 100] [--workers 2] [--block 0]
     [--scheduler local] [--backend direct|numba] [--method rk4|dp5] [--rtol 1e-7] [--store PATH]
     [--stop-when-decided] [--json]

The sweep runs in blocks (ensembles of up to 1024 cells, ``sa``, RK4 with dt = 0.1, 2 saved frames) on a local
Dask cluster; the script prints the wall time (set-up included), the cells per second, the number of files of
the store (Zarr format 3 with sharding; a store in the layout of format 1 would hold one file per cell and
variable) and the phase diagram's coarse shape (P(one cluster) at a few betas). ``--seeds 100`` runs a tenth of
it; the full run's wall time is then about ten times the printed one (the work is linear in the cells).

``--method dp5`` integrates with dp5 at ``--rtol`` (atol 1e-3 rtol), each member with its own steps (the sweep's
batches), instead of RK4 at dt = 0.1: the plateaus of large beta then take long steps. Either way the script
prints the integrator's accuracy: the final-state error of a sample of 100 cells against dp5 at rtol 1e-11
(measured 2026-12-07 on 1000 cells: RK4 dt = 0.1 4.4e-8 median, 1.2e-5 max; dp5 rtol 1e-7 8.6e-9 and 6.4e-7).

``--with-events`` runs it once, with ``stop_when_decided`` (no comparison run).

``--stop-when-decided`` runs the phase diagram twice, without and with ``[run] stop_when_decided = true`` (each run
stops once all its tokens lie within eps/2 of their mean direction: the event ``one-cluster:eps`` of
``numerics.core.events``), and compares the two stores cell by cell: every cell must have the same one-cluster
verdict and the same first saved time with one cluster (exit status 1 otherwise). It prints both wall times, the
fraction of cells decided early and their mean decision time.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def tables(betas: int, seeds: int, block: int, backend: str = "direct", stop: bool = False, method: str = "rk4",
           rtol: float = 1e-7) -> dict:
    run = {"t_end": 50.0, "dt": 0.1, "frames": 2, "root_seed": 2024, "block": block, "backend": backend,
           "method": method}
    if method == "dp5":  # per-member steps (the sweep's batches); atol 1e-3 rtol on unit vectors
        run.update(rtol=rtol, atol=rtol * 1e-3)
    if stop:
        run["stop_when_decided"] = True
    return {"model": {"model": "sa", "d": 2, "n": 32},
            "sweep": {"beta": {"start": 0.5, "stop": 16.0, "num": betas, "log": True}, "seeds": seeds},
            "run": run, "observables": {"one_cluster": {"eps": 1e-3}}}


def accuracy(betas: int, seeds: int, method: str, rtol: float, sample: int = 100) -> dict:
    """The final-state error of the diagram's integrator (rk4 at dt = 0.1, or dp5 at ``rtol``) on a sample of
    its cells (every k-th beta, the first seeds; the store's own initial states), against dp5 at rtol 1e-11,
    as the largest |x_i(50) - x_i^ref(50)| of each cell: its median and maximum over the sample."""
    from numerics.core.members import Members
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.sampling import uniform_sphere
    from numerics.core.simulate import simulate
    from numerics.sweeps.spec import SEED_AXIS, SweepSpec

    spec = SweepSpec.from_dict(tables(betas, seeds, 0, "numba", False, method, rtol))
    cells = [spec.cell_parameters(index) for index in spec.cells()]
    step = max(1, len(cells) // sample)
    cells = cells[::step][:sample]
    X0 = np.stack([uniform_sphere(p["n"], p["d"], np.random.default_rng(spec.seed_sequence(p[SEED_AXIS])))
                   for p in cells])
    members = Members(beta=[p["beta"] for p in cells])
    ends = {}
    for name, solver, save in (
            ("run", Solver("rk4", dt=0.1, backend="numba") if method == "rk4" else
             Solver("dp5", rtol=rtol, atol=rtol * 1e-3, backend="numba", step="per-member"),
             SaveAt(every=500) if method == "rk4" else SaveAt(times=np.array([0.0, 50.0]))),
            ("reference", Solver("dp5", rtol=1e-11, atol=1e-13, backend="numba", step="per-member"),
             SaveAt(times=np.array([0.0, 50.0])))):
        ends[name] = simulate(Model("sa", 1.0), X0, 50.0, solver=solver, save=save, members=members).X[-1]
    err = np.abs(ends["run"] - ends["reference"]).max(axis=(1, 2))
    return {"sample": len(cells), "median": float(np.median(err)), "max": float(err.max()),
            "reference": "dp5 rtol 1e-11 atol 1e-13"}


def compare_stores(plain: str, decided: str) -> dict:
    """Cell by cell: the one-cluster verdicts and first times of the two stores, and the decision times."""
    import xarray as xr

    a, b = xr.open_zarr(plain), xr.open_zarr(decided)
    one_a, one_b = a["one_cluster"].values, b["one_cluster"].values
    first_a, first_b = a["time_to_one_cluster"].values, b["time_to_one_cluster"].values
    same_first = (first_a == first_b) | (np.isnan(first_a) & np.isnan(first_b))
    when = b["decision_time"].values
    done = (a["status"].values == 1) & (b["status"].values == 1)
    return {"cells": int(one_a.size), "cells_done_in_both": int(done.sum()),
            "verdicts_differ": int(np.sum(one_a != one_b)), "first_times_differ": int(np.sum(~same_first)),
            "decided_early": float(np.mean(np.isfinite(when))),
            "mean_decision_time": float(np.nanmean(when)) if np.isfinite(when).any() else None,
            "work_fraction": float(np.mean(np.where(np.isfinite(when), when, 50.0)) / 50.0),
            "p_one_cluster": float(one_a.mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--betas", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--block", type=int, default=0, help="cells per task (0: from the work estimate)")
    ap.add_argument("--scheduler", default="local")
    ap.add_argument("--backend", default="direct", choices=("direct", "numba"),
                    help="field backend of the ensembles (numba: the member kernel, equal to single runs within "
                         "rounding; default direct: the NumPy tiles, bit for bit)")
    ap.add_argument("--store", help="store path (default: a temporary folder, removed afterwards)")
    ap.add_argument("--stop-when-decided", action="store_true",
                    help="run it without and with stop_when_decided and compare the two stores cell by cell")
    ap.add_argument("--with-events", action="store_true",
                    help="one run, with stop_when_decided (no comparison run: for the 1e6 diagram)")
    ap.add_argument("--method", default="rk4", choices=("rk4", "dp5"),
                    help="rk4 at dt = 0.1 (the issue's diagram), or dp5 with per-member steps at --rtol")
    ap.add_argument("--rtol", type=float, default=1e-7, help="dp5's relative tolerance (atol = 1e-3 rtol)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.stop_when_decided:
        sys.exit(both_ways(args))
    from numerics.sweeps.runner import run_sweep
    from numerics.sweeps.store import count_files

    folder = None if args.store else tempfile.mkdtemp(prefix="bench-phase-")
    store = args.store or os.path.join(folder, "phase.zarr")
    load = os.getloadavg()
    start = time.perf_counter()
    try:
        spec = tables(args.betas, args.seeds, args.block, args.backend, args.with_events, args.method, args.rtol)
        report = run_sweep(spec, store, scheduler=args.scheduler, workers=args.workers)
        wall = time.perf_counter() - start
        import xarray as xr

        ds = xr.open_zarr(store)
        p = ds["one_cluster"].values.mean(axis=-1)
        betas = ds["beta"].values
        files = count_files(store)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    picks = np.linspace(0, len(betas) - 1, min(6, len(betas))).astype(int)
    acc = accuracy(args.betas, args.seeds, args.method, args.rtol)
    out = {"cells": args.betas * args.seeds, "wall_seconds": wall, "method": _label(args), "accuracy": acc,
           "setup_seconds": report.setup_seconds, "cells_per_second": report.computed / wall,
           "stop_when_decided": args.with_events, "files": files, "block": report.block, "tasks": report.tasks,
           "counts": report.counts, "workers": args.workers, "scheduler": args.scheduler, "backend": args.backend,
           "p_one_cluster": {f"{betas[i]:.3g}": float(p[i]) for i in picks},
           "load_average_before": load, "load_average_after": os.getloadavg(), "cores": os.cpu_count()}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{out['cells']} trajectories (n=32, d=2, t=50, {_label(args)}, backend {args.backend}"
          f"{', stopping when decided' if args.with_events else ''}) on {args.workers} {args.scheduler} workers: "
          f"{wall:.1f} s wall ({report.setup_seconds:.1f} s set-up), {out['cells_per_second']:.1f} cells/s; "
          f"{report.tasks} tasks of {report.block} cells; {files} files in the store")
    print(_accuracy_line(out["accuracy"]))
    print("P(one cluster at t = 50): " + ", ".join(f"beta {b}: {v:.2f}" for b, v in out["p_one_cluster"].items()))
    print(f"load average before {load[0]:.1f}, after {out['load_average_after'][0]:.1f} on {os.cpu_count()} cores "
          "(shared machine: noisy)")


def _label(args) -> str:
    return "rk4 dt=0.1" if args.method == "rk4" else f"dp5 per-member steps, rtol {args.rtol:g}"


def _accuracy_line(acc: dict) -> str:
    return (f"accuracy: final-state error {acc['median']:.1e} median, {acc['max']:.1e} max over {acc['sample']} "
            f"sampled cells (against {acc['reference']})")


def both_ways(args) -> int:
    """The phase diagram without, then with, stop_when_decided; the stores compared cell by cell."""
    from numerics.sweeps.runner import run_sweep

    folder = tempfile.mkdtemp(prefix="bench-phase-")
    base = args.store or folder
    stores = {"plain": os.path.join(base, "plain.zarr"), "decided": os.path.join(base, "decided.zarr")}
    walls = {}
    try:
        for name, stop in (("plain", False), ("decided", True)):
            start = time.perf_counter()
            run_sweep(tables(args.betas, args.seeds, args.block, args.backend, stop, args.method, args.rtol), stores[name],
                      scheduler=args.scheduler, workers=args.workers)
            walls[name] = time.perf_counter() - start
        out = {**compare_stores(stores["plain"], stores["decided"]), "wall_seconds": walls, "method": _label(args),
               "accuracy": accuracy(args.betas, args.seeds, args.method, args.rtol),
               "speedup": walls["plain"] / walls["decided"], "workers": args.workers, "scheduler": args.scheduler,
               "backend": args.backend, "load_average": os.getloadavg(), "cores": os.cpu_count()}
    finally:
        if not args.store:
            shutil.rmtree(folder, ignore_errors=True)
    same = out["verdicts_differ"] == 0 and out["first_times_differ"] == 0 and out["cells_done_in_both"] == out["cells"]
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{out['cells']} trajectories (n=32, d=2, t=50, {_label(args)}, backend {args.backend}) on {args.workers} "
              f"{args.scheduler} workers: {walls['plain']:.1f} s wall to the end, {walls['decided']:.1f} s stopping "
              f"when decided ({out['speedup']:.2f}x)")
        print(_accuracy_line(out["accuracy"]))
        print(f"decided early: {out['decided_early']:.1%} of the cells (mean decision time "
              f"{out['mean_decision_time'] or float('nan'):.1f}; member-steps {out['work_fraction']:.1%} of the run to "
              f"the end); P(one cluster) {out['p_one_cluster']:.3f}")
        print(f"stores cell by cell: {out['verdicts_differ']} verdicts and {out['first_times_differ']} first times "
              f"differ ({'same decided outcome for every member' if same else 'MISMATCH'})")
    return 0 if same else 1


if __name__ == "__main__":
    main()
