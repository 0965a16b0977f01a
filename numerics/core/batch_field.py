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
  :func:`heads_rounding_bound`), re-exported from :mod:`numerics.core.lanes` and :mod:`numerics.core.engines`
  (which engine runs is chosen there, from one table).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

# the member groups (numerics.core.sums), the lane layout of the member kernels (numerics.core.lanes) and their
# rounding bounds (numerics.core.engines): the names stay importable from here
from numerics.core.blocks import ScheduledField
from numerics.core.engines import heads_rounding_bound, member_rounding_bound  # noqa: F401
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
    from numerics.core.attention import Attention
    from numerics.core.engines import choose
    from numerics.core.lanes import warm

    chosen = choose(engine, "identity" if M is None and V is None else "one", batch=True)
    warm(chosen)  # one clear error without Numba, and the compile (or cache load) before any timing
    return Attention.one_head(d, beta, kind, M, V, time_unit=time_unit, block=block, engine=chosen).batched()


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
    from numerics.core.lanes import warm

    attention = Attention.heads(beta, kind, heads, mlp, causal, positions, block=block,
                                engine="heads" if engine == "numba" else "numpy")
    warm(attention.engine)
    return attention.batched()


class BatchScheduledField(ScheduledField):
    """:class:`numerics.core.blocks.ScheduledField` of an ensemble: ``field(X, t)``, ``time_dependent = True``;
    piecewise between the same layer times (:mod:`numerics.core.loop`), each layer's field built for a batch."""

    batched = True

    def at(self, t: float) -> Callable[[np.ndarray], np.ndarray]:
        """The time-independent batched field of the layer acting at t."""
        if self.schedule.fn is not None:
            heads, mlp = self.schedule.at(t)
            return make_batch_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block,
                                          positions=self.positions)
        layer = self.schedule.layer_index(t)
        if layer not in self._cache:
            heads, mlp = self.schedule.at(t)
            self._cache[layer] = make_batch_block_field(self.beta, self.kind, heads, mlp, self.causal, self.block,
                                                        positions=self.positions)
        return self._cache[layer]
