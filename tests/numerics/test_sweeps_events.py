"""Sweeps that stop each run once its observables are decided (``[run] stop_when_decided = true``).

- the store with events agrees with the store without, cell by cell (one-cluster verdict, first time), and
  records each cell's decision time (NaN for runs integrated to t_end);
- the phase-diagram benchmark's comparison (benchmarks/bench_phase_diagram.py --stop-when-decided) on a reduced
  grid;
- refusals, one line each: an observable without an event, a noise axis (the lemma does not hold), a method
  without fixed or per-member steps, a non-boolean flag.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from numerics.common.errors import InputError  # noqa: E402
from numerics.sweeps.runner import run_sweep  # noqa: E402
from numerics.sweeps.spec import SweepSpec  # noqa: E402
from tests.numerics.sweep_helpers import quiet  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def tables(stop: bool, method: str = "rk4", **run) -> dict:
    return {"model": {"model": "sa", "d": 2, "n": 10},
            "sweep": {"beta": [0.5, 2.0, 9.0], "seeds": 4},
            "run": {"t_end": 20.0, "dt": 0.1, "frames": 5, "root_seed": 3, "method": method,
                    "stop_when_decided": stop, **run},
            "observables": {"one_cluster": {"eps": 1e-2}}}


@pytest.mark.parametrize("method, extra", [("rk4", {}), ("dp5", {"rtol": 1e-6, "atol": 1e-9})])
def test_stores_with_and_without_events_agree(tmp_path, method, extra):
    run_sweep(tables(False, method, **extra), tmp_path / "a.zarr", scheduler="synchronous", progress=quiet)
    run_sweep(tables(True, method, **extra), tmp_path / "b.zarr", scheduler="synchronous", progress=quiet)
    a, b = xr.open_zarr(tmp_path / "a.zarr"), xr.open_zarr(tmp_path / "b.zarr")
    assert "decision_time" in b and "decision_time" not in a
    assert np.all(a["status"].values == 1) and np.all(b["status"].values == 1)
    assert np.array_equal(a["one_cluster"].values, b["one_cluster"].values)
    assert np.array_equal(a["time_to_one_cluster"].values, b["time_to_one_cluster"].values, equal_nan=True)
    when = b["decision_time"].values
    decided = np.isfinite(when)
    assert 0 < decided.sum() < when.size
    assert np.all(b["one_cluster"].values[decided] == 1.0) and np.all((when[decided] > 0) & (when[decided] <= 20))
    # a decided cell has one cluster at the first saved time after its decision (frames every 5 time units)
    first = b["time_to_one_cluster"].values[decided]
    assert np.all(first <= np.ceil(when[decided] / 5.0) * 5.0 + 1e-9)


def test_bench_comparison_reduced(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_phase_diagram as bench

    for name, stop in (("plain", False), ("decided", True)):
        t = bench.tables(3, 4, 0, stop=stop)
        t["run"]["t_end"] = 20.0
        run_sweep(t, tmp_path / f"{name}.zarr", scheduler="synchronous", progress=quiet)
    out = bench.compare_stores(str(tmp_path / "plain.zarr"), str(tmp_path / "decided.zarr"))
    assert out["cells"] == out["cells_done_in_both"] == 12
    assert out["verdicts_differ"] == 0 and out["first_times_differ"] == 0 and out["decided_early"] > 0


@pytest.mark.parametrize("change, words", [
    ({"observables": {"one_cluster": {"eps": 1e-2}, "energy": {}}}, "observable energy declares no event"),
    ({"sweep": {"beta": [1.0], "noise": [0.0, 0.1], "seeds": 1}}, "noise"),
    ({"model": {"model": "sa", "d": 2, "n": 10, "V": [[2.0, 0.0], [0.0, 1.0]]}}, "V != I"),
    ({"run": {"t_end": 5.0, "method": "dop853", "stop_when_decided": True}}, "per-member steps"),
    ({"run": {"t_end": 5.0, "stop_when_decided": "yes"}}, "must be true or false"),
])
def test_refusals(change, words):
    t = tables(True)
    t.update(change)
    with pytest.raises(InputError, match=words) as info:
        SweepSpec.from_dict(t)
    assert "\n" not in str(info.value)


def test_cluster_observables_share_the_smallest_eps(tmp_path):
    """clusters, cluster_counts, first_merge and one_cluster all declare one-cluster; the run stops on the
    smallest eps, and every output equals the run to the end's."""
    obs = {"one_cluster": {"eps": 0.5}, "clusters": {"eps": 1e-2, "min_fraction": 0.2},
           "cluster_counts": {"eps": 2e-2}, "first_merge": {"eps": 1e-2}}
    t_plain, t_cut = tables(False), tables(True)
    t_plain["observables"] = t_cut["observables"] = obs
    assert SweepSpec.from_dict(t_cut).event().to_meta() == "one-cluster:0.01"
    run_sweep(t_plain, tmp_path / "a.zarr", scheduler="synchronous", progress=quiet)
    run_sweep(t_cut, tmp_path / "b.zarr", scheduler="synchronous", progress=quiet)
    a, b = xr.open_zarr(tmp_path / "a.zarr"), xr.open_zarr(tmp_path / "b.zarr")
    assert np.isfinite(b["decision_time"].values).any()
    for name in ("one_cluster", "time_to_one_cluster", "clusters", "cluster_counts", "first_merge_time"):
        assert np.array_equal(a[name].values, b[name].values, equal_nan=True), name


def test_spec_without_the_flag_is_unchanged():
    spec = SweepSpec.from_dict(tables(False))
    assert spec.event() is None and spec.run["stop_when_decided"] is False
    assert SweepSpec.from_dict(tables(True)).event().to_meta() == "one-cluster:0.01"


def test_store_reopens_and_resumes_with_its_decision_times(tmp_path):
    from numerics.sweeps.runner import resume_sweep
    from numerics.sweeps.store import open_store

    path = tmp_path / "b.zarr"
    run_sweep(tables(True), path, scheduler="synchronous", progress=quiet)
    store = open_store(path)
    assert "decision_time" in [o.name for o in store.outputs] and store.spec.run["stop_when_decided"] is True
    report = resume_sweep(path, scheduler="synchronous", progress=quiet)
    assert report.computed == 0 and report.counts.get("done") == 12


def test_dp5_cells_do_not_depend_on_their_block(tmp_path):
    """dp5 in a batch takes per-member steps: a store run in blocks of 2 equals one run in one block of 12, cell
    by cell and bit for bit (with a shared step, each cell's steps were the smallest of its block's)."""
    t = tables(False, "dp5", rtol=1e-6, atol=1e-9)
    t["observables"] = {"one_cluster": {"eps": 1e-2}, "energy": {}}
    run_sweep(t, tmp_path / "a.zarr", scheduler="synchronous", progress=quiet, block=2)
    run_sweep(t, tmp_path / "b.zarr", scheduler="synchronous", progress=quiet, block=12)
    a, b = xr.open_zarr(tmp_path / "a.zarr"), xr.open_zarr(tmp_path / "b.zarr")
    compared = [name for name in a.data_vars if np.issubdtype(a[name].dtype, np.floating) and name != "seconds"]
    assert {"one_cluster", "time_to_one_cluster", "energy"} <= set(compared), compared
    for name in compared:
        assert np.array_equal(a[name].values, b[name].values, equal_nan=True), name
