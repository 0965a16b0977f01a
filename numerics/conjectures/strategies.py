"""Public Hypothesis strategies for property tests of the attention dynamics (and the conjecture catalogue).

Import this module explicitly (``from numerics import strategies``): it imports ``hypothesis`` at module level,
so :mod:`numerics` does not import it. Every configuration strategy returns an (n, d) float64 array of unit rows
(the convention of docs/conventions.md). Random coordinates come from a drawn integer seed fed to
``numpy.random.default_rng`` (so examples are reproducible and shrink towards seed 0); structural choices
(numbers of clusters, masses, perturbation sizes) are drawn directly, so failures shrink to few, small clusters
and zero perturbation.

Strategies
----------
betas(low, high)                        inverse temperatures in [low, high]
uniform_configurations(n, d)            iid uniform points on S^{d-1}
clustered_configurations(masses, d)     clusters of the given sizes around random centres, angular spread
near_critical_configurations(d, ...)    structured critical points (equal clusters on a great circle, regular
                                        polygon, simplex, cross-polytope; numerics.critical.configurations) or unequal
                                        clusters on a circle, plus a small random perturbation
equiangular_configurations(n, d, rho)   all <x_i, x_j> = rho (needs d >= n, -1/(n-1) < rho < 1)
kernels(text, **params)                 PairKernels of a family given by a kernel string and parameter strategies

Verified by: tests/numerics/test_conjecture_strategies.py.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from theory.expression_parser import parse_kernel

from numerics.critical.configurations import circle_clusters, orthoplex, simplex

SEEDS = st.integers(0, 2**32 - 1)


def _value(draw, x):
    return draw(x) if isinstance(x, st.SearchStrategy) else x


def _unit_rows(G: np.ndarray) -> np.ndarray:
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def _random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def betas(low: float = -5.0, high: float = 10.0) -> st.SearchStrategy[float]:
    """Finite floats in [low, high] (no NaN or infinity)."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


@st.composite
def uniform_configurations(draw, n=st.integers(1, 12), d=st.integers(2, 6)) -> np.ndarray:
    """n iid uniform points of S^{d-1} (normalised Gaussians from a drawn seed); n, d ints or strategies."""
    nn, dd = _value(draw, n), _value(draw, d)
    rng = np.random.default_rng(draw(SEEDS))
    return _unit_rows(rng.standard_normal((nn, dd)))


@st.composite
def clustered_configurations(draw, masses=st.lists(st.integers(1, 4), min_size=1, max_size=5), d=st.integers(2, 6),
                             spread=st.floats(0.0, 0.1)) -> np.ndarray:
    """Clusters of sizes ``masses`` around iid uniform centres; each point is its centre moved by at most
    ``spread`` (in the ambient norm, then renormalised)."""
    m, dd, eps = _value(draw, masses), _value(draw, d), _value(draw, spread)
    rng = np.random.default_rng(draw(SEEDS))
    centres = _unit_rows(rng.standard_normal((len(m), dd)))
    X = np.repeat(centres, m, axis=0)
    noise = rng.standard_normal(X.shape)
    noise *= eps / np.maximum(np.linalg.norm(noise, axis=1, keepdims=True), 1e-300)
    return _unit_rows(X + noise)


@st.composite
def near_critical_configurations(draw, d=st.integers(2, 5),
                                 kinds=("polygon", "equal-clusters", "clusters", "simplex", "orthoplex"),
                                 max_clusters: int = 8, max_mass: int = 3,
                                 perturbation=st.floats(0.0, 0.05)) -> np.ndarray:
    """A structured configuration with cluster masses, randomly rotated and perturbed.

    ``polygon``: the regular k-gon (k drawn in 2..max_clusters, favouring k <= 4); ``equal-clusters``: k equal
    clusters at angles 2 pi c / k on a great circle; ``simplex``/``orthoplex``: equal clusters at the vertices
    (d >= 3 only; on S^1 they become ``equal-clusters``). These are critical points of every pair energy (by
    symmetry). ``clusters``: the same circle positions with unequal masses drawn in 1..max_mass, which is NOT
    critical in general (the start of a merger). Perturbation: each point moves by at most ``perturbation``.
    Builders from :mod:`numerics.critical.configurations`.
    """
    dd = _value(draw, d)
    kind = draw(st.sampled_from(kinds))
    if kind in ("simplex", "orthoplex") and dd < 3:
        kind = "equal-clusters"
    if kind == "simplex":
        X = simplex(dd, masses=[draw(st.integers(1, max_mass))] * (dd + 1))
    elif kind == "orthoplex":
        X = orthoplex(dd, masses=[draw(st.integers(1, max_mass))] * (2 * dd))
    else:
        k = draw(st.one_of(st.integers(2, min(4, max_clusters)), st.integers(2, max_clusters)))  # favour few
        if kind == "polygon":
            masses = [1] * k
        elif kind == "equal-clusters":
            masses = [draw(st.integers(1, max_mass))] * k
        else:
            masses = draw(st.lists(st.integers(1, max_mass), min_size=k, max_size=k))
        X = circle_clusters(dd, masses=masses)
    eps = _value(draw, perturbation)
    rng = np.random.default_rng(draw(SEEDS))
    X = X @ _random_rotation(rng, dd).T if dd > 2 else X
    if eps > 0:
        noise = rng.standard_normal(X.shape)
        noise *= eps / np.linalg.norm(noise, axis=1, keepdims=True)
        X = _unit_rows(X + noise)
    return X


@st.composite
def equiangular_configurations(draw, n=st.integers(2, 8), d=None, rho=None) -> np.ndarray:
    """n unit vectors with all pairwise inner products equal to rho, in R^d (d >= n), randomly rotated.

    The rows of the Cholesky factor of the Gram matrix (1 - rho) I + rho 1 1^T, padded to d columns.
    ``rho`` defaults to a draw in (-1/(n-1), 1).
    """
    nn = _value(draw, n)
    dd = nn if d is None else _value(draw, d)
    if dd < nn:
        raise ValueError(f"equiangular configurations need d >= n, got n={nn}, d={dd}")
    low = -1.0 / (nn - 1) if nn > 1 else -1.0
    r = _value(draw, rho) if rho is not None else draw(st.floats(low + 1e-3, 0.999))
    G = (1.0 - r) * np.eye(nn) + r * np.ones((nn, nn))
    L = np.linalg.cholesky(G)
    X = np.zeros((nn, dd))
    X[:, :nn] = L
    rng = np.random.default_rng(draw(SEEDS))
    return _unit_rows(X @ _random_rotation(rng, dd).T)


@st.composite
def kernels(draw, text: str, **params):
    """PairKernels of the family ``text`` (parsed by :func:`theory.expression_parser.parse_kernel`) with
    parameter values drawn from the given strategies (or fixed numbers), e.g.
    ``kernels("exp(beta*s) + c*s**3", c=st.floats(-1, 1))``."""
    values = {name: float(_value(draw, p)) for name, p in params.items()}
    return parse_kernel(text, values)


__all__ = [
    "betas",
    "clustered_configurations",
    "equiangular_configurations",
    "kernels",
    "near_critical_configurations",
    "uniform_configurations",
]
