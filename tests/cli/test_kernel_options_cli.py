"""--kernel / --param on simulate, critical, codegen and derive: user kernels end to end.

Two code paths must agree: the generated model module (theory.codegen with a user kernel) and the kernel field
of numerics.core.kernel_field; simulate with --kernel follows the kernel field; critical reports use the kernel's
Hessian. Hostile kernel strings are rejected by the whitelist parser with exit 2 and one error line.
"""
import importlib.util

import numpy as np
import pytest

from numerics.critical.report import critical_point_report
from numerics.critical.configurations import regular_polygon
from numerics.core.integrators import integrate_fixed
from numerics.core.kernel_field import kernel_energy, kernel_field, make_kernel_field
from numerics.core.trajectory import Trajectory, uniform_sphere
from theory.expression_parser import parse_kernel
from tests.cli.helpers import bad, run_json

KERNEL = "exp(beta*s) + c*s**3"
PARAMS = {"c": 0.5}


def test_simulate_with_kernel_follows_the_kernel_field_and_resumes(tmp_path, capsys):
    out = tmp_path / "k.npz"
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "12", "--d", "3", "--beta", "1.5", "--t-end",
                                "1", "--dt", "0.05", "--seed", "3", "--kernel", KERNEL, "--param", "c=0.5",
                                "--out", str(out)])
    assert payload["backend"] == "kernel" and payload["energy_monotone"] is True
    traj = Trajectory.load(out)
    kernel = parse_kernel(KERNEL, PARAMS)
    times, states = integrate_fixed(make_kernel_field(kernel, 1.5, "sa"), uniform_sphere(12, 3, 3), 1.0, 0.05, "rk4")
    assert np.abs(traj.X - states).max() < 1e-13  # same integrator, same field: round-off only
    assert abs(traj.energy[-1] - kernel_energy(states[-1], kernel, 1.5)) < 1e-13
    run_json(capsys, ["simulate", "--resume", str(out), "--t-end", "2", "--out", str(tmp_path / "k2.npz")])
    resumed = Trajectory.load(tmp_path / "k2.npz")
    assert resumed.meta["kernel"]["expr"] == traj.meta["kernel"]["expr"] and resumed.times[-1] == 2.0


def test_codegen_with_kernel_matches_kernel_field(tmp_path, capsys):
    path = tmp_path / "gen.py"
    payload = run_json(capsys, ["codegen", "--model", "usa", "--d", "4", "--out", str(path), "--kernel", KERNEL,
                                "--param", "c=0.5"])
    assert payload["kernel"] == "c*s**3 + exp(beta*s)"
    spec = importlib.util.spec_from_file_location("gen_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X = uniform_sphere(25, 4, 0)
    kernel = parse_kernel(KERNEL, PARAMS)
    assert np.abs(mod.field(X, 0.7) - kernel_field(X, kernel, 0.7, "usa")).max() < 1e-12
    assert abs(mod.energy(X, 0.7) - kernel_energy(X, kernel, 0.7)) < 1e-12
    with pytest.raises(ValueError, match="exponential kernel only"):
        mod.field(X, 0.7, time_unit="rescaled")


def test_critical_with_kernel_uses_the_kernel_hessian(capsys):
    payload = run_json(capsys, ["critical", "--config", "polygon", "--n", "5", "--d", "2", "--beta", "1",
                                "--kernel", KERNEL, "--param", "c=0.5"])
    report = critical_point_report(regular_polygon(5, 2), 1.0, "usa", kernel=parse_kernel(KERNEL, PARAMS))
    assert np.allclose(payload["eigenvalues"], report.eigenvalues, rtol=0, atol=1e-12)
    plain = run_json(capsys, ["critical", "--config", "polygon", "--n", "5", "--d", "2", "--beta", "1"])
    assert not np.allclose(plain["eigenvalues"], payload["eigenvalues"])  # the kernel changes the spectrum


def test_derive_with_kernel_verifies(capsys):
    payload = run_json(capsys, ["derive", "gradient", "--model", "usa", "--d", "2", "--kernel", "cosh(beta*s)"])
    assert payload["ok"] and payload["kernel"] == "cosh(beta*s)"


@pytest.mark.parametrize("argv", [
    ["simulate", "--model", "sa", "--n", "4", "--d", "3", "--beta", "1", "--t-end", "1", "--out", "/tmp/x.npz"],
    ["critical", "--config", "sync", "--n", "3", "--d", "3", "--beta", "1"],
    ["codegen", "--model", "sa", "--d", "3", "--out", "/tmp/x.py"],
    ["derive", "hessian", "--model", "sa", "--d", "2"],
])
@pytest.mark.parametrize("kernel, message", [
    ("__import__('os').system('true')", "forbidden name '__import__'"),
    ("s.__class__", "unexpected character '.' at position 1"),
    ("lambda s: s", "lambda"),
])
def test_hostile_kernels_are_rejected_everywhere(capsys, argv, kernel, message):
    assert message in bad(capsys, argv + ["--kernel", kernel])


def test_param_errors(capsys):
    base = ["critical", "--config", "sync", "--n", "3", "--d", "3", "--beta", "1"]
    assert "--param needs --kernel" in bad(capsys, base + ["--param", "c=1"])
    assert "given twice" in bad(capsys, base + ["--kernel", "c*s", "--param", "c=1", "--param", "c=2"])
    assert "kernel" in bad(capsys, base + ["--kernel", "c*s", "--param", "c=nan"])
    assert "exponential kernel" in bad(capsys, ["simulate", "--model", "usa", "--n", "4", "--d", "2", "--beta", "1",
                                                "--t-end", "1", "--kernel", "s", "--backend", "fourier",
                                                "--out", "/tmp/x.npz"])
    assert "--closed-form" in bad(capsys, base[:2] + ["polygon", "--n", "4", "--d", "2", "--beta", "1",
                                                      "--kernel", "s", "--closed-form"])
