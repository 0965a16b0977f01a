"""Hypothesis strategies shared by the test suites (configurations on spheres, parameters)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


@st.composite
def sphere_points(draw, n=st.integers(1, 12), d=st.integers(2, 6)):
    """An (n, d) array of unit rows, built from a drawn seed (shrinks to small n, d)."""
    nn, dd = draw(n), draw(d)
    seed = draw(st.integers(0, 2**32 - 1))
    G = np.random.default_rng(seed).standard_normal((nn, dd))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


betas = st.floats(-5.0, 10.0, allow_nan=False, allow_infinity=False)
models = st.sampled_from(["sa", "usa"])
