"""Timing of :func:`numerics.core.field.attention_field` against the floor of its own arithmetic.

The floor, measured in the same process on the same data, is one Gram GEMM (X X^T), one exp pass over the
n x n result and one n x n by n x d GEMM: the minimum work of any dense implementation. The ratio
field time / floor time is what ``attnflow bench`` reports (targets: 1.5 at d = 3 and 1.3 at d = 64, n = 4096).
Times are the minimum over repeats (least disturbed by other processes), floor and field alternating.
"""
from __future__ import annotations

import time

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.common.limits import check_work
from numerics.core.field import attention_field
from numerics.core.trajectory import uniform_sphere

TARGETS = {3: 1.5, 64: 1.3}


def _best_interleaved(fns, repeats: int) -> list[float]:
    """Minimum time of each function over ``repeats`` rounds, alternating them within each round so that a
    change of machine load affects both sides of a ratio alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def floor_operations(X: np.ndarray) -> np.ndarray:
    """The floor: G = X X^T, exp(G) in place, exp(G) @ X."""
    G = X @ X.T
    np.exp(G, out=G)
    return G @ X


def benchmark_field(n: int = 4096, dims=(3, 64), beta: float = 1.0, model: str = "sa", repeats: int = 5,
                    seed: int = 0) -> list[dict]:
    """Time ``attention_field`` and the floor for each d; returns one dict per d with seconds and the ratio."""
    n = require_int(n, "n", minimum=1)
    repeats = require_int(repeats, "repeats", minimum=1)
    check_work(2.0 * repeats * sum(float(n) * n * (2 * require_int(d, "d", minimum=2) + 8) for d in dims),
               f"a benchmark with n={n}, {repeats} repeats")
    beta = require_real(beta, "beta")
    rows = []
    for d in dims:
        d = require_int(d, "d", minimum=2)
        X = uniform_sphere(n, d, seed)
        attention_field(X, beta, model)  # warm-up (allocations, BLAS threads)
        floor, field = _best_interleaved([lambda: floor_operations(X), lambda: attention_field(X, beta, model)],
                                         repeats)
        rows.append({"n": n, "d": d, "beta": beta, "model": model, "repeats": repeats,
                     "field_seconds": field, "floor_seconds": floor, "ratio": field / floor,
                     "target": TARGETS.get(d), "within_target": (field / floor <= TARGETS[d]) if d in TARGETS else None})
    return rows
