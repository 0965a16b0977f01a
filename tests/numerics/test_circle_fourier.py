"""The O(n K) Fourier field on the circle against the direct O(n^2) field of numerics.core.field (d = 2)."""
import mpmath as mp
import numpy as np
import pytest
from scipy import special
from hypothesis import given
from hypothesis import strategies as st

from numerics.common.errors import InputError
from numerics.core.field import attention_field, make_field
from numerics.circle.fourier import (
    bessel_tail_bound,
    fourier_angle_velocity,
    fourier_is_faster,
    harmonics_for_tolerance,
    make_fourier_field,
)


def _circle(theta):
    return np.c_[np.cos(theta), np.sin(theta)]


def _tangential(V, theta):
    return -V[:, 0] * np.sin(theta) + V[:, 1] * np.cos(theta)


@pytest.mark.parametrize("beta", [0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, -3.0, -40.0])
@pytest.mark.parametrize("model", ["sa", "usa"])
def test_fourier_field_matches_direct_field(beta, model, rng):
    theta = rng.uniform(-np.pi, np.pi, 257)
    X = _circle(theta)
    unit = "rescaled" if model == "usa" and abs(beta) >= 100 else "natural"
    direct = attention_field(X, beta, model, time_unit=unit)
    fast = make_fourier_field(beta, model, time_unit=unit)(X)
    omega = fourier_angle_velocity(theta, beta, model, time_unit=unit)
    # Guarantee of harmonics_for_tolerance: kernels within tol I_0(|beta|) uniformly, so |error| <= 1e-12 * I_0
    # times the unit's scale (usa) or about 2e-12 I_0 / (Z_i/n) (sa); plus rounding of both paths (~1e-14).
    scale = np.abs(direct).max()
    assert np.abs(fast - direct).max() <= 1e-12 * scale + 1e-14
    assert np.allclose(omega, _tangential(direct, theta), rtol=0, atol=1e-12 * scale + 1e-14)
    # fast field is tangent and equal to omega J x
    assert np.abs(np.einsum("ij,ij->i", fast, X)).max() <= 1e-15 * max(1.0, scale)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), beta=st.floats(-8, 30), model=st.sampled_from(["sa", "usa"]))
def test_fourier_field_property(seed, n, beta, model):
    theta = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
    X = _circle(theta)
    direct = attention_field(X, beta, model)
    fast = make_fourier_field(beta, model)(X)
    # The error is absolute on the scale of the kernel, not relative to the field (which can vanish: n = 1 gives
    # direct = 0 exactly while the series leaves ~K eps I_0 of rounding; Hypothesis found 1.4e-14 at n = 1,
    # beta = 5, usa). Scales: usa (natural unit) is exact to tol I_0(|beta|) (harmonics_for_tolerance, mean kernel
    # weight) plus rounding ~K eps I_0(|beta|) with K <= 60 here; sa is a weighted mean of sin(theta_j - theta_i),
    # |omega| <= 1, exact to tol + K eps. Tolerance 1e-11 on that scale (tol = 1e-12 plus rounding, 10x margin).
    scale = float(special.ive(0, abs(beta))) * np.exp(abs(beta)) if model == "usa" else 1.0
    assert np.abs(fast - direct).max() <= 1e-11 * max(np.abs(direct).max(), scale)


def test_truncation_bound_is_a_bound_and_sharp():
    # the Amos geometric majorant dominates the true tail sum_{k>=K} I_k e^{-x} (mpmath, 30 digits)
    with mp.workdps(30):
        for x in (0.1, 1.0, 10.0, 100.0):
            for K in (1, 5, 20, 60, harmonics_for_tolerance(x)):
                true_tail = float(mp.nsum(lambda j: mp.besseli(j, x), [K, mp.inf]) * mp.exp(-x))
                bound = bessel_tail_bound(K, x)
                assert bound >= true_tail * (1 - 1e-12)
                if K == harmonics_for_tolerance(x):
                    assert bound <= 3 * true_tail  # at the chosen K the majorant is nearly sharp
    # K is minimal: K - 1 harmonics violate the criterion, and K grows like sqrt(beta)
    for beta in (0.1, 1.0, 10.0, 100.0, 1000.0):
        K = harmonics_for_tolerance(beta, 1e-12)
        assert K >= 1
        if K > 1:
            from scipy.special import ive
            assert 3 * bessel_tail_bound(K - 1, beta) > 1e-12 * ive(0, beta)
    assert harmonics_for_tolerance(0.0) == 1
    assert harmonics_for_tolerance(1000.0) < 300


def test_truncated_field_error_is_below_tolerance_against_direct_sum(rng):
    # worst case for truncation: the sup of the kernel tail is attained for clustered configurations
    for beta in (1.0, 10.0, 100.0):
        for tol in (1e-4, 1e-8):
            theta = np.concatenate([rng.normal(0, 0.05, 50), rng.uniform(-np.pi, np.pi, 50)])
            direct = _tangential(attention_field(_circle(theta), beta, "usa", time_unit="rescaled"), theta)
            fast = fourier_angle_velocity(theta, beta, "usa", tol=tol, time_unit="rescaled")
            from scipy.special import ive
            assert np.abs(fast - direct).max() <= tol * ive(0, beta)


def test_explicit_harmonics_and_validation():
    theta = np.array([0.0, 1.0, 2.0])
    assert fourier_angle_velocity(theta, 1.0, "sa", harmonics=40).shape == (3,)
    with pytest.raises(InputError):
        fourier_angle_velocity(theta, 1.0, "bad")
    with pytest.raises(InputError):
        fourier_angle_velocity(theta, float("nan"))
    with pytest.raises(InputError):
        fourier_angle_velocity(np.array([0.0, np.inf]), 1.0)
    with pytest.raises(InputError):
        fourier_angle_velocity(theta, 800.0, "usa", time_unit="natural")
    with pytest.raises(InputError):
        harmonics_for_tolerance(1.0, tol=0.0)


def test_make_fourier_field_is_drop_in_for_make_field(rng):
    theta = rng.uniform(0, 2 * np.pi, 64)
    X = _circle(theta)
    for model in ("sa", "usa"):
        assert np.allclose(make_fourier_field(5.0, model)(X), make_field(2, 5.0, model)(X), rtol=0, atol=1e-12)


def test_cost_model_prefers_fourier_for_large_n():
    assert fourier_is_faster(16384, 10.0)
    assert fourier_is_faster(64, 1.0)
    assert not fourier_is_faster(8, 100.0)  # K ~ 80 harmonics cost more than 64 pairs


def test_hand_written_field_matches_generated_terms(rng):
    # the O(n K) Horner path against the per-harmonic terms generated by theory.codegen from the sympy expressions
    from numerics.circle.fourier import fourier_coefficients
    from theory.circle import order_parameter_term_function

    terms = order_parameter_term_function()
    theta = rng.uniform(-np.pi, np.pi, 300)
    for beta in (0.5, 10.0, 400.0):
        K = harmonics_for_tolerance(beta)
        ks = np.arange(1, K + 1, dtype=float)[:, None]
        r = np.exp(1j * ks * theta[None, :]).mean(axis=1, keepdims=True)
        sin_t, cos_t, energy_t = terms(ks, beta, theta[None, :], r.real, r.imag, np.abs(r) ** 2)
        a, _ = fourier_coefficients(beta, K)
        usa = sin_t.sum(axis=0)
        sa = usa / (a[0] + cos_t.sum(axis=0))
        assert np.abs(fourier_angle_velocity(theta, beta, "usa", time_unit="rescaled") * np.exp(beta - abs(beta))
                      - usa).max() <= 1e-13 * np.abs(usa).max() + 1e-300
        assert np.abs(fourier_angle_velocity(theta, beta, "sa", harmonics=K) - sa).max() <= 1e-13 * np.abs(sa).max()
        from numerics.circle.angles import circle_energy
        assert abs(circle_energy(theta, beta, normalization="gkpr") - (a[0] + energy_t.sum())) <= 1e-14


def test_generated_module_is_standalone(tmp_path):
    from theory.circle import circle_module_source
    from theory.codegen import write_module

    path = write_module(tmp_path / "circle_generated.py", circle_module_source())
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    a, b = ns["circle_scaled_fourier_coefficients"](np.arange(3.0), 2.0)
    assert np.isclose(b[1], np.exp(-2.0) * (2 * 1 * float(__import__("scipy.special").special.iv(1, 2.0)) / 2.0))


@pytest.mark.parametrize("beta", [10.0, 100.0, 1000.0])
def test_sa_worst_case_isolated_particle(beta, rng):
    # a tight cluster and one particle opposite it: Z_i/n of the lone particle is ~1/n, the worst case of the
    # sa ratio; rows with Z_i/n < 1e-4 I_0 are recomputed directly, the others keep truncation and rounding below tol
    n = 5000
    theta = np.r_[rng.normal(0.0, 0.01, n - 1), np.pi - 0.3]
    X = _circle(theta)
    direct = attention_field(X, beta, "sa")
    fast = make_fourier_field(beta, "sa")(X)
    assert np.abs(fast - direct).max() <= 1e-12


@pytest.mark.parametrize("beta", [-5.0, -40.0, -500.0])
def test_sa_negative_beta_exact(beta, rng):
    # beta << 0: Z_i/n can be ~e^{-2|beta|}, far below the rounding of the Fourier sums; those rows are recomputed
    # directly, so the sa velocity stays exact (|omega_i| <= 1)
    theta = rng.uniform(-np.pi, np.pi, 300)
    X = _circle(theta)
    direct = attention_field(X, beta, "sa")
    fast = make_fourier_field(beta, "sa")(X)
    assert np.abs(fast - direct).max() <= 1e-12
