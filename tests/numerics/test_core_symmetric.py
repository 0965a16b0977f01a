"""The symmetric field (Q = K = I: upper block triangle only, each tile used for its rows and mirrored for its
columns) equals the general tile path (M = I given as a matrix) to rounding, for any block size, and the
comparison fails on planted mirror errors.

Tolerance (numerics.core.fused.fused_rounding_bound, the same analysis): the mirrored weight of (j, i) is
exp(beta x_i . x_j - c) instead of exp(beta x_j . x_i - c): the same d + 2 products rounded and summed
differently, within 2 (d + 2) eps |beta| absolute in the logit, plus the order of the sums over j; relative to
the row scale sum_j w_ij |x_j| / sum_j w_ij (sa) or (scale / n) sum_j w_ij |x_j| (usa).
"""
import numpy as np
import pytest

import numerics.core.field as field_module
from numerics.core.field import make_field
from numerics.core.fused import fused_rounding_bound
from numerics.core.trajectory import uniform_sphere


def _row_scale(X, beta, model):
    n = X.shape[0]
    logits = beta * X @ X.T
    shift = logits.max(axis=1, keepdims=True) if model == "sa" else beta
    W = np.exp(logits - shift)
    if model == "sa":
        return W.sum(axis=1) / W.sum(axis=1)  # |x_j| = 1: the weighted mean of |x_j| is 1
    return (W.sum(axis=1) / n) * np.exp(shift - beta).ravel()


def assert_symmetric_matches(X, beta, model, block):
    n, d = X.shape
    kw = dict(time_unit="rescaled") if model == "usa" else {}
    got = make_field(d, beta, model, block=block, **kw)(X)
    want = make_field(d, beta, model, Q=np.eye(d), block=block, **kw)(X)
    err = np.linalg.norm(got - want, axis=1)
    bound = fused_rounding_bound(beta, d, n) * _row_scale(X, beta, model)
    assert np.all(err <= bound + 1e-300), float(np.max(err / bound))


@pytest.mark.parametrize("n, d, block", [(37, 3, 5), (300, 3, None), (129, 8, 16), (64, 4, 64), (50, 3, 1),
                                         (33, 16, 100)])
@pytest.mark.parametrize("model, beta", [("sa", 1.0), ("sa", -6.0), ("sa", 250.0), ("usa", 2.0), ("usa", -3.0)])
def test_symmetric_field_equals_general_path(n, d, block, model, beta):
    assert_symmetric_matches(uniform_sphere(n, d, n + d), beta, model, block)


@pytest.mark.parametrize("plant", ["no-mirror", "diagonal-twice", "mirror-1e-12"])
def test_planted_mirror_errors_are_caught(plant, monkeypatch):
    def planted(lhs, right, rhs, b, beta, energy_shift=None):
        n, q = lhs.shape[0], rhs.shape[1]
        acc = np.zeros((n, q))
        for start in range(0, n, b):
            stop = min(n, start + b)
            m = stop - start
            W = np.exp(lhs[start:stop] @ right[:, start:])
            acc[start:stop] += W @ rhs[start:]
            first = 0 if plant == "diagonal-twice" else m
            factor = 1 + 1e-12 if plant == "mirror-1e-12" else 1.0
            if plant != "no-mirror" and first < W.shape[1]:
                acc[start + first:] += factor * (W[:, first:].T @ rhs[start:stop])
        return acc, None

    monkeypatch.setattr(field_module, "_symmetric_tile_sums", planted)
    with pytest.raises(AssertionError):
        assert_symmetric_matches(uniform_sphere(90, 3, 2), 2.0, "usa", 16)
