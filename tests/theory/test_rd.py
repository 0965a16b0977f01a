"""theory.rd: the rescaled equation of R^d self-attention is proved symbolically, and the check can fail."""
import sympy as sp

from theory import rd


def test_rescaled_equation_is_proved():
    assert rd.rescaled_equation_derivation().verify().status == "proved"
    assert rd.rescaled_logit_derivation().verify().status == "proved"


def test_rescaled_equation_fails_without_the_minus_z_term(monkeypatch):
    # planted: dz_i/dt = V sum_j P_ij z_j (the -z_i from differentiating e^{tV} dropped)
    def wrong(V, P, Z, i):
        return V * sum((P[i, j] * Z[j] for j in range(len(Z))), sp.zeros(*Z[0].shape))

    monkeypatch.setattr(rd, "rescaled_velocity_expr", wrong)
    assert not rd.rescaled_equation_derivation().verify().ok


def test_propagator_identities_fail_for_a_wrong_exponential(monkeypatch):
    # planted: the off-diagonal entry of e^{tV} with the wrong sign
    def wrong(a, b, c, t):
        return sp.Matrix([[sp.exp(a * t), -b * (sp.exp(a * t) - sp.exp(c * t)) / (a - c)], [0, sp.exp(c * t)]])

    monkeypatch.setattr(rd, "triangular_exponential", wrong)
    assert not rd.rescaled_equation_derivation().verify().ok
