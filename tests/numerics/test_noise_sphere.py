"""numerics.noise.sphere: the S^2 Fokker-Planck solver in real spherical harmonics.

The convention is pinned against scipy.special.sph_harm_y; the transforms against finite differences and the
Laplacian's eigenvalues; ETDRK4's order by step halving; the claim's checks (zonal reduction, mass, rotation
equivariance, non-zonal growth rates) each fail on a planted error."""
import math

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.noise import claims, sphere
from numerics.noise.sphere import (SphereGrid, degrees_of, initial_coefficients, pack, solve_sphere, unpack,
                                   zonal_to_packed)


def _real_harmonic_scipy(l, m, theta, phi):
    """The real harmonic of numerics.noise.sphere from scipy's complex one (with its Condon-Shortley phase).

    scipy >= 1.15 has sph_harm_y(l, m, polar, azimuth); pyproject allows scipy >= 1.10, whose sph_harm(m, l,
    azimuth, polar) is the same function with the arguments in the other order (removed in scipy 1.17)."""
    import scipy.special

    if hasattr(scipy.special, "sph_harm_y"):
        Yc = scipy.special.sph_harm_y(l, abs(m), theta, phi)
    else:
        Yc = scipy.special.sph_harm(abs(m), l, phi, theta)
    Y = math.sqrt(4 * math.pi) * (-1) ** abs(m) * Yc
    if m == 0:
        return Y.real
    return math.sqrt(2.0) * (Y.real if m > 0 else Y.imag)


def test_convention_matches_scipy_real_harmonics():
    L = 6
    G = SphereGrid.build(L)
    rng = np.random.default_rng(0)
    pts = rng.standard_normal((50, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    theta, phi = np.arccos(pts[:, 2]), np.mod(np.arctan2(pts[:, 1], pts[:, 0]), 2 * np.pi)
    worst = 0.0
    for l in range(L + 1):
        for m in range(-l, l + 1):
            a = np.zeros((L + 1, L + 1))
            b = np.zeros_like(a)
            (a if m >= 0 else b)[l, abs(m)] = 1.0
            worst = max(worst, float(np.max(np.abs(G.evaluate(a, b, pts) - _real_harmonic_scipy(l, m, theta, phi)))))
    assert worst < 1e-12


def test_transforms_roundtrip_gradient_and_laplacian():
    L = 7
    G = SphereGrid.build(L)
    v = np.random.default_rng(1).standard_normal((L + 1) ** 2)
    a, b = unpack(v, L)
    u = G.synthesis(a, b)
    assert np.max(np.abs(pack(*G.analysis(u)) - v)) < 1e-13
    assert np.max(np.abs(G.evaluate(a, b, G.points.reshape(-1, 3)) - u.ravel())) < 1e-12
    # gradient against central differences in (theta, phi)
    eps = 1e-6
    TH, PH = np.meshgrid(np.arccos(G.t), G.phi, indexing="ij")

    def val(th, ph):
        p = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1).reshape(-1, 3)
        return G.evaluate(a, b, p).reshape(th.shape)

    gt, gp = G.gradient(a, b)
    assert np.max(np.abs(gt - (val(TH + eps, PH) - val(TH - eps, PH)) / (2 * eps))) < 1e-6
    assert np.max(np.abs(gp - (val(TH, PH + eps) - val(TH, PH - eps)) / (2 * eps) / np.sin(TH))) < 1e-6
    # E[grad Y_lm . grad u] = l(l+1) c_lm (the weak Laplacian)
    deg = degrees_of(L)
    assert np.max(np.abs(pack(*G.weak_divergence(gt, gp)) - deg * (deg + 1) * v)) < 1e-12


def test_evaluate_in_chunks_without_derivative_tables(monkeypatch):
    """evaluate is the particle backend's blocked synthesis (numerics.harmonic.transforms, no derivative tables):
    blocks of 64 points give the single-block result to rounding, and the values table is bitwise the first table
    of legendre_table (memory at L = 64, 16471 points: 2.2 GB -> 16 MB per block)."""
    from numerics.harmonic import transforms

    L = 9
    G = SphereGrid.build(L)
    t = np.linspace(-0.99, 0.99, 17)
    assert np.array_equal(sphere.legendre_values(L, t), sphere.legendre_table(L, t)[0])
    a, b = unpack(np.random.default_rng(4).standard_normal((L + 1) ** 2), L)
    pts = np.random.default_rng(5).standard_normal((101, 3))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    whole = G.evaluate(a, b, pts)
    monkeypatch.setattr(transforms, "TABLE_BYTES", 8 * (L + 1) ** 2 * 7)       # blocks of 64 points (the minimum)
    assert transforms.block_points(L) == 64
    assert np.max(np.abs(G.evaluate(a, b, pts) - whole)) < 1e-14


def test_couplings_are_the_funk_hecke_integrals():
    """g_l = (1/2) int W(t) P_l(t) dt, W = e^{beta t}/beta: the closed form of zonal.couplings (scipy ive) vs mpmath
    quadrature at 30 digits (double-precision quadrature loses digits to cancellation for l >> beta)."""
    import mpmath as mp

    from numerics.noise.zonal import couplings

    with mp.workdps(30):
        for beta in (0.7, 3.0):
            b = mp.mpf(beta)
            quad = [float(mp.quad(lambda t: mp.exp(b * t) / b * mp.legendre(l, t), [-1, 1]) / 2) for l in range(9)]
            assert np.allclose(couplings(3, beta, 8), quad, rtol=1e-12, atol=0)


def test_etdrk4_is_fourth_order():
    L, beta, D = 6, 2.0, 0.3
    c0 = initial_coefficients(L, 0.1, seed=3)
    ref = solve_sphere(beta, D, L=L, t_end=1.0, c0=c0, dt=0.005, saves=2).coefficients[-1]
    errs = [float(np.max(np.abs(solve_sphere(beta, D, L=L, t_end=1.0, c0=c0, dt=h, saves=2).coefficients[-1] - ref)))
            for h in (0.1, 0.05, 0.025)]
    order = np.polyfit(np.log([0.1, 0.05, 0.025]), np.log(errs), 1)[0]
    assert order == pytest.approx(4.0, abs=0.3)


def test_zonal_data_stay_zonal():
    L = 6
    f = np.zeros(L + 1)
    f[0], f[1], f[2] = 1.0, 0.2, 0.1
    h = solve_sphere(1.0, 0.2, L=L, t_end=1.0, c0=zonal_to_packed(f, L), dt=0.05, saves=2)
    a, b = h.unpacked()
    assert np.max(np.abs(a[:, 1:])) < 1e-15 and np.max(np.abs(b)) < 1e-15      # round-off of the FFTs only


def test_bad_inputs():
    with pytest.raises(InputError):
        solve_sphere(1.0, 0.1, L=4, t_end=1.0, c0=np.zeros(25))          # c_00 must be 1
    with pytest.raises(InputError):
        solve_sphere(1.0, 0.1, L=4, t_end=1.0, c0=np.ones(24))           # wrong length
    with pytest.raises(InputError):
        solve_sphere(0.0, 0.1, L=4, t_end=1.0, c0=initial_coefficients(4), model="sa")
    with pytest.raises(InputError):
        solve_sphere(float("nan"), 0.1, L=4, t_end=1.0, c0=initial_coefficients(4))


# -- the claim and its planted errors --------------------------------------------------------------------------
_passes = claims.sphere_pde_passes          # the claim's own pass condition (not a copy that can drift)


def test_claim_passes():
    result = claims.check_sphere_pde()
    assert result.status == "passed", result.measured


def test_planted_missing_normalisation_breaks_zonal_reduction(monkeypatch):
    """c_l0 = f_l instead of f_l / sqrt(2l+1)."""
    def wrong(f, L):
        a = np.zeros((L + 1, L + 1))
        a[:, 0] = np.asarray(f)[:L + 1]
        return pack(a, np.zeros_like(a))

    monkeypatch.setattr(sphere, "zonal_to_packed", wrong)
    m = claims.sphere_pde_checks(L=6)
    assert m["zonal_err"] > 1e-3 and not _passes(m)


def test_planted_sign_error_in_longitude_derivative_breaks_equivariance(monkeypatch):
    def wrong_gradient(self, a, b):
        m = np.arange(self.L + 1)[None, :]
        return self._to_grid(self.dP, a, b), self._to_grid(self.Ps, -m * b, -m * a)

    monkeypatch.setattr(SphereGrid, "gradient", wrong_gradient)
    m = claims.sphere_pde_checks(L=6)
    assert m["equivariance_err"] > 1e-4 and not _passes(m)


def test_planted_coarse_grid_aliasing_breaks_equivariance(monkeypatch):
    original = SphereGrid.build.__func__

    def coarse(cls, L, n_lat=None, n_lon=None):
        return original(cls, L, L + 1, 2 * L + 2)

    monkeypatch.setattr(SphereGrid, "build", classmethod(coarse))
    m = claims.sphere_pde_checks(L=6)
    assert m["equivariance_err"] > 1e-8 and not _passes(m)


def test_planted_wrong_laplacian_breaks_mass_and_rates(monkeypatch):
    original = sphere.SphereFokkerPlanck.__init__

    def wrong(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.linear = -self.noise * (self.degree + 1.0) ** 2            # (l+1)^2 instead of l(l+1)

    monkeypatch.setattr(sphere.SphereFokkerPlanck, "__init__", wrong)
    m = claims.sphere_pde_checks(L=6)
    assert m["mass_drift"] > 1e-2 and m["rate_err"] > 1e-2


def test_planted_wrong_coupling_breaks_rates(monkeypatch):
    original = sphere.couplings
    monkeypatch.setattr(sphere, "couplings", lambda d, beta, L: original(2, beta, L))   # the circle's g_l
    m = claims.sphere_pde_checks(L=6)
    assert m["rate_err"] > 1e-2 and m["threshold_err"] > 1e-2 and not _passes(m)


def test_planted_noise_on_the_wrong_degrees_breaks_the_threshold(monkeypatch):
    """D l(l+2) (the Laplacian eigenvalue of S^3) instead of D l(l+1): the measured D_c is 2/3 of the derived one
    (degree 1: 3 D instead of 2 D), and the rates fail."""
    original = sphere.SphereFokkerPlanck.__init__

    def wrong(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.linear = -self.noise * self.degree * (self.degree + 2.0)

    monkeypatch.setattr(sphere.SphereFokkerPlanck, "__init__", wrong)
    m = claims.sphere_pde_checks(L=6)
    assert m["threshold_err"] > 0.1 and m["rate_err"] > 1e-2


@pytest.mark.slow
def test_steady_claim_passes_and_fails_on_a_planted_coupling(monkeypatch):
    assert claims.check_sphere_pde_steady().status == "passed"
    original = sphere.couplings

    def wrong(d, beta, L):          # g_2 2% too large: another stationary profile
        g = original(d, beta, L).copy()
        g[2] *= 1.02
        return g

    monkeypatch.setattr(sphere, "couplings", wrong)
    assert claims.check_sphere_pde_steady().status == "failed"
