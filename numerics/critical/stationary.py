r"""Stationary configurations of time-independent architecture models (several heads, MLP, causal mask).

Models with heads, an MLP or a mask are in general not gradient flows (theory.architectures), so "critical point"
means a zero of the projected field :math:`v(X) = 0`, and stability is read from the Jacobian of the flow in tangent
coordinates: :math:`J = U^\top Dv(X)\, U` with :math:`U` an orthonormal basis of the tangent space of
:math:`(\mathbb{S}^{d-1})^n`, computed by central differences of :meth:`numerics.core.model.Model.vector_field` along
retracted tangent directions. For :math:`Q = K = V = I` this is the linearisation of
:func:`numerics.critical.report.linearized_jacobian` (tests/numerics/test_architectures_stationary.py compares the two).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import block_diag

from numerics.common.errors import InputError, require_points
from numerics.common.limits import check_array, check_work
from numerics.core.model import Model
from numerics.critical.hessian import tangent_basis as hessian_tangent_basis

#: central-difference step for the field Jacobian (truncation O(h^2) ~ 1e-10, round-off ~ 1e-16/h ~ 1e-11)
FD_STEP = 1e-5


def tangent_basis(X: np.ndarray) -> np.ndarray:
    """(n d, n (d-1)) orthonormal basis of the tangent space at X: the per-particle bases of
    :func:`numerics.critical.hessian.tangent_basis` as diagonal blocks (the flattened layout used here)."""
    return block_diag(*hessian_tangent_basis(X))


def _field(model: Model, n: int, d: int):
    if model.time_dependent:
        raise InputError("stationary points need a time-independent model (no depth schedule)")
    return model.vector_field(n, d, "direct")[0]


def check_size(model: Model, n: int, d: int) -> None:
    """Refuse (InputError) a Jacobian whose memory or work exceeds :mod:`numerics.common.limits`: the basis
    (n d) x n(d-1), 2 n(d-1) field evaluations of O(n^2 (k + d) H) and an O(m^3) eigen-decomposition."""
    m = float(n) * (d - 1)
    what = f"the field Jacobian of n={n} points on S^{d - 1} ({m:.3g} x {m:.3g}, central differences)"
    check_array((float(n) * d, m), what, copies=3)
    heads = model.block_heads(d) if not model.time_dependent else None
    H, k = (heads.H, heads.k) if heads is not None else (1, d)
    check_work(2.0 * m * H * float(n) ** 2 * (k + d) * 4.0 + 10.0 * m**3, what)


def field_jacobian(model: Model, X, h: float = FD_STEP,
                   progress: Callable[[float, float], None] | None = None) -> np.ndarray:
    r""":math:`J = U^\top Dv\, U` (:math:`n(d-1)` square) by central differences along tangent directions with the
    retraction :math:`x \mapsto (x + hu) / \lVert x + hu\rVert`. ``progress(columns done, n(d-1))`` is called after
    each column (two field evaluations of :math:`O(n^2)` each, so :math:`O(n^3)` in all)."""
    X = require_points(X, "X")
    n, d = X.shape
    check_size(model, n, d)
    f = _field(model, n, d)
    U = tangent_basis(X)
    cols = []
    for k in range(U.shape[1]):
        u = U[:, k].reshape(n, d)
        plus = (X + h * u) / np.linalg.norm(X + h * u, axis=1, keepdims=True)
        minus = (X - h * u) / np.linalg.norm(X - h * u, axis=1, keepdims=True)
        cols.append(((f(plus) - f(minus)) / (2 * h)).ravel())
        if progress is not None:
            progress(k + 1, U.shape[1])
    return U.T @ np.array(cols).T


def stationary_report(model: Model, X, zero_tolerance: float = 1e-7, symmetry_modes: int = 0,
                      residual_tolerance: float = 1e-9,
                      progress: Callable[[float, float], None] | None = None) -> dict:
    r"""Residual :math:`\max_i \lVert v_i(X)\rVert` and the Jacobian spectrum at X: counts of eigenvalues with real part
    above, below and within ``zero_tolerance`` of 0, the largest real part, and a verdict: ``not stationary`` if the
    residual exceeds ``residual_tolerance``, else ``unstable`` if some real part exceeds the tolerance, ``stable`` if
    the zero count is at most ``symmetry_modes`` (pass the dimension of the symmetry orbit, e.g. rotations of an
    :math:`O(d)`-equivariant model) and no real part is positive, else ``degenerate``. The finite-difference Jacobian is
    accurate to about 1e-10 (FD_STEP). ``progress`` is passed to :func:`field_jacobian`."""
    X = require_points(X, "X")
    n, d = X.shape
    residual = float(np.max(np.linalg.norm(_field(model, n, d)(X), axis=1)))
    mu = np.linalg.eigvals(field_jacobian(model, X, progress=progress))
    re = mu.real
    counts = {"positive": int(np.sum(re > zero_tolerance)), "negative": int(np.sum(re < -zero_tolerance)),
              "zero": int(np.sum(np.abs(re) <= zero_tolerance))}
    verdict = ("unstable" if counts["positive"] else
               ("stable" if counts["zero"] <= symmetry_modes else "degenerate"))
    stationary = residual <= residual_tolerance
    if not stationary:
        verdict = "not stationary"
    return {"n": n, "d": d, "residual": residual, "stationary": stationary, "residual_tolerance": residual_tolerance, "eigenvalues": mu, "max_real_part": float(re.max()),
            "counts": counts, "verdict": verdict}
