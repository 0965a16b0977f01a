"""Self-verification of the Gaussian derivations (theory.gaussian) and of the generated right-hand sides."""
import random

import numpy as np
import pytest
import sympy as sp

from theory import gaussian as G


@pytest.mark.parametrize("build", [G.softmax_tilting_derivation, G.l2_tilting_derivation,
                                   G.sinkhorn_plan_derivation, G.affine_transport_derivation,
                                   G.softmax_closed_form_derivation])
def test_d1_derivations_are_proved(build):
    assert build(1).verify().status == "proved"


@pytest.mark.parametrize("attention", G.ATTENTIONS)
@pytest.mark.parametrize("d", [1, 2])
def test_moment_ode_matches_matrix_form(attention, d):
    # the ODE derived from the symbolic affine field equals the general-d matrix formula, symbolically
    assert G.moment_ode_derivation(attention, d).verify().status == "proved"


@pytest.mark.parametrize("build", [G.softmax_tilting_derivation, G.sinkhorn_plan_derivation,
                                   G.affine_transport_derivation])
def test_d2_derivations_are_proved(build):
    assert build(2).verify().status == "proved"


@pytest.mark.parametrize("build", [G.l2_tilting_derivation, G.softmax_closed_form_derivation])
def test_d2_slow_derivations_hold_exactly_at_rational_points(build):
    # exact rational arithmetic at random points (symbolic simplification of these is slow: see the slow test)
    assert build(2).verify(points=3, simplify=False).status == "checked-at-points"


@pytest.mark.slow
@pytest.mark.parametrize("build", [G.l2_tilting_derivation, G.softmax_closed_form_derivation])
def test_d2_slow_derivations_are_proved(build):
    assert build(2).verify().status == "proved"


@pytest.mark.parametrize("build", [G.sinkhorn_riccati_derivation, G.sinkhorn_scalar_plan_derivation,
                                   G.softmax_scalar_derivation, G.l2_scalar_derivation,
                                   G.sinkhorn_scalar_derivation, G.softmax_low_rank_limit_derivation])
def test_closed_form_derivations(build):
    assert build().verify(points=3).ok


def test_blowup_characteristic_polynomial():
    assert G.softmax_blowup_derivation(2).verify().status == "proved"


def test_a_wrong_formula_fails():
    # the machinery can fail: a moment ODE with A in place of A^T in the covariance term is rejected
    g = G.gaussian_symbols(2)
    _da, dS = G.moment_ode_from_field("softmax", 2)
    wrong = g.V * g.Sigma * g.A * g.Sigma + g.Sigma * g.A * g.Sigma * g.V.T
    from theory.derivation import Derivation
    der = Derivation("wrong", "test", dS, wrong, sampler=G._sampler(g))
    assert der.verify(points=2).status == "failed"


def test_velocity_is_affine_and_softmax_mean_statement():
    # DESIGN's Gamma(x) = V(alpha + Sigma A x) and LITERATURE's d alpha/dt = V(I + Sigma A) alpha agree
    g = G.gaussian_symbols(2)
    _b, J = G.affine_parts("softmax", 2)
    assert sp.simplify(J - g.V * g.Sigma * g.A) == sp.zeros(2, 2)
    da, _ = G.moment_ode_from_field("softmax", 2)
    assert sp.simplify(da - g.V * (sp.eye(2) + g.Sigma * g.A) * g.alpha) == sp.zeros(2, 1)


@pytest.mark.parametrize("attention", ["softmax", "l2"])
def test_generated_rhs_matches_sympy_evalf(attention):
    rng = random.Random(3)
    g = G.gaussian_symbols(2)
    f = G.moment_rhs_function(attention, 2)
    args, _ = G.moment_rhs_arguments(attention, 2)
    subs = G._sampler(g)(rng)
    values = [float(subs[a]) for a in args]
    got = np.array(f(*values), dtype=float)
    exact = np.array([float(sp.N(e.xreplace(subs), 30)) for e in G.moment_rhs_exprs(attention, 2)])
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-12)


def test_generated_sinkhorn_covariance_solves_riccati():
    rng = np.random.default_rng(4)
    f = G.sinkhorn_conditional_covariance_function(2)
    for _ in range(5):
        L = rng.normal(size=(2, 2))
        Sigma = L @ L.T + 0.2 * np.eye(2)
        A = rng.normal(size=(2, 2))
        s11, s12, s22 = f(Sigma[0, 0], Sigma[0, 1], Sigma[1, 1], *A.ravel())
        S = np.array([[s11, s12], [s12, s22]])
        np.testing.assert_allclose(S @ A @ Sigma @ A.T @ S + S, Sigma, atol=1e-12)
        assert np.linalg.eigvalsh(S)[0] > 0


def test_symbols_rejects_large_d():
    with pytest.raises(ValueError):
        G.gaussian_symbols(5)
