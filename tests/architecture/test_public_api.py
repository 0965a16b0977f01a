"""The ``attnflow`` entry package: every re-exported name resolves, once, and the import stays light."""
from __future__ import annotations

import subprocess
import sys

import attnflow


def test_every_public_name_resolves():
    missing = [name for name in attnflow.__all__ if not hasattr(attnflow, name)]
    assert not missing


def test_names_are_exported_once():
    names = [n for names in attnflow._EXPORTS.values() for n in names]
    assert len(names) == len(set(names))


def test_unknown_name_is_an_attribute_error():
    try:
        attnflow.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_sympy():
    code = "import sys, attnflow; attnflow.simulate; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_model_api_round_trip():
    model = attnflow.Model("usa", 2.0, time_unit="rescaled")
    X0 = attnflow.uniform_sphere(8, 3, seed=1)
    traj = attnflow.simulate(model, X0, 0.2, solver=attnflow.Solver("rk4", dt=0.05, backend="direct"))
    again = attnflow.simulate_keywords("usa", 2.0, 0.2, X0=X0, dt=0.05, time_unit="rescaled", backend="direct")
    assert (traj.X == again.X).all() and traj.meta["backend"] == "direct"
    assert attnflow.Model.from_meta(traj.meta).to_meta() == model.to_meta()
