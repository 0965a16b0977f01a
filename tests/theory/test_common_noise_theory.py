"""theory.common_noise: each derived formula checked two ways (symbolic reduction on the sphere, and finite
differences of the noise flows in NumPy), and each check seen to fail on a planted error."""
import numpy as np
import pytest
import sympy as sp

from theory import common_noise as C


@pytest.mark.parametrize("law", C.LAWS)
@pytest.mark.parametrize("d", [2, 3])
def test_derivations_are_proved(law, d):
    for make in (C.ito_correction_derivation, C.one_point_generator_derivation,
                 C.two_point_generator_derivation, C.lyapunov_derivation):
        result = make(law, d).verify()
        assert result.status == "proved", (make.__name__, result)


def test_planted_constants_fail():
    """A factor 2 in c, or the per-token constant D (d-1) read as the common noise's, is caught."""
    deriv = C.ito_correction_derivation("goe", 3)
    wrong = type(deriv)(title="planted", source="", lhs=deriv.lhs, rhs=2 * deriv.rhs, sampler=deriv.sampler)
    assert not wrong.verify().ok
    lyap = C.lyapunov_derivation("values", 3)
    assert not type(lyap)(title="planted", source="", lhs=lyap.lhs, rhs=-2 * C.sigma ** 2).verify().ok


def test_angle_is_a_martingale():
    for law in C.LAWS:
        second, first = C.angle_generator(law, 4)
        assert first == 0
        assert sp.simplify(second - C.angle_coefficient(law, 4) * sp.sin(sp.Symbol("theta", positive=True)) ** 2) == 0


# -- finite differences of the flows (NumPy only: an independent route) -------------------------------------------
def _basis(law, d, s):
    return [np.array(E.subs(C.sigma, s), dtype=float) for E in C.noise_basis(law, d)]


def _field(E, x):
    Ex = E @ x
    return -(Ex - (x @ Ex) * x)


def _flow(E, x, s, steps=40):
    """The flow of V_E for time s (RK4; s may be negative)."""
    h = s / steps
    for _ in range(steps):
        k1 = _field(E, x)
        k2 = _field(E, x + h / 2 * k1)
        k3 = _field(E, x + h / 2 * k2)
        k4 = _field(E, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


def _generator(basis, F, z, pair, s=1e-3):
    """(1/2) sum_a d^2/ds^2 F(flow_a^s z) at s = 0, by central differences (z = x or (x, y))."""
    total = 0.0
    for E in basis:
        def moved(t):
            if pair:
                return F(_flow(E, z[0], t), _flow(E, z[1], t))
            return F(_flow(E, z, t))
        total += (moved(s) - 2 * moved(0.0) + moved(-s)) / s ** 2 / 2
    return total


def _unit(rng, d):
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("law", C.LAWS)
@pytest.mark.parametrize("d", [3, 4])
def test_ito_correction_by_finite_differences(law, d):
    s, rng, eps = 0.7, np.random.default_rng(1), 1e-6
    x = _unit(rng, d)
    drift = np.zeros(d)
    for E in _basis(law, d, s):
        J = np.column_stack([(_field(E, x + eps * e) - _field(E, x - eps * e)) / (2 * eps) for e in np.eye(d)])
        drift += J @ _field(E, x) / 2
    c = float(C.diffusion_constant(law, d, s))
    assert np.allclose(drift, -c * (d - 1) * x, atol=1e-8)
    assert not np.allclose(drift, -2 * c * (d - 1) * x, atol=1e-3)  # the check can fail


@pytest.mark.parametrize("law", C.LAWS)
def test_one_point_generator_by_finite_differences(law):
    d, s, rng = 4, 0.9, np.random.default_rng(2)
    x = _unit(rng, d)
    basis, c = _basis(law, d, s), float(C.diffusion_constant(law, d, s))
    # spherical harmonics of degree 1 and 2: Lap_S = -l (l + d - 2)
    assert _generator(basis, lambda z: z[0], x, False) == pytest.approx(-c * (d - 1) * x[0], rel=1e-5)
    assert _generator(basis, lambda z: z[0] * z[1], x, False) == pytest.approx(-c * 2 * d * x[0] * x[1], rel=1e-5)


@pytest.mark.parametrize("law", C.LAWS)
def test_two_point_generator_by_finite_differences(law):
    d, s, rng = 3, 0.8, np.random.default_rng(3)
    x, y = _unit(rng, d), _unit(rng, d)
    rho = float(x @ y)
    A, B, r = C.two_point_coefficients(law, d)
    A, B = float(A.subs({r: rho, C.sigma: s})), float(B.subs({r: rho, C.sigma: s}))
    basis = _basis(law, d, s)
    # g = rho gives B; g = rho^2 gives 2 A + 2 rho B
    assert _generator(basis, lambda p, q: p @ q, (x, y), True) == pytest.approx(B, rel=1e-5)
    assert _generator(basis, lambda p, q: (p @ q) ** 2, (x, y), True) == pytest.approx(2 * A + 2 * rho * B, rel=1e-5)


@pytest.mark.parametrize("law", C.LAWS)
def test_dissipation_identity(law):
    deriv = C.dissipation_derivation(law, 3)
    assert deriv.verify().status == "proved"
    a = C.angle_coefficient(law, 3)
    theta = sp.Symbol("theta", positive=True)
    # planted: the noise term without the (1 - p) of the cos^2 part (p -> 0 there)
    wrong = type(deriv)(title="planted", source="", lhs=deriv.lhs,
                        rhs=deriv.rhs - sp.Symbol("p", positive=True) ** 2 * a * sp.cos(theta) ** 2)
    assert not wrong.verify().ok
