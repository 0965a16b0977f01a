"""Structured Hessian spectra (theory.structured) against the kernel-level blocks, exactly."""
import pytest
import sympy as sp

from theory import symbols as sym
from theory.derivation import Derivation
from theory.hessian import hessian_from_pair_blocks, pair_hessian_blocks
from theory.kernels import PairKernel
from theory.structured import (
    SpectralBranch,
    circle_cluster_spectrum,
    orthoplex_points,
    orthoplex_spectrum,
    placeholder_derivatives,
    simplex_spectrum,
    structured_spectrum_derivation,
)


@pytest.mark.parametrize("family, d, k, m", [
    ("simplex", 2, 3, 1), ("orthoplex", 2, 3, 1), ("clusters", 2, 2, 2), ("clusters", 3, 4, 1),
])
def test_structured_spectrum_proved(family, d, k, m):
    assert structured_spectrum_derivation(family, d, k, m).verify().status == "proved"


@pytest.mark.slow
@pytest.mark.parametrize("family, d, k, m", [
    ("simplex", 3, 3, 1), ("orthoplex", 3, 3, 1), ("clusters", 3, 3, 2), ("clusters", 2, 6, 1),
])
def test_structured_spectrum_proved_larger(family, d, k, m):
    assert structured_spectrum_derivation(family, d, k, m).verify().status == "proved"


def test_a_wrong_spectrum_is_rejected():
    """Perturb one branch of the square's spectrum: the exact check must fail (the test can fail)."""
    der = placeholder_derivatives()
    pts = orthoplex_points(2)
    branches = orthoplex_spectrum(2, der)
    wrong = [SpectralBranch(b.label, b.value * 2 if i == 1 else b.value, b.multiplicity)
             for i, b in enumerate(branches)]
    H = hessian_from_pair_blocks(pts, der).applyfunc(sp.expand)
    lhs = sp.Matrix([H.trace()])
    rhs = sp.Matrix([sum(b.value * b.multiplicity for b in wrong)])
    assert Derivation("wrong", "test", lhs, rhs).verify(points=0).status == "failed"
    rhs_ok = sp.Matrix([sum(b.value * b.multiplicity for b in branches)])
    assert Derivation("right", "test", lhs, rhs_ok).verify(points=0).status == "proved"


@pytest.mark.parametrize("k, m, d", [(1, 4, 3), (2, 3, 3), (3, 2, 2), (3, 1, 4), (5, 2, 3), (4, 1, 2)])
def test_cluster_multiplicities_and_rotation_modes(k, m, d):
    branches = circle_cluster_spectrum(k, m, d, placeholder_derivatives())
    assert sum(b.multiplicity for b in branches) == k * m * (d - 1)
    rotations = sum(b.multiplicity for b in branches if b.rotation)
    assert rotations == (d - 1 if k <= 2 else 1 + 2 * (d - 2))
    assert all(sp.simplify(b.value) == 0 for b in branches if b.rotation)


@pytest.mark.parametrize("d", [2, 3, 4, 7])
def test_simplex_and_orthoplex_multiplicities(d):
    assert sum(b.multiplicity for b in simplex_spectrum(d)) == (d + 1) * (d - 1)
    assert sum(b.multiplicity for b in orthoplex_spectrum(d)) == 2 * d * (d - 1)
    assert sum(b.multiplicity for b in simplex_spectrum(d) if b.rotation) == d * (d - 1) // 2


def test_three_cluster_threshold_is_minus_two_thirds():
    """In-plane p = 1 branch of 3 equal clusters on S^1 changes sign exactly at beta = -2/3."""
    branch = [b for b in circle_cluster_spectrum(3, 2, 2) if b.label == "in-plane cluster mode p=1"][0]
    roots = sp.solve(sp.simplify(branch.value * sp.exp(sym.beta / 2)), sym.beta)
    assert roots == [sp.Rational(-2, 3)]


def test_pair_blocks_accept_any_kernel():
    """A polynomial kernel: blocks at a pair give the documented structure (tangent off-diagonal)."""
    kernel = PairKernel(sym.s**3 + sym.beta * sym.s**2, name="cubic")
    x, y = sp.Matrix([1, 0]), sp.Matrix([0, 1])
    off, diag = pair_hessian_blocks(x, y, kernel.derivative(1).subs(sym.s, 0), kernel.derivative(2).subs(sym.s, 0))
    # s = 0: phi'(0) = 0, phi''(0) = 2 beta; P_x y = y, P_y x = x: off = 2 beta y x^T, diag = 2 beta y y^T
    assert off == 2 * sym.beta * y * x.T
    assert diag == 2 * sym.beta * y * y.T
