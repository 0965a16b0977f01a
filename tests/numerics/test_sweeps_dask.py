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

import pytest

pytest.importorskip("distributed")
pytest.importorskip("zarr")

from numerics.sweeps.runner import resume_sweep, run_sweep  # noqa: E402
from numerics.sweeps.store import open_store  # noqa: E402
from tests.numerics.sweep_helpers import (TINY, LocalDaskCluster, assert_same_store, done_cells, quiet,  # noqa: E402
                                          start, stop, synchronous_store, wait_until)

TIMEOUT = 240  # seconds: generous, the machine is shared

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
