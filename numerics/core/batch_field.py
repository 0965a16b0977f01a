"""The attention fields of an ensemble: B systems of n particles in one (B, n, d) array, one evaluation for all.

The field itself is the one pipeline of :mod:`numerics.core.attention` (every state of the core is (B, n, d); one
system is B = 1): :func:`make_batch_field` and :func:`make_batch_block_field` build it for a batch, as
:func:`numerics.core.field.make_field` and :func:`numerics.core.blocks.make_block_field` build it for one system,
so a member of an ensemble performs the floating-point operations of its single run in the same order (NumPy
calls the same BLAS routine on every member's slice of a stacked GEMM, with the shapes and strides of one system).
:class:`BatchScheduledField` is the batch form of :class:`numerics.core.blocks.ScheduledField`.

What stays here is the ensemble's own machinery:

- :func:`member_groups`: members processed in groups whose tile buffers hold at most :data:`BATCH_TILE_ENTRIES`
  numbers (the grouping does not change any member's arithmetic);
- the lane layout of the compiled member kernels (:func:`member_sums`, the identity kernel, the several-head
  kernel; members as vector lanes, ``backend="numba"``) and their rounding bounds (:func:`member_rounding_bound`,
  :func:`heads_rounding_bound`).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# the member groups (numerics.core.sums) and the lane layout of the member kernels (numerics.core.lanes): the names
# stay importable from here
from numerics.core.lanes import (_from_lanes, _heads_lanes, _identity_lanes, _largest, _member_betas,  # noqa: F401
                                 _member_kernel, _to_lanes, member_sums)
from numerics.core.sums import BATCH_TILE_ENTRIES, member_groups  # noqa: F401


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
    from numerics.core.attention import Attention

    return Attention.one_head(d, beta, kind, M, V, time_unit=time_unit, block=block,
                              engine="lanes" if engine == "numba" else "numpy").batched()


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
    (:func:`numerics.core._member_heads.heads_field`) from the NumPy path's (:func:`make_batch_block_field`), sa;
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


def make_batch_block_field(beta, kind: str, heads, mlp=None, causal: bool = False, block: int | None = None,
                           engine: str = "numpy", positions=None) -> Callable[[np.ndarray], np.ndarray]:
    """``field(X) -> (B, n, d)``: the block field (:func:`numerics.core.blocks.block_velocity`) of every member,
    beta shared or (B,), members processed in bounded groups; ``positions`` a
    :class:`numerics.core.positions.PositionEncoding` (ALiBi, RoPE, labels; shared by the members).

    ``engine="numba"`` (heads only: no MLP, no mask, no positions): the compiled kernel
    :func:`numerics.core._member_heads.heads_field` (the heads' rank-k factors, members as vector lanes), equal
    to the NumPy path to rounding (:func:`heads_rounding_bound`); ``"numpy"``: the single system's order.
    """
    from numerics.core.attention import Attention

    if engine == "numba":
        attention = Attention.heads(beta, kind, heads, mlp, causal, positions, block=block, engine="lanes")
        _member_kernel()
    else:
        attention = Attention.heads(beta, kind, heads, mlp, causal, positions, block=block)
    return attention.batched()


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
