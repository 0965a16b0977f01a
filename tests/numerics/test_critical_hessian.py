"""numerics.critical.hessian: generated blocks vs sympy, Taylor slope 3, invariances, structured closed forms."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from numerics.critical.claims import taylor_slope
from numerics.critical.configurations import circle_clusters, orthoplex, simplex
from numerics.common.errors import InputError
from numerics.critical.hessian import hessian_spectrum, relative_residual, riemannian_hessian_tangent, tangent_basis
from numerics.core.trajectory import uniform_sphere
from tests.strategies import betas, sphere_points
from theory import symbols as sym
from theory.hessian import closed_form_riemannian_hessian
from theory.kernels import PairKernel, exponential_kernel
from theory.structured import branch_values, circle_cluster_spectrum, orthoplex_spectrum, simplex_spectrum


def _embed(U):
    n, d, _ = U.shape
    B = np.zeros((n * d, n * (d - 1)))
    for i in range(n):
        B[i * d:(i + 1) * d, i * (d - 1):(i + 1) * (d - 1)] = U[i]
    return B


@pytest.mark.parametrize("kernel", [None, PairKernel(sym.s**3 + sym.beta * sp.sin(sym.s), name="odd")])
def test_numeric_hessian_matches_sympy_closed_form(kernel):
    X = uniform_sphere(3, 3, 7)
    beta = 1.7
    U = tangent_basis(X)
    H = riemannian_hessian_tangent(X, beta, kernel, U)
    Hs = closed_form_riemannian_hessian(kernel or exponential_kernel(), [sp.Matrix(x) for x in X])
    Hs = np.array(Hs.subs(sym.beta, beta).evalf(), dtype=float)
    B = _embed(U)
    # both are O(1) sums of a few float64 products: agreement to 1e-13 is round-off
    assert np.abs(B.T @ Hs @ B - H).max() <= 1e-13


# tiny and subnormal |beta| included: E_beta is evaluated as s exprel(beta s), exact in that limit
@given(sphere_points(n=st.integers(2, 6), d=st.integers(2, 4)), st.floats(-3.0, 6.0), st.integers(0, 1000))
@example(X=np.array([[-0.75339391, 0.65756947], [-0.75206799, 0.65908553]]), beta=0.0, seed=0)  # R's slope was 2.46
def test_taylor_remainder_slopes(X, beta, seed):
    odd, even, fd = taylor_slope(X, beta, seed)
    # odd part c3 t^3 + c5 t^5 (slope 3, 5 if c3 = 0 along xi; a wrong gradient gives 1), even part c4 t^4 + c6 t^6
    # (slope 4, 6 if c4 = 0; a wrong Hessian gives 2); nan: the part stays at round-off (nothing to fit)
    assert np.isnan(odd) or 2.75 <= odd <= 5.3
    assert np.isnan(even) or 3.75 <= even <= 6.3
    assert fd <= 1e-4


@pytest.mark.parametrize("planted, index, slope", [("riemannian_hessian_tangent", 1, 2.0),
                                                    ("riemannian_gradient", 0, 1.0)])
def test_hessian_formula_claim_sees_a_planted_error(monkeypatch, planted, index, slope):
    """Planted: the Hessian (resp. gradient) scaled by 1.01 leaves a t^2 (resp. t) term in the Taylor remainder,
    so the claim's even (resp. odd) slopes drop to 2 (resp. 1) and it fails; the other part keeps its slope."""
    import numerics.critical.claims as CC

    real = getattr(CC, planted)
    monkeypatch.setattr(CC, planted, lambda *a, **k: 1.01 * real(*a, **k))
    res = CC.check_hessian_formula()
    slopes = np.array(res.details["taylor_slopes_odd_even"])
    assert res.status == "failed"
    assert np.all(np.abs(slopes[:, index] - slope) < 0.05), slopes
    assert np.all(slopes[:, 1 - index] >= (3.85 if index == 0 else 2.85)), slopes   # the other part is unharmed


@given(sphere_points(n=st.integers(2, 7), d=st.integers(2, 5)), betas, st.integers(0, 2**31))
def test_spectrum_invariant_under_rotations_and_permutations(X, beta, seed):
    rng = np.random.default_rng(seed)
    R, _ = np.linalg.qr(rng.standard_normal((X.shape[1],) * 2))
    Y = (X @ R.T)[rng.permutation(X.shape[0])]
    a, b = hessian_spectrum(X, beta), hessian_spectrum(Y, beta)
    # eigvalsh backward error ~ N eps ||H||; 1e-11 relative leaves a wide margin
    assert np.allclose(a, b, atol=1e-11 * max(1.0, np.abs(a).max()))


def _multiset(branches, beta):
    return np.sort(np.concatenate([[v] * m for v, m in branch_values(branches, beta)]))


@pytest.mark.parametrize("beta", [-1.5, 0.0, 0.7, 4.0])
@pytest.mark.parametrize("d", [2, 3, 5])
def test_simplex_and_orthoplex_closed_forms(beta, d):
    np.testing.assert_allclose(hessian_spectrum(simplex(d), beta), _multiset(simplex_spectrum(d), beta),
                               atol=1e-13 * np.exp(abs(beta)))
    np.testing.assert_allclose(hessian_spectrum(orthoplex(d), beta), _multiset(orthoplex_spectrum(d), beta),
                               atol=1e-13 * np.exp(abs(beta)))


@pytest.mark.parametrize("k, m, d", [(1, 3, 3), (2, 2, 3), (3, 2, 2), (5, 1, 2), (4, 3, 4), (7, 2, 3)])
@pytest.mark.parametrize("beta", [-2.0, 0.0, 3.0])
def test_circle_cluster_closed_forms(k, m, d, beta):
    numeric = hessian_spectrum(circle_clusters(d, k=k, n=k * m), beta)
    np.testing.assert_allclose(numeric, _multiset(circle_cluster_spectrum(k, m, d), beta),
                               atol=1e-13 * np.exp(abs(beta)))


def test_residual_zero_at_structured_and_positive_elsewhere():
    assert relative_residual(circle_clusters(3, k=5, n=10), 2.0) < 1e-14
    assert relative_residual(uniform_sphere(5, 3, 0), 2.0) > 1e-3


def test_kernel_with_unset_parameter_is_rejected():
    a = sp.Symbol("a", real=True)
    kernel = PairKernel(a * sym.s**2, {a: a}, name="free")
    with pytest.raises(InputError, match="without numeric values"):
        hessian_spectrum(uniform_sphere(3, 3, 0), 1.0, kernel)


def test_overflow_is_an_input_error():
    with pytest.raises(InputError, match="overflow"):
        hessian_spectrum(uniform_sphere(3, 3, 0), 800.0)
