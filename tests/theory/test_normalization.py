"""theory.normalization: the schemes' laws from their layer maps, the equiangular (s, r) system, closed forms."""
from __future__ import annotations

import random

import pytest
import sympy as sp

from numerics.core.norms import NORMS
from theory import normalization as N
from theory import symbols as sym
from theory.derivation import rational_sphere_point
from theory.kernels import exponential_kernel
from theory.reductions import equiangular_coefficients


def test_scheme_names_agree_with_the_core():
    assert N.SCHEMES == NORMS


@pytest.mark.parametrize("name", ["post", "pre", "peri", "ngpt"])
def test_laws_are_proved_and_limits_equal_derivatives(name):
    assert N.scheme_derivation(name).verify().status == "proved"
    assert N._limits(name) == N._limits(name, by_limit=True)


def _vector_map(name, x, A, h):
    """The layer map with explicit vectors (the definitions, no plane decomposition)."""
    norm = (lambda y: y / sp.sqrt((y.T * y)[0, 0]))
    mA = sp.sqrt((A.T * A)[0, 0])
    if name == "post":
        return norm(x + h * A)
    if name == "pre":
        return x + h * A
    if name == "peri":
        return x + h * A / mA
    if name == "lnscale":  # A: the attention output at beta(t); the branch factor 1/sqrt(l), l = 1 + t/tau
        return x + h * A / sp.sqrt(1 + sym.t / sym.tau)
    return norm(x + h * sym.alpha * (A / mA - x))


@pytest.mark.parametrize("name", ["post", "pre", "peri", "ngpt", "lnscale"])
def test_laws_match_the_vector_maps_at_rational_points(name):
    """Second path: d/dh at h = 0 of the explicit vector map (exact rational theta, A, r) equals
    (rdot theta + r g P_theta A) with the derived laws."""
    rng = random.Random(3)
    h = sp.Symbol("h", positive=True)
    theta = sp.Matrix(rational_sphere_point(rng, 3))
    A = sp.Matrix([sp.Rational(rng.randint(-9, 9), 7) for _ in range(3)])
    r = sp.Integer(1) if name in ("post", "ngpt") else sp.Rational(5, 3)
    x = r * theta
    dx = sp.diff(_vector_map(name, x, A, h), h).subs(h, 0)
    a = (theta.T * A)[0, 0]
    rdot, g = N.scheme_laws(name)
    sub = {sym.radius: r, sym.radial: a, sym.attention_norm: sp.sqrt((A.T * A)[0, 0]), sym.branch_scale: 1}
    depth = {sym.t: 3, sym.tau: 1}  # lnscale: l = 4, branch factor 1/2 (the other schemes have no t, tau)
    expected = rdot.subs(sub) * theta + r * g.subs(sub) * (A - a * theta)
    assert sp.simplify((dx - expected).subs(depth)) == sp.zeros(3, 1)


def test_planted_wrong_pre_law_fails_the_vector_check(monkeypatch):
    """Shown to fail: a pre-LN law with g = 1 (the post law) disagrees with the vector map."""
    monkeypatch.setattr(N, "scheme_laws", lambda name: (sym.radial * sym.branch_scale, sym.branch_scale))
    with pytest.raises(AssertionError):
        test_laws_match_the_vector_maps_at_rational_points("pre")


def test_mix_and_sqrt_are_built_from_post_and_pre():
    rdot, g = N.scheme_laws("mix")
    early = {sym.t: 0, sym.switch_time: 1}
    late = {sym.t: 2, sym.switch_time: 1}
    assert (rdot.subs(early), g.subs(early)) == N.scheme_laws("post")
    assert (rdot.subs(late), g.subs(late)) == N.scheme_laws("pre")
    r_sqrt, g_sqrt = N.scheme_laws("sqrt")
    assert sp.simplify(g_sqrt.subs(sym.t, 3 * sym.tau) - 1 / (2 * sym.radius)) == 0
    with pytest.raises(ValueError, match="unknown normalisation scheme"):
        N.scheme_laws("layernorm")


def test_equiangular_attention_agrees_with_reductions():
    kernel = exponential_kernel()
    for model in ("sa", "usa"):
        a, m = N.equiangular_attention(kernel, model)
        c_same, c_other = equiangular_coefficients(kernel, model)
        w1 = kernel.weight().subs(sym.s, 1)
        scale = 1 / sym.n if model == "usa" else 1 / (w1 + (sym.n - 1) * kernel.weight())
        assert sp.simplify(c_same - (scale * w1 - a)) == 0
        assert sp.simplify(m.subs(sym.s, 1) - (1 if model == "sa" else sp.exp(sym.beta))) == 0


@pytest.mark.parametrize("name", ["pre"])  # peri (~35 s of SymPy) runs in the slow test below with every scheme
def test_equiangular_system_against_explicit_tokens(name):
    assert N.equiangular_system_derivation(name, "sa", n=3).verify(simplify=False).ok


@pytest.mark.slow
@pytest.mark.parametrize("name", N.SCHEMES)
@pytest.mark.parametrize("model", ["sa", "usa"])
def test_equiangular_system_against_explicit_tokens_all(name, model):
    assert N.equiangular_system_derivation(name, model, n=3).verify(simplify=False).ok


@pytest.mark.parametrize("name", ["post", "pre", "ngpt", "sqrt", pytest.param("lnscale", marks=pytest.mark.slow)])
def test_closed_forms_solve_the_linearised_system(name):
    assert N.linearized_closed_form_derivation(name).verify().ok


def test_closed_forms_state_the_papers_rates():
    eps, _ = N.linearized_closed_form("post")
    assert sp.simplify(eps - sym.epsilon0 * sp.exp(-2 * sym.t)) == 0  # Post-LN e^{-2t}
    eps, r = N.linearized_closed_form("pre")
    assert sp.simplify(eps - sym.epsilon0 * sym.radius0**2 / (sym.radius0 + sym.t)**2) == 0  # Pre-LN ~ 1/t^2
    assert sp.simplify(r - (sym.radius0 + sym.t)) == 0


def test_shifted_kernel_gives_the_same_sa_system():
    import numpy as np

    f = N.equiangular_function("peri", "sa")
    sdot, rdot = N.equiangular_system("peri", exponential_kernel(), "sa")
    point = {sym.s: sp.Rational(3, 10), sym.radius: sp.Rational(3, 2), sym.beta: 2, sym.n: 5}
    got = f(0.3, 1.5, 2.0, 5, 1.0, 0.0, np.inf, 1.0)
    assert got[0] == pytest.approx(float(sdot.subs(point)), rel=1e-13)
    assert got[1] == pytest.approx(float(rdot.subs(point)), rel=1e-13)
    assert np.isfinite(f(0.0, 1.0, 800.0, 5, 1.0, 0.0, np.inf, 1.0)[0])  # no e^{beta} formed


# -- LayerNorm Scaling -------------------------------------------------------------------------------------------
def test_lnscale_laws_are_proved():
    assert N.scheme_derivation("lnscale").verify().status == "proved"
    assert N._limits("lnscale") == N._limits("lnscale", by_limit=True)
    assert N.depth_beta("lnscale") == sym.beta / (1 + sym.t / sym.tau) and N.depth_beta("pre") == sym.beta


@pytest.mark.parametrize("model", ["sa", "usa"])
def test_lnscale_is_attention_at_beta_over_l(model):
    assert N.lnscale_attention_derivation(model).verify().status == "proved"


def test_planted_unscaled_values_fail_the_attention_identity():
    """Shown to fail: LayerNorm Scaling read as beta/l on the logits only (values not divided by sqrt(l)) breaks
    the identity at a point where the true identity holds to round-off."""
    import numpy as np

    d = N.lnscale_attention_derivation("sa")
    names = sorted(d.lhs.free_symbols | d.rhs.free_symbols, key=str)
    ell = next(s for s in names if s.name == "l")
    residuals = sp.lambdify(names, [d.lhs - d.rhs, d.lhs - d.rhs * sp.sqrt(ell)], "numpy")
    right, wrong = residuals(*np.random.default_rng(5).uniform(0.2, 2.0, len(names)))
    assert np.max(np.abs(right)) < 1e-13 and np.max(np.abs(wrong)) > 1e-2


def test_lnscale_reduction_and_closed_form():
    """At t = 0 the lnscale system is pre-LN's; for sa its linearised closed form is sqrt's (lambda = 2 and
    a_1 = 1 do not depend on beta); for usa a_1 = e^{beta(t)} and no closed form is claimed."""
    for model in ("sa", "usa"):
        ln = N.equiangular_system("lnscale", model=model)
        pre = N.equiangular_system("pre", model=model)
        assert all(sp.simplify(a.subs(sym.t, 0) - b) == 0 for a, b in zip(ln, pre))
    assert N.linearized_rates("lnscale", model="usa")["a1"].has(sym.t)
    with pytest.raises(ValueError, match="no elementary closed form"):
        N.linearized_closed_form("lnscale", model="usa")


@pytest.mark.slow
def test_lnscale_sa_closed_form_is_sqrts():
    assert [sp.simplify(a - b) for a, b in zip(N.linearized_closed_form("lnscale"),
                                               N.linearized_closed_form("sqrt"))] == [0, 0]
