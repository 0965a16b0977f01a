"""Running a sweep: one task per cell on Dask (a local cluster of processes, an existing cluster, or in-process).

The driver submits every cell still to do, writes each result into the store as it arrives (in completion
order; the store is keyed by cell, so the order does not matter) and shows progress on stderr. Each cell is a
pure function of the specification and its index (:func:`run_cell`): the initial state comes from
SeedSequence(root_seed, spawn_key=(seed,)), so the store does not depend on the scheduler, the number of
workers or the order of completion. A worker that dies is replaced by Dask and its cells re-run elsewhere; an
exception inside a cell is caught there and recorded in the store (``status`` failed, ``error``).

Schedulers: ``synchronous`` (a loop in the calling process, no Dask), ``local`` (a
``distributed.LocalCluster`` of ``workers`` single-threaded processes started for the sweep and closed after
it), ``tcp://HOST:PORT`` (an existing ``dask scheduler``; its workers need attnflow installed).
"""
from __future__ import annotations

import functools
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.core.integrators import ADAPTIVE_METHODS
from numerics.core.model import SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere
from numerics.sweeps.observables import RunResult, evaluate
from numerics.sweeps.workers import check_local_workers
from numerics.sweeps.spec import SEED_AXIS, SweepSpec, spec_from
from numerics.sweeps.store import SweepStore, create_store, open_store, sweep_versions

SCHEDULERS = ("local", "synchronous")


@functools.lru_cache(maxsize=8)
def _spec(spec_json: str) -> SweepSpec:
    return SweepSpec.from_dict(json.loads(spec_json))


@functools.lru_cache(maxsize=1)
def _versions() -> dict:
    return sweep_versions()


def noise_seed(spec: SweepSpec, seed: int) -> int:
    """The noise seed of a cell (used when the model has noise > 0): the first word of
    SeedSequence(root_seed, spawn_key=(seed, 1)), independent of the initial state's stream (spawn_key (seed,))
    and the same at every value of the other axes (common random numbers, as for the initial state)."""
    return int(np.random.SeedSequence(spec.run["root_seed"], spawn_key=(int(seed), 1)).generate_state(1)[0])


def simulate_cell(spec: SweepSpec, params: dict):
    """The trajectory of one cell (its model, n, d and seed index in ``params``)."""
    model = spec.build_model(params)
    n, d = params["n"], params["d"]
    X0 = uniform_sphere(n, d, np.random.default_rng(spec.seed_sequence(params[SEED_AXIS])))
    run = spec.run
    solver = Solver(method=run["method"], dt=run["dt"], rtol=run["rtol"], atol=run["atol"],
                    backend=run["backend"], seed=noise_seed(spec, params[SEED_AXIS]))
    times = spec.frame_times()
    save = SaveAt(times=times) if run["method"] in ADAPTIVE_METHODS else SaveAt(every=spec.save_every())
    traj = simulate(model, X0, run["t_end"], solver=solver, save=save)
    if traj.times.shape != times.shape or not np.allclose(traj.times, times, rtol=0, atol=1e-9 * run["t_end"]):
        raise RuntimeError("the run saved other times than the store's time axis")
    return model, traj


def prepare_worker(spec_json: str) -> None:
    """Import attnflow and parse the specification on a worker (before the timed cells; the parse is cached)."""
    _spec(spec_json)
    _versions()


def run_cell(spec_json: str, index: tuple[int, ...]) -> dict:
    """Run one cell and evaluate its observables; an exception is returned as ``error`` (never raised)."""
    start = time.perf_counter()
    out = {"index": tuple(index), "versions": _versions()}
    try:
        spec = _spec(spec_json)
        params = spec.cell_parameters(index)
        model, traj = simulate_cell(spec, params)
        out["values"] = evaluate(spec.observables, RunResult(traj.times, traj.X, traj.energy, model, params))
    except Exception as exc:  # recorded in the store, the sweep goes on
        message = " ".join(str(exc).split()) or "(no message)"
        out["error"] = f"{type(exc).__name__}: {message}"
    out["seconds"] = time.perf_counter() - start
    return out


class SweepProgress:
    """``sweep: 12/40 cells (1 failed)  0.85 cells/s  elapsed 14.1s  eta 32.9s`` on stderr, at most every
    ``every`` seconds after the first ``delay`` seconds."""

    def __init__(self, total: int, delay: float = 2.0, every: float = 2.0, stream=None):
        self.total, self.delay, self.every = total, delay, every
        self.stream = stream if stream is not None else sys.stderr
        self.start = self.last = time.perf_counter()
        self.shown = -1

    def __call__(self, done: int, failed: int, final: bool = False) -> None:
        now = time.perf_counter()
        if not final and (now - self.start < self.delay or now - self.last < self.every):
            return
        if final and (now - self.start < self.delay or self.shown == done):
            return
        self.last, self.shown = now, done
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else math.nan
        eta = (self.total - done) / rate if rate > 0 else math.nan
        print(f"sweep: {done}/{self.total} cells ({failed} failed)  {rate:.3g} cells/s  elapsed {elapsed:.1f}s  "
              f"eta {eta:.1f}s", file=self.stream, flush=True)


@dataclass(frozen=True)
class SweepReport:
    """What a run or resume did: cells computed now, the store's counts afterwards, timings."""

    store: str
    scheduler: str
    workers: int | None
    computed: int
    failed_now: int
    counts: dict
    seconds: float
    setup_seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"store": self.store, "scheduler": self.scheduler, "workers": self.workers,
                "computed": self.computed, "failed_now": self.failed_now, "counts": self.counts,
                "seconds": self.seconds, "setup_seconds": self.setup_seconds,
                "cells_per_second": self.computed / self.seconds if self.seconds else None}


def check_scheduler(scheduler: str) -> str:
    if scheduler in SCHEDULERS or (scheduler.startswith("tcp://") and len(scheduler) > 6):
        return scheduler
    raise InputError(f"scheduler must be local, synchronous or tcp://HOST:PORT, got {scheduler!r}")


def run_sweep(spec, store, *, scheduler: str = "local", workers: int = 2,
              progress: Callable | None = None) -> SweepReport:
    """Create the store ``store`` for ``spec`` (a :class:`SweepSpec`, tables, TOML text or path) and run it.

    Parameters
    ----------
    spec : SweepSpec, dict, str or path
        The specification (:mod:`numerics.sweeps.spec`).
    store : path
        The Zarr store to create (must not exist; use :func:`resume_sweep` to continue one).
    scheduler : {"local", "synchronous"} or "tcp://HOST:PORT"
        Where the cells run (see the module docstring).
    workers : int
        Processes of the ``local`` cluster (ignored otherwise).
    progress : callable, optional
        ``progress(done, failed, final=False)``; default :class:`SweepProgress` on stderr.
    """
    scheduler = check_scheduler(scheduler)
    workers = check_local_workers(workers, scheduler)
    spec = spec_from(spec)
    _check_engine(scheduler)
    start = time.perf_counter()
    sweep_store = create_store(store, spec)
    return _execute(sweep_store, sweep_store.todo(), scheduler, workers, progress, start)


def resume_sweep(store, *, scheduler: str = "local", workers: int = 2, retry_failed: bool = False,
                 progress: Callable | None = None) -> SweepReport:
    """Run the cells of an existing store that are pending (and the failed ones with ``retry_failed``).

    A store that is missing, foreign or damaged raises :class:`InputError` before anything is written.
    """
    scheduler = check_scheduler(scheduler)
    workers = check_local_workers(workers, scheduler)
    _check_engine(scheduler)
    start = time.perf_counter()
    sweep_store = open_store(store)
    return _execute(sweep_store, sweep_store.todo(retry_failed), scheduler, workers, progress, start)


def _check_engine(scheduler: str) -> None:
    if scheduler == "synchronous":
        return
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ModuleNotFoundError as exc:
        raise InputError(f"scheduler {scheduler} needs {exc.name}: pip install 'attnflow[sweeps]' "
                         "(or use --scheduler synchronous)") from None


def _execute(store: SweepStore, cells: list, scheduler: str, workers: int, progress, start: float) -> SweepReport:
    """Run ``cells`` and record them; ``setup_seconds`` counts opening or creating the store (since ``start``)
    and starting or reaching the Dask cluster."""
    setup = [time.perf_counter() - start]
    progress = progress or SweepProgress(len(cells))
    spec_json = store.spec.to_json()
    done = failed = 0

    def record(result):
        nonlocal done, failed
        store.write_cell(result["index"], result)
        done += 1
        failed += bool(result.get("error"))
        progress(done, failed)

    if cells:
        if scheduler == "synchronous":
            for index in cells:
                record(run_cell(spec_json, index))
        else:
            setup.append(_run_distributed(spec_json, cells, scheduler, workers, record))
        progress(done, failed, final=True)
    return SweepReport(str(store.path), scheduler, workers if scheduler == "local" else None, done, failed,
                       store.counts(), time.perf_counter() - start, sum(setup))


def _run_distributed(spec_json: str, cells: list, scheduler: str, workers: int, record) -> float:
    """Run the cells on Dask; returns the seconds spent starting (or reaching) the cluster."""
    import logging

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    started = time.perf_counter()
    try:
        if scheduler == "local":
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout="30s")
            except OSError as exc:
                raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            if scheduler == "local":
                client.wait_for_workers(workers)
            client.run(prepare_worker, spec_json)  # imports on every worker, counted as set-up
            setup = time.perf_counter() - started
            token = f"{abs(hash(spec_json)):x}-{time.time_ns():x}"
            futures = [client.submit(run_cell, spec_json, index, key=f"attnflow-cell-{token}-"
                                     + "-".join(map(str, index)), pure=False) for index in cells]
            where = {f.key: index for f, index in zip(futures, cells)}
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as exc:  # e.g. KilledWorker: the cell crashed its worker repeatedly
                    result = {"index": where[fut.key], "error": f"{type(exc).__name__}: {exc}",
                              "seconds": math.nan, "versions": {}}
                record(result)
                fut.release()
    finally:
        if cluster is not None:
            nanny = logging.getLogger("distributed.nanny")
            level = nanny.level
            nanny.setLevel(logging.ERROR)  # "worker still alive after 4 s, killing" on a loaded machine: expected
            try:
                cluster.close()
            finally:
                nanny.setLevel(level)
    return setup
