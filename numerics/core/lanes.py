"""The lane layout of the compiled member kernels: members of an ensemble as vector lanes (``backend="numba"``).

The kernels (:mod:`numerics.core._member_kernels`: one head, with the identity case inlined;
:mod:`numerics.core._member_heads`: several heads without MLP, mask or positions) take blocks of ``LANES``
members laid out member-last; this module converts (B, ...) arrays to that layout and back and calls them. It is
the ``lanes`` engine of the attention pipeline (:mod:`numerics.core.attention`), for a batch and for one system
(B = 1); the kernels' arithmetic is not changed here, and a member's bits do not depend on the batch it is in.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError


def _member_kernel():
    from numerics.core.fused import require_numba

    require_numba()
    from numerics.core._member_kernels import member_sums as kernel

    return kernel


def warm(engine: str) -> None:
    """One clear error without Numba, and the compile (or the load of Numba's on-disk cache) of the kernel of
    ``engine`` (a row of :data:`numerics.core.engines.ENGINES`) before any timing; nothing for ``numpy``."""
    from numerics.core.engines import ENGINES

    if engine == "fused":
        from numerics.core.fused import compile_seconds

        compile_seconds()
    elif ENGINES[engine].compiled:
        _member_kernel()


def member_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, symmetric: bool) -> np.ndarray:
    """acc = exp(lhs right) rhs member by member with the compiled kernel (``lhs`` (B, n, p), ``right``
    (B, p, n), ``rhs`` (B, n, q)); ``symmetric``: one exp per pair, as :func:`_symmetric_sums`. An overflowing
    weight raises ``FloatingPointError`` (as NumPy's ``errstate(over="raise")``)."""
    from numerics.core._member_kernels import LANES

    B, q = lhs.shape[0], rhs.shape[2]
    lanes = min(B, LANES)
    L = _to_lanes(lhs, lanes)
    acc = np.empty(L.shape[:2] + (q, lanes))
    _member_kernel()(L, _to_lanes(right, lanes), _to_lanes(rhs, lanes), bool(symmetric), acc)
    acc = _from_lanes(acc, B)
    if not np.all(np.isfinite(acc)):
        raise FloatingPointError("overflow in the member kernel")
    return acc


def _to_lanes(A: np.ndarray, lanes: int) -> np.ndarray:
    """(B, ...) -> (G, ..., lanes): blocks of members, member-last (the kernels' vector lanes); copies of the
    first member pad the last block (valid inputs; their results are dropped)."""
    B = A.shape[0]
    G = -(-B // lanes)
    out = np.empty((G * lanes,) + A.shape[1:])
    out[:B] = A
    out[B:] = A[0]
    return np.ascontiguousarray(np.moveaxis(out.reshape((G, lanes) + A.shape[1:]), 1, -1))


def _from_lanes(A: np.ndarray, B: int) -> np.ndarray:
    """The inverse of :func:`_to_lanes`: (G, ..., lanes) -> (B, ...)."""
    A = np.moveaxis(A, -1, 1)
    return A.reshape((-1,) + A.shape[2:])[:B]


def _member_betas(beta, B: int) -> np.ndarray:
    """beta of each of B members, shape (B,) (a shared scalar broadcast), for the member kernels."""
    return np.broadcast_to(np.asarray(beta, dtype=float).reshape(-1), (B,))


def _identity_lanes(X: np.ndarray, beta, kind: str, scale) -> np.ndarray | None:
    """The projected field for Q = K = V = I with :func:`numerics.core._member_kernels.identity_sums`, in the
    member-last layout from X to the projection (one copy in, one out); ``None`` when some row's weights all
    underflow (sa: then the NumPy path redoes that row with its exact maximum)."""
    from numerics.core._member_kernels import LANES, identity_sums

    _member_kernel()
    B, n, d = X.shape
    lanes = min(B, LANES)
    Xl, bl = _to_lanes(X, lanes), _to_lanes(_member_betas(beta, B), lanes)
    cl = np.abs(bl) if kind == "sa" else bl.copy()
    acc = np.empty(Xl.shape[:2] + (d + 1, lanes))
    identity_sums(Xl, bl, cl, acc)
    den = acc[:, :, d:]
    if not np.all(np.isfinite(acc)):
        raise InputError(f"attention weights overflow for beta={_largest(beta):g} (use smaller |beta|, "
                         "or model='sa')")
    if kind == "sa":
        if np.any(_from_lanes(den, B) < 1e-280):
            return None
        out = acc[:, :, :d] / den
    else:
        sl = scale if np.ndim(scale) == 0 else _to_lanes(np.asarray(scale).reshape(-1), lanes)[:, None, None]
        out = acc[:, :, :d] * (sl / n)
    out -= (np.sum(Xl * out, axis=2) / np.sum(Xl * Xl, axis=2))[:, :, None] * Xl
    return np.ascontiguousarray(_from_lanes(out, B))


def _largest(beta) -> float:
    return float(np.max(np.abs(beta)))


def _heads_lanes(X: np.ndarray, heads, beta, kind: str, out: np.ndarray) -> None:
    """out <- the projected several-head field of a group of members (``out`` C-contiguous, the shape of X) with
    :func:`numerics.core._member_heads.heads_field` (which lays the members out as vector lanes itself)."""
    from numerics.core._member_heads import heads_field
    from numerics.core._member_kernels import EXP2_CONSTS

    B = X.shape[0]
    coef = _member_betas(beta, B) * heads.scale
    heads_field(np.ascontiguousarray(X, dtype=float), heads.Q, heads.K, heads.V, heads.W, coef, kind == "usa", out,
                EXP2_CONSTS)
    if not np.all(np.isfinite(out)):
        raise InputError(f"usa attention weights overflow for beta={_largest(beta):g}" if kind == "usa" else
                         f"the several-head field is not finite for beta={_largest(beta):g} (non-finite states?)")
