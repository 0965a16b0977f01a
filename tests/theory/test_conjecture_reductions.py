"""Equiangular and cluster reductions: derived rates, explicit small-n cross-checks, closed forms."""
import random

import mpmath
import pytest
import sympy as sp

from theory import symbols as sym
from theory.expression_parser import parse_kernel
from theory.kernels import exponential_kernel
from theory.reductions import (
    beta_zero_closed_form,
    beta_zero_derivation,
    cluster_derivation,
    equiangular_derivation,
    equiangular_diagonal_rate,
    equiangular_rate,
    initial_speed,
    rational_equiangular_points,
    synchronisation_rate,
)

s, beta, n = sym.s, sym.beta, sym.n


def _zero(e):
    return sp.cancel(sp.together(e)) == 0


def test_equiangular_rates_of_the_exponential_kernel():
    usa = equiangular_rate(model="usa")
    sa = equiangular_rate(model="sa")
    assert _zero(usa - 2 * sp.exp(beta * s) * (1 - s) * (1 + (n - 1) * s) / n)
    assert _zero(sa - 2 * sp.exp(beta * s) * (1 - s) * (1 + (n - 1) * s) / (sp.exp(beta) + (n - 1) * sp.exp(beta * s)))
    assert equiangular_diagonal_rate(model="sa") == 0 and equiangular_diagonal_rate(model="usa") == 0


def test_literature_claim_6_initial_speed_is_exactly_two_over_e_beta_plus_n_minus_one():
    assert _zero(initial_speed(model="sa") - 2 / (sp.exp(beta) + n - 1))


def test_local_rate_at_synchronisation_matches_glpr_claim_2():
    assert _zero(synchronisation_rate(model="usa") - 2 * sp.exp(beta))
    assert synchronisation_rate(model="sa") == 2


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_equiangular_reduction_agrees_with_explicit_particles(model):
    result = equiangular_derivation(model=model, n=3).verify(points=2, simplify=False)
    assert result.ok, result.detail


def test_equiangular_reduction_for_a_user_kernel_in_higher_dimension():
    kernel = parse_kernel("exp(beta*s) + c*s**3", {"c": 0.5})
    result = equiangular_derivation(kernel, model="usa", n=3, d=4).verify(points=2, simplify=False)
    assert result.ok, result.detail


def test_equiangular_check_can_fail():
    """Negative control: the sa explicit field against the usa rate must be refuted at equiangular points."""
    right = equiangular_derivation(model="sa", n=3)
    wrong_rhs = equiangular_derivation(model="usa", n=3).rhs
    subs = right.sampler(random.Random(0))
    wrong = [sp.N(e.xreplace(subs), 30) for e in right.lhs - wrong_rhs]
    good = [sp.N(e.xreplace(subs), 30) for e in right.lhs - right.rhs]
    assert max(abs(v) for v in wrong) > 1e-6 and max(abs(v) for v in good) < 1e-25


def test_rational_equiangular_points_are_exact():
    rng = random.Random(1)
    for nn, dd in [(3, 3), (4, 6), (5, 5)]:
        pts, rho = rational_equiangular_points(rng, nn, dd)
        M = sp.Matrix(pts)
        G = M * M.T
        assert all(G[i, i] == 1 for i in range(nn))
        assert all(G[i, j] == rho for i in range(nn) for j in range(nn) if i != j)


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_beta_zero_closed_form(model):
    assert beta_zero_derivation(model).verify().status == "proved"
    # independent: mpmath ODE solution of the beta = 0 rate at n = 5, rho0 = -0.1, t = 1.3
    F0 = sp.lambdify(s, sp.limit(equiangular_rate(model=model), beta, 0).subs(n, 5), "mpmath")
    with mpmath.workdps(30):  # local precision: a global mp.dps = 30 leaked into every later test
        sol = mpmath.odefun(lambda t, y: F0(y), 0, mpmath.mpf("-0.1"))
        exact = beta_zero_closed_form(5, sp.Rational(-1, 10)).subs(sym.t, sp.Rational(13, 10))
        assert abs(sol(mpmath.mpf("1.3")) - sp.N(exact, 30)) < 1e-20


@pytest.mark.parametrize("model, sizes", [("sa", (2, 1)), ("usa", (2, 1, 1))])
def test_cluster_reduction_is_an_identity(model, sizes):
    assert cluster_derivation(model=model, sizes=sizes).verify().status == "proved"


def test_cluster_reduction_for_a_user_kernel():
    kernel = parse_kernel("cosh(beta*s) + c*s", {"c": 2.0})
    assert cluster_derivation(kernel, model="sa", sizes=(1, 2), d=2).verify().status == "proved"


def test_cluster_reduction_can_fail():
    good = cluster_derivation(exponential_kernel(), model="usa", sizes=(2, 1))
    other = cluster_derivation(exponential_kernel(), model="usa", sizes=(1, 2))  # masses swapped
    subs = good.sampler(random.Random(0))
    assert max(abs(sp.N(e.xreplace(subs), 30)) for e in good.lhs - other.rhs) > 1e-6


def test_cluster_reduction_fails_with_a_reflection_as_projection(monkeypatch):
    """The particle side uses theory.sphere.tangent_projection, the cluster side writes the projection out:
    with a reflection in the helper the identity fails (before, both sides used it and it still 'proved')."""
    import theory.reductions

    def reflection(x, y):
        return y - 2 * (x.T * y)[0, 0] * x

    assert cluster_derivation(model="usa", sizes=(2, 1)).verify().ok
    monkeypatch.setattr(theory.reductions, "tangent_projection", reflection)
    assert not cluster_derivation(model="usa", sizes=(2, 1)).verify().ok
