"""Derivations a person can read: structured forms by default, expanded coordinates on request."""
import json

import numpy as np
import sympy as sp

from numerics.cli import main
from theory import symbols as sym
from theory.structured import circle_cluster_spectrum, placeholder_derivatives, readable_branch


def _out(capsys, argv):
    code = main(argv)
    return code, capsys.readouterr().out


def test_derive_with_a_user_kernel_has_no_attention_text(capsys):
    code, out = _out(capsys, ["derive", "gradient", "--model", "sa", "--d", "3", "--kernel", "exp(beta*s) + c*s**3",
                              "--param", "c=0.1"])
    assert code == 0
    assert "attention weight" not in out and "usa field" not in out and "E_beta" not in out
    assert "kernel field = n * Riemannian gradient of E" in out
    assert "phi'(s) = beta*exp(beta*s) + 3*c*s**2" in out
    assert "verification: proved" in out


def test_derive_hessian_structured_by_default_expanded_on_request(capsys):
    code, out = _out(capsys, ["derive", "hessian", "--model", "sa", "--d", "2", "--latex"])
    assert code == 0
    assert r"\phi''(s_{ij})" in out and len(out) < 3000  # today: 105 KB of coordinates at d = 3
    code, full = _out(capsys, ["derive", "hessian", "--model", "sa", "--d", "2", "--latex", "--expanded"])
    assert code == 0 and len(full) > 5 * len(out) and "x_{1,1}" in full.replace(" ", "")


def test_critical_closed_form_in_terms_of_the_kernel(capsys):
    code, out = _out(capsys, ["critical", "--config", "polygon", "--n", "7", "--d", "2", "--beta", "3",
                              "--closed-form"])
    assert code == 0
    assert "cos(16*pi/7)" not in out and "exp(" not in out.split("closed form: kernel")[1].split("\n", 1)[1]
    assert "phi''(cos(2*pi/7))" in out
    code, payload = main(["critical", "--config", "polygon", "--n", "7", "--d", "2", "--beta", "3", "--closed-form",
                          "--json"]), json.loads(capsys.readouterr().out)
    assert payload["closed_form"]["max_abs_difference"] < 1e-12


def test_readable_branch_equals_the_kernel_branch():
    """The phi'/phi'' form with phi = phi_beta substituted equals the branch the spectrum check evaluates
    (two code paths: abstract derivatives vs the kernel's), at beta = 3, to 1e-13."""
    beta = 3.0
    concrete = circle_cluster_spectrum(7, 1, 2)
    abstract = circle_cluster_spectrum(7, 1, 2, placeholder_derivatives())
    for a, c in zip(abstract, concrete):
        text = readable_branch(a.value)
        expr = sp.sympify(text.replace("phi''(", "ddphi(").replace("phi'(", "dphi("),
                          locals={"dphi": sp.Lambda(sym.s, sp.exp(sym.beta * sym.s)),
                                  "ddphi": sp.Lambda(sym.s, sym.beta * sp.exp(sym.beta * sym.s)),
                                  "beta": sym.beta})
        got = float(expr.subs(sym.beta, beta))
        want = float(c.value.subs(sym.beta, beta))
        assert abs(got - want) <= 1e-13 * max(1.0, abs(want)), (a.label, got, want)
    assert np.isfinite(want)
