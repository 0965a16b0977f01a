"""The one blocked primitive of the attention field: acc = exp(lhs right) rhs on (B, n, p) operands, in tiles.

Every attention sum of the core is, member by member,

    acc_i = sum_j exp(<l_i, r_j>) w_j,      lhs (B, n, p) with rows l_i, right (B, p, n) with columns r_j,
                                            rhs (B, n, q) with rows w_j,

where the shift of the exponent is folded into the operands by the caller (:mod:`numerics.core.attention`): the
bound shift c_i = |beta| |M^T x_i| is the last column of ``lhs`` against a column of ones in ``right``; the row
maximum is subtracted from the tile by :func:`numerics.core.attention` itself (it is not known before the tile).
This module holds the two tile loops of that sum and the block sizes:

- :func:`tile_sums`: every tile of b rows against all n columns (general scores);
- :func:`symmetric_tile_sums`: for symmetric weights (Q = K = I and a constant shift) the upper block triangle
  only, each tile used for its rows and mirrored for its columns, optionally summing the energy terms
  expm1(beta s_ij) of the tile on the way (the side sums that :class:`numerics.core.field.RowSumMemo` reads).

Memory stays bounded: a tile holds b rows of n columns per member (:func:`tile_rows`, :func:`block_rows`); callers
process members in groups (:func:`numerics.core.batch_field.member_groups`). Each stacked GEMM calls the same BLAS
routine on every member's slice, with the shapes and strides of one system, so a member gets the bits of a B = 1
call (tests/numerics/test_core_support_matrix.py checks it feature by feature).
"""
from __future__ import annotations

import functools
import os

import numpy as np

from numerics.common.errors import InputError

#: default number of kernel entries per block (block rows * n)
BLOCK_ENTRIES = 1 << 22
#: L2 cache size assumed when the machine does not report one (bytes)
L2_FALLBACK_BYTES = 1 << 20
#: fewest rows per cache-sized tile: below this the GEMMs of a tile run far under the dgemm rate
TILE_MIN_ROWS = 8
#: from this dimension on the field's GEMMs dominate its exp and tiles are tall (:func:`block_rows`)
TILE_CACHE_MAX_D = 8
#: fewest block rows of the symmetric (Q = K = I) field: with k block rows the upper block triangle holds
#: (k + 1) / (2 k) of the pairs (16: 53%; measured at n = 4096, d = 64: 256 rows 162 ms vs 1024 rows 175 ms)
SYMMETRIC_MIN_BLOCKS = 16


def block_rows(n: int, entries: int = BLOCK_ENTRIES) -> int:
    """Rows per block so that a block of the n x n kernel holds about ``entries`` numbers."""
    return max(1, min(n, entries // max(n, 1)))


@functools.lru_cache(maxsize=1)
def l2_cache_bytes() -> int:
    """Size of the L2 cache of cpu0 in bytes, from ``/sys/devices/system/cpu/cpu0/cache/index*/``
    (the level-2 data or unified cache); :data:`L2_FALLBACK_BYTES` where the system does not say."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            path = os.path.join(base, entry)
            with open(os.path.join(path, "level")) as fh:
                level = fh.read().strip()
            with open(os.path.join(path, "type")) as fh:
                kind = fh.read().strip()
            if level == "2" and kind in ("Data", "Unified"):
                with open(os.path.join(path, "size")) as fh:
                    return _parse_cache_size(fh.read())
    except (OSError, ValueError):
        pass
    return L2_FALLBACK_BYTES


def _parse_cache_size(text: str) -> int:
    """``"1024K"`` -> 1048576 (suffixes K, M, G as the kernel writes them)."""
    text = text.strip().upper()
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    value = int(text.rstrip("KMG"))
    if value <= 0:
        raise ValueError(text)
    return value * factor


def tile_rows(n: int, d: int, cache_bytes: int | None = None) -> int:
    """Rows per tile of the field: cache-sized for small d, large for large d.

    Per row the field does 4 n (d + 1) GEMM flops and n exponentials; with dgemm near 80 GFLOP/s and exp near
    1.5 G/s on one core the exp dominates while d + 1 < ~14. There the tile of logits is kept in the L2 cache
    (b rows with 8 b (n + 2 (d + 1)) bytes in half of :func:`l2_cache_bytes`, at least ``TILE_MIN_ROWS``),
    so that GEMM, exp and GEMM pass over it without DRAM traffic. For d >= ``TILE_CACHE_MAX_D`` the GEMMs
    dominate and their efficiency needs tall tiles: :func:`block_rows` (about 4 million entries).
    Measured at n = 4096 (2 shared cores under heavy load, minimum of 4 interleaved rounds): d = 3, 32 rows
    40 ms vs 1024 rows 260 ms; d = 64, 128 rows 649 ms vs 1024 rows 394 ms.
    """
    if d >= TILE_CACHE_MAX_D:
        return block_rows(n)
    cache = l2_cache_bytes() if cache_bytes is None else int(cache_bytes)
    rows = (cache // 2) // (8 * (max(n, 1) + 2 * (d + 1)))
    return max(1, min(n, max(rows, TILE_MIN_ROWS)))


def symmetric_rows(n: int, block: int | None, d: int) -> int:
    """Rows per tile of :func:`symmetric_tile_sums`: ``block`` if given, else at least
    :data:`SYMMETRIC_MIN_BLOCKS` block rows (the upper block triangle then skips about half the pairs)."""
    rows = block or min(tile_rows(n, d), max(TILE_MIN_ROWS, -(-n // SYMMETRIC_MIN_BLOCKS)))
    return min(rows, n)


#: largest tile buffer of one group of members (numbers): 2^21 doubles = 16 MiB
BATCH_TILE_ENTRIES = 1 << 21


def member_groups(B: int, per_member: int, entries: int | None = None) -> list[slice]:
    """Slices of at most ``entries // per_member`` members (at least one) covering 0..B-1 (``entries``: default
    :data:`BATCH_TILE_ENTRIES`, read when called)."""
    entries = BATCH_TILE_ENTRIES if entries is None else entries  # read when called (tests bound it)
    size = max(1, entries // max(1, per_member))
    return [slice(a, min(B, a + size)) for a in range(0, B, size)]


def overflow_error(beta) -> InputError:
    """The one-line error of an overflowing weight (``beta``: a number, or the members' betas)."""
    value = float(beta) if np.ndim(beta) == 0 else float(np.max(np.abs(beta)))
    return InputError(f"attention weights overflow for beta={value:g} (use smaller |beta|, or model='sa')")


def tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta) -> np.ndarray:
    """acc = exp(lhs right) rhs in tiles of b rows, member by member: stacked GEMM, exp in place, stacked GEMM.

    ``lhs`` (B, n, p), ``right`` (B, p, n), ``rhs`` (B, n, q) -> (B, n, q); one system's (n, p), (p, n), (n, q)
    -> (n, q) (the same loop on arrays without the member axis: the BLAS calls of its B = 1 slice). An
    overflowing weight raises :class:`InputError` (``beta`` names it). The loop does three calls per tile and
    nothing else (no per-tile errstate, checks or divisions: at d = 3 the cache-sized tiles are about 15 rows, so
    per-tile Python overhead would show); the tile buffer is allocated once and every GEMM and the exp write
    into it.
    """
    n, q = lhs.shape[-2], rhs.shape[-1]
    W_buf = np.empty(lhs.shape[:-2] + (b, n))
    acc = np.empty(lhs.shape[:-1] + (q,))
    with np.errstate(over="raise", under="ignore"):
        try:
            for start in range(0, n, b):
                stop = min(n, start + b)
                W = W_buf[..., :stop - start, :]
                np.matmul(lhs[..., start:stop, :], right, out=W)
                np.exp(W, out=W)
                np.matmul(W, rhs, out=acc[..., start:stop, :])
        except FloatingPointError:
            raise overflow_error(beta) from None
    return acc


def symmetric_tile_sums(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, b: int, beta,
                        energy_shift: float | None = None):
    """The sums of :func:`tile_sums` for symmetric weights W_ij = W_ji (Q = K = I, a constant shift c): only the
    upper block triangle is formed and exponentiated, each tile W = W[a:e, a:] once, and used twice:
    acc[a:e] += W rhs[a:] (rows) and acc[e:] += W[:, e - a:]^T rhs[a:e] (the mirrored columns; the diagonal
    block counts once). Half the exponentials and half the first GEMM of the full sum; the second GEMM is the
    same work in two halves. Equal to the full sum to rounding (summation order only).

    With ``energy_shift = c`` the logits of ``lhs right`` are the unshifted beta s_ij (the caller puts 0 in the
    shift column): each tile's expm1(beta s_ij) is summed per member as the pair sum of
    :func:`numerics.core.field.interaction_energy` sums it (off-diagonal entries twice, the diagonal block once)
    before c is subtracted and the exp taken, and the totals sum_ij expm1(beta s_ij), one per member, are
    returned second (else None). One system's (n, p) arrays (no member axis, the same loop) give (n, q) and
    its one total (a float, or None).
    """
    one = lhs.ndim == 2
    lead = lhs.shape[:-2]
    B, n, q = (1 if one else lhs.shape[0]), lhs.shape[-2], rhs.shape[-1]
    buf = np.empty(B * b * n)
    terms = None if energy_shift is None else np.empty(b * n)
    totals = None if energy_shift is None else [0.0] * B
    acc = np.zeros(lhs.shape[:-1] + (q,))
    cols = np.empty(acc.shape)  # the mirrored contributions of one tile, before they are added (no allocation)
    with np.errstate(over="raise", under="ignore"):
        try:
            for start in range(0, n, b):
                stop = min(n, start + b)
                m = stop - start
                W = buf[:B * m * (n - start)].reshape(lead + (m, n - start))
                np.matmul(lhs[..., start:stop, :], right[..., start:], out=W)
                if terms is not None:
                    # one member's tile at a time: the layout of one system's sum
                    for member, tile in enumerate((W,) if one else W):
                        F = np.expm1(tile, out=terms[:m * (n - start)].reshape(m, n - start))
                        totals[member] += 2.0 * float(F.sum()) - float(F[:, :m].sum())
                    W -= energy_shift
                np.exp(W, out=W)
                acc[..., start:stop, :] += W @ rhs[..., start:, :]
                if stop < n:
                    np.matmul(W[..., m:].swapaxes(-1, -2), rhs[..., start:stop, :], out=cols[..., stop:, :])
                    acc[..., stop:, :] += cols[..., stop:, :]
        except FloatingPointError:
            raise overflow_error(beta) from None
    return acc, (totals[0] if one and totals is not None else totals)
