"""Random starts on the sphere: the one sampler every area uses (a leaf module of the core, so that plug-ins
loaded by the core, such as the stochastic integrators, can use it without importing the trajectory module)."""
from __future__ import annotations

import numpy as np

from numerics.common.limits import check_array


def uniform_sphere(n: int, d: int, seed: int | np.random.Generator | None) -> np.ndarray:
    r"""n iid uniform points of :math:`\mathbb{S}^{d-1}` (normalised standard Gaussians) from a seed or Generator."""
    check_array((n, d), f"a uniform start with n={n}, d={d}", copies=2)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    while np.any(norms == 0):  # probability zero, but never divide by zero
        bad = (norms == 0)[:, 0]
        G[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G / norms
