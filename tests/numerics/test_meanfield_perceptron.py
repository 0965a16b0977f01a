"""The perceptron block's mean-field landscape on S^1 (numerics.meanfield.perceptron; claim
meanfield.perceptron-atomic)."""
import numpy as np
import pytest

from numerics.meanfield import perceptron as P


def test_perceptron_claim_passes():
    from numerics.meanfield.perceptron_claims import check_perceptron_atomic

    r = check_perceptron_atomic()
    assert r.status == "passed", r.measured["flags"]
    assert r.measured["atoms"] == [2, 2, 2]


def test_derivatives_and_control():
    from numerics.meanfield.perceptron_claims import cosine_control, derivative_errors

    d = derivative_errors()
    assert d["gradient"] <= 1e-8 and d["second"] <= 1e-8
    c = cosine_control()
    assert c["psi_spread"] <= 1e-12 and c["density_min"] > 0


def test_obstruction_needs_a_resolved_large_ratio():
    """A degree-1 potential (Phi = w cos theta, small w) has no obstruction: the diffuse critical point exists."""
    p = P.random_perceptron(6, 7)
    assert P.constant_first_variation_obstruction(p, 1.0)["first_k_above_1"] == 1
    weak = P.constant_first_variation_obstruction(P.Perceptron(p.a, p.b, 1e-4 * p.w), 1.0)
    assert weak["first_k_above_1"] == 10
    # one neuron with a tiny input weight: Phi ~ w (a.x)^2 / 2 + ..., dominated by degrees <= 2 at this scale
    tiny = P.Perceptron(np.array([[1e-3, 0.0]]), np.array([0.0]), np.array([1e-3]))
    assert P.constant_first_variation_obstruction(tiny, 1.0, floor=1e-15)["first_k_above_1"] is None


def test_atom_hessian_matches_finite_differences():
    p = P.random_perceptron(6, 7)
    atoms, w, beta, h = np.array([0.3, 2.0, -1.5]), np.array([0.2, 0.5, 0.3]), 1.0, 1e-4

    def grad(th):   # dF/dtheta_a = w_a psi'(theta_a)
        return w * P.first_variation(th, th, w, beta, p, 1)

    H = np.array([(grad(atoms + h * e) - grad(atoms - h * e)) / (2 * h) for e in np.eye(3)]).T
    s = 1 / np.sqrt(w)
    assert np.max(np.abs(s[:, None] * H * s[None, :] - P.atom_hessian(atoms, w, beta, p))) <= 1e-6


def test_atoms_of_groups_across_zero():
    th = np.array([2 * np.pi - 1e-6, 1e-6, 3.0, 3.0 + 1e-7])
    atoms, w, diam = P.atoms_of(th)
    assert sorted(w) == pytest.approx([0.5, 0.5]) and diam <= 3e-6
    assert min(abs(np.angle(np.exp(1j * atoms)))) <= 1e-6
