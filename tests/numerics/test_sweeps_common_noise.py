"""Sweeps over the common noise (issue 40): common_noise and common_noise_law as axes, the antipodal observable,
and a small two-token sweep on both sides of the derived boundary beta_c = log(d/sigma^2)."""
import math
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.sweeps.observables import RunResult, antipodal
from numerics.sweeps.spec import SweepSpec


def _spec(**sweep):
    return {"model": {"model": "usa", "d": 8, "n": 2, "common_noise_law": "values"},
            "sweep": {"beta": [0.0, 3.0], **sweep},
            "run": {"t_end": 30.0, "dt": 0.04, "method": "layer", "frames": 2},
            "observables": {"antipodal": {}}}


def test_common_noise_axes_accepted_and_checked():
    tables = _spec(common_noise=[0.0, 2.0], seeds=2)
    spec = SweepSpec.from_dict(tables)
    assert spec.axes["common_noise"] == [0.0, 2.0]
    with pytest.raises(InputError, match="common_noise"):
        SweepSpec.from_dict(_spec(common_noise=[1.0, -1.0]))
    bad = _spec(common_noise=[2.0])
    del bad["model"]["common_noise_law"]
    bad["sweep"]["common_noise_law"] = ["values", "bogus"]  # the second value: caught before any run
    with pytest.raises(InputError, match="common_noise_law"):
        SweepSpec.from_dict(bad)


def test_antipodal_observable():
    def run(angle):
        X = np.array([[[1.0, 0.0, 0.0], [math.cos(angle), math.sin(angle), 0.0]]])
        return RunResult(np.zeros(1), X, np.zeros(1), None, {})
    out = antipodal(run(math.pi))
    assert out["antipodal"] == 1.0 and out["max_angle"] == pytest.approx(math.pi)
    assert antipodal(run(math.pi / 2))["antipodal"] == 0.0
    assert antipodal(run(math.pi / 2), eps=math.pi / 2 + 0.01)["antipodal"] == 1.0
    with pytest.raises(InputError):
        antipodal(run(1.0), eps=0.0)


def test_two_token_sweep_both_sides_of_the_boundary():
    """d = 8, sigma = 2: a = 1/2, beta_c = log 2. Below it no pair ends antipodal; above it the fraction is the
    scale-function probability averaged over the uniform initial angle (density proportional to sin^{d-2})."""
    import xarray as xr

    from numerics.noise.common import antipodal_probability
    from numerics.sweeps.runner import run_sweep

    seeds = 200
    folder = Path(tempfile.mkdtemp(prefix="attnflow-test-"))
    try:
        run_sweep(_spec(common_noise=[2.0], seeds=seeds), folder / "s.zarr", scheduler="synchronous",
                  progress=lambda *a, **k: None)
        ds = xr.open_zarr(str(folder / "s.zarr"))
        frac = ds["antipodal"].mean("seed").values.ravel()  # (beta,)
        ds.close()
    finally:
        shutil.rmtree(folder)
    theta = np.linspace(0.005, math.pi - 0.005, 400)
    w = np.sin(theta) ** 6
    p = float(sum(antipodal_probability("values", 8, 2.0, 3.0, "usa", t) * wt for t, wt in zip(theta, w)) / w.sum())
    assert frac[0] == 0.0
    assert abs(frac[1] - p) < 4 * math.sqrt(p * (1 - p) / seeds), (frac[1], p)
