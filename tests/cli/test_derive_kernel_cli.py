"""attnflow derive energy --kernel: the energy of the user's kernel, its gradient and its rate identity.

Checked against the API (theory.energy), against an independent mpmath computation of dE/dt along the kernel's
field, and shown to fail when the field's weight is not phi' (a planted error).
"""
import mpmath as mp
import pytest
import sympy as sp

from numerics.cli import main
from tests.cli.helpers import bad, run_json
from theory import energy as en
from theory import symbols as sym
from theory.expression_parser import parse_kernel


@pytest.mark.parametrize("model, text", [("usa", "cosh(beta*s)"), ("sa", "exp(2*beta*s) + s")])
def test_derive_energy_of_a_user_kernel_matches_the_api(capsys, model, text):
    payload = run_json(capsys, ["derive", "energy", "--model", model, "--d", "3", "--kernel", text])
    assert payload["ok"] is True and payload["kernel"] == str(parse_kernel(text).expr)
    statuses = [d["verification"]["status"] for d in payload["derivations"]]
    assert statuses == ["proved", "proved", "checked-at-points"]
    kernel = parse_kernel(text)
    api = [en.gradient_structure_derivation(3, kernel), en.energy_identity_derivation(model, 3, kernel),
           en.explicit_energy_identity_derivation(model, 2, 2, kernel=kernel)]
    assert [d["title"] for d in payload["derivations"]] == [d.title for d in api]
    # the explicit energy is the pair energy of this kernel at the two particles
    pts = [sym.particle(i + 1, 2) for i in range(2)]
    assert sp.simplify(api[2].steps[0].expr - en.empirical_energy(pts, kernel)) == 0


def test_the_rate_identity_agrees_with_mpmath():
    """usa with phi = cosh(beta s): sum_i <grad_i E, v_i> = (1/n) sum_i |v_i|^2, with dE/dt from a central
    difference of E along the sphere in 40 digits, and the field v_i = P_i((1/n) sum_j phi'(s_ij) x_j)."""
    with mp.workdps(40):
        rate, squares = _rate_and_squares()
    assert abs(rate - squares) < mp.mpf("1e-20") * abs(squares)
    # the same identity from the derivation's explicit objects (sympy, exact kernel) at n = 2, d = 2
    kernel = parse_kernel("cosh(beta*s)")
    der = en.explicit_energy_identity_derivation("usa", 2, 2, kernel=kernel)
    assert der.verify(points=3, simplify=False).ok


def _rate_and_squares():
    beta, n = mp.mpf("1.3"), 3
    X = [mp.matrix([mp.cos(a), mp.sin(a), 0]) for a in (mp.mpf("0.3"), mp.mpf("1.9"), mp.mpf("4.0"))]
    X[2] = mp.matrix([mp.cos(4) * mp.cos(mp.mpf("0.5")), mp.sin(4) * mp.cos(mp.mpf("0.5")), mp.sin(mp.mpf("0.5"))])

    def dot(a, b):
        return sum(a[k] * b[k] for k in range(3))

    def energy(P):
        return sum(mp.cosh(beta * dot(a, b)) for a in P for b in P) / (2 * n**2)

    def field(P):
        out = []
        for x in P:
            g = sum((beta * mp.sinh(beta * dot(x, y)) * y for y in P), mp.matrix([0, 0, 0])) / n
            out.append(g - dot(x, g) * x)
        return out

    V = field(X)
    h = mp.mpf("1e-15")

    def moved(t):
        return [(x + t * v) / mp.norm(x + t * v) for x, v in zip(X, V)]

    return (energy(moved(h)) - energy(moved(-h))) / (2 * h), sum(dot(v, v) for v in V) / n


def test_a_field_without_phi_prime_fails_the_explicit_check(monkeypatch, capsys):
    """Planted error: the field weighted by phi instead of phi' -> the explicit identity fails, exit 1."""
    from theory.kernels import PairKernel

    monkeypatch.setattr(PairKernel, "weight", lambda self: self.expr)
    assert main(["derive", "energy", "--model", "usa", "--d", "2", "--kernel", "cosh(beta*s)", "--json"]) == 1
    out = capsys.readouterr().out
    assert '"ok": false' in out


def test_derive_field_with_a_kernel_is_refused_with_the_way_to_its_field(capsys):
    assert "derive gradient" in bad(capsys, ["derive", "field", "--model", "usa", "--d", "2", "--kernel", "cosh(s)"])
