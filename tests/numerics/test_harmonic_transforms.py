"""numerics.harmonic.transforms and expansion: the real basis pinned against scipy, the engines against each
other, the recursion at the poles, the float coefficients and degrees against theory.harmonic (mpmath), and the
noise S^2 solver on the same transforms."""
import math

import numpy as np
import pytest

from numerics.harmonic import expansion, transforms
from numerics.harmonic.transforms import point_moments, point_synthesis


def real_harmonic_scipy(l, m, theta, phi):
    """Our real Y_lm from scipy's complex one (which carries the Condon-Shortley phase (-1)^m)."""
    import scipy.special

    Yc = scipy.special.sph_harm_y(l, abs(m), theta, phi) if hasattr(scipy.special, "sph_harm_y") else \
        scipy.special.sph_harm(abs(m), l, phi, theta)
    Y = math.sqrt(4 * math.pi) * (-1) ** abs(m) * Yc
    return Y.real if m == 0 else math.sqrt(2.0) * (Y.real if m > 0 else Y.imag)


def _points(n, seed, poles=True):
    X = np.random.default_rng(seed).standard_normal((n, 3))
    if poles:
        X[0], X[1] = (0, 0, 1), (0, 0, -1)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_moments_and_synthesis_match_scipy_real_harmonics():
    L, X = 10, _points(150, 0)
    theta, phi = np.arccos(np.clip(X[:, 2], -1, 1)), np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    W = np.random.default_rng(1).standard_normal((X.shape[0], 2))
    C = point_moments(X, W, L)
    values = np.zeros((X.shape[0], 2))
    worst = 0.0
    for l in range(L + 1):
        for m in range(-l, l + 1):
            y = real_harmonic_scipy(l, m, theta, phi)
            worst = max(worst, float(np.abs(C[:, 0 if m >= 0 else 1, l, abs(m)] - W.T @ y).max()))
            values += np.outer(y, C[:, 0 if m >= 0 else 1, l, abs(m)])
    assert worst < 1e-12
    assert np.abs(point_synthesis(C, X) - values).max() < 1e-11 * np.abs(values).max()
    assert np.all(C[:, 1, :, 0] == 0) and np.all(C[:, :, np.triu_indices(L + 1, 1)[0], np.triu_indices(L + 1, 1)[1]] == 0)


def test_planted_sin_sign_breaks_the_convention(monkeypatch):
    """Planted: the sin harmonics with the opposite sign (Im(conj w^m)): the scipy comparison fails."""
    L, X = 4, _points(40, 2)
    theta, phi = np.arccos(X[:, 2]), np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    original = transforms._unit_parts
    monkeypatch.setattr(transforms, "_unit_parts", lambda Y: (original(Y)[0], np.conj(original(Y)[1])))
    C = point_moments(X, np.ones((X.shape[0], 1)), L)
    assert abs(C[0, 1, 2, 1] - real_harmonic_scipy(2, -1, theta, phi).sum()) > 1e-3


def test_blocks_do_not_change_the_result(monkeypatch):
    L, X = 7, _points(700, 3)
    W = np.random.default_rng(4).standard_normal((X.shape[0], 3))
    whole = point_moments(X, W, L)
    values = point_synthesis(whole, X)
    monkeypatch.setattr(transforms, "TABLE_BYTES", 1)  # blocks of 64 points
    assert np.abs(point_moments(X, W, L) - whole).max() < 1e-12
    assert np.abs(point_synthesis(whole, X) - values).max() < 1e-12


def test_orthonormality_by_quadrature():
    """E_mu[Y_lm Y_l'm'] = delta: Gauss-Legendre x uniform-longitude product rule, exact for degree <= 2L."""
    L = 6
    t, w = np.polynomial.legendre.leggauss(L + 1)
    phi = 2 * np.pi * np.arange(2 * L + 2) / (2 * L + 2)
    s = np.sqrt(1 - t * t)
    P = np.stack([np.outer(s, np.cos(phi)).ravel(), np.outer(s, np.sin(phi)).ravel(), np.repeat(t, phi.size)], 1)
    weights = np.repeat(w / 2, phi.size) / phi.size
    # moments of delta functions with quadrature weights = the Gram matrix applied to each basis function
    H = (L + 1) ** 2
    basis = np.zeros((H, 2, L + 1, L + 1))
    k = 0
    for l in range(L + 1):
        for m in range(-l, l + 1):
            basis[k, 0 if m >= 0 else 1, l, abs(m)] = 1.0
            k += 1
    values = point_synthesis(basis, P)  # (points, H)
    gram = values.T @ (weights[:, None] * values)
    assert np.abs(gram - np.eye(H)).max() < 1e-13


@pytest.mark.skipif(not transforms.ducc0_available(), reason="ducc0 (extra harmonic) not installed")
def test_ducc0_engine_agrees_with_numpy():
    L, X = 20, _points(3000, 5)
    W = np.c_[np.ones(X.shape[0]), X]
    C = point_moments(X, W, L) / X.shape[0]
    Cd = point_moments(X, W, L, engine="ducc0") / X.shape[0]
    assert np.abs(Cd - C).max() < 1e-12 * np.abs(C).max()
    V, Vd = point_synthesis(C, X), point_synthesis(C, X, engine="ducc0")
    assert np.abs(Vd - V).max() < 10 * transforms.DUCC0_EPSILON * np.abs(V).max()


def test_scaled_coefficients_against_mpmath():
    import mpmath as mp

    from theory.harmonic import kernel_coefficient_mp

    for beta in (1e-8, 0.3, 0.99, 1.0, 4.0, 30.0, 300.0, -2.5):
        lam = expansion.scaled_coefficients(beta, 30)
        with mp.workdps(40):
            ref = [float(kernel_coefficient_mp(3, l, beta, 40) * mp.exp(-abs(mp.mpf(beta)))) for l in range(31)]
        for l in range(31):
            assert abs(lam[l] - ref[l]) <= 1e-13 * abs(ref[l]) + 1e-300, (beta, l)
    assert np.array_equal(expansion.scaled_coefficients(0.0, 3), [1.0, 0.0, 0.0, 0.0])
    assert expansion.scaled_mean_weight(0.0) == 1.0


def test_tail_bound_and_degree_against_theory():
    from theory.harmonic import degree_for_tolerance_mp, tail_bound_mp

    for beta in (0.5, 4.0, 9.0, 40.0):
        for L in (3, 10, 30):
            ref = float(tail_bound_mp(3, L, beta) * math.exp(-beta))
            got = expansion.tail_bound(L, beta)
            assert (got == math.inf and ref == math.inf) or abs(got - ref) <= 1e-12 * ref
        for tol in (1e-4, 1e-10):
            target = tol * expansion.scaled_mean_weight(beta)
            assert expansion.degree_for_tolerance(beta, target) == degree_for_tolerance_mp(3, beta, tol)
    assert expansion.exact_tail(10, 4.0) <= expansion.tail_bound(10, 4.0) <= 1.02 * expansion.exact_tail(10, 4.0)


def test_degree_beyond_the_maximum_names_the_direct_path():
    from numerics.common.errors import InputError

    with pytest.raises(InputError, match="--backend direct"):
        expansion.degree_for_tolerance(5000.0, 1e-15)
    with pytest.raises(InputError, match="direct"):
        expansion.check_degree(expansion.MAX_DEGREE + 1)


def test_noise_solver_shares_the_transforms():
    """The S^2 Fokker-Planck solver's potential gradient from the particles' empirical coefficients is the particle
    usa field (both from the same moments): at the solver's grid points, to the truncation of both."""
    from numerics.harmonic.field import HarmonicField
    from numerics.noise.sphere import SphereFokkerPlanck, empirical_coefficients, unpack

    beta, L = 2.0, 24
    X = _points(500, 6, poles=False)
    c = empirical_coefficients(X, L)
    assert c[0] == pytest.approx(1.0)
    op = SphereFokkerPlanck(beta, 0.0, L)
    Xt, Xp = op.grid.gradient(*op.potential(*unpack(c, L)))  # grad Phi, Phi = W * rho, W = e^{beta s}/beta
    G = op.grid
    th = np.arccos(G.t)[:, None]
    ph = G.phi[None, :]
    e_theta = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), -np.sin(th) * np.ones_like(ph)], -1)
    e_phi = np.stack([-np.sin(ph) * np.ones_like(th), np.cos(ph) * np.ones_like(th), np.zeros_like(th * ph)], -1)
    pde = (Xt[..., None] * e_theta + Xp[..., None] * e_phi).reshape(-1, 3)
    particle = HarmonicField(beta, "usa", engine="numpy").at(X, G.points.reshape(-1, 3))
    assert np.abs(pde - particle).max() < 1e-11 * np.abs(particle).max()
