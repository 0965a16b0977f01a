"""Shared helpers of the sweep tests: small specifications, store contents, a real Dask cluster on localhost."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

MINIMAL_TOML = """\
[model]
model = "sa"
d = 2
[sweep]
beta = [1.0, 4.0]
n = [16, 32]
seeds = 3
[run]
t_end = 20.0
[observables]
clusters = { eps = 1e-3 }
"""

#: a tiny sweep with several outputs, one of them over time (runs in well under a second in-process)
TINY = {
    "model": {"model": "sa", "d": 2},
    "sweep": {"beta": [1.0, 5.0], "n": [6, 9], "seeds": 2},
    "run": {"t_end": 3.0, "dt": 0.1, "frames": 7, "root_seed": 11},
    "observables": {"clusters": {"eps": 1e-2}, "one_cluster": {"eps": 0.5}, "order_parameter": {}},
}

#: compared between stores (timings and versions legitimately differ between runs)
COMPARED = ("clusters", "one_cluster", "time_to_one_cluster", "order_parameter", "order_parameter_t", "status",
            "error", "seed_entropy")




def tiny(**changes) -> dict:
    """A copy of :data:`TINY` with some entries of its tables changed (``tiny(run={"t_end": 2})``)."""
    spec = json.loads(json.dumps(TINY))
    for table, values in changes.items():
        spec[table].update(values)
    return spec

def quiet(*args, **kwargs):
    """A progress callback that shows nothing."""
    return None


def synchronous_store(tmp_path_factory, tables, name: str):
    """The store of ``tables`` run in-process (the reference the other schedulers are compared with)."""
    from numerics.sweeps.runner import run_sweep

    path = tmp_path_factory.mktemp("sweep") / f"{name}.zarr"
    run_sweep(tables, path, scheduler="synchronous", progress=quiet)
    return path


def store_contents(path) -> dict:
    """The compared variables and the coordinates of a store, as NumPy arrays."""
    import xarray as xr

    ds = xr.open_zarr(str(path)).load()
    out = {name: np.asarray(ds[name].values) for name in COMPARED if name in ds}
    out.update({f"coord:{name}": np.asarray(ds[name].values) for name in ds.coords})
    return out


def assert_same_store(a, b) -> None:
    ca, cb = store_contents(a), store_contents(b)
    assert sorted(ca) == sorted(cb)
    for name in ca:
        x, y = ca[name], cb[name]
        if x.dtype.kind in "fc":
            np.testing.assert_array_equal(x, y, err_msg=name)  # bitwise: same seeds, same code path
        else:
            assert (x.astype(object) == y.astype(object)).all(), name


def tree_digest(path) -> str:
    """A digest of every file (path and bytes) under ``path``: shows that nothing was written."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_bin() -> str:
    return str(Path(sys.executable).with_name("dask"))


def start(cmd, log) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
    """Stop a process started by :func:`start` and its children (its own session), then reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


class LocalDaskCluster:
    """``dask scheduler`` and ``workers`` x ``dask worker`` (one process, one thread each) on 127.0.0.1 with
    free ports; stopped on exit."""

    def __init__(self, tmp_path, workers: int = 2, timeout: float = 600.0):
        self.tmp = Path(tmp_path)
        self.workers_wanted = workers
        self.timeout = timeout
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []

    def __enter__(self):
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        log = open(self.tmp / "scheduler.log", "wb")
        self.procs.append(start([dask_bin(), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                 "--no-dashboard", "--no-show"], log))
        for k in range(self.workers_wanted):
            wlog = open(self.tmp / f"worker{k}.log", "wb")
            w = start([dask_bin(), "worker", self.address, "--nworkers", "1", "--nthreads", "1", "--no-nanny",
                       "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{k}"], wlog)
            self.procs.append(w)
            self.workers.append(w)
        self.wait_for_workers(self.workers_wanted)
        return self

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=f"{int(self.timeout)}s") as client:
            client.wait_for_workers(count, timeout=self.timeout)

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            stop(p)


def wait_until(predicate, timeout: float, every: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(every)
    return False


def done_cells(path) -> int:
    """Cells marked done in a store being written (reads the status chunks directly; 0 if not there yet)."""
    import zarr

    try:
        return int((np.asarray(zarr.open_group(str(path), mode="r")["status"][...]) == 1).sum())
    except Exception:
        return 0
