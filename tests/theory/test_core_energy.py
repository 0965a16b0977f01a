"""theory.energy and theory.fields: derivations verify, and a wrong identity is caught."""
import random

import pytest
import sympy as sp

from theory import energy as en
from theory import fields
from theory import symbols as sym
from theory.derivation import Derivation, _is_exactly_zero_exp_rational, rational_sphere_point
from theory.spec import ModelSpec


@pytest.mark.parametrize("d", [2, 3, 4])
def test_gradient_structure_proved_every_n(d):
    assert en.gradient_structure_derivation(d).verify().status == "proved"


def test_gradient_structure_other_kernels():
    """The pair-level identity n grad E = P_x((1/n) phi'(s) y) holds for any kernel, e.g. CRMB-style kernels."""
    from theory.kernels import PairKernel

    a = sp.Symbol("a", real=True)
    for expr, params in ((sym.s**3 / 3 + sym.s, {}), (sp.cosh(sym.beta * sym.s), {}), (a * sym.s**2, {a: a})):
        der = en.gradient_structure_derivation(3, PairKernel(expr, params))
        assert der.verify().status == "proved"
    assert en.gradient_structure_derivation(3).steps[-1].expr == 0  # phi_beta' is the attention weight


def test_explicit_gradient_structure_small_n():
    ver = en.explicit_gradient_structure_derivation(3, 2).verify(points=3, simplify=False)
    assert ver.status == "checked-at-points"


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_energy_identity_proved_every_n(model):
    assert en.energy_identity_derivation(model, 3).verify().status == "proved"


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_energy_identity_explicit_small_n(model):
    assert en.explicit_energy_identity_derivation(model, 2, 2).verify(points=3, simplify=False).ok


def test_wrong_energy_constant_is_caught():
    """Same construction with the usa weight 1/n^2 instead of 1/n must fail."""
    der = en.explicit_energy_identity_derivation("usa", 2, 2)
    wrong = Derivation("wrong", "test", der.lhs, der.rhs / 2, sampler=der.sampler)
    assert wrong.verify(points=2, simplify=False).status == "failed"


def test_empirical_measure_and_beta_zero():
    assert en.empirical_measure_derivation(3, 2).verify().status == "proved"
    pts = [sym.particle(i + 1, 2) for i in range(2)]
    E = en.empirical_energy(pts)
    assert sp.simplify(sp.limit(E, sym.beta, 0) - en.energy_at_beta_zero(pts)) == 0
    assert isinstance(en.mean_field_energy(2), sp.Expr)


def test_exact_zero_decision():
    r = sp.Rational
    assert _is_exactly_zero_exp_rational(sp.exp(r(1, 3)) ** 3 - sp.E) is True
    assert _is_exactly_zero_exp_rational(sp.exp(r(1, 3)) ** 3 - sp.E + r(1, 10**40)) is False
    assert _is_exactly_zero_exp_rational(sp.sqrt(2) - 1) is None


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_field_derivations(model):
    spec = ModelSpec(model, 3)
    assert fields.tangency_derivation(spec).verify().status == "proved"
    assert fields.field_derivation(spec).verify().ok
    assert fields.shift_invariance_derivation(spec).verify().status == "proved"


def test_particle_field_general_qkv_is_tangent_on_sphere():
    spec = ModelSpec("sa", 3, Q=[[1, 2, 0], [0, 1, 0], [1, 0, 1]], K=[[0, 1, 0], [1, 0, 0], [0, 0, 2]],
                     V=[[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    rng = random.Random(3)
    pts = [sp.Matrix(rational_sphere_point(rng, 3)) for _ in range(3)]
    v = fields.particle_field(spec.__class__(spec.model, 3, beta=sp.Rational(1, 2), Q=spec.Q, K=spec.K, V=spec.V),
                              0, pts)
    assert sp.simplify((pts[0].T * v)[0, 0]) == 0
    # the score is <Q x, K y> = y^T A x
    x, y = sym.vector("x", 3), sym.vector("y", 3)
    assert sp.expand(fields.attention_score(spec, x, y) - (y.T * spec.A * x)[0, 0]) == 0


def test_mean_field_normalisation_on_the_circle():
    """E_beta(uniform on S^1) = 1/2 double-integral phi_beta(cos(t - s)) dt ds / (2 pi)^2 = (I_0(beta) - 1)/(2 beta):
    mpmath quadrature of the mean-field form, the closed form, and the empirical energy of 64 equally spaced
    points (exact for the first 63 Fourier modes, so equal up to I_64(beta) ~ 1e-80) agree."""
    import mpmath
    import numpy as np

    from numerics.core.field import interaction_energy

    beta = 1.7
    with mpmath.workdps(30):
        quad = mpmath.quad(lambda u: mpmath.expm1(beta * mpmath.cos(u)) / beta, [0, 2 * mpmath.pi]) / (4 * mpmath.pi)
        closed = (mpmath.besseli(0, beta) - 1) / (2 * beta)
    assert abs(quad - closed) < 1e-25
    theta = 2 * np.pi * np.arange(64) / 64
    X = np.column_stack([np.cos(theta), np.sin(theta)])
    assert abs(interaction_energy(X, beta) - float(closed)) < 1e-14


def test_identities_fail_when_the_shared_projection_is_a_reflection(monkeypatch):
    """Each identity has a side built without theory.sphere.tangent_projection, so replacing that helper by the
    reflection y - 2<x, y>x everywhere makes them fail (before, both sides used it and they still 'proved')."""
    import theory.energy
    import theory.fields
    import theory.sphere
    from theory.energy import (energy_identity_derivation, explicit_gradient_structure_derivation,
                               gradient_structure_derivation)

    def reflection(x, y):
        x, y = theory.sphere._col(x), theory.sphere._col(y)
        return y - 2 * (x.T * y)[0, 0] * x

    for module in (theory.sphere, theory.fields, theory.energy):
        monkeypatch.setattr(module, "tangent_projection", reflection)
    for der, kw in ((gradient_structure_derivation(3), {}), (energy_identity_derivation("sa", 3), {}),
                    (energy_identity_derivation("usa", 3), {}),
                    (explicit_gradient_structure_derivation(2, 2), {"points": 2, "simplify": False})):
        assert not der.verify(**kw).ok, der.title
