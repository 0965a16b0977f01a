"""numerics.critical.report and numerics.critical.newton: classification, symmetry accounting, rates, Newton."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.critical.claims import jacobian_fd_error
from numerics.critical.configurations import circle_clusters, orthoplex, regular_polygon, simplex, synchronized
from numerics.critical.report import critical_point_report, orbit_tangent_basis
from numerics.common.errors import InputError
from numerics.critical.hessian import relative_residual, tangent_basis
from numerics.critical.newton import find_critical_points, gram_signature, riemannian_newton
from numerics.core.trajectory import uniform_sphere


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("beta", [-3.0, 0.0, 2.0, 20.0])
def test_sync_is_a_local_maximum(d, beta):
    r = critical_point_report(synchronized(6, d), beta)
    assert r.classification == "local maximum"
    assert r.symmetry_zero_modes == d - 1
    assert r.counts == {"positive": 0, "zero": d - 1, "negative": 5 * (d - 1)}
    # usa at sync: J = n H = -e^beta on the non-orbit directions (natural time unit)
    assert r.unstable_rate == pytest.approx(-np.exp(beta), rel=1e-12)


def test_orbit_dimensions():
    assert orbit_tangent_basis(uniform_sphere(7, 4, 0)).shape[1] == 6      # d(d-1)/2
    assert orbit_tangent_basis(circle_clusters(5, k=3, n=3)).shape[1] == 7  # 2d - 3
    assert orbit_tangent_basis(circle_clusters(4, k=2, n=4)).shape[1] == 3  # d - 1
    assert orbit_tangent_basis(simplex(4)).shape[1] == 6


def test_antipodal_rates_match_closed_form():
    X = circle_clusters(3, k=2, n=6)
    beta = 2.5
    usa = critical_point_report(X, beta, "usa")
    sa = critical_point_report(X, beta, "sa")
    assert usa.classification == "strict saddle"
    assert usa.unstable_rate == pytest.approx(np.exp(-beta), rel=1e-10)
    assert sa.unstable_rate == pytest.approx(2 * np.exp(-beta) / (np.exp(beta) + np.exp(-beta)), rel=1e-10)


def test_polygons_and_three_clusters():
    assert critical_point_report(regular_polygon(6, 2), 3.0).classification == "local minimum"
    r0 = critical_point_report(regular_polygon(6, 2), 0.0)
    assert r0.classification == "degenerate" and r0.unstable and r0.extra_zero_modes == 3
    assert critical_point_report(circle_clusters(2, k=3, n=6), -0.7).classification == "local maximum"
    assert critical_point_report(circle_clusters(2, k=3, n=6), -0.6).classification == "strict saddle"


def test_non_critical_configuration_gets_no_classification():
    r = critical_point_report(uniform_sphere(5, 3, 1), 1.0)
    assert r.classification == "not critical" and r.unstable is None and r.unstable_rate is None
    assert "residual" in r.reason


@given(st.sampled_from([(3, 2, 2, 1.0), (4, 1, 3, 2.0), (2, 3, 3, 0.5), (5, 1, 2, 3.0)]), st.integers(0, 2**31))
def test_classification_independent_of_tangent_basis(case, seed):
    k, m, d, beta = case
    X = circle_clusters(d, k=k, n=k * m)
    a = critical_point_report(X, beta)
    b = critical_point_report(X, beta, U=tangent_basis(X, np.random.default_rng(seed)))
    assert (a.classification, a.counts, a.symmetry_zero_modes) == (b.classification, b.counts, b.symmetry_zero_modes)
    np.testing.assert_allclose(a.eigenvalues, b.eigenvalues, atol=1e-12)
    assert b.unstable_rate == pytest.approx(a.unstable_rate, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_jacobian_matches_finite_differences_of_the_field(model):
    # central differences with h = 1e-6: O(h^2) truncation + O(eps/h) round-off ~ 1e-10 relative
    assert jacobian_fd_error(orthoplex(3), 1.2, model) <= 1e-7


def test_inertia_of_jacobian_equals_hessian():
    """J = D H has the same numbers of positive/negative eigenvalues as H (Sylvester)."""
    from numerics.critical.report import linearized_jacobian
    from numerics.critical.hessian import riemannian_hessian_tangent

    X = circle_clusters(3, masses=[3, 1, 2])
    X, beta = riemannian_newton(X, 2.0).X, 2.0
    U = tangent_basis(X)
    H = riemannian_hessian_tangent(X, beta, None, U)
    J = linearized_jacobian(X, beta, "sa", None, U)
    ev_h, ev_j = np.linalg.eigvalsh(H), np.linalg.eigvals(J)
    tol = 1e-9 * np.abs(ev_h).max()
    assert np.abs(ev_j.imag).max() <= tol
    assert (ev_h > tol).sum() == (ev_j.real > tol).sum() and (ev_h < -tol).sum() == (ev_j.real < -tol).sum()


@given(st.sampled_from([(5, 1, 2, 2.0), (3, 2, 3, 1.0), (4, 2, 3, 3.0)]), st.integers(0, 2**31))
def test_newton_converges_quadratically(case, seed):
    k, m, d, beta = case
    X = circle_clusters(d, k=k, n=k * m)
    rng = np.random.default_rng(seed)
    Y = X + 1e-3 * rng.standard_normal(X.shape)
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    res = riemannian_newton(Y, beta).residuals
    assert res[-1] <= 1e-13
    # quadratic: r_{k+1} <= C r_k^2 while r_k is above round-off (C covers the Hessian's conditioning)
    pairs = [(a, b) for a, b in zip(res, res[1:]) if a > 1e-9]
    assert pairs and all(b <= 1e3 * a**2 + 1e-14 for a, b in pairs)


def test_search_is_reproducible_and_deduplicates():
    a, sa = find_critical_points(5, 3, 2.0, starts=4, seed=11)
    b, sb = find_critical_points(5, 3, 2.0, starts=4, seed=11)
    assert sa == sb and [f.report.energy for f in a] == [f.report.energy for f in b]
    assert sum(f.hits for f in a) == sa["converged"]
    sigs = [gram_signature(f.X) for f in a]
    for i in range(len(sigs)):
        for j in range(i):
            assert np.abs(sigs[i] - sigs[j]).max() > 1e-6


def test_gram_signature_invariant():
    X = uniform_sphere(6, 3, 2)
    R, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))
    np.testing.assert_allclose(gram_signature(X), gram_signature((X @ R.T)[::-1]), atol=1e-12)


def test_bad_inputs():
    with pytest.raises(InputError):
        critical_point_report(synchronized(3, 3), 1.0, model="xyz")
    with pytest.raises(InputError):
        critical_point_report(np.ones((3, 3)), 1.0)
    with pytest.raises(InputError):
        find_critical_points(3, 3, 1.0, starts=0, seed=0)
    assert relative_residual(synchronized(4, 3), 1.0) == 0.0
    X = synchronized(3, 3)
    with pytest.raises(InputError, match="shape"):
        critical_point_report(X, 1.0, U=np.zeros((3, 3, 3)))
    with pytest.raises(InputError, match="orthonormal"):
        critical_point_report(X, 1.0, U=2 * tangent_basis(X))


def test_absolute_zero_floor_shared_by_critical_and_conjecture_search(monkeypatch):
    """phi(s) = e^{beta s} - 0.8 s^4 at beta = 0, two (nearly) orthogonal points: phi' = phi'' = 0 there, so the
    Hessian is zero up to 1e-18 (cubic in the 1e-9 offset). Both the report and the conjecture search call it
    degenerate; with only the relative tolerance (the old rule) its rounding-size eigenvalues made it a
    'strict local maximum'."""
    import numerics.critical.report as report
    from numerics.conjectures.catalogue import ascent_outcome, no_spurious_maximum
    from theory.expression_parser import parse_kernel

    kernel = parse_kernel("exp(beta*s) - 0.8*s**4")
    th = 1e-9
    X = np.array([[1.0, 0.0, 0.0], [np.sin(th), np.cos(th), 0.0]])
    rep = report.critical_point_report(X, 0.0, "usa", kernel)
    assert rep.classification == "degenerate" and rep.zero_tolerance >= 1e-13
    outcome = ascent_outcome({"X0": X, "beta": 0.0, "kernel": "exp(beta*s) - 0.8*s**4", "params": {}})
    assert outcome["classification"] == "degenerate"
    assert no_spurious_maximum({}, outcome).holds is None  # undecided, never a counterexample
    monkeypatch.setattr(report, "ZERO_ABSOLUTE", 0.0)
    assert report.critical_point_report(X, 0.0, "usa", kernel).classification == "local maximum"
