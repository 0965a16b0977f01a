r"""Running a sweep: one task per block of cells on Dask (a local cluster of processes, an existing cluster,
a SLURM cluster through dask-jobqueue, or in-process).

A *block* is a chunk of the store (:func:`numerics.sweeps.store.store_layout`): cells that differ only in :math:`\beta`,
the seed and the noise level, integrated as one ensemble (:func:`numerics.core.ensemble.simulate_ensemble`; a
cell whose model cannot be batched runs alone). The driver submits every block still to do, writes each result
into the store as one region as it arrives (in completion order; the store is keyed by cell, so the order does
not matter) and shows progress on stderr. Each cell is a pure function of the specification and its index:
the initial state comes from SeedSequence(root_seed, spawn_key=(seed,)), and every member of an ensemble equals
the single run bit for bit (its energies are computed by the ensemble's batched pair sums whatever the block
size), so the store does not depend on the scheduler, the number of workers, the block size or the order of
completion. A worker that dies is replaced by Dask and its blocks re-run elsewhere; an exception inside a block
is caught there: the block's cells are run one by one, and a cell that still fails is recorded in the store
(``status`` failed, ``error``).

Schedulers: ``synchronous`` (a loop in the calling process, no Dask), ``local`` (a ``distributed.LocalCluster``
of ``workers`` single-threaded processes started for the sweep and closed after it), ``slurm`` (``workers``
SLURM jobs of one single-threaded worker each, submitted with ``sbatch`` by ``dask_jobqueue.SLURMCluster``;
queue options in :class:`SlurmOptions`), ``tcp://HOST:PORT`` (an existing ``dask scheduler``; its workers need
attnflow installed).

Workers pin their threads: every worker process runs :func:`prepare_worker` before its first block, which limits
BLAS and OpenMP to one thread (``threadpoolctl``) and Numba to one thread, and each result records them. The local
cluster's workers also start without ``MALLOC_TRIM_THRESHOLD_`` (Dask sets it to 64 KiB by default, which fixes
glibc's mmap threshold at 128 KiB: every temporary array larger than that is then mapped and unmapped again,
thousands of page faults per cell) and without Dask's statistical profiler (a thread sampling the task's stack
every 10 ms); see ``docs/guide/sweeps.md`` (Scale) for the measurements.
"""
from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.core.integrators import ADAPTIVE_METHODS
from numerics.core.model import SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere
from numerics.sweeps.observables import DECISION_TIME, RunResult, evaluate
from numerics.sweeps.workers import check_local_workers
from numerics.sweeps.spec import SEED_AXIS, SweepSpec, spec_from
from numerics.sweeps.store import BATCH_AXES, SweepStore, create_store, open_store, store_lock, sweep_versions

SCHEDULERS = ("local", "synchronous", "slurm")


@functools.lru_cache(maxsize=8)
def _spec(spec_json: str) -> SweepSpec:
    from numerics.common.readers import parse_json

    return SweepSpec.from_dict(parse_json(spec_json, "the sweep specification", kind="JSON"))


@functools.lru_cache(maxsize=1)
def _versions() -> dict:
    return sweep_versions()


def noise_seed(spec: SweepSpec, seed: int) -> int:
    """The noise seed of a cell (used when the model has noise > 0): the first word of
    SeedSequence(root_seed, spawn_key=(seed, 1)), independent of the initial state's stream (spawn_key (seed,))
    and the same at every value of the other axes (common random numbers, as for the initial state)."""
    return int(np.random.SeedSequence(spec.run["root_seed"], spawn_key=(int(seed), 1)).generate_state(1)[0])


def _solver_and_save(spec: SweepSpec, seed: int = 0, batch: bool = False):
    run = spec.run
    # dp5 in a batch: each member takes its own steps, exactly its single run's. A cell's value then does not
    # depend on the cells that share its block (a shared step is the smallest any member needs), the plateaus of
    # large beta take long steps while a neighbour clusters, and decided members leave the batch.
    step = "per-member" if batch and run["method"] == "dp5" else "shared"
    solver = Solver(method=run["method"], dt=run["dt"], rtol=run["rtol"], atol=run["atol"], backend=run["backend"],
                    seed=seed, step=step)
    times = spec.frame_times()
    save = SaveAt(times=times) if run["method"] in ADAPTIVE_METHODS else SaveAt(every=spec.save_every())
    return solver, save, times


def _check_times(traj, times, t_end) -> None:
    if traj.times.shape != times.shape or not np.allclose(traj.times, times, rtol=0, atol=1e-9 * t_end):
        raise RuntimeError("the run saved other times than the store's time axis")


def ensemble_key(params: dict) -> str:
    """Cells with the same key can be integrated as one ensemble: equal in everything but beta, the seed and
    the noise level (noisy and noiseless cells run different integrators, so ``noise > 0`` is part of the key)."""
    shared = {k: v for k, v in params.items() if k not in BATCH_AXES}
    shared["noisy"] = float(params.get("noise") or 0.0) > 0
    return json.dumps(shared, sort_keys=True, default=str)


def simulate_cells(spec: SweepSpec, params_list: list[dict]):
    """``[(model, trajectory), ...]`` of cells that share :func:`ensemble_key`: one ensemble (each member equal to
    the single run bit for bit) when the model can be batched, else single runs."""
    from numerics.core.ensemble import Members, check_batchable, member

    models = [spec.build_model(p) for p in params_list]
    first = params_list[0]
    n, d = first["n"], first["d"]
    run = spec.run
    seeds = [noise_seed(spec, p[SEED_AXIS]) for p in params_list]
    try:
        check_batchable(models[0], run["backend"])
        batchable = models[0].kernel is None
    except InputError:
        batchable = False
    if not batchable:
        return [simulate_cell(spec, p) for p in params_list]
    base = spec.build_model({**first, "noise": 0.0}) if models[0].noise > 0 else models[0]
    noisy = models[0].noise > 0
    X0 = np.stack([uniform_sphere(n, d, np.random.default_rng(spec.seed_sequence(p[SEED_AXIS])))
                   for p in params_list])
    solver, save, times = _solver_and_save(spec, batch=True)
    members = Members(beta=[m.beta for m in models], noise=[m.noise for m in models] if noisy else None, seeds=seeds)
    traj = simulate(base, X0, run["t_end"], solver=solver, save=save, members=members, events=spec.event())
    _check_times(traj, times, run["t_end"])
    return [(m, _decided(member(traj, b), traj.meta, b)) for b, m in enumerate(models)]


def _decided(traj, meta: dict, b: int):
    """``traj`` with ``meta["decision_time"]``: member b's decision time in the run's ``meta["events"]`` (NaN:
    not decided, or no event)."""
    times = (meta.get("events") or {}).get("times")
    t = None if times is None else times[b]
    traj.meta["decision_time"] = math.nan if t is None else float(t)
    return traj


def simulate_cell(spec: SweepSpec, params: dict):
    """The trajectory of one cell run alone (models that an ensemble cannot batch: user kernels, the Fourier
    and Numba backends)."""
    model = spec.build_model(params)
    n, d = params["n"], params["d"]
    X0 = uniform_sphere(n, d, np.random.default_rng(spec.seed_sequence(params[SEED_AXIS])))
    solver, save, times = _solver_and_save(spec, noise_seed(spec, params[SEED_AXIS]))
    traj = simulate(model, X0, spec.run["t_end"], solver=solver, save=save, events=spec.event())
    _check_times(traj, times, spec.run["t_end"])
    return model, _decided(traj, traj.meta, 0)


def worker_threads() -> dict:
    """The thread pools of this process (BLAS and OpenMP through threadpoolctl, Numba) and the allocator and
    profiler settings that slow numerical tasks down: recorded with every result."""
    from threadpoolctl import threadpool_info

    out = {"pid": os.getpid(),
           "blas": sorted({(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()}),
           "malloc_trim_threshold": os.environ.get("MALLOC_TRIM_THRESHOLD_")}
    numba = sys.modules.get("numba")
    if numba is not None:
        out["numba"] = int(numba.get_num_threads())
    try:
        import dask

        out["dask_profiler"] = dask.config.get("distributed.worker.profile.enabled", default=None)
    except ImportError:
        pass
    out["blas"] = [list(p) for p in out["blas"]]
    return out


_PINNED = []


def pin_threads() -> None:
    """One BLAS/OpenMP thread (threadpoolctl, kept for the life of the process) and one Numba thread."""
    if not _PINNED:
        from threadpoolctl import threadpool_limits

        _PINNED.append(threadpool_limits(limits=1))
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.set_num_threads(1)


def prepare_worker(spec_json: str) -> dict:
    """Pin the worker's threads, import attnflow and parse the specification (before the timed blocks; cached);
    returns :func:`worker_threads`."""
    pin_threads()
    _spec(spec_json)
    _versions()
    return worker_threads()


def _failure(index, exc) -> dict:
    message = " ".join(str(exc).split()) or "(no message)"
    return {"index": tuple(index), "error": f"{type(exc).__name__}: {message}"}


def run_cell(spec_json: str, index: tuple[int, ...]) -> dict:
    """Run one cell and evaluate its observables; an exception is returned as ``error`` (never raised)."""
    return run_block(spec_json, [tuple(index)])[0]


def run_block(spec_json: str, indices: list) -> list[dict]:
    """Run a block of cells (ensembles of the cells that share :func:`ensemble_key`) and evaluate their
    observables; a block that raises is run again cell by cell, and a cell's exception is returned as its
    ``error`` (never raised). ``seconds`` is each cell's share of its ensemble's wall time."""
    versions = {**_versions(), "threads": worker_threads()}
    out = []
    try:
        spec = _spec(spec_json)
        params = [spec.cell_parameters(i) for i in indices]
    except Exception as exc:  # noqa: BLE001 - recorded in the store, the sweep goes on
        return [dict(_failure(i, exc), versions=versions, seconds=math.nan) for i in indices]
    groups: dict = {}
    for index, p in zip(indices, params):
        groups.setdefault(ensemble_key(p), []).append((tuple(index), p))
    for members in groups.values():
        out += _run_group(spec, members, versions)
    return out


def _run_group(spec: SweepSpec, members: list, versions: dict) -> list[dict]:
    start = time.perf_counter()
    try:
        runs = simulate_cells(spec, [p for _, p in members])
        results = [{"index": index, "values": _values(spec, m, p, t)} for (index, p), (m, t) in zip(members, runs)]
    except Exception as exc:  # noqa: BLE001
        if len(members) == 1:
            results = [_failure(members[0][0], exc)]
        else:  # isolate the failing cell(s): the others complete
            return [r for one in members for r in _run_group(spec, [one], versions)]
    share = (time.perf_counter() - start) / len(members)
    return [dict(r, versions=versions, seconds=share) for r in results]


def _values(spec: SweepSpec, model, params: dict, traj) -> dict:
    """The observables of one cell, and its decision time when the sweep stops runs once decided."""
    values = evaluate(spec.observables, RunResult(traj.times, traj.X, traj.energy, model, params))
    if spec.run["stop_when_decided"]:
        values[DECISION_TIME.name] = float(traj.meta.get("decision_time", math.nan))
    return values


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
class SlurmOptions:
    """Queue options of ``--scheduler slurm`` (passed to ``dask_jobqueue.SLURMCluster``; one single-threaded
    worker per job, ``workers`` jobs).

    Parameters
    ----------
    queue : str, optional
        The partition (``sbatch -p``); default: the cluster's default partition.
    walltime : str
        Time limit of each worker job (``HH:MM:SS``).
    memory : str
        Memory of each worker job (``"2GiB"``).
    account : str, optional
        ``sbatch -A``.
    job_extra : tuple of str
        More ``#SBATCH`` lines (``"--qos=short"``).
    """

    queue: str | None = None
    walltime: str = "01:00:00"
    memory: str = "2GiB"
    account: str | None = None
    job_extra: tuple = field(default_factory=tuple)
    log_directory: str | None = None
    #: address the sweep's Dask scheduler listens on (default: the machine's own; 127.0.0.1 for a one-node SLURM)
    scheduler_host: str | None = None


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
    block: int = 1
    tasks: int = 0
    worker_threads: list = field(default_factory=list)
    teardown_seconds: float = 0.0  # closing the local or SLURM cluster after the last block (part of ``seconds``)

    def to_dict(self) -> dict:
        return {"store": self.store, "scheduler": self.scheduler, "workers": self.workers,
                "computed": self.computed, "failed_now": self.failed_now, "counts": self.counts,
                "seconds": self.seconds, "setup_seconds": self.setup_seconds,
                "teardown_seconds": self.teardown_seconds, "block": self.block,
                "tasks": self.tasks, "worker_threads": self.worker_threads,
                "cells_per_second": self.computed / self.seconds if self.seconds else None}


def check_scheduler(scheduler: str) -> str:
    if scheduler in SCHEDULERS or (scheduler.startswith("tcp://") and len(scheduler) > 6):
        return scheduler
    raise InputError(f"scheduler must be local, synchronous, slurm or tcp://HOST:PORT, got {scheduler!r}")


def run_sweep(spec, store, *, scheduler: str = "local", workers: int = 2, progress: Callable | None = None,
              block: int | None = None, slurm: SlurmOptions | None = None) -> SweepReport:
    """Create the store ``store`` for ``spec`` (a :class:`SweepSpec`, tables, TOML text or path) and run it.

    Parameters
    ----------
    spec : SweepSpec, dict, str or path
        The specification (:mod:`numerics.sweeps.spec`).
    store : path
        The Zarr store to create (must not exist; use :func:`resume_sweep` to continue one).
    scheduler : {"local", "synchronous", "slurm"} or "tcp://HOST:PORT"
        Where the blocks run (see the module docstring).
    workers : int
        Processes of the ``local`` cluster, jobs of the ``slurm`` one (ignored otherwise).
    progress : callable, optional
        ``progress(done, failed, final=False)`` in cells; default :class:`SweepProgress` on stderr.
    block : int, optional
        Cells per task (one ensemble); default ``[run] block`` or the work estimate (:meth:`SweepSpec.block`).
    slurm : SlurmOptions, optional
        Queue options of the ``slurm`` scheduler.
    """
    scheduler = check_scheduler(scheduler)
    workers = check_local_workers(workers, scheduler)
    spec = spec_from(spec)
    if block is not None:
        block = require_int(block, "block", minimum=1)
    _check_engine(scheduler)
    start = time.perf_counter()
    sweep_store = create_store(store, spec, block)
    with store_lock(store):
        return _execute(sweep_store, sweep_store.todo(), scheduler, workers, progress, start, slurm)


def resume_sweep(store, *, scheduler: str = "local", workers: int = 2, retry_failed: bool = False,
                 progress: Callable | None = None, repair: bool = False,
                 slurm: SlurmOptions | None = None) -> SweepReport:
    """Run the cells of an existing store that are pending (and the failed ones with ``retry_failed``).

    A store that is missing, foreign or damaged raises :class:`InputError` before anything is written; with
    ``repair``, unreadable shards are deleted first and their cells (and those of missing shards) run again.
    The store is locked while it runs (:func:`numerics.sweeps.store.store_lock`): a second resume of the same
    store is refused.
    """
    scheduler = check_scheduler(scheduler)
    workers = check_local_workers(workers, scheduler)
    _check_engine(scheduler)
    start = time.perf_counter()
    if not any(os.path.isfile(os.path.join(store, meta)) for meta in ("zarr.json", ".zgroup")):
        open_store(store)  # its one-line refusal (not a store): nothing, not even a lock, written in a foreign folder
    with store_lock(store):  # before the repair, which writes
        sweep_store = open_store(store, repair=repair)
        return _execute(sweep_store, sweep_store.todo(retry_failed), scheduler, workers, progress, start, slurm)


def _check_engine(scheduler: str) -> None:
    if scheduler == "synchronous":
        return
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ModuleNotFoundError as exc:
        raise InputError(f"scheduler {scheduler} needs {exc.name}: pip install 'attnflow[sweeps]' "
                         "(or use --scheduler synchronous)") from None
    if scheduler == "slurm":
        try:
            import dask_jobqueue  # noqa: F401
        except ModuleNotFoundError:
            raise InputError("scheduler slurm needs dask-jobqueue: pip install 'attnflow[sweeps]'") from None
        import shutil

        if shutil.which("sbatch") is None:
            raise InputError("scheduler slurm needs the SLURM commands (sbatch, squeue, scancel) on PATH; none found")


def _execute(store: SweepStore, cells: list, scheduler: str, workers: int, progress, start: float,
             slurm: SlurmOptions | None = None) -> SweepReport:
    """Run ``cells`` block by block and record them; ``setup_seconds`` counts opening or creating the store
    (since ``start``) and starting or reaching the Dask cluster."""
    setup = [time.perf_counter() - start]
    progress = progress or SweepProgress(len(cells))
    spec_json = store.spec.to_json()
    blocks = store.blocks(cells)
    done = failed = 0
    threads: list = []
    teardown = 0.0

    def record(results):
        nonlocal done, failed
        store.write_block(results)
        done += len(results)
        failed += sum(bool(r.get("error")) for r in results)
        progress(done, failed)

    if blocks:
        if scheduler == "synchronous":
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1):  # as a worker, but only for the sweep (this is the caller's process)
                threads.append(worker_threads())
                for block in blocks:
                    record(run_block(spec_json, block))
        else:
            seconds, threads, teardown = _run_distributed(spec_json, blocks, scheduler, workers, record, slurm)
            setup.append(seconds)
        progress(done, failed, final=True)
    return SweepReport(str(store.path), scheduler, workers if scheduler in ("local", "slurm") else None, done, failed,
                       store.counts(), time.perf_counter() - start, sum(setup), store.block, len(blocks), threads,
                       teardown)


#: Dask settings of the local cluster's workers (see the module docstring): no malloc trimming, no profiler,
#: one BLAS/OpenMP thread from the start; and slower housekeeping timers. With Dask's defaults (event-loop tick
#: every 20 ms, system monitor every 500 ms, memory monitor every 100 ms, the client's scheduler info every 2 s,
#: the cluster's repr every 500 ms) an idle local cluster of two workers kept 0.12 cores busy (driver 0.066,
#: workers 0.027 and 0.030; measured with psutil over 10 s), which two busy workers on two cores pay as lost
#: throughput; with the values below 0.021 cores. None of them change what is computed: the tick only measures
#: event-loop latency, the monitors feed the dashboard and the memory limit (checked every second instead).
LOCAL_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.nanny.pre-spawn-environ.OMP_NUM_THREADS": 1,
                       "distributed.nanny.pre-spawn-environ.OPENBLAS_NUM_THREADS": 1,
                       "distributed.nanny.pre-spawn-environ.MKL_NUM_THREADS": 1,
                       "distributed.worker.profile.enabled": False,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.admin.system-monitor.interval": "5s",
                       "distributed.worker.memory.monitor-interval": "1s",
                       "distributed.deploy.cluster-repr-interval": "5s",
                       "distributed.client.scheduler-info-interval": "10s"}


def _cluster(scheduler: str, workers: int, slurm: SlurmOptions | None):
    import logging

    if scheduler == "local":
        from distributed import LocalCluster

        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                            silence_logs=logging.ERROR)
    from dask_jobqueue import SLURMCluster

    opts = slurm or SlurmOptions()
    cluster = SLURMCluster(cores=1, processes=1, memory=opts.memory, walltime=opts.walltime, queue=opts.queue,
                           account=opts.account, python=sys.executable,
                           job_extra_directives=list(opts.job_extra),
                           job_script_prologue=[f"export {v}=1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                                           "MKL_NUM_THREADS")],
                           log_directory=opts.log_directory,
                           scheduler_options={"dashboard_address": None,
                                              **({"host": opts.scheduler_host} if opts.scheduler_host else {})},
                           worker_extra_args=["--nthreads", "1"])
    cluster.scale(jobs=workers)
    return cluster


def _run_distributed(spec_json: str, blocks: list, scheduler: str, workers: int, record,
                     slurm: SlurmOptions | None = None) -> tuple[float, list, float]:
    """Run the blocks on Dask; returns the seconds spent starting (or reaching) the cluster, the workers'
    thread records and the seconds spent closing the cluster."""
    import logging

    import dask
    from distributed import Client, as_completed

    cluster = None
    started = time.perf_counter()
    teardown = 0.0
    try:
        with dask.config.set(LOCAL_WORKER_CONFIG):
            if scheduler in ("local", "slurm"):
                cluster = _cluster(scheduler, workers, slurm)
                client = Client(cluster)
            else:
                try:
                    client = Client(scheduler, timeout="30s")
                except OSError as exc:
                    raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            if scheduler in ("local", "slurm"):
                client.wait_for_workers(workers)
            threads = list(client.run(prepare_worker, spec_json).values())  # pins and imports, counted as set-up
            setup = time.perf_counter() - started
            token = f"{abs(hash(spec_json)):x}-{time.time_ns():x}"
            futures = [client.submit(run_block, spec_json, block, key=f"attnflow-block-{token}-"
                                     + "-".join(map(str, block[0])), pure=False) for block in blocks]
            where = {f.key: block for f, block in zip(futures, blocks)}
            for fut in as_completed(futures):
                try:
                    results = fut.result()
                except Exception as exc:  # e.g. KilledWorker: the block crashed its worker repeatedly
                    results = [{"index": index, "error": f"{type(exc).__name__}: {exc}", "seconds": math.nan,
                                "versions": {}} for index in where[fut.key]]
                record(results)
                fut.release()
    finally:
        if cluster is not None:
            nanny = logging.getLogger("distributed.nanny")
            level = nanny.level
            nanny.setLevel(logging.ERROR)  # "worker still alive after 4 s, killing" on a loaded machine: expected
            closing = time.perf_counter()
            try:
                cluster.close()
            finally:
                nanny.setLevel(level)
                teardown = time.perf_counter() - closing
    return setup, threads, teardown
