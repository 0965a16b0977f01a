"""Sweeps on Dask: the same sweep in-process, on a local cluster of processes and on a real ``dask scheduler``
with two ``dask worker`` processes (started here on 127.0.0.1 with free ports) gives identical stores; a worker
killed mid-sweep and a driver killed mid-sweep lose and duplicate nothing.

Cluster start-up costs 10-30 s on a loaded machine, so every test that starts Dask processes is marked slow
(``pytest -m slow``); the in-process tests of test_sweeps.py and tests/cli/test_sweep_cli.py run by default.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("zarr")

from numerics.sweeps.runner import resume_sweep, run_sweep  # noqa: E402
from numerics.sweeps.store import open_store  # noqa: E402
from tests.numerics.sweep_helpers import (TINY, LocalDaskCluster, assert_same_store, done_cells, quiet,  # noqa: E402
                                          start, stop, synchronous_store, wait_until)

TIMEOUT = 600  # seconds: a hang guard only, generous (the machine is shared)

#: cells long enough (~0.2-0.5 s each) that a kill lands mid-sweep
SLOWER = {
    "model": {"model": "sa", "d": 3},
    "sweep": {"beta": [1.0, 3.0, 6.0], "n": [48, 64], "seeds": 4},
    "run": {"t_end": 15.0, "dt": 0.05, "frames": 6, "root_seed": 5},
    "observables": {"clusters": {"eps": 1e-2}, "one_cluster": {"eps": 1e-2}, "order_parameter": {}},
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return synchronous_store(tmp_path_factory, TINY, "sync")


@pytest.fixture(scope="module")
def slower_reference(tmp_path_factory):
    return synchronous_store(tmp_path_factory, SLOWER, "slower")


@pytest.mark.slow
def test_local_processes_equal_in_process(reference, tmp_path):
    report = run_sweep(TINY, tmp_path / "local.zarr", scheduler="local", workers=2, progress=quiet)
    assert report.counts == {"pending": 0, "done": 8, "failed": 0}
    assert_same_store(tmp_path / "local.zarr", reference)
    # closing the cluster is timed apart from the blocks (and is part of the sweep's seconds)
    assert 0 < report.teardown_seconds < report.seconds - report.setup_seconds
    assert report.to_dict()["teardown_seconds"] == report.teardown_seconds


@pytest.mark.slow
def test_three_schedulers_give_identical_stores(reference, tmp_path):
    """synchronous (the fixture), local processes, and a real scheduler with two workers on 127.0.0.1."""
    run_sweep(TINY, tmp_path / "local.zarr", scheduler="local", workers=2, progress=quiet)
    with LocalDaskCluster(tmp_path) as cluster:
        report = run_sweep(TINY, tmp_path / "tcp.zarr", scheduler=cluster.address, progress=quiet)
    assert report.counts["done"] == 8
    assert_same_store(tmp_path / "local.zarr", reference)
    assert_same_store(tmp_path / "tcp.zarr", reference)


def _cli(*args):
    return [sys.executable, "-m", "numerics.cli", "sweep", *args]


def _write_spec(tmp_path, tables) -> str:
    lines = []
    for table, values in tables.items():
        lines.append(f"[{table}]")
        for k, v in values.items():
            lines.append(f"{k} = {_toml(v)}")
    path = tmp_path / "spec.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _toml(v):
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)


@pytest.mark.slow
def test_worker_killed_mid_sweep(slower_reference, tmp_path):
    """SIGKILL one of two workers once a few cells are stored: the sweep completes, nothing lost or doubled."""
    spec = _write_spec(tmp_path, SLOWER)
    store = tmp_path / "killed.zarr"
    with LocalDaskCluster(tmp_path) as cluster:
        driver = start(_cli("run", spec, "--store", str(store), "--scheduler", cluster.address, "--json"),
                       open(tmp_path / "driver.log", "wb"))
        try:
            assert wait_until(lambda: done_cells(store) >= 3, TIMEOUT), (tmp_path / "driver.log").read_text()
            assert done_cells(store) < 24, "the sweep finished before the kill: make the cells longer"
            os.killpg(cluster.workers[0].pid, signal.SIGKILL)
            assert driver.wait(timeout=TIMEOUT) == 0, (tmp_path / "driver.log").read_text()
        finally:
            stop(driver)
    out = json.loads((tmp_path / "driver.log").read_text().strip().splitlines()[-1])
    assert out["counts"] == {"pending": 0, "done": 24, "failed": 0} and out["computed"] == 24
    assert_same_store(store, slower_reference)


@pytest.mark.slow
def test_driver_killed_then_resumed(slower_reference, tmp_path):
    """SIGKILL the driver (local cluster) mid-sweep; resume computes only the missing cells; same store."""
    spec = _write_spec(tmp_path, SLOWER)
    store = tmp_path / "driver.zarr"
    driver = start(_cli("run", spec, "--store", str(store), "--workers", "2"), open(tmp_path / "driver.log", "wb"))
    try:
        assert wait_until(lambda: done_cells(store) >= 4, TIMEOUT), (tmp_path / "driver.log").read_text()
    finally:
        stop(driver, signal.SIGKILL)
    before = open_store(store).counts()
    assert before["done"] < 24 and before["failed"] == 0
    report = resume_sweep(store, scheduler="local", workers=2, progress=quiet)
    assert report.computed == 24 - before["done"]
    assert report.counts == {"pending": 0, "done": 24, "failed": 0}
    assert_same_store(store, slower_reference)


# -- thread pinning and the in-worker slowdown ------------------------------------------------------------------
#: the probe of :func:`_temporary_faults` in a fresh process (run from the repository root)
FAULTS = ("import os; from tests.numerics.test_sweeps_dask import _temporary_faults; "
          "print(os.environ.get('MALLOC_TRIM_THRESHOLD_'), _temporary_faults())")


def _faults(env_extra: dict) -> tuple[str, int]:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", FAULTS], env=env, capture_output=True, text=True, timeout=600,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    setting, faults = out.stdout.split()[-2:]
    return setting, int(faults)


def test_dask_malloc_trim_setting_makes_page_faults_and_workers_drop_it():
    """Dask's default MALLOC_TRIM_THRESHOLD_=65536 fixes glibc's mmap threshold at 128 KiB: every temporary
    larger than that (numpy's n x n score matrices) is then a fresh mmap whose pages fault at first touch
    (measured as minor page faults, not time): 200 temporaries of 1.28 MB take 62,600 faults against 0 without
    the setting (2026-11-26). The local cluster's workers start without it (and with one BLAS thread, no
    profiler).

    The first version measured 20 evaluations of the n = 600 field instead of plain temporaries: 900 faults
    against 0 in a fresh shell, but 0 against 0 when pytest ran it in a worker of ``pytest -n 2`` (CI, cause
    not found; the field's tiles are reused buffers, so what it allocates per evaluation depends on the path)."""
    from numerics.sweeps.runner import LOCAL_WORKER_CONFIG

    (setting, trimmed), (_, plain) = _faults({"MALLOC_TRIM_THRESHOLD_": "65536"}), _faults({})
    assert setting == "65536"
    assert trimmed > 10 * max(plain, 20), (trimmed, plain)
    assert LOCAL_WORKER_CONFIG["distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"] is None
    assert LOCAL_WORKER_CONFIG["distributed.worker.profile.enabled"] is False
    assert LOCAL_WORKER_CONFIG["distributed.nanny.pre-spawn-environ.OPENBLAS_NUM_THREADS"] == 1


def test_local_worker_config_names_real_dask_settings():
    """Every key of the local cluster's settings is one of Dask's own (a misspelt key would be accepted by
    ``dask.config.set`` and do nothing), and the housekeeping timers are the slowed ones (an idle two-worker
    cluster: 0.12 cores busy with Dask's defaults, 0.021 with these; runner's comment)."""
    import dask
    import distributed  # noqa: F401 - loads the distributed defaults into dask.config

    from numerics.sweeps.runner import LOCAL_WORKER_CONFIG

    missing = object()
    for key in LOCAL_WORKER_CONFIG:
        if ".pre-spawn-environ." in key:       # free-form environment names under a real key
            key = key.split(".pre-spawn-environ.")[0] + ".pre-spawn-environ"
        assert dask.config.get(key, default=missing) is not missing, key
    for key, seconds in [("distributed.admin.tick.interval", 1), ("distributed.admin.system-monitor.interval", 5),
                         ("distributed.worker.memory.monitor-interval", 1)]:
        assert dask.utils.parse_timedelta(LOCAL_WORKER_CONFIG[key]) == seconds


def test_prepare_worker_pins_threads_and_records_them():
    from threadpoolctl import threadpool_info

    from numerics.sweeps import runner
    from numerics.sweeps.spec import SweepSpec

    try:
        record = runner.prepare_worker(SweepSpec.from_dict(TINY).to_json())
        assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {1}
        assert all(threads == 1 for _, threads in record["blas"])
    finally:
        if runner._PINNED:
            runner._PINNED.pop().restore_original_limits()


@pytest.mark.slow
def test_local_workers_are_pinned_and_do_not_fault(tmp_path):
    """What a worker of the local cluster runs under (the cause of the in-worker slowdown, issue 29): one BLAS
    thread, no malloc trimming, no profiler; and its allocator reuses freed memory: 200 temporaries of the size of
    an n = 400 score matrix (1.28 MB, what numpy allocates per field evaluation) take no page faults once warm,
    as in this process, while a worker with the trimming that Dask's nanny sets by default
    (MALLOC_TRIM_THRESHOLD_=65536, which also freezes glibc's mmap threshold at 128 KiB, so every such
    temporary is a fresh mmap) takes one fault per page of every temporary. Measured 2026-11-26: 0 (pinned
    worker and driver) against 62600 (trimming worker); bound 1000.

    The first version compared the page faults of a whole sweep block in the worker with those in this (warm)
    driver within 2x + 200; it failed for a correctly pinned worker (2142 against 0) and could not tell the
    trimming worker (1900-7600 per block) from the pinned one (1700-3100), so it was replaced by this probe."""
    report = run_sweep(SLOWER, tmp_path / "w.zarr", scheduler="local", workers=2, progress=quiet, block=4)
    assert len(report.worker_threads) == 2
    for t in report.worker_threads:
        assert t["blas"] and all(n == 1 for _, n in t["blas"]), t
        assert t["malloc_trim_threshold"] is None and t["dask_profiler"] is False, t
    from distributed import Client, LocalCluster

    import dask

    from numerics.sweeps.runner import LOCAL_WORKER_CONFIG

    def in_worker(config) -> int:
        with dask.config.set(config):
            with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                    Client(cluster) as client:
                return client.submit(_temporary_faults, pure=False).result()

    pinned = in_worker(LOCAL_WORKER_CONFIG)
    trimming = in_worker(dict(LOCAL_WORKER_CONFIG, **{
        "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": 65536}))
    here = _temporary_faults()
    bound = 1000   # 200 temporaries of 313 pages each: < 2 % of them faulting
    assert pinned <= bound and here <= bound, (pinned, here, trimming)
    assert trimming > bound, (pinned, here, trimming)


def _temporary_faults(count: int = 200, size: int = 160_000) -> int:
    """Minor page faults of ``count`` float64 temporaries of ``size`` elements, after one warm-up round."""
    import resource

    import numpy as np

    def round_() -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(count):
            a = np.ones(size)
            a *= 2.0
            del a
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    round_()
    return round_()
