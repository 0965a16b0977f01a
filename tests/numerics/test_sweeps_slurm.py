"""A sweep through a real SLURM: the Debian packages slurm-wlm and munge on this machine, a controller
(``slurmctld``) and a node daemon (``slurmd``) on localhost started and stopped here, worker jobs submitted by
``attnflow sweep --scheduler slurm`` (dask-jobqueue); the store must equal the in-process one.

Slow (``pytest -m slow``). The packages are installed here when missing and ``apt-get`` is usable (as root);
otherwise the test is skipped with the reason. The daemons run as root with a configuration in a temporary
folder (``SLURM_CONF``), on free ports, without cgroups (``proctrack/linuxproc``, ``task/none``).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask_jobqueue")

from numerics.sweeps.runner import SlurmOptions, run_sweep  # noqa: E402
from tests.numerics.sweep_helpers import TINY, assert_same_store, free_port, quiet, start, stop, synchronous_store  # noqa: E402

PACKAGES = ("slurm-wlm", "munge")


def _installed() -> str | None:
    """None when slurmctld, slurmd, munged and sbatch are on PATH, else why they cannot be had."""
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "munged", "sbatch")):
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "the SLURM daemons are not installed and apt-get is not usable here (install slurm-wlm and munge)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "install", "-y", "-qq", *PACKAGES], ["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", *PACKAGES]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode == 0 and cmd[1] == "install":
            break
    if all(shutil.which(t) for t in ("slurmctld", "slurmd", "munged", "sbatch")):
        return None
    return f"apt-get could not install {' '.join(PACKAGES)}: {done.stderr.strip().splitlines()[-1:] or done.returncode}"


CONF = """\
ClusterName=attnflowtest
SlurmctldHost={host}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={host} CPUs={cpus} RealMemory=8192 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = _installed()
    if why:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (tmp / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = tmp / "slurm.conf"
    conf.write_text(CONF.format(host=host, ctld_port=free_port(), d_port=free_port(), tmp=tmp, cpus=os.cpu_count()))
    env = dict(os.environ, SLURM_CONF=str(conf))
    procs = []
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
        os.makedirs("/run/munge", exist_ok=True)
        if not os.path.exists("/etc/munge/munge.key"):
            subprocess.run(["mungekey", "--create"], check=False, capture_output=True)
        procs.append(start(["munged", "-F", "--force"], open(tmp / "munged.log", "wb")))
        time.sleep(1)
    procs.append(start(["slurmctld", "-D", "-f", str(conf)], open(tmp / "ctld.out", "wb")))
    time.sleep(2)
    procs.append(start(["slurmd", "-D", "-f", str(conf)], open(tmp / "d.out", "wb")))
    try:
        deadline = time.monotonic() + 600  # a hang guard: slurmd may start slowly on a loaded machine
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
            if state.returncode == 0 and state.stdout.strip().startswith("idle"):
                break
            time.sleep(1)
        else:
            logs = "\n".join((tmp / f).read_text()[-800:] for f in ("slurmctld.log", "slurmd.log")
                             if (tmp / f).exists())
            pytest.fail(f"the single-node SLURM did not come up: {state.stdout} {state.stderr}\n{logs}")
        yield env, tmp
    finally:
        subprocess.run(["scancel", "-u", "root"], env=env, capture_output=True)
        for proc in reversed(procs):
            stop(proc)


@pytest.mark.slow
def test_slurm_sweep_equals_in_process(slurm, tmp_path_factory, tmp_path, monkeypatch):
    env, tmp = slurm
    monkeypatch.setenv("SLURM_CONF", env["SLURM_CONF"])
    reference = synchronous_store(tmp_path_factory, TINY, "slurm-ref")
    options = SlurmOptions(walltime="00:10:00", memory="1GiB", log_directory=str(tmp / "jobs"),
                           scheduler_host="127.0.0.1")
    report = run_sweep(TINY, tmp_path / "slurm.zarr", scheduler="slurm", workers=2, progress=quiet, slurm=options)
    assert report.counts == {"pending": 0, "done": 8, "failed": 0}
    assert report.workers == 2 and all(t["blas"] == [["openblas", 1]] for t in report.worker_threads)
    assert_same_store(tmp_path / "slurm.zarr", reference)


def test_slurm_without_the_packages_is_one_line(monkeypatch, capsys, tmp_path):
    """--scheduler slurm without dask-jobqueue or without sbatch: one error line, exit 2, no store."""
    import builtins

    from numerics.cli import main
    from tests.numerics.sweep_helpers import MINIMAL_TOML

    spec = tmp_path / "s.toml"
    spec.write_text(MINIMAL_TOML)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["sweep", "run", str(spec), "--store", str(tmp_path / "a.zarr"), "--scheduler", "slurm"]) == 2
    err = capsys.readouterr().err
    assert "sbatch" in err and err.count("\n") == 1
    real_import = builtins.__import__

    def no_jobqueue(name, *args, **kwargs):
        if name == "dask_jobqueue":
            raise ModuleNotFoundError("No module named 'dask_jobqueue'", name="dask_jobqueue")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jobqueue)
    assert main(["sweep", "run", str(spec), "--store", str(tmp_path / "b.zarr"), "--scheduler", "slurm"]) == 2
    err = capsys.readouterr().err
    assert "dask-jobqueue" in err and err.count("\n") == 1
    assert not (tmp_path / "a.zarr").exists() and not (tmp_path / "b.zarr").exists()
    assert main(["sweep", "run", str(spec), "--store", str(tmp_path / "c.zarr"), "--scheduler", "synchronous",
                 "--queue", "debug"]) == 2
    assert "--queue apply to --scheduler slurm only" in capsys.readouterr().err
