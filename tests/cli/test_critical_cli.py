"""attnflow critical: JSON keys, text, sweep, search, plots and bad input (exit 2, one error line)."""
import re

import numpy as np
import pytest

from numerics.cli import main
from tests.cli.helpers import json_output as _json

KEYS = {"residual", "eigenvalues", "counts", "symmetry_zero_modes", "classification", "unstable_rate"}


def test_json_keys_and_values(capsys):
    code, data = _json(capsys, ["critical", "--config", "clusters", "--k", "3", "--n", "6", "--d", "2",
                                "--beta", "-1", "--json"])
    assert code == 0 and KEYS <= set(data)
    assert data["classification"] == "local maximum"
    assert data["counts"] == {"positive": 0, "zero": 1, "negative": 5}
    assert data["eigenvalues"] == sorted(data["eigenvalues"]) and len(data["eigenvalues"]) == 6


def test_text_output_and_plot(capsys, tmp_path):
    png = tmp_path / "spec.png"
    assert main(["critical", "--config", "antipodal", "--n", "4", "--d", "3", "--beta", "2", "--model", "sa",
                 "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^classification\s+strict saddle$", out, re.M) and "unstable rate" in out
    assert png.stat().st_size > 0
    # the printed energy and eigenvalues against an independent computation: the energy summed directly and the
    # Riemannian Hessian by central differences of E along geodesics (at a critical point the Hessian of E o exp
    # is the Riemannian Hessian); printed to 6 digits, differences O(h^2) = 1e-6
    X = np.array([[0, 0, 1.0], [0, 0, 1.0], [0, 0, -1.0], [0, 0, -1.0]])   # antipodal, two clusters of 2
    energy, hessian = _energy_and_fd_hessian(X, beta=2.0)
    assert float(re.search(r"^energy E_beta\s+(\S+)$", out, re.M).group(1)) == pytest.approx(energy, rel=1e-5)
    printed = []
    for value, count in re.findall(r"(-?[0-9.e+-]+) \(x(\d+)\)", re.search(r"^eigenvalues\s+(.*)$", out, re.M).group(1)):
        printed += [float(value)] * int(count)
    assert np.allclose(sorted(printed), np.linalg.eigvalsh(hessian), rtol=1e-5, atol=1e-6)


def _energy_and_fd_hessian(X, beta, h=1e-3):
    """E = 1/(2 beta n^2) sum (e^{beta <x_i,x_j>} - 1) and its Hessian in geodesic coordinates, numpy only."""
    n, d = X.shape
    basis = []
    for i in range(n):   # an orthonormal basis of the tangent space at x_i: the complement of x_i
        q, _ = np.linalg.qr(np.column_stack([X[i], np.eye(d)]))
        basis += [(i, q[:, k]) for k in range(1, d)]

    def energy(Y):
        return np.expm1(beta * (Y @ Y.T)).sum() / (2 * beta * n * n)

    def moved(c):
        Y = X.copy()
        for i in range(n):
            w = sum(t * u for (j, u), t in zip(basis, c) if j == i)
            r = np.linalg.norm(w)
            if r > 0:
                Y[i] = np.cos(r) * X[i] + np.sin(r) * w / r
        return Y

    m = len(basis)
    H = np.zeros((m, m))
    for a in range(m):
        for b in range(m):
            def f(sa, sb):
                c = np.zeros(m)
                c[a] += sa * h
                c[b] += sb * h
                return energy(moved(c))
            H[a, b] = (f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / (4 * h * h)
    return energy(X), (H + H.T) / 2


@pytest.mark.parametrize("argv", [["--config", "polygon", "--n", "5", "--d", "3", "--beta", "1.5"],
                                  ["--config", "orthoplex", "--n", "6", "--d", "3", "--beta", "-0.5"],
                                  ["--config", "sync", "--n", "4", "--d", "3", "--beta", "2"]])
def test_closed_form_comparison(capsys, argv):
    code, data = _json(capsys, ["critical", *argv, "--closed-form", "--json"])
    assert code == 0
    # closed form evaluated at 30 digits vs float64 eigenvalues of O(1) matrices: round-off level
    assert data["closed_form"]["max_abs_difference"] <= 1e-13
    assert sum(b["multiplicity"] for b in data["closed_form"]["branches"]) == len(data["eigenvalues"])


def test_masses_and_non_critical_report(capsys):
    code, data = _json(capsys, ["critical", "--config", "clusters", "--masses", "2,1,1", "--d", "3", "--beta", "1",
                                "--json"])
    assert code == 0 and data["classification"] == "not critical" and data["unstable_rate"] is None
    assert data["residual"] > 1e-3


def test_file_config(capsys, tmp_path):
    path = tmp_path / "x.npy"
    X = np.zeros((3, 3))
    X[:, 0] = 1
    np.save(path, X)
    code, data = _json(capsys, ["critical", "--config", "file", "--file", str(path), "--beta", "0.5", "--json"])
    assert code == 0 and data["classification"] == "local maximum" and data["symmetry_zero_modes"] == 2


def test_sweep_with_plot(capsys, tmp_path):
    png = tmp_path / "sweep.png"
    code, data = _json(capsys, ["critical", "--config", "clusters", "--k", "3", "--n", "3", "--d", "2",
                                "--sweep-beta=-1:0:5", "--plot", str(png), "--json"])
    assert code == 0 and [s["classification"] for s in data["sweep"]][:2] == ["local maximum"] * 2
    # the triangle: strict local maximum below beta = -2/3, local minimum (fully unstable) above
    assert data["sweep"][-1]["classification"] == "local minimum" and png.stat().st_size > 0


def test_search(capsys):
    code, data = _json(capsys, ["critical", "--search", "--n", "4", "--d", "3", "--beta", "2", "--starts", "3",
                                "--seed", "5", "--warmup", "10", "--json"])
    assert code == 0 and data["starts"] == 3 and data["seed"] == 5 and data["warmup"] == 10
    for p in data["critical_points"]:
        assert {"energy", "cluster_sizes", "classification"} <= set(p)


@pytest.mark.parametrize("argv, match", [
    (["--config", "simplex", "--n", "5", "--d", "3", "--beta", "1"], "n = d + 1"),
    (["--config", "clusters", "--k", "4", "--n", "6", "--d", "2", "--beta", "1"], "does not divide"),
    (["--config", "polygon", "--n", "4", "--d", "2"], "--beta"),
    (["--config", "polygon", "--n", "4", "--d", "2", "--beta", "1", "--sweep-beta", "0:1:3"], "not both"),
    (["--config", "polygon", "--n", "4", "--d", "2", "--sweep-beta", "0:1"], "B0:B1:STEPS"),
    (["--config", "clusters", "--masses", "2,x", "--d", "2", "--beta", "1"], "--masses"),
    (["--search", "--n", "4", "--d", "3", "--beta", "1"], "--starts"),
    (["--config", "clusters", "--masses", "1,2", "--d", "3", "--beta", "1", "--closed-form"], "no closed form"),
    (["--config", "file", "--file", "/nonexistent/x.npy", "--beta", "1"], "cannot read"),
    (["--config", "polygon", "--n", "4", "--d", "2", "--beta", "1", "--plot", "/nonexistent/dir/p.png"], ""),
    (["--config", "polygon", "--n", "4", "--d", "2", "--beta", "1", "--symmetry-modes", "1"],
     "--symmetry-modes applies to --heads/--mlp/--causal only"),
    (["--config", "polygon", "--n", "4", "--d", "2", "--beta", "1", "--symmetry-modes", "0"],
     "--symmetry-modes applies"),   # an explicit 0 is refused too: the option is unused on this path
])
def test_bad_input_exits_2(capsys, argv, match):
    assert main(["critical", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and match in err[0]
