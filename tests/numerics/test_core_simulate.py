"""simulate / Trajectory: round trip, resume, backends, energy identity along trajectories, bad input."""
import sys
import types

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core.field import attention_field, make_field
from numerics.core.model import Model
from numerics.core.trajectory import Trajectory, load_initial, resume, simulate, uniform_sphere


def test_save_load_round_trip(tmp_path):
    tr = simulate("sa", 1.0, 1.0, n=12, d=3, seed=5, method="rk4", dt=0.1, save_every=2)
    path = tr.save(tmp_path / "t.npz")
    back = Trajectory.load(path)
    assert np.array_equal(back.times, tr.times) and np.array_equal(back.X, tr.X)
    assert np.array_equal(back.energy, tr.energy)
    assert back.meta["seed"] == 5 and back.meta["time_unit"] == "natural" and back.meta["backend"] == "direct"
    assert "numpy" in back.meta["versions"]
    with np.load(path) as raw:
        assert set(raw.files) == {"times", "X", "energy", "meta"}


def test_same_seed_same_numbers():
    a = simulate("usa", 0.5, 0.5, n=6, d=4, seed=9, method="layer", dt=0.05)
    b = simulate("usa", 0.5, 0.5, n=6, d=4, seed=9, method="layer", dt=0.05)
    assert np.array_equal(a.X, b.X)


@pytest.mark.parametrize("method", ["rk4", "adaptive"])
def test_resume_continues_exactly(tmp_path, method):
    kw = dict(n=10, d=3, seed=2, method=method, dt=0.05)
    first = simulate("sa", 2.0, 1.0, **kw)
    path = first.save(tmp_path / "a.npz")
    cont = resume(path, 2.0)
    assert cont.times[-1] == pytest.approx(2.0) and cont.meta["resumed_from"]["t"] == pytest.approx(1.0)
    assert np.all(np.diff(cont.times) > 0)
    if method == "rk4":  # same steps as one run to t = 2
        full = simulate("sa", 2.0, 2.0, **kw)
        assert np.abs(full.X[-1] - cont.X[-1]).max() < 1e-13
    with pytest.raises(InputError):
        resume(path, 0.5)


def test_energy_rate_matches_identity():
    """Claim 2 along a trajectory: five-point dE/dt vs (1/n) sum |v_i|^2 for usa."""
    tr = simulate("usa", 1.0, 0.5, n=10, d=3, seed=4, method="rk4", dt=0.005)
    E, h = tr.energy, tr.times[1] - tr.times[0]
    fd = (-E[4:] + 8 * E[3:-1] - 8 * E[1:-3] + E[:-4]) / (12 * h)
    rate = np.array([(attention_field(X, 1.0, "usa") ** 2).sum() / 10 for X in tr.X[2:-2]])
    assert np.abs(fd - rate).max() <= 1e-6 * rate.max()  # O(h^4) ~ 1e-9
    assert np.all(np.diff(E) >= 0)


def test_fourier_backend_missing(monkeypatch):
    """Without numerics.circle.fourier: 'fourier' is an input error, 'auto' silently uses the direct sums."""
    monkeypatch.setitem(sys.modules, "numerics.circle.fourier", None)  # makes the import fail like a missing module
    with pytest.raises(InputError, match="fourier backend not available"):
        simulate("sa", 1.0, 0.1, n=5, d=2, seed=0, dt=0.05, backend="fourier")
    tr = simulate("sa", 1.0, 0.1, n=5, d=2, seed=0, dt=0.05, backend="auto")
    assert tr.meta["backend"] == "direct"


def test_fourier_backend_selection_with_a_stub(monkeypatch):
    calls = []
    stub = types.ModuleType("numerics.circle.fourier")

    def make_fourier_field(beta, model, *, tol=1e-12, time_unit="natural"):
        calls.append((beta, model, time_unit))
        return make_field(2, beta, model, time_unit=time_unit)

    stub.make_fourier_field = make_fourier_field
    stub.fourier_is_faster = lambda n, beta: n >= 100
    monkeypatch.setitem(sys.modules, "numerics.circle.fourier", stub)
    assert Model("sa", 1.0).vector_field(500, 2)[1] == "fourier"
    assert Model("sa", 1.0).vector_field(50, 2)[1] == "direct"
    assert Model("sa", 1.0).vector_field(500, 3)[1] == "direct"
    assert Model("sa", 1.0, V=2 * np.eye(2)).vector_field(500, 2)[1] == "direct"
    assert Model("sa", 1.0, Q=np.eye(2)).vector_field(500, 2)[1] == "fourier"
    with pytest.raises(InputError, match="d = 2"):
        Model("sa", 1.0).vector_field(5, 3, backend="fourier")
    tr = simulate("usa", 1.0, 0.1, n=5, d=2, seed=0, dt=0.05, backend="fourier")
    assert tr.meta["backend"] == "fourier" and calls[-1] == (1.0, "usa", "natural")


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0, d=3), "n must be >= 1"),
    (dict(n=5, d=1), "d must be >= 2"),
    (dict(n=5, d=3, beta=float("nan")), "beta must be finite"),
    (dict(n=5, d=3, method="euler"), "method must be one of"),
    (dict(n=5, d=3, model="softmax"), "model must be one of"),
    (dict(n=5, d=3, dt=None), "needs a step"),
    (dict(n=5, d=3, backend="gpu"), "backend must be one of"),
])
def test_simulate_bad_input(kwargs, match):
    base = dict(model="sa", beta=1.0, t_end=0.1, seed=0, dt=0.05)
    base.update(kwargs)
    with pytest.raises(InputError, match=match):
        simulate(base.pop("model"), base.pop("beta"), base.pop("t_end"), **base)


def test_initial_condition_files(tmp_path):
    X = uniform_sphere(4, 3, 0)
    np.save(tmp_path / "ok.npy", X)
    assert np.array_equal(load_initial(tmp_path / "ok.npy"), X)
    np.save(tmp_path / "off.npy", 2 * X)
    with pytest.raises(InputError, match="off the unit sphere"):
        load_initial(tmp_path / "off.npy")
    assert np.allclose(load_initial(tmp_path / "off.npy", normalize=True), X)
    # rows of 1e200 and 1e-200 keep their direction: a plain norm squares them to inf (a row of zeros) and to 0
    # ("zero and cannot be normalised"); numerics.common.errors.unit_rows scales by the largest entry first
    for factor in (1e200, 1e-200):
        np.save(tmp_path / "far.npy", factor * X)
        np.testing.assert_allclose(load_initial(tmp_path / "far.npy", normalize=True), X, rtol=0, atol=4e-16)
    bad = X.copy()
    bad[1, 2] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    with pytest.raises(InputError, match="non-finite"):
        load_initial(tmp_path / "nan.npy")
    np.save(tmp_path / "shape.npy", X[:, :, None])
    with pytest.raises(InputError, match="dimensions"):
        load_initial(tmp_path / "shape.npy")
    with pytest.raises(InputError, match="does not match"):
        simulate("sa", 1.0, 0.1, X0=X, d=4, dt=0.05)


def test_resume_keeps_the_scheme_of_the_saved_run(tmp_path):
    """A file from before ``adaptive`` chose its scheme by rtol (no ``method_used``) ran Dormand-Prince 5(4):
    its continuation runs dp5 too, not today's choice (dop853 at rtol 1e-9); newer files name their scheme."""
    first = simulate("sa", 2.0, 1.0, n=10, d=3, seed=2, method="adaptive")
    assert first.meta["method_used"] == "dop853"
    assert resume(first, 2.0).meta["integrator_stats"]["resumed"]["method_used"] == "dop853"
    old = Trajectory(times=first.times, X=first.X, energy=first.energy,
                     meta={k: v for k, v in first.meta.items() if k != "method_used"}, arrays=first.arrays)
    assert resume(old, 2.0).meta["integrator_stats"]["resumed"]["method_used"] == "dp5"
