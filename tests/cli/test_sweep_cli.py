"""CLI: attnflow sweep run|resume|status|plot|observables (in-process, synchronous scheduler, tiny sweeps)."""
import json

import numpy as np
import pytest

pytest.importorskip("xarray")
pytest.importorskip("zarr")

from tests.cli.helpers import bad, run_json  # noqa: E402
from tests.numerics.sweep_helpers import MINIMAL_TOML, tree_digest  # noqa: E402


@pytest.fixture(scope="module")
def minimal_store(tmp_path_factory):
    """The issue's minimal specification, as written, run in-process."""
    import xarray as xr
    from numerics.cli import main

    folder = tmp_path_factory.mktemp("cli")
    (folder / "spec.toml").write_text(MINIMAL_TOML)
    store = folder / "out.zarr"
    assert main(["sweep", "run", str(folder / "spec.toml"), "--store", str(store), "--scheduler",
                 "synchronous"]) == 0
    ds = xr.open_zarr(str(store))
    assert ds["clusters"].dims == ("beta", "n", "seed") and ds["clusters"].shape == (2, 2, 3)
    assert np.isfinite(ds["clusters"].values).all() and (ds["clusters"].values >= 1).all()
    return store


def test_status_and_resume(capsys, minimal_store):
    capsys.readouterr()
    status = run_json(capsys, ["sweep", "status", str(minimal_store)])
    assert status["counts"] == {"pending": 0, "done": 12, "failed": 0}
    assert status["dims"] == {"beta": 2, "n": 2, "seed": 3} and status["outputs"] == ["clusters"]
    before = tree_digest(minimal_store)
    report = run_json(capsys, ["sweep", "resume", str(minimal_store), "--scheduler", "synchronous"])
    assert report["computed"] == 0 and tree_digest(minimal_store) == before


def test_plots(capsys, minimal_store, tmp_path):
    capsys.readouterr()
    out = run_json(capsys, ["sweep", "plot", str(minimal_store), "--x", "beta", "--y", "n", "--value", "clusters",
                            "--out", str(tmp_path / "pd.png")])
    assert out["kind"] == "phase diagram" and (tmp_path / "pd.png").stat().st_size > 1000
    out = run_json(capsys, ["sweep", "plot", str(minimal_store), "--x", "beta", "--hue", "n", "--value",
                            "clusters", "--out", str(tmp_path / "c.png")])
    assert out["kind"] == "curves" and (tmp_path / "c.png").stat().st_size > 1000


def test_observables_listing(capsys):
    out = run_json(capsys, ["sweep", "observables"])["observables"]
    assert {"clusters", "one_cluster", "metastable_clusters", "energy"} <= set(out)
    assert out["one_cluster"]["outputs"][0]["name"] == "one_cluster"


def test_bad_input(capsys, minimal_store, tmp_path):
    (tmp_path / "bad.toml").write_text(MINIMAL_TOML.replace('model = "sa"', 'model = "sa"\ntemperature = 2'))
    assert "valid keys" in bad(capsys, ["sweep", "run", str(tmp_path / "bad.toml"), "--store",
                                        str(tmp_path / "b.zarr"), "--scheduler", "synchronous"])
    assert not (tmp_path / "b.zarr").exists()
    (tmp_path / "good.toml").write_text(MINIMAL_TOML)
    before = tree_digest(minimal_store)
    assert "already exists" in bad(capsys, ["sweep", "run", str(tmp_path / "good.toml"), "--store", str(minimal_store),
                                            "--scheduler", "synchronous"])
    assert tree_digest(minimal_store) == before
    (tmp_path / "x.zarr").mkdir()
    (tmp_path / "x.zarr" / "data.bin").write_bytes(b"\0" * 16)
    assert "not a Zarr store" in bad(capsys, ["sweep", "resume", str(tmp_path / "x.zarr")])
    assert (tmp_path / "x.zarr" / "data.bin").read_bytes() == b"\0" * 16
    assert "scheduler must be" in bad(capsys, ["sweep", "resume", str(minimal_store), "--scheduler", "mpi"])
    assert "several values" in bad(capsys, ["sweep", "plot", str(minimal_store), "--x", "beta", "--value",
                                            "clusters"])
    assert "not a 0/1 output" in bad(capsys, ["sweep", "plot", str(minimal_store), "--x", "beta", "--y", "n",
                                              "--value", "p_clusters"])
    assert "cannot read" in bad(capsys, ["sweep", "run", str(tmp_path / "missing.toml"), "--store",
                                         str(tmp_path / "m.zarr")])


def test_absurd_sweeps_are_refused_before_any_run(capsys, tmp_path):
    """Total work: cells x steps x 4 stages x n^2 (2d + 8); memory: the frames of one run."""
    huge = MINIMAL_TOML.replace("n = [16, 32]", "n = [16, 100000]")
    (tmp_path / "huge.toml").write_text(huge)
    line = bad(capsys, ["sweep", "run", str(tmp_path / "huge.toml"), "--store", str(tmp_path / "h.zarr"),
                        "--scheduler", "synchronous"])
    assert "the sweep (12 runs, n <= 100000, d <= 2)" in line and "would take about" in line
    assert not (tmp_path / "h.zarr").exists()
    frames = MINIMAL_TOML.replace("t_end = 20.0", "t_end = 20.0\nframes = 100000000")
    (tmp_path / "frames.toml").write_text(frames)
    line = bad(capsys, ["sweep", "run", str(tmp_path / "frames.toml"), "--store", str(tmp_path / "f.zarr"),
                        "--scheduler", "synchronous"])
    assert "100000000 frames of one run" in line and "of memory" in line


def test_missing_extra_is_named(capsys, monkeypatch, tmp_path):
    """Without the sweeps extra the command says what to install (exit 2, no traceback)."""
    import builtins

    real_import = builtins.__import__

    def no_zarr(name, *args, **kwargs):
        if name.split(".")[0] in ("zarr", "xarray"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    (tmp_path / "spec.toml").write_text(MINIMAL_TOML)
    monkeypatch.setattr(builtins, "__import__", no_zarr)
    line = bad(capsys, ["sweep", "run", str(tmp_path / "spec.toml"), "--store", str(tmp_path / "o.zarr"),
                        "--scheduler", "synchronous"])
    assert "pip install 'attnflow[sweeps]'" in line
    json.dumps(line)


def test_block_and_convert_options(capsys, minimal_store, tmp_path):
    """--block and sweep convert: bad values refused with one line before anything is written."""
    (tmp_path / "good.toml").write_text(MINIMAL_TOML)
    for value, message in (("0", "block must be >= 1"), ("-3", "block must be >= 1")):
        assert message in bad(capsys, ["sweep", "run", str(tmp_path / "good.toml"), "--store",
                                       str(tmp_path / "b.zarr"), "--scheduler", "synchronous", "--block", value])
    huge = MINIMAL_TOML.replace("t_end = 20.0", "t_end = 20.0\nblock = 100000000000")
    (tmp_path / "huge.toml").write_text(huge)
    assert "of memory" in bad(capsys, ["sweep", "run", str(tmp_path / "huge.toml"), "--store",
                                       str(tmp_path / "h.zarr"), "--scheduler", "synchronous"])
    assert not (tmp_path / "b.zarr").exists() and not (tmp_path / "h.zarr").exists()
    assert "is not a sweep store" in bad(capsys, ["sweep", "convert", str(tmp_path / "none.zarr"), "--out",
                                                  str(tmp_path / "c.zarr")])
    before = tree_digest(minimal_store)
    assert "is the input store" in bad(capsys, ["sweep", "convert", str(minimal_store), "--out", str(minimal_store)])
    assert tree_digest(minimal_store) == before
    out = run_json(capsys, ["sweep", "convert", str(minimal_store), "--out", str(tmp_path / "copy.zarr")])
    assert out["counts"] == {"pending": 0, "done": 12, "failed": 0} and out["target_format"] == "attnflow-sweep/2"
