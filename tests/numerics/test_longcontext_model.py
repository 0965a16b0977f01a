"""Model(beta_scaling="log", gamma=...): beta = gamma log n everywhere a beta is taken, refused where n is not."""
from __future__ import annotations

import math

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.core import beta_scaling, options
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import Trajectory, resume, simulate, uniform_sphere


def _fixed(kind, n, g=0.7, **kw):
    return Model(kind, g * math.log(n), **kw)


@pytest.mark.parametrize("kind", ["sa", "usa"])
@pytest.mark.parametrize("n, d, backend", [(2, 3, "direct"), (33, 2, "fourier"), (64, 5, "direct"), (7, 2, "auto")])
def test_field_is_the_fixed_model_at_gamma_log_n(kind, n, d, backend):
    X = uniform_sphere(n, d, seed=n)
    f1, b1 = Model(kind, beta_scaling="log", gamma=0.7).vector_field(n, d, backend)
    f2, b2 = _fixed(kind, n).vector_field(n, d, backend)
    assert b1 == b2 and np.array_equal(f1(X), f2(X))


def test_rescaled_time_unit_and_causal_mask_follow():
    X = uniform_sphere(20, 3, seed=1)
    for kw in ({"time_unit": "rescaled"}, {"causal": True}):
        kind = "usa" if "time_unit" in kw else "sa"
        f1, _ = Model(kind, beta_scaling="log", gamma=2.0, **kw).vector_field(20, 3, "direct")
        f2, _ = Model(kind, 2.0 * math.log(20), **kw).vector_field(20, 3, "direct")
        assert np.array_equal(f1(X), f2(X))


def test_simulate_records_the_scaling_and_the_effective_beta(tmp_path):
    X0 = uniform_sphere(16, 3, seed=2)
    solver = Solver("rk4", dt=0.05, backend="direct")
    a = simulate(Model("usa", beta_scaling="log", gamma=1.25), X0, 0.3, solver=solver)
    b = simulate(_fixed("usa", 16, 1.25), X0, 0.3, solver=solver)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.energy, b.energy)
    assert a.meta["beta"] == b.meta["beta"] == 1.25 * math.log(16)
    assert a.meta["beta_scaling"] == "log" and a.meta["gamma"] == 1.25
    assert "beta_scaling" not in b.meta and "gamma" not in b.meta  # fixed-beta files unchanged
    path = tmp_path / "t.npz"
    a.save(path)
    back = Trajectory.load(path)
    assert back.model.beta_scaling == "log" and back.model.gamma == 1.25 and back.model.beta is None
    r1, r2 = resume(str(path), 0.6), resume(b, 0.6)
    assert np.array_equal(r1.X, r2.X) and r1.meta["beta"] == a.meta["beta"]


def test_noisy_runs_use_the_effective_beta():
    X0 = uniform_sphere(10, 3, seed=3)
    solver = Solver("layer", dt=0.05, backend="direct", seed=4)
    a = simulate(Model("sa", beta_scaling="log", gamma=1.0, noise=0.1), X0, 0.2, solver=solver)
    b = simulate(Model("sa", math.log(10), noise=0.1), X0, 0.2, solver=solver)
    assert np.array_equal(a.X, b.X)


def test_merge_refinement_reintegrates_with_the_effective_beta():
    from numerics.clusters.merge_tree import reintegrator_from_meta

    X0 = uniform_sphere(6, 3, seed=5)
    a = simulate(Model("sa", beta_scaling="log", gamma=0.5), X0, 0.4, solver=Solver("rk4", dt=0.05))
    run = reintegrator_from_meta(a.meta)
    b = reintegrator_from_meta({**simulate(_fixed("sa", 6, 0.5), X0, 0.4, solver=Solver("rk4", dt=0.05)).meta})
    times = np.array([0.0, 0.2])
    assert np.allclose(run(X0, times), b(X0, times), rtol=0, atol=0)


@pytest.mark.parametrize("make, fragment", [
    (lambda: Model("sa", beta_scaling="log", gamma=0.0), "gamma must be > 0"),
    (lambda: Model("sa", beta_scaling="log", gamma=-1.0), "gamma must be > 0"),
    (lambda: Model("sa", beta_scaling="log", gamma=float("nan")), "gamma must be finite"),
    (lambda: Model("sa", beta_scaling="log"), "needs gamma"),
    (lambda: Model("sa", 2.0, beta_scaling="log", gamma=1.0), "not both"),
    (lambda: Model("sa", 2.0, gamma=1.0), "gamma applies to beta_scaling='log'"),
    (lambda: Model("sa"), "needs beta"),
    (lambda: Model("sa", beta_scaling="sqrt", gamma=1.0), "beta_scaling must be one of"),
    (lambda: Model("sa", beta_scaling="log", gamma=1.0).effective_beta(None, "the mean field"), "the mean field"),
    (lambda: Model("sa", beta_scaling="log", gamma=1.0).to_spec(3), "ModelSpec"),
])
def test_bad_scalings_are_one_line_errors(make, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        make()
    assert "\n" not in str(info.value)


def test_fixed_model_metadata_is_unchanged():
    meta = Model("sa", 3.0).to_meta()
    assert "beta_scaling" not in meta and "gamma" not in meta and meta["beta"] == 3.0
    assert Model.from_meta(meta).to_meta() == meta


def test_cli_options_validate_their_combinations():
    from types import SimpleNamespace as NS

    assert options.scaling_from_args(NS(beta=2.0, beta_scaling=None, gamma=None))["beta"] == 2.0
    assert options.beta_from_args(NS(beta=None, beta_scaling="log", gamma=2.0), 100) == 2 * math.log(100)
    for args, fragment in ((NS(beta=1.0, beta_scaling="log", gamma=2.0), "not both"),
                           (NS(beta=None, beta_scaling="log", gamma=None), "needs --gamma"),
                           (NS(beta=1.0, beta_scaling=None, gamma=2.0), "--gamma needs")):
        with pytest.raises(InputError, match=fragment):
            options.scaling_from_args(args)


def test_a_sweep_over_gamma_is_accepted():
    pytest.importorskip("zarr")
    from numerics.sweeps.spec import SweepSpec

    spec = SweepSpec.from_dict({"model": {"model": "sa", "d": 3, "beta_scaling": "log"},
                                "sweep": {"gamma": [0.5, 2.0], "n": [8, 16]}, "run": {"t_end": 0.1},
                                "observables": {"order_parameter": {}}})
    model = spec.build_model(spec.cell_parameters((1, 0, 0)))
    assert model.gamma == 2.0 and model.effective_beta(8) == 2.0 * math.log(8)
