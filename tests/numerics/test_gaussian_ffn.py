"""Attention plus an affine feed-forward layer on Gaussians (numerics.gaussian.ffn, theory.gaussian ffn_*)."""
import numpy as np
import pytest

from numerics.common.errors import InputError


def test_gaussian_ffn_claim_passes():
    from numerics.gaussian.claims_ffn import check_gaussian_ffn

    r = check_gaussian_ffn()
    assert r.status == "passed", r.measured["flags"]


def test_scalar_closed_form_against_the_ode():
    from numerics.gaussian.ffn import solve_ffn_moments

    w, v, a, s0, t = 0.7, 1.0, -0.4, 2.0, 1.3
    pstar = -v * a / w
    exact = 1 / (pstar + (1 / s0 - pstar) * np.exp(-2 * w * t))
    sol = solve_ffn_moments([[a]], [[v]], [[w]], [0.3], [0.1], [[s0]], t)
    assert sol.covs[-1][0, 0] == pytest.approx(exact, rel=1e-10)


def test_regime_needs_an_expanding_feed_forward():
    from numerics.gaussian.ffn import ffn_regime

    A = np.array([[-1.0, 0.0], [0.0, -1.0]])
    assert ffn_regime(A, 1.0, np.eye(2)).kind == "converges"
    assert ffn_regime(A, 1.0, -np.eye(2)).kind == "depends on Sigma_0"
    assert ffn_regime(-A, 1.0, np.eye(2)).kind == "blow-up"


def test_bad_shapes():
    from numerics.gaussian.ffn import ffn_regime, solve_ffn_moments

    with pytest.raises(InputError):
        ffn_regime(np.eye(3), 1.0, np.eye(2))
    with pytest.raises(InputError):
        solve_ffn_moments(np.eye(2), np.eye(2), np.full((2, 2), np.nan), [0, 0], [0, 0], np.eye(2), 1.0)


def test_gaussian_command_with_a_feed_forward_layer(capsys):
    from tests.cli.helpers import bad, run_json

    base = ["gaussian", "--attention", "softmax", "--d", "2", "--V", "[[1,0],[0,1]]", "--W", "[[1,0.4],[-0.2,0.8]]",
            "--mean", "[0.5,-0.3]", "--cov", "[[1,0.3],[0.3,0.6]]"]
    out = run_json(capsys, base + ["--A", "[[-1,0.3],[-0.1,-0.5]]", "--t-end", "40"])
    assert out["regime"] == "converges" and np.allclose(out["cov"], out["Sigma_star"], rtol=1e-9)
    out = run_json(capsys, base + ["--A", "[[1,0.1],[0.3,0.5]]", "--t-end", "2"])
    assert out["regime"] == "blow-up" and out["status"] == "blow-up" and abs(out["blowup_time"] - out["time"]) < 1e-6
    assert "--c needs --W" in bad(capsys, ["gaussian", "--attention", "softmax", "--d", "2", "--A", "[[1,0],[0,1]]",
                                           "--V", "[[1,0],[0,1]]", "--c", "[1,0]", "--mean", "[0,0]",
                                           "--cov", "[[1,0],[0,1]]", "--t-end", "1"])
