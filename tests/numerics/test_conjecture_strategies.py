"""Public strategies of numerics.conjectures.strategies: unit rows, the promised structure, and usable in @given."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from numerics.conjectures import strategies as S
from numerics.critical.hessian import relative_residual
from theory.kernels import PairKernel


def _unit(X):
    return np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-14)


@given(S.uniform_configurations(n=st.integers(1, 6), d=3))
def test_uniform(X):
    assert X.shape[1] == 3 and 1 <= X.shape[0] <= 6 and _unit(X)


@given(S.clustered_configurations(masses=[3, 1, 2], d=4, spread=0.0))
def test_clustered_exact_masses(X):
    assert X.shape == (6, 4) and _unit(X)
    # spread 0: coincident points within each cluster
    assert np.allclose(X[0], X[2]) and np.allclose(X[4], X[5])


@given(S.near_critical_configurations(d=st.integers(2, 4), perturbation=0.0,
                                     kinds=("polygon", "equal-clusters", "simplex", "orthoplex")),
       S.betas(-2.0, 3.0))
def test_near_critical_without_perturbation_is_critical(X, beta):
    assert _unit(X)
    # structured configurations are critical points of E for every beta (symmetry): relative residual ~ eps
    assert relative_residual(X, beta) < 1e-12


@given(S.equiangular_configurations(n=st.integers(2, 6), d=7, rho=st.floats(-0.15, 0.95)))
def test_equiangular(X):
    G = X @ X.T
    off = G[~np.eye(len(G), dtype=bool)]
    assert _unit(X) and np.ptp(off) < 1e-12


@given(S.kernels("exp(beta*s) + c*s**3", c=st.floats(-1, 1)))
def test_kernels(kernel):
    assert isinstance(kernel, PairKernel) and len(kernel.params) == 1
