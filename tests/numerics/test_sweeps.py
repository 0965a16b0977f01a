"""Sweeps: the specification, seeds, the Zarr store written cell by cell, resume, failures, plots.

The in-process tests are tiny (a few cells of a few particles). The three-scheduler comparison and the fault
tests that need Dask processes are in test_sweeps_dask.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from numerics.common.errors import InputError  # noqa: E402
from numerics.sweeps import runner  # noqa: E402
from numerics.sweeps.observables import RunResult, evaluate, persistent_value  # noqa: E402
from numerics.sweeps.plotting import aggregate, wilson_interval  # noqa: E402
from numerics.sweeps.runner import resume_sweep, run_sweep  # noqa: E402
from numerics.sweeps.spec import SweepSpec, model_fields  # noqa: E402
from numerics.sweeps.store import open_store  # noqa: E402
from tests.numerics.sweep_helpers import (MINIMAL_TOML, TINY, assert_same_store, quiet, store_contents,  # noqa: E402
                                          synchronous_store, tiny, tree_digest)

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return synchronous_store(tmp_path_factory, TINY, "ref")


# -- the specification ------------------------------------------------------------------------------------
def test_minimal_spec_of_the_issue(tmp_path):
    """The issue's minimal TOML, as written: a store with clusters over (beta, n, seed)."""
    spec = SweepSpec.from_toml(MINIMAL_TOML)
    assert spec.dims == ("beta", "n", "seed") and spec.shape == (2, 2, 3)
    assert spec.run["t_end"] == 20.0 and spec.observables == {"clusters": {"eps": 1e-3}}


def test_model_keys_are_passed_generically():
    """[model] takes every Model field ('model' for its kind) plus n and d; others are named in the error."""
    assert {"model", "beta", "Q", "K", "V", "kernel", "time_unit"} <= set(model_fields())
    with pytest.raises(InputError, match=r"unknown key 'temperature'.*valid keys: model, beta"):
        SweepSpec.from_dict(tiny(model={"temperature": 2}))
    # the fields other areas added to Model (noise, heads, ...) pass through generically
    noisy = SweepSpec.from_dict(tiny(sweep={"noise": [0.0, 0.1]}))
    assert "noise" in noisy.axes and noisy.axes["noise"] == [0.0, 0.1]
    spec = SweepSpec.from_dict(tiny(model={"Q": [[1.0, 0.0], [0.0, 2.0]], "time_unit": "natural"}))
    model = spec.build_model(spec.cell_parameters((0, 0, 0)))
    assert model.Q[1, 1] == 2.0 and model.kind == "sa" and model.beta == 1.0


def test_model_axis_and_ranges():
    tables = tiny()
    tables["model"] = {"d": 2}
    tables["sweep"] = {"model": ["sa", "usa"], "beta": {"start": 1, "stop": 4, "num": 4}, "n": [6, 9], "seeds": 2}
    spec = SweepSpec.from_dict(tables)
    assert spec.axes["beta"] == [1.0, 2.0, 3.0, 4.0] and spec.dims[-1] == "seed"
    assert spec.dims == ("model", "beta", "n", "seed") and spec.shape == (2, 4, 2, 2)
    assert spec.build_model(spec.cell_parameters((1, 0, 0, 0))).kind == "usa"

def test_bad_specs_are_input_errors():
    cases = [
        ({"run": {}}, "needs t_end"),
        ({"sweep": {"beta": []}}, "no values"),
        ({"sweep": {"beta": [1.0, 1.0]}}, "repeats"),
        ({"sweep": {"n": [0, 4]}}, "n must be >= 1"),
        ({"sweep": {"seeds": 0}}, "seeds must be >= 1"),
        ({"run": {"method": "euler"}}, "method must be one of"),
        ({"run": {"colour": 1}}, "unknown key"),
        ({"observables": {"nope": {}}}, "unknown observable 'nope'"),
        ({"observables": {"clusters": {"epsilon": 1}}}, "unknown parameter"),
        ({"model": {"model": "xx"}}, "model must be one of"),
    ]
    for change, message in cases:
        spec = tiny()
        for table, values in change.items():
            if table == "run" and not values:
                spec["run"].pop("t_end")
            elif table == "observables":
                spec["observables"] = values
            else:
                spec[table].update(values)
        with pytest.raises(InputError, match=message):
            SweepSpec.from_dict(spec)
    with pytest.raises(InputError, match="not valid TOML"):
        SweepSpec.from_toml("[model\nmodel = 'sa'")
    with pytest.raises(InputError, match="both fixed"):
        SweepSpec.from_dict(tiny(model={"beta": 2.0}))


def test_seeds_do_not_depend_on_order_or_other_cells():
    """The initial state of a cell is SeedSequence(root_seed, spawn_key=(seed,)): the same whatever else runs."""
    spec = SweepSpec.from_dict(TINY)
    a = np.random.default_rng(spec.seed_sequence(1)).standard_normal(4)
    b = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(1,))).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, np.random.default_rng(spec.seed_sequence(0)).standard_normal(4))
    one = runner.run_cell(spec.to_json(), (1, 1, 1))
    # the same cell inside a sweep with other axes values and more seeds gives the same numbers
    bigger = SweepSpec.from_dict(tiny(sweep={"beta": [0.5, 5.0, 7.0], "seeds": 4}))
    other = runner.run_cell(bigger.to_json(), (1, 1, 1))
    assert sorted(one["values"]) == sorted(other["values"])
    assert all(np.array_equal(one["values"][k], other["values"][k], equal_nan=True) for k in one["values"])


def test_frame_times_match_the_integrator():
    spec = SweepSpec.from_dict(tiny(run={"t_end": 1.05, "dt": 0.1, "frames": 4}))
    _, traj = runner.simulate_cell(spec, spec.cell_parameters((0, 0, 0)))
    np.testing.assert_allclose(traj.times, spec.frame_times(), rtol=0, atol=1e-12)
    spec = SweepSpec.from_dict(tiny(run={"method": "adaptive", "frames": 5}))
    _, traj = runner.simulate_cell(spec, spec.cell_parameters((0, 0, 0)))
    np.testing.assert_allclose(traj.times, np.linspace(0, 3.0, 5))


# -- observables ------------------------------------------------------------------------------------------
def test_observables_on_known_configurations():
    angles = np.array([0.0, 1e-4, 2.0, 2.0 + 1e-4])
    X = np.column_stack([np.cos(angles), np.sin(angles)])
    Xs = np.stack([np.column_stack([np.cos(40 * angles), np.sin(40 * angles)]), X, X[[0, 0, 0, 0]]])
    run = RunResult(np.array([0.0, 1.0, 2.0]), Xs, np.zeros(3), None, {})
    v = evaluate({"clusters": {"eps": 1e-3}, "one_cluster": {"eps": 1e-3}, "cluster_counts": {"eps": 1e-3},
                  "first_merge": {"eps": 1e-3}, "order_parameter": {}}, run)
    assert v["clusters"] == 1 and v["one_cluster"] == 1 and v["time_to_one_cluster"] == 2.0
    assert list(v["cluster_counts"]) == [4, 2, 1] and v["first_merge_time"] == 1.0
    np.testing.assert_allclose(v["order_parameter_t"][-1], 1.0)
    assert persistent_value([0, 1, 5, 6], [0, 2, 3, 3]) == 2.0   # 2 held for 4 time units, 3 for 1


def test_user_observable(tmp_path):
    from numerics.sweeps.observables import Output, _REGISTRY, observable

    @observable("test_mean_x", [Output("mean_x", "mean first coordinate at t_end")])
    def mean_x(run, scale=1.0):
        return {"mean_x": scale * float(run.X[-1][:, 0].mean())}

    try:
        spec = tiny(observables={"test_mean_x": {"scale": 2.0}})
        run_sweep(spec, tmp_path / "u.zarr", scheduler="synchronous", progress=quiet)
        ds = xr.open_zarr(str(tmp_path / "u.zarr"))
        assert ds["mean_x"].dims == ("beta", "n", "seed") and np.isfinite(ds["mean_x"].values).all()
    finally:
        _REGISTRY.pop("test_mean_x")


# -- the store ----------------------------------------------------------------------------------------------
def test_store_layout(reference):
    ds = xr.open_zarr(str(reference))
    assert ds["clusters"].dims == ("beta", "n", "seed")
    assert ds["order_parameter_t"].dims == ("beta", "n", "seed", "time")
    assert (ds["status"].values == 1).all() and (ds["error"].values.astype(object) == "").all()
    assert (ds["seed_entropy"].values == 11).all()
    assert ds.attrs["format"] == "attnflow-sweep/2"
    assert json.loads(ds.attrs["spec"])["sweep"]["seeds"] == [0, 1]
    assert "numpy" in json.loads(str(ds["versions"].values[0, 0, 0]))
    # the same cell computed alone gives the stored numbers
    spec = SweepSpec.from_dict(TINY)
    cell = runner.run_cell(spec.to_json(), (1, 0, 1))
    assert ds["clusters"].values[1, 0, 1] == cell["values"]["clusters"]


def test_run_refuses_an_existing_store(reference):
    before = tree_digest(reference)
    with pytest.raises(InputError, match="already exists"):
        run_sweep(TINY, reference, scheduler="synchronous", progress=quiet)
    assert tree_digest(reference) == before


def test_resume_of_a_finished_store_recomputes_nothing(reference, monkeypatch):
    before = tree_digest(reference)
    monkeypatch.setattr(runner, "run_cell", lambda *a: pytest.fail("a finished cell was recomputed"))
    report = resume_sweep(reference, scheduler="synchronous", progress=quiet)
    assert report.computed == 0 and report.counts == {"pending": 0, "done": 8, "failed": 0}
    assert tree_digest(reference) == before


def test_interrupted_driver_resumes_to_the_same_store(reference, tmp_path):
    """KeyboardInterrupt after 3 cells (two blocks of two written); resume computes exactly the 4 others; the
    store equals a full run."""
    calls = []
    real = runner.run_block

    def counting(spec_json, indices):
        calls.extend(tuple(i) for i in indices)
        return real(spec_json, indices)

    def interrupt(done, failed, final=False):
        if done >= 3:
            raise KeyboardInterrupt

    path = tmp_path / "int.zarr"
    runner_run_block = runner.run_block
    try:
        runner.run_block = counting
        with pytest.raises(KeyboardInterrupt):
            run_sweep(TINY, path, scheduler="synchronous", progress=interrupt)
        assert open_store(path).counts() == {"pending": 4, "done": 4, "failed": 0}  # two blocks of two cells
        first = list(calls)
        calls.clear()
        report = resume_sweep(path, scheduler="synchronous", progress=quiet)
    finally:
        runner.run_block = runner_run_block
    assert report.computed == 4 and not set(calls) & set(first) and len(set(calls)) == 4
    assert_same_store(path, reference)


def test_failed_cell_is_recorded_and_retried(reference, tmp_path, monkeypatch):
    """A cell that raises is recorded (status 2, error) and the rest completes; --retry-failed runs it again."""
    real = runner.simulate_cells

    def flaky(spec, params_list):
        if any(p["beta"] == 5.0 and p["n"] == 9 and p["seed"] == 0 for p in params_list):
            raise RuntimeError("planted failure")
        return real(spec, params_list)

    monkeypatch.setattr(runner, "simulate_cells", flaky)
    path = tmp_path / "fail.zarr"
    report = run_sweep(TINY, path, scheduler="synchronous", progress=quiet)
    assert report.failed_now == 1 and report.counts == {"pending": 0, "done": 7, "failed": 1}
    store = open_store(path)
    assert store.errors() == [((1, 1, 0), "RuntimeError: planted failure")]
    assert np.isnan(xr.open_zarr(str(path))["clusters"].values[1, 1, 0])
    assert resume_sweep(path, scheduler="synchronous", progress=quiet).computed == 0  # not without asking
    monkeypatch.setattr(runner, "simulate_cells", real)
    report = resume_sweep(path, scheduler="synchronous", retry_failed=True, progress=quiet)
    assert report.computed == 1 and report.counts["done"] == 8
    assert_same_store(path, reference)


def test_a_cell_failing_inside_the_model_is_recorded(tmp_path):
    """A 2 x 2 Q with d = 3 fails in Model.check_dimension: recorded per cell, d = 2 cells complete."""
    spec = tiny(model={"Q": [[1.0, 0.0], [0.0, 1.0]]}, sweep={"beta": [1.0], "n": [5], "d": [2, 3]})
    spec["model"].pop("d")
    report = run_sweep(spec, tmp_path / "q.zarr", scheduler="synchronous", progress=quiet)
    assert report.counts == {"pending": 0, "done": 2, "failed": 2}
    errs = open_store(tmp_path / "q.zarr").errors()
    assert all("matrices are 2 x 2" in e for _, e in errs) and {i[2] for i, _ in errs} == {1}  # axes beta, n, d, seed


def _shards(path, name):
    return [p for p in (path / name / "c").rglob("*") if p.is_file()]


@pytest.mark.parametrize("damage", ["foreign_dir", "foreign_zarr", "wrong_format", "corrupt_status",
                                    "corrupt_output", "missing_variable", "bad_spec"])
def test_damaged_or_foreign_store_is_refused_untouched(reference, tmp_path, damage):
    import shutil

    path = tmp_path / "s.zarr"
    if damage == "foreign_dir":
        path.mkdir()
        (path / "notes.txt").write_text("not a store")
    elif damage == "foreign_zarr":
        xr.Dataset({"x": ("a", np.arange(3.0))}).to_zarr(str(path), zarr_format=3)
    else:
        shutil.copytree(reference, path)
        meta = json.loads((path / "zarr.json").read_text())
        if damage == "wrong_format":
            meta["attributes"]["format"] = "attnflow-sweep/99"
        elif damage == "bad_spec":
            meta["attributes"]["spec"] = meta["attributes"]["spec"][:-5]
        (path / "zarr.json").write_text(json.dumps(meta))
        if damage in ("corrupt_status", "corrupt_output"):
            for shard in _shards(path, "status" if damage == "corrupt_status" else "clusters"):
                shard.write_bytes(b"garbage")
        if damage == "missing_variable":
            shutil.rmtree(path / "clusters")
    before = tree_digest(path)
    with pytest.raises(InputError) as err:
        resume_sweep(path, scheduler="synchronous", retry_failed=True, progress=quiet)
    assert tree_digest(path) == before
    if damage.startswith("corrupt"):
        assert "unreadable shard" in str(err.value) and "--repair" in str(err.value)


@pytest.mark.parametrize("variable", ["status", pytest.param("clusters", marks=pytest.mark.slow), "order_parameter_t"])
def test_corrupted_shard_is_repaired_and_recomputed(reference, tmp_path, variable):
    """A shard damaged on disk: resume --repair deletes it, runs its cells again and ends with the same store."""
    import shutil

    path = tmp_path / "r.zarr"
    shutil.copytree(reference, path)
    shard = _shards(path, variable)[0]
    shard.write_bytes(shard.read_bytes()[:7] + b"\x00garbage")
    report = resume_sweep(path, scheduler="synchronous", progress=quiet, repair=True)
    assert report.computed > 0 and report.counts == {"pending": 0, "done": 8, "failed": 0}
    assert_same_store(path, reference)


def test_stores_of_format_1_are_read_resumed_and_converted(reference, tmp_path):
    """A store in the layout of earlier versions (Zarr 2, one chunk per cell) is resumed as before, and
    `sweep convert` copies it into the sharded layout with the same contents."""
    from numerics.sweeps.store import convert_store, create_legacy_store

    old = tmp_path / "old.zarr"
    create_legacy_store(old, SweepSpec.from_dict(TINY))
    assert (old / ".zattrs").exists() and open_store(old).zarr_format == 2
    report = resume_sweep(old, scheduler="synchronous", progress=quiet)
    assert report.computed == 8
    assert_same_store(old, reference)
    info = convert_store(old, tmp_path / "new.zarr")
    assert info["source_format"] == "attnflow-sweep/1" and info["target_format"] == "attnflow-sweep/2"
    assert_same_store(tmp_path / "new.zarr", reference)
    assert resume_sweep(tmp_path / "new.zarr", scheduler="synchronous", progress=quiet).computed == 0


def test_blocks_do_not_change_the_store(reference, tmp_path):
    """The same sweep in blocks of 1, 2 and all cells gives the same store; a block is one region write."""
    for block in (1, 8):
        report = run_sweep(TINY, tmp_path / f"b{block}.zarr", scheduler="synchronous", progress=quiet, block=block)
        assert report.block == min(block, 2) and report.tasks == 8 // report.block
        assert_same_store(tmp_path / f"b{block}.zarr", reference)
    # with noise (each cell its own stream) and energies (the ensemble's batched pair sums): identical too
    tables = tiny(model={"noise": 0.1}, observables={"energy": {}, "order_parameter": {}},
                  sweep={"beta": [1.0], "n": [6], "seeds": 2})
    a = run_sweep(tables, tmp_path / "e1.zarr", scheduler="synchronous", progress=quiet, block=1)
    b = run_sweep(tables, tmp_path / "e2.zarr", scheduler="synchronous", progress=quiet, block=2)
    assert a.counts == b.counts and b.tasks == 1
    for name in ("energy_t", "order_parameter_t"):
        np.testing.assert_array_equal(xr.open_zarr(str(tmp_path / "e1.zarr"))[name].values,
                                      xr.open_zarr(str(tmp_path / "e2.zarr"))[name].values)


def test_sharded_layout_bounds_the_files(tmp_path):
    """Cells in blocks write one shard file per variable (64 blocks per shard at most), not one per cell."""
    from numerics.sweeps.store import count_files, store_layout

    tables = tiny(sweep={"beta": [1.0 + k for k in range(10)], "n": [4], "seeds": 100},
                  run={"t_end": 0.1, "dt": 0.05, "frames": 2})
    spec = SweepSpec.from_dict(tables)
    assert store_layout(spec, 50) == ((1, 1, 50), (10, 1, 100))
    assert store_layout(spec, 250) == ((2, 1, 100), (10, 1, 100))
    small = SweepSpec.from_dict(tiny(sweep={"beta": [1.0, 2.0, 3.0, 4.0], "n": [3], "seeds": 10},
                                     run={"t_end": 0.1, "dt": 0.05, "frames": 2}, observables={"clusters": {}}))
    report = run_sweep(small, tmp_path / "big.zarr", scheduler="synchronous", progress=quiet, block=10)
    assert report.counts["done"] == 40 and report.tasks == 4
    assert count_files(tmp_path / "big.zarr") < 30  # 6 variables in one shard each, coordinates, metadata


# -- aggregation and plots ----------------------------------------------------------------------------------
def test_wilson_interval_reference_values():
    # Wilson (1927) score interval, z = 1.96: 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634]
    lo, hi = wilson_interval([0, 5], [10, 10])
    np.testing.assert_allclose(lo, [0.0, 0.23659309], atol=1e-7)
    np.testing.assert_allclose(hi, [0.27753279, 0.76340691], atol=1e-7)


def test_aggregate_probability_and_mean(reference):
    ds = xr.open_zarr(str(reference))
    agg = aggregate(ds, "p_one_cluster", ("n", "beta"))
    raw = ds["one_cluster"].values
    np.testing.assert_allclose(agg.value, raw.mean(axis=-1).T)
    assert agg.kind == "probability" and (agg.seeds == 2).all()
    assert (agg.lower <= agg.value + 1e-12).all() and (agg.value <= agg.upper + 1e-12).all()
    agg = aggregate(ds, "clusters", ("beta",), {"n": "9"})
    np.testing.assert_allclose(agg.value, ds["clusters"].values[:, 1].mean(axis=-1))
    with pytest.raises(InputError, match="several values"):
        aggregate(ds, "clusters", ("beta",))
    with pytest.raises(InputError, match="not a 0/1 output"):
        aggregate(ds, "p_order_parameter", ("beta", "n"))


def test_store_contents_helper_sees_differences(reference, tmp_path):
    """The comparison used by the scheduler tests fails on a store with one changed value."""
    import shutil

    import zarr

    path = tmp_path / "changed.zarr"
    shutil.copytree(reference, path)
    zarr.open_group(str(path), mode="r+")["clusters"][0, 0, 0] = 99.0
    with pytest.raises(AssertionError):
        assert_same_store(path, reference)
    assert store_contents(reference)["clusters"].shape == (2, 2, 2)


# -- the metastable count and the claims' judges ------------------------------------------------------------
def test_first_held_value_and_tight_clusters():
    from numerics.sweeps.observables import first_held_value, tight_cluster_count

    t = np.arange(12.0)
    assert first_held_value(t, [0, 0, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1], hold=5) == 2.0
    assert first_held_value(t, [0, 0, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2], hold=5) == 3.0
    assert first_held_value(t, [0] * 12, hold=5) == 0.0
    rng = np.random.default_rng(0)
    centres = np.array([0.0, 2.0, 4.0])
    angles = np.concatenate([c + 0.01 * rng.standard_normal(30) for c in centres] + [rng.uniform(0, 6.28, 3)])
    X = np.column_stack([np.cos(angles), np.sin(angles)])
    assert tight_cluster_count(X, 0.05, 0.02, 0.3, coverage=0.5) == 3
    # the triangle-inequality shortcut agrees with the exact diameter on a cluster of diameter 0.2 < 0.3 < 2 r
    arc = np.linspace(0.0, 0.2, 40)
    assert tight_cluster_count(np.column_stack([np.cos(arc), np.sin(arc)]), 0.05, 0.0, 0.3) == 1
    assert tight_cluster_count(np.column_stack([np.cos(arc), np.sin(arc)]), 0.05, 0.0, 0.15) == 0
    uniform = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    assert tight_cluster_count(np.column_stack([np.cos(uniform), np.sin(uniform)]), 0.05, 0.02, 0.3, 0.5) == 0


def test_claim_judges_can_fail():
    """The judges of the sweep claims on planted data: a match passes, a planted off-by-one fails."""
    from numerics.sweeps.claims import judge_increasing, judge_lmax_match, judge_one_cluster

    betas, lmax = [2.1, 4.7, 8.2], [2, 3, 4]
    good = [[2, 2, 2, 1], [3, 3, 3, 4], [4, 4, 5, 4]]
    assert judge_lmax_match("x", betas, lmax, good).status == "passed"
    assert judge_lmax_match("x", betas, [l + 1 for l in lmax], good).status == "failed"
    assert judge_increasing("x", betas, lmax, good).status == "passed"
    assert judge_increasing("x", betas, lmax, good[::-1]).status == "failed"
    one = np.zeros((3, 2, 12))
    one[0] = 1
    one[1, :, :6] = 1
    assert judge_one_cluster("x", [0.5, 2, 9], [8, 32], one).status == "passed"
    planted = one.copy()
    planted[0, 1, 0] = 0          # one seed not synchronised at the smallest beta
    assert judge_one_cluster("x", [0.5, 2, 9], [8, 32], planted).status == "failed"
    planted = one.copy()
    planted[2] = 1                # probability rising again at the largest beta
    assert judge_one_cluster("x", [0.5, 2, 9], [8, 32], planted).status == "failed"


def test_lmax_overlay_matches_dominant_degree():
    """The l_max(beta) step curve of the plots (switch points) = theory.meanfield.dominant_degree on a grid."""
    from numerics.sweeps.plotting import lmax_curve
    from theory.meanfield import dominant_degree

    for d, span in ((2, (1.0, 9.0)), (3, (0.5, 12.0))):
        x, lvals = lmax_curve("sa", d, span)
        for b in np.linspace(*span, 9):
            assert lvals[np.searchsorted(x, b, side="right") - 1] == dominant_degree("sa", d, b).l_max, (d, b)
