"""Sweep stores and specifications attacked by an independent review (issue 43): a deleted shard, two resumes
of one store, a store whose spec names code, garbage and hostile specs. Bad input ends with one ``error:``
line and exit 2, and no file changes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("xarray")
pytest.importorskip("zarr")

from numerics.cli import main  # noqa: E402
from numerics.common.errors import InputError  # noqa: E402
from numerics.sweeps.runner import resume_sweep  # noqa: E402
from numerics.sweeps.spec import SweepSpec  # noqa: E402
from numerics.sweeps.store import LOCK_NAME, open_store, store_lock  # noqa: E402
from tests.cli.helpers import bad  # noqa: E402
from tests.numerics.sweep_helpers import (TINY, assert_same_store, quiet, synchronous_store,  # noqa: E402
                                          tiny, tree_digest)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return synchronous_store(tmp_path_factory, TINY, "ref")


def _copy(reference, tmp_path, name="s.zarr"):
    path = tmp_path / name
    shutil.copytree(reference, path)
    return path


# -- a deleted shard ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variable", ["clusters", "time_to_one_cluster", "order_parameter_t", "seconds", "versions"])
def test_a_deleted_shard_is_seen_refused_and_repaired(reference, tmp_path, capsys, variable):
    """`time_to_one_cluster` is NaN in every cell of this sweep: its shard exists all the same (written with
    its fill values), so that its deletion is seen too."""
    path = _copy(reference, tmp_path)
    shard = next(p for p in (path / variable / "c").rglob("*") if p.is_file())
    shard.unlink()
    before = tree_digest(path)
    for argv in (["sweep", "status", str(path)], ["sweep", "convert", str(path), "--out", str(tmp_path / "c.zarr")],
                 ["sweep", "resume", str(path), "--scheduler", "synchronous"]):
        line = bad(capsys, argv)
        assert "missing shard" in line and f"{variable}/c/" in line and "--repair" in line, line
        assert tree_digest(path) == before
    assert not (tmp_path / "c.zarr").exists()
    report = resume_sweep(path, scheduler="synchronous", progress=quiet, repair=True)
    assert report.computed == 8 and report.counts == {"pending": 0, "done": 8, "failed": 0}
    assert_same_store(path, reference)
    assert open_store(path).counts()["done"] == 8


def test_a_deleted_chunk_of_a_format_1_store_is_seen_and_repaired(reference, tmp_path, capsys):
    """Stores of format 1 (one file per cell): a done cell's lost `seconds` chunk is seen the same way."""
    from numerics.sweeps.store import create_legacy_store

    old = tmp_path / "old.zarr"
    create_legacy_store(old, SweepSpec.from_dict(TINY))
    resume_sweep(old, scheduler="synchronous", progress=quiet)
    (old / "seconds" / "0.1.1").unlink()
    before = tree_digest(old)
    line = bad(capsys, ["sweep", "convert", str(old), "--out", str(tmp_path / "new.zarr")])
    assert "1 missing shard(s), first seconds/0.1.1" in line, line
    assert tree_digest(old) == before and not (tmp_path / "new.zarr").exists()
    report = resume_sweep(old, scheduler="synchronous", progress=quiet, repair=True)
    assert report.computed == 1 and report.counts["done"] == 8
    assert_same_store(old, reference)


def test_a_finished_store_has_every_shard(reference):
    """The premise of the check: every variable written by a run has its shard on disk, NaN-only ones too."""
    for name in ("clusters", "one_cluster", "time_to_one_cluster", "order_parameter", "order_parameter_t",
                 "seconds", "versions", "status"):
        assert any(p.is_file() for p in (reference / name / "c").rglob("*")), name


# -- the lock -------------------------------------------------------------------------------------------------
def test_a_second_resume_of_a_running_store_is_refused(reference, tmp_path, capsys):
    path = _copy(reference, tmp_path)
    with store_lock(path) as lock:
        held = lock.read_bytes()
        line = bad(capsys, ["sweep", "resume", str(path), "--scheduler", "synchronous"])
        assert f"being run by process {os.getpid()}" in line, line
        assert lock.read_bytes() == held
    assert not (path / LOCK_NAME).exists()


def test_a_stale_lock_is_reported_and_taken_over(reference, tmp_path, capsys):
    """The lock file of a killed driver (its pid written, its flock gone with it): the next resume says so in
    one line and runs; the lock file is gone at the end."""
    import socket

    import zarr

    path = _copy(reference, tmp_path)
    zarr.open_array(str(path / "status"), mode="r+")[0, 0, 0] = 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (path / LOCK_NAME).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname()}))
    assert main(["sweep", "resume", str(path), "--scheduler", "synchronous", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["computed"] == 1
    stale = [line for line in err.splitlines() if "stale lock" in line]
    assert len(stale) == 1 and f"process {dead.pid}" in stale[0], err
    assert not (path / LOCK_NAME).exists()
    assert_same_store(path, reference)


def test_two_resumes_at_once_run_each_cell_once(reference, tmp_path):
    """Two processes resume one store whose cells are all pending: one runs them, the other is refused."""
    path = _copy(reference, tmp_path)
    import zarr

    status = zarr.open_array(str(path / "status"), mode="r+")
    status[...] = 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path))
    cmd = [sys.executable, "-m", "numerics", "sweep", "resume", str(path), "--scheduler", "synchronous", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in results)
    computed = [json.loads(out)["computed"] for code, out, _ in results if code == 0]
    refused = [err for code, _, err in results if code == 2]
    # either one was refused while the other ran, or the second started after the first had finished
    assert codes in ([0, 2], [0, 0]), results
    assert sum(computed) == 8, results
    assert all("being run by process" in err for err in refused), refused
    assert_same_store(path, reference)


# -- reading a store runs no code -----------------------------------------------------------------------------
MODULE = """
import os
from numerics.sweeps.observables import Output, observable

open(os.environ["ATTNFLOW_TEST_MARKER"], "a").write("imported\\n")

@observable("marker_mean_x", [Output("marker_mean_x", "mean first coordinate at t_end")])
def mean_x(run):
    return {"marker_mean_x": float(run.X[-1][:, 0].mean())}
"""


def test_reading_a_store_imports_nothing_it_names(tmp_path):
    """status and convert read the stored spec as data: the module it names (which writes a marker file when
    imported) is not imported; the user observable's output is copied all the same."""
    (tmp_path / "marker_module.py").write_text(textwrap.dedent(MODULE))
    marker = tmp_path / "marker.txt"
    env = dict(os.environ, ATTNFLOW_TEST_MARKER=str(marker),
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.getcwd()] + sys.path))
    spec = tiny(run={"imports": ["marker_module"]}, observables={"marker_mean_x": {}, "clusters": {}})
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    store = tmp_path / "m.zarr"
    run = ("import json, sys; from numerics.sweeps.runner import run_sweep; "
           "run_sweep(json.load(open(sys.argv[1])), sys.argv[2], scheduler='synchronous', progress=lambda *a, **k: 0)")
    subprocess.run([sys.executable, "-c", run, str(spec_file), str(store)], env=env, check=True)
    assert marker.read_text() == "imported\n"  # running the sweep imports it (the run needs its observable)
    marker.unlink()
    cli = [sys.executable, "-m", "numerics", "sweep"]
    for argv in (["status", str(store), "--json"], ["convert", str(store), "--out", str(tmp_path / "c.zarr")]):
        done = subprocess.run(cli + argv, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), argv
    import xarray as xr

    a, b = xr.open_zarr(str(store)), xr.open_zarr(str(tmp_path / "c.zarr"))
    assert (a["marker_mean_x"].values == b["marker_mean_x"].values).all()
    assert "marker_module" not in sys.modules


# -- garbage and hostile stores -------------------------------------------------------------------------------
def _set_attr(path, key, value):
    meta = json.loads((path / "zarr.json").read_text())
    meta["attributes"][key] = value
    (path / "zarr.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("what", ["deep_spec", "deep_list_spec", "deep_fixed", "deep_zarr_json", "status_7"])
def test_hostile_store_is_refused_alike_by_status_resume_convert(reference, tmp_path, capsys, what):
    path = _copy(reference, tmp_path)
    if what == "deep_spec":
        _set_attr(path, "spec", '{"a":' * 100_000 + "1" + "}" * 100_000)
    elif what == "deep_list_spec":
        _set_attr(path, "spec", "[" * 100_000 + "]" * 100_000)
    elif what == "deep_fixed":  # read by sweep plot
        _set_attr(path, "fixed", "[" * 100_000 + "]" * 100_000)
    elif what == "deep_zarr_json":  # the metadata file itself, parsed by Zarr
        text = (path / "zarr.json").read_text()
        (path / "zarr.json").write_text(text[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        import numpy as np
        import zarr

        status = zarr.open_array(str(path / "status"), mode="r+")
        values = np.asarray(status[...])
        values[0, 0, 0] = 7
        status[...] = values
    before = tree_digest(path)
    commands = [["sweep", "status", str(path)], ["sweep", "resume", str(path), "--scheduler", "synchronous"],
                ["sweep", "resume", str(path), "--scheduler", "synchronous", "--repair"],
                ["sweep", "convert", str(path), "--out", str(tmp_path / "c.zarr")]]
    if what == "deep_fixed":
        commands = [["sweep", "plot", str(path), "--x", "beta", "--value", "clusters", "--sel", "n=6",
                     "--plot", str(tmp_path / "p.png")]]
    expected = {"deep_zarr_json": "is not a Zarr store written by attnflow sweep", "status_7": "status holds values"}
    for argv in commands:
        line = bad(capsys, argv)
        assert expected.get(what, "nested deeper") in line, line
        assert tree_digest(path) == before
    assert not (tmp_path / "c.zarr").exists()


# -- specifications -------------------------------------------------------------------------------------------
BAD_SPECS = [
    (dict(sweep={"noise": [0.0, float("nan")]}), "finite"),
    (dict(model={"noise": float("nan")}), "finite"),
    (dict(sweep={"noise": [0.0, 1e7]}), "noise must be <="),
    (dict(model={"noise": 1e9}), "noise must be <="),
    (dict(sweep={"beta": [1.0, float("inf")]}), "finite"),
    (dict(observables={"clusters": {"eps": float("nan")}}), "clusters: eps must be finite"),
    (dict(observables={"one_cluster": {"eps": float("inf")}}), "one_cluster: eps must be finite"),
    (dict(run={"method": "adaptive", "rtol": 1e-15}), "rtol must be >="),
    (dict(run={"method": "dop853", "rtol": 1e-300}), "rtol must be >="),
    (dict(run={"method": "adaptive", "t_end": 1e12}), "adaptive run to t_end = 1e+12"),
    (dict(run={"method": "dop853", "t_end": 1e12}), "adaptive run to t_end = 1e+12"),
    # a beta grid of 1e12 values asked for 7.3 TiB before any check (the review); at most 10^6 values an axis
    (dict(sweep={"beta": {"start": 0.1, "stop": 10.0, "num": 10**12}}), "beta.num must be <="),
]


def _toml_value(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(map(_toml_value, v)) + "]"
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, float) and abs(v) == float("inf"):
        return "inf" if v > 0 else "-inf"
    return json.dumps(v)


def _toml(spec: dict) -> str:
    """The tables of a spec as TOML (NaN and infinities spelled as TOML spells them)."""
    return "".join(f"[{table}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in rows.items())
                   for table, rows in spec.items())


@pytest.mark.parametrize("changes, message", BAD_SPECS, ids=[m for _, m in BAD_SPECS])
def test_bad_specs_are_refused_before_any_run(tmp_path, capsys, changes, message):
    spec = tiny(**changes)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("+", r"\+")):
        SweepSpec.from_dict(spec)
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(_toml(spec))
    stat = spec_file.stat()
    line = bad(capsys, ["sweep", "run", str(spec_file), "--store", str(tmp_path / "x.zarr"),
                        "--scheduler", "synchronous"])
    assert message.split(":")[-1].strip() in line, line
    assert not (tmp_path / "x.zarr").exists()
    assert spec_file.stat().st_mtime_ns == stat.st_mtime_ns


def test_reasonable_specs_stay_accepted():
    SweepSpec.from_dict(tiny(sweep={"noise": [0.0, 0.5, 1e6], "beta": [1.0], "n": [6]}))
    SweepSpec.from_dict(tiny(run={"method": "dop853", "rtol": 1e-13, "t_end": 1e3}))
    SweepSpec.from_dict(tiny(run={"method": "adaptive", "t_end": 1e4}))
