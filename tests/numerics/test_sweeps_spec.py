"""Sweeps without a store: the specification's checks and single cells run in-process (no xarray or zarr
needed, so these run wherever the package does)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.sweeps import runner
from numerics.sweeps.spec import SweepSpec
from tests.numerics.sweep_helpers import TINY


def tiny(**changes) -> dict:
    spec = json.loads(json.dumps(TINY))
    for table, values in changes.items():
        spec[table].update(values)
    return spec


@pytest.mark.parametrize("method", ["dp5", "dop853"])
def test_every_adaptive_method_is_adaptive_in_a_sweep(method):
    """dp5 and dop853 save the frames' times like ``adaptive`` (not a fixed-step grid of dt) and are costed
    without a step count (dt does not bound their steps: a tiny dt is not refused)."""
    spec = SweepSpec.from_dict(tiny(run={"method": method, "frames": 5}))
    np.testing.assert_allclose(spec.frame_times(), np.linspace(0, 3.0, 5))
    _, traj = runner.simulate_cell(spec, spec.cell_parameters((0, 0, 0)))
    np.testing.assert_allclose(traj.times, np.linspace(0, 3.0, 5))
    out = runner.run_cell(spec.to_json(), (0, 0, 0))
    assert "error" not in out, out.get("error")
    SweepSpec.from_dict(tiny(run={"method": method, "frames": 5, "dt": 1e-12})).check_resources()


@pytest.mark.parametrize("key, value", [("n", "abc"), ("n", 2.5), ("n", 0), ("d", 1), ("d", "x"), ("d", True)])
def test_fixed_n_and_d_are_validated_like_swept_ones(key, value):
    """A fixed [model] n or d that is not an integer in range is refused with an InputError naming it (it used
    to reach int() in check_resources: a bare ValueError, or 2.5 silently costed as 2)."""
    spec = tiny()
    spec["sweep"].pop(key, None)
    spec["model"][key] = value
    with pytest.raises(InputError, match=rf"^{key} must be"):
        SweepSpec.from_dict(spec)
    spec["model"][key] = 3
    assert SweepSpec.from_dict(spec).model[key] == 3
