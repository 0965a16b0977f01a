"""Fields, energies, gradients and Hessians for arbitrary pair kernels."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.core.field import attention_field, interaction_energy
from numerics.core.integrators import renormalize
from numerics.core.kernel_field import (
    compile_kernel,
    kernel_energy,
    kernel_field,
    kernel_riemannian_gradient,
)
from numerics.critical import hessian
from numerics.core.trajectory import uniform_sphere
from theory.expression_parser import parse_kernel
from theory.kernels import exponential_kernel

EXP = exponential_kernel()


@given(seed=st.integers(0, 2**31), n=st.integers(1, 9), d=st.integers(2, 5),
       beta=st.floats(-4.0, 6.0), model=st.sampled_from(["sa", "usa"]))
def test_exponential_kernel_matches_attention_field(seed, n, d, beta, model):
    X = uniform_sphere(n, d, seed)
    mine = kernel_field(X, EXP, beta, model, block=3)
    ref = attention_field(X, beta, model)
    # two code paths (generated phi' = e^{beta s} vs the shifted hand-written kernel): rounding only
    np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.exp(beta)))
    if beta != 0:
        assert np.isclose(kernel_energy(X, EXP, beta), interaction_energy(X, beta), rtol=1e-11, atol=1e-13)


def test_energy_at_beta_zero_uses_the_limit():
    X = uniform_sphere(7, 3, 1)
    assert np.isclose(kernel_energy(X, EXP, 0.0), 0.5 * np.sum(X.mean(0) ** 2), rtol=1e-13)


KERNELS = [
    ("exp(beta*s) + c*s**3", {"c": 0.5}),
    ("cosh(beta*s) + s", {}),
    ("c*s + (s + w*log(cosh((s - a)/w)))/2", {"c": 0.1, "w": 0.2, "a": -0.3}),
]


@pytest.mark.parametrize("text, params", KERNELS)
def test_gradient_taylor_remainder_has_slope_two(text, params):
    """E(R_X(t U)) - E(X) - t <grad E, U> = O(t^2) along the retraction x -> (x + t u)/|x + t u|."""
    kernel = parse_kernel(text, params)
    rng = np.random.default_rng(3)
    X = uniform_sphere(6, 3, 2)
    beta = 1.3
    U = rng.standard_normal(X.shape)
    U -= np.einsum("ij,ij->i", X, U)[:, None] * X
    g = kernel_riemannian_gradient(X, kernel, beta)
    E0 = kernel_energy(X, kernel, beta)
    ts = np.array([1e-2, 5e-3, 2.5e-3, 1.25e-3])
    rem = [abs(kernel_energy(renormalize(X + t * U), kernel, beta) - E0 - t * np.sum(g * U)) for t in ts]
    slope = np.polyfit(np.log(ts), np.log(rem), 1)[0]
    assert 1.9 < slope < 2.1  # second-order remainder; slope 1 would mean a wrong gradient


@pytest.mark.parametrize("text, params", KERNELS)
def test_energy_and_gradient_agree_with_numerics_hessian(text, params):
    """Second code path: numerics.critical.hessian compiles the substituted kernel independently."""
    kernel = parse_kernel(text, params)
    X = uniform_sphere(5, 4, 11)
    np.testing.assert_allclose(kernel_riemannian_gradient(X, kernel, 0.9), hessian.riemannian_gradient(X, 0.9, kernel),
                               rtol=1e-12, atol=1e-15)
    assert np.isclose(kernel_energy(X, kernel, 0.9), hessian.energy(X, 0.9, kernel), rtol=1e-12)


def test_sa_requires_positive_weight_and_overflow_is_reported():
    X = uniform_sphere(5, 3, 0)
    with pytest.raises(InputError, match="phi'"):
        kernel_field(X, parse_kernel("s**2"), 1.0, "sa")
    kernel_field(X, parse_kernel("s**2"), 1.0, "usa")  # fine without normalisation
    with pytest.raises(InputError, match="not finite"):
        kernel_field(X, EXP, 800.0, "usa")


def test_parameters_compile_once():
    k1 = parse_kernel("exp(beta*s) + c*s**3", {"c": 0.5})
    k2 = parse_kernel("exp(beta*s) + c*s**3", {"c": -2.0})
    c1, c2 = compile_kernel(k1), compile_kernel(k2)
    assert c1.dphi is c2.dphi and c1.params == (0.5,) and c2.params == (-2.0,)


def test_subnormal_beta_energy_is_the_beta_zero_limit():
    """At beta = 5e-324 (found by Hypothesis) the direct (e^{beta s} - 1)/beta gave E = 0.5 instead of 0.39: beta s
    rounds to beta. A subnormal beta now uses the beta -> 0 limit, like beta = 0; a normal tiny beta is unchanged."""
    X = uniform_sphere(2, 2, 0)
    for beta in (5e-324, -5e-324, 1e-310):
        assert np.isclose(kernel_energy(X, EXP, beta), interaction_energy(X, beta), rtol=1e-11, atol=1e-13)
    assert kernel_energy(X, EXP, 1e-300) == pytest.approx(kernel_energy(X, EXP, 0.0), rel=1e-12)
