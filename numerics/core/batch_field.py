"""The attention fields of an ensemble: B systems of n particles in one (B, n, d) array, one evaluation for all.

Every function here is the batched twin of a single-system function and performs, member by member, the same
floating-point operations in the same order:

- :func:`make_batch_field` <-> :func:`numerics.core.field.make_field` (one head, Q, K, V; ``sa``/``usa``; both
  time units), with beta, Q, K and V shared or given per member;
- :func:`make_batch_block_field` <-> :func:`numerics.core.blocks.make_block_field` (several heads, MLP, causal
  mask), beta shared or per member; :class:`BatchScheduledField` <-> :class:`numerics.core.blocks.ScheduledField`.

The tiles are the single system's (:func:`numerics.core.field.tile_rows`, the symmetric upper block triangle
for Q = K = I, :func:`numerics.core.field.block_rows` for heads) with a leading member axis: each GEMM becomes a
stacked GEMM (NumPy calls the same BLAS routine on every member's slice, with the same shapes and strides), each
exp and each projection acts elementwise or row by row. A member of an ensemble therefore gets the bits of the
single run wherever the single run takes the same path (see ``docs/guide/ensembles.md`` for where it does not).

Memory stays bounded: the members are processed in groups whose tile buffers hold at most
:data:`BATCH_TILE_ENTRIES` numbers (the member grouping does not change any member's arithmetic).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError
from numerics.core.field import SYMMETRIC_MIN_BLOCKS, TILE_MIN_ROWS, block_rows, tile_rows

#: largest tile buffer of one group of members (numbers): 2^21 doubles = 16 MiB
BATCH_TILE_ENTRIES = 1 << 21


def member_groups(B: int, per_member: int, entries: int = BATCH_TILE_ENTRIES) -> list[slice]:
    """Slices of at most ``entries // per_member`` members (at least one) covering 0..B-1."""
    size = max(1, entries // max(1, per_member))
    return [slice(a, min(B, a + size)) for a in range(0, B, size)]


def _column(values, B: int) -> np.ndarray | float:
    """A per-member scalar as a (B, 1, 1) array (broadcasts over rows and columns); a shared scalar as is."""
    if np.ndim(values) == 0:
        return float(values)
    return np.asarray(values, dtype=float).reshape(B, 1, 1)


def make_batch_field(d: int, beta, kind: str = "sa", M=None, V=None, *, time_unit: str = "natural",
                     block: int | None = None, engine: str = "numpy") -> Callable[[np.ndarray], np.ndarray]:
    """``field(X) -> (B, n, d)`` for X of shape (B, n, d): the one-head field of each member.

    Parameters
    ----------
    d : int
        Dimension.
    beta : float or (B,) array
        Inverse temperature, shared or per member.
    kind : {"sa", "usa"}
        The model (:func:`numerics.core.field.attention_field`).
    M : None, (d, d) or (B, d, d) array
        Score map Q^T K (``None``: Q = K = I, the symmetric tiles of the single field).
    V : None, (d, d) or (B, d, d) array
        Value matrix.
    time_unit : {"natural", "rescaled"}
        As :func:`numerics.core.field.make_field` (``usa`` only).
    engine : {"numpy", "numba"}
        ``numpy``: the single system's tiles with a member axis (members equal single runs bit for bit).
        ``numba``: the same sums member by member in one compiled loop (:func:`member_sums`; no BLAS call per
        member; for the small n and d of ensembles), equal to the NumPy path to rounding
        (:func:`member_rounding_bound`).

    Notes
    -----
    Arguments are validated by the caller (:mod:`numerics.core.ensemble`). Verified by: tests of
    tests/numerics/test_core_ensemble.py (members equal single runs bit for bit) and
    tests/numerics/test_core_member_kernel.py (the ``numba`` engine within its rounding bound).
    """
    if engine == "numba":
        _member_kernel()  # one clear error without Numba, and the compile (or cache load) before any timing
    betas = np.atleast_1d(np.asarray(beta, dtype=float))
    if kind == "usa" and time_unit == "natural" and np.any(betas > 700):
        bad = float(betas[betas > 700][0])
        raise InputError(f"usa field overflows in the natural time unit at beta={bad:g}; "
                         "use time_unit='rescaled' (t' = e^beta t)")
    natural_usa = kind == "usa" and time_unit == "natural"
    if np.ndim(beta) == 0:
        scale = math.exp(float(beta)) if natural_usa else 1.0
    else:
        scale = np.exp(betas).reshape(-1, 1, 1) if natural_usa else 1.0

    def field(X: np.ndarray) -> np.ndarray:
        B = X.shape[0]
        out = np.empty_like(X)
        n = X.shape[1]
        b = block or tile_rows(n, d)
        for g in member_groups(B, b * n):
            out[g] = _projected(X[g], _part(beta, g), kind, _part(M, g, 3), _part(V, g, 3), _part(scale, g), b,
                                engine)
        return out

    def take(idx: np.ndarray):
        """The field of the members ``idx`` only (per-member adaptive steps evaluate the members still moving)."""
        return make_batch_field(d, beta if np.ndim(beta) == 0 else np.asarray(beta)[idx], kind,
                                M if np.ndim(M) < 3 else M[idx], V if np.ndim(V) < 3 else V[idx],
                                time_unit=time_unit, block=block, engine=engine)

    field.batched = True
    field.take = take
    return field


def _part(value, g: slice, full_ndim: int = 1):
    """The members ``g`` of a per-member value (leading axis), or the shared value itself."""
    if value is None or np.ndim(value) < full_ndim or (full_ndim == 1 and np.ndim(value) == 0):
        return value
    return value[g]


def _projected(X: np.ndarray, beta, kind: str, M, V, scale, b: int, engine: str = "numpy") -> np.ndarray:
    """:func:`numerics.core.field._projected_field` for a group of members (no energy terms)."""
    if engine == "numba" and M is None and V is None:
        out = _identity_lanes(X, beta, kind, scale)
        if out is not None:
            return out
    B, n, d = X.shape
    bcol = _column(beta, B)
    XV = X if V is None else X @ np.swapaxes(V, -1, -2)
    left = bcol * (X if M is None else X @ M)
    if kind == "sa":
        if M is None:
            shift = np.abs(bcol) * np.ones((B, n, 1))
        else:
            shift = np.abs(bcol) * np.linalg.norm(X @ M, axis=2)[:, :, None]
    else:
        shift = np.broadcast_to(bcol, (B, n, 1)) * np.ones((B, n, 1))
    ones = np.ones((B, n, 1))
    lhs = np.concatenate([left, -shift], axis=2)
    right = np.ascontiguousarray(np.swapaxes(np.concatenate([X, ones], axis=2), 1, 2))
    rhs = np.concatenate([XV, ones], axis=2)
    try:
        with np.errstate(over="raise", under="ignore"):
            if engine == "numba":
                acc = member_sums(lhs, right, rhs, symmetric=M is None)
            elif M is None:
                rows = min(b, max(TILE_MIN_ROWS, -(-n // SYMMETRIC_MIN_BLOCKS)))
                acc = _symmetric_sums(lhs, right, rhs, min(rows, n))
            else:
                acc = _sums(lhs, right, rhs, min(b, n))
    except FloatingPointError:
        raise InputError(f"attention weights overflow for beta={_largest(beta):g} (use smaller |beta|, "
                         "or model='sa')") from None
    if kind == "sa":
        for m, r in np.argwhere(acc[:, :, d] < 1e-280):  # c_i far above every logit: redo with the exact max
            logits = lhs[m, r, :d] @ right[m, :d]
            acc[m, r] = np.exp(logits - logits.max()) @ rhs[m]
        out = acc[:, :, :d] / acc[:, :, d:]
    else:
        out = acc[:, :, :d] * (scale / n)
    out -= (np.einsum("bij,bij->bi", X, out) / np.einsum("bij,bij->bi", X, X))[:, :, None] * X
    return out


def _member_kernel():
    from numerics.core.fused import require_numba

    require_numba()
    from numerics.core._member_kernels import member_sums as kernel

    return kernel


def member_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, symmetric: bool) -> np.ndarray:
    """acc = exp(lhs right) rhs member by member with the compiled kernel (``lhs`` (B, n, p), ``right``
    (B, p, n), ``rhs`` (B, n, q)); ``symmetric``: one exp per pair, as :func:`_symmetric_sums`. An overflowing
    weight raises ``FloatingPointError`` (as NumPy's ``errstate(over="raise")``)."""
    from numerics.core._member_kernels import LANES

    B, n, q = lhs.shape[0], lhs.shape[1], rhs.shape[2]
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


def member_rounding_bound(beta, d: int, n: int, m_norm: float = 1.0) -> float:
    """Bound on the relative difference of each member-kernel weight sum from the NumPy path's, in units of the
    sum of |terms|: each logit of d + 1 products (and the shift) summed in another order differs by at most
    (d + 2) eps (|beta| |M| + |c_i|) <= 2 (d + 2) eps |beta| |M|, which e^{logit} turns into a relative error
    of that size; both exps are within 2 ulp (the kernel's, :mod:`numerics.core.fused`; NumPy's); sums of n
    positive terms in another order add at most (n - 1) eps. Doubled for the two sides (as
    :func:`numerics.core.fused.fused_rounding_bound`)."""
    eps = np.finfo(float).eps
    return 2.0 * (2.0 * (d + 2) * eps * float(np.max(np.abs(beta))) * m_norm + 4.0 * eps + (n - 1) * eps)


def heads_rounding_bound(beta, heads, n: int) -> float:
    """Bound on the difference of each component of the several-head field of the member kernel
    (:func:`numerics.core._member_heads.heads_field`) from the NumPy path's (:func:`batch_block_velocity`), sa;
    for usa multiply by the largest (1/n) sum_j e^{s_ij} of the member (the size of its unnormalised sums).

    Per head h (both paths, |x| = 1): a logit is a chain of at most 2d + k + 2 roundings of terms bounded by
    |beta| c |x_i|^T |Q_h|^T |K_h| |x_j| <= |beta| c m_h, m_h = || |Q_h|^T |K_h| ||_2 (the NumPy path forms
    beta c K_h^T Q_h x_i and dots it with x_j, the kernel dots log2(e) beta c Q_h x_i with K_h x_j: one rounding
    more); subtracting the shift adds a rounding of a number <= |beta| c (m_h + max(m_h, n_h)),
    n_h = ||Q_h||_2 ||K_h||_2 (the NumPy path's shift is the row maximum, <= |beta| c m_h; the kernel's is the
    bound |q_i| max_j |k_j| <= |beta| c n_h or the row maximum; which shift is used cancels up to these
    roundings, and usa's e^{shift ln 2} rounds a number <= |beta| c max(m_h, n_h) once more). e^{logit} turns
    that absolute error into a relative one of the weight; both exps are within 2 ulp (the kernel's clamp at
    2^-1020 changes weights below 2^-1020 of the largest, by less than n 2^-1020 of the sum); sums of n
    positive weights in another order add (n - 1) eps: each weight sum is within
    rho_h = 2 (((2d + k + 3) m_h + 2 max(m_h, n_h)) eps |beta| c + 4 eps + (n - 1) eps) of the other path's,
    relative to the sum of |terms| (both sides counted). The head's average (numerator and
    denominator: 2 rho_h) then goes through V_h and W_h (d + k + 2 roundings on each side) into components
    bounded by w_h = max_c sum_e (|W_h|^T |V_h|)_{ce} (the averaged |x_e| <= 1). Heads are added in order (H
    eps) and the tangent projection x -> v - <x, v> x moves an error e of v by at most (1 + sqrt(d)) |e|_max.
    """
    eps = np.finfo(float).eps
    H, k, d = heads.H, heads.k, heads.d
    b = float(np.max(np.abs(beta))) * abs(heads.scale)
    total = 0.0
    for h in range(H):
        m_h = float(np.linalg.norm(np.abs(heads.Q[h]).T @ np.abs(heads.K[h]), 2))
        n_h = float(np.linalg.norm(heads.Q[h], 2) * np.linalg.norm(heads.K[h], 2))
        w_h = float(np.max((np.abs(heads.W[h]).T @ np.abs(heads.V[h])).sum(axis=1)))
        rho = 2.0 * (((2 * d + k + 3) * m_h + 2.0 * max(m_h, n_h)) * eps * b + 4.0 * eps + (n - 1) * eps)
        total += w_h * (2.0 * rho + 2.0 * (d + k + 2) * eps + H * eps)
    return (1.0 + math.sqrt(d)) * total


def _largest(beta) -> float:
    return float(np.max(np.abs(beta)))


def _sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int) -> np.ndarray:
    """:func:`numerics.core.field._tile_sums` member by member: stacked GEMM, exp in place, stacked GEMM."""
    B, n, q = lhs.shape[0], lhs.shape[1], rhs.shape[2]
    W_buf = np.empty((B, b, n))
    acc = np.empty((B, n, q))
    for start in range(0, n, b):
        stop = min(n, start + b)
        W = W_buf[:, :stop - start]
        np.matmul(lhs[:, start:stop], right, out=W)
        np.exp(W, out=W)
        np.matmul(W, rhs, out=acc[:, start:stop])
    return acc


def _symmetric_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int) -> np.ndarray:
    """:func:`numerics.core.field._symmetric_tile_sums` member by member (upper block triangle, used twice)."""
    B, n, q = lhs.shape[0], lhs.shape[1], rhs.shape[2]
    buf = np.empty(B * b * n)
    acc = np.zeros((B, n, q))
    cols = np.empty((B, n, q))
    for start in range(0, n, b):
        stop = min(n, start + b)
        m = stop - start
        W = buf[:B * m * (n - start)].reshape(B, m, n - start)
        np.matmul(lhs[:, start:stop], right[:, :, start:], out=W)
        np.exp(W, out=W)
        acc[:, start:stop] += W @ rhs[:, start:]
        if stop < n:
            np.matmul(np.swapaxes(W[:, :, m:], 1, 2), rhs[:, start:stop], out=cols[:, stop:])
            acc[:, stop:] += cols[:, stop:]
    return acc


# -- several heads, MLP, causal mask --------------------------------------------------------------------------
def _batch_averages(X: np.ndarray, left: np.ndarray, beta, kind: str, causal: bool, block: int | None) -> np.ndarray:
    """:func:`numerics.core.blocks._averages` member by member."""
    B, n, d = X.shape
    b = block or block_rows(n)
    out = np.empty((B, n, d))
    rhs = np.concatenate([X, np.ones((B, n, 1))], axis=2)
    for start in range(0, n, b):
        stop = min(n, start + b)
        cols = stop if causal else n
        L = left[:, start:stop] @ np.swapaxes(X[:, :cols], 1, 2)
        if causal:
            rows = np.arange(start, stop)[:, None]
            L[:, np.arange(cols)[None, :] > rows] = -np.inf
        shift = L.max(axis=2, keepdims=True)
        E = np.exp(L - shift)
        acc = E @ rhs[:, :cols]
        if kind == "sa":
            out[:, start:stop] = acc[:, :, :d] / acc[:, :, d:]
        else:
            with np.errstate(over="raise"):
                try:
                    out[:, start:stop] = acc[:, :, :d] * (np.exp(shift) / n)
                except FloatingPointError:
                    raise InputError(f"usa attention weights overflow for beta={_largest(beta):g}") from None
    return out


def batch_block_velocity(X: np.ndarray, heads, beta, kind: str = "sa", mlp=None, causal: bool = False,
                         block: int | None = None) -> np.ndarray:
    """:func:`numerics.core.blocks.block_velocity` of every member of X (B, n, d); beta shared or (B,)."""
    B = X.shape[0]
    bcol = _column(beta, B)
    H = heads.H
    total = np.zeros_like(X)
    for h in range(H):
        left = (bcol * heads.scale) * ((X @ heads.Q[h].T) @ heads.K[h])
        y = (_batch_averages(X, left, beta, kind, causal, block) @ heads.V[h].T) @ heads.W[h]
        total += y if mlp is None else mlp(H * y, h) / H
    total -= (np.einsum("bij,bij->bi", X, total) / np.einsum("bij,bij->bi", X, X))[:, :, None] * X
    return total


def make_batch_block_field(beta, kind: str, heads, mlp=None, causal: bool = False,
                           block: int | None = None, engine: str = "numpy") -> Callable[[np.ndarray], np.ndarray]:
    """``field(X) -> (B, n, d)``: :func:`batch_block_velocity`, members processed in bounded groups.

    ``engine="numba"`` (heads only: no MLP, no mask): the compiled kernel
    :func:`numerics.core._member_heads.heads_field` (the heads' rank-k factors, members as vector lanes), equal
    to the NumPy path to rounding (:func:`heads_rounding_bound`); ``"numpy"``: the single system's order.
    """
    if engine == "numba":
        if mlp is not None or causal:
            raise InputError("the numba backend of a batch evaluates heads without MLP, schedule or mask; "
                             "use --backend direct")
        _member_kernel()

    def field(X: np.ndarray) -> np.ndarray:
        B, n = X.shape[:2]
        out = np.empty(X.shape) if engine == "numba" else np.empty_like(X)  # numba: C order, written in place
        for g in member_groups(B, (block or block_rows(n)) * n):
            if engine == "numba":
                _heads_lanes(X[g], heads, _part(beta, g), kind, out[g])
            else:
                out[g] = batch_block_velocity(X[g], heads, _part(beta, g), kind, mlp, causal, block)
        return out

    field.batched = True
    field.take = lambda idx: make_batch_block_field(beta if np.ndim(beta) == 0 else np.asarray(beta)[idx], kind,
                                                    heads, mlp, causal, block, engine)
    return field


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


class BatchScheduledField:
    """:class:`numerics.core.blocks.ScheduledField` of an ensemble: ``field(X, t)``, ``time_dependent = True``;
    piecewise between the layer times like it (:mod:`numerics.core.loop`)."""

    time_dependent = True
    batched = True

    @property
    def piecewise(self) -> bool:
        """True for table schedules: autonomous between layer times."""
        return self.schedule.fn is None

    def breakpoints(self, t0: float, t_end: float) -> tuple[float, ...]:
        """The layer times strictly inside (t0, t_end) where the weights change (as the single field's)."""
        from numerics.core.blocks import ScheduledField

        return ScheduledField.layer_changes(self.schedule, t0, t_end)

    def piece(self, t: float) -> Callable[[np.ndarray], np.ndarray]:
        """The autonomous field ``piece(X)`` of the layer acting at t."""
        return self.at(t)

    def __init__(self, beta, kind: str, schedule, causal: bool = False, block: int | None = None):
        self.beta, self.kind, self.schedule, self.causal, self.block = beta, kind, schedule, causal, block
        self._cache: dict[int, Callable] = {}

    def at(self, t: float) -> Callable[[np.ndarray], np.ndarray]:
        if self.schedule.fn is not None:
            heads, mlp = self.schedule.at(t)
            return make_batch_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block)
        layer = self.schedule.layer_index(t)
        if layer not in self._cache:
            heads, mlp = self.schedule.at(t)
            self._cache[layer] = make_batch_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block)
        return self._cache[layer]

    def __call__(self, X: np.ndarray, t: float) -> np.ndarray:
        return self.at(t)(X)
