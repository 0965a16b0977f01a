"""theory.circle: angle equations, Kuramoto limit, Bessel-Fourier series, order-parameter identities."""
import mpmath as mp
import pytest
import sympy as sp

from theory.circle import (
    angle_equation_derivation,
    energy_in_order_parameters,
    fourier_coefficient_quadrature,
    fourier_kernels,
    fourier_series_derivations,
    generating_function_derivation,
    kuramoto_derivation,
    order_parameter_derivations,
    pair_angle_derivation,
    scaled_fourier_coefficient_function,
)
from theory.symbols import beta, u


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_pair_term_is_tangential_with_angle_velocity(model):
    d = pair_angle_derivation(model)
    assert d.verify().status == "proved"
    assert d.rhs[1] == 0


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_full_sphere_field_equals_angle_field_n3(model):
    assert angle_equation_derivation(model, 3).verify().status == "proved"


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_beta_zero_is_kuramoto_with_unit_coupling(model):
    assert kuramoto_derivation(model, 4).verify().status == "proved"


def test_derivation_can_fail():
    # a wrong coupling (K = 2) must be rejected: the check is not vacuous
    from theory.derivation import Derivation
    d = kuramoto_derivation("usa", 2)
    wrong = Derivation(d.title, d.source, d.lhs, 2 * d.rhs)
    assert not wrong.verify(simplify=True).ok


def test_generating_function_and_series_coefficients():
    assert generating_function_derivation(8).verify().status == "proved"
    for d in fourier_series_derivations():
        assert d.verify().status == "proved", d.title


@pytest.mark.parametrize("b", [0.5, 3.0, 20.0, -4.0])
@pytest.mark.parametrize("kk", [1, 2, 5])
def test_fourier_coefficients_by_quadrature(b, kk):
    # independent check of the Bessel coefficients by mpmath quadrature (30 digits)
    f_sin, f_cos = fourier_coefficient_quadrature(kk, b)
    with mp.workdps(30):
        assert abs(f_sin - (mp.besseli(kk - 1, b) - mp.besseli(kk + 1, b))) <= mp.mpf(10) ** -25 * mp.exp(abs(b))
        assert abs(f_cos - 2 * mp.besseli(kk, b)) <= mp.mpf(10) ** -25 * mp.exp(abs(b))


def test_truncated_series_converge_to_kernels():
    sin_series, cos_series = fourier_kernels(30)
    for b in (0.7, 5.0):
        for uu in (0.3, 2.0, -1.1):
            sub = {beta: b, u: uu}
            assert abs(sp.N(sin_series.subs(sub).doit(), 20) - sp.N(sp.exp(b * sp.cos(uu)) * sp.sin(uu), 20)) < 1e-12
            assert abs(sp.N(cos_series.subs(sub).doit(), 20) - sp.N(sp.exp(b * sp.cos(uu)), 20)) < 1e-12


def test_order_parameter_identities():
    for d in order_parameter_derivations(n=3, K=2):
        assert d.verify().status == "proved", d.title


def test_energy_expression_limit_at_beta_zero():
    # (sympy's limit() mishandles besseli here, so use the Taylor series of I_k, derived in theory.circle)
    from theory.circle import bessel_series
    E = energy_in_order_parameters(3)
    E_series = E.replace(sp.besseli, lambda order, x: bessel_series(int(order), 6).subs(beta, x))
    R1 = sp.Symbol("R_1", nonnegative=True)
    assert sp.simplify(sp.limit(E_series, beta, 0) - R1 / 2) == 0
    # and numerically at small beta, against mpmath Bessel functions
    val = E.subs({beta: sp.Rational(1, 10**6), R1: sp.Rational(1, 3)}).subs({sp.Symbol("R_2", nonnegative=True): 0,
                                                                             sp.Symbol("R_3", nonnegative=True): 0})
    assert abs(sp.N(val, 30) - sp.Rational(1, 6)) < 1e-6


def test_generated_coefficients_match_mpmath():
    fn = scaled_fourier_coefficient_function()
    import numpy as np
    ks = np.arange(0, 6, dtype=float)
    for b in (0.1, 7.0, 300.0, -2.5):
        a, bb = fn(ks, b)
        with mp.workdps(30):
            for kk in range(1, 6):
                ref_a = mp.besseli(kk, b) * mp.exp(-abs(b))
                ref_b = (mp.besseli(kk - 1, b) - mp.besseli(kk + 1, b)) * mp.exp(-abs(b))
                assert abs(a[kk] - float(ref_a)) <= 1e-14 * abs(float(ref_a)) + 1e-300
                assert abs(bb[kk] - float(ref_b)) <= 1e-13 * abs(float(ref_b)) + 1e-300
    assert "scipy.special.ive" in fn.__attnflow_source__
