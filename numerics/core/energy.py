"""Interaction energies of (B, n, d) states as symmetric pair sums: one implementation for one system and for a batch.

For each member X of a batch, s_ij = <x_i, x_j> (Q = K = V = I, docs/conventions.md, GLPR arXiv 2312.10794):

- ``glpr-shifted``: E = 1/(2 beta n^2) sum_ij (e^{beta s_ij} - 1)   (GLPR's E_beta - 1/(2 beta); |mean X|^2 / 2 at 0)
- ``gkpr``:         E = (1/n^2) sum_ij e^{beta (s_ij - 1)}             (GKPR arXiv 2410.06833; beta >= 0)
- ``log-mean-exp``: E = (1/beta) log((1/n^2) sum_ij e^{beta s_ij})    (any beta; |mean X|^2 at 0)
- a user kernel phi: E = 1/(2 n^2) sum_ij phi(s_ij)                    (``phi``, e.g. from :mod:`numerics.core.kernel_field`)

Summation (the one order every caller gets, so that a member of a batch has the energy of the same system run
alone, bit for bit): rows in blocks of ``block`` rows (the single path's:
:func:`numerics.core.field.energy_block`); block row [a, e) forms the pair terms of
G = L[a:e] R[a:]^T only (the upper block triangle: a symmetric pair is formed once), sums them with NumPy's
pairwise sum, and adds 2 x (the block's sum) - (its diagonal block's sum). Members are processed together in
chunks (:data:`CHUNK_ENTRIES` pair terms at a time; one member on 2D views): a stacked GEMM calls the same BLAS
kernel per member, the per-member sums over the last two axes add in the same order as one block's sum, every
other step is elementwise, and the few scalar steps (log1p, the log-sum-exp rescaling) run per member in Python
floats, as for one system (tests/numerics/test_core_energy.py checks the bits). ``log-mean-exp`` at |beta| > 1 is the exception to the triangle: a running
log-sum-exp over full row blocks (the largest exponent factored out, so that no beta overflows).

Overflow: ``glpr-shifted`` overflows for beta s_ij > 709 (|beta| > 600 is the documented limit); the member whose
energy is not finite is named in an :class:`InputError` that suggests the two normalisations that stay finite.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import exprel

from numerics.common.errors import SPHERE_TOLERANCE, InputError, require_choice, require_finite_array, require_int
from numerics.core.engines import choose_energy

#: below this |beta| the shifted energy's terms use s exprel(beta s) instead of expm1(beta s) / beta
EXPREL_MAX_BETA = 1e-6
#: pair terms formed at once over the members of a chunk (2^18 doubles = 2 MiB: the blocks of a chunk stay in
#: a 1-2 MiB L2; a single system's block row is never split)
CHUNK_ENTRIES = 1 << 18


def pair_energies(X, beta, normalization: str | Sequence[str] = "glpr-shifted", *, block: int,
                  phi: Callable[[np.ndarray, float], np.ndarray] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Interaction energy of every member of a batch of configurations (Q = K = V = I).

    Parameters
    ----------
    X : (B, n, d) array_like
        B configurations of n unit vectors each.
    beta : float or (B,) array_like
        Inverse temperature, one for all members or one per member.
    normalization : str or sequence of B str
        ``glpr-shifted``, ``gkpr`` or ``log-mean-exp`` (see the module docstring; the same for every member or one
        per member; the alias ``glpr`` is resolved by :func:`numerics.core.field.interaction_energy`). Ignored
        with ``phi``.
    block : int
        Rows per block; it fixes the summation order. The single path's rows are
        :func:`numerics.core.field.energy_block` ``(n, d)`` (cache-sized tiles are field.py's; this module stays
        below it in the import graph).
    phi : callable, optional
        A user pair kernel as ``phi(S, beta) -> phi(S)`` elementwise (e.g. a compiled kernel of
        :mod:`numerics.core.kernel_field`): E = 1/(2 n^2) sum_ij phi(s_ij), called once per distinct beta.
    progress : callable, optional
        Called as ``progress(done, B)`` after each chunk of members.

    Returns
    -------
    (B,) ndarray
        Member b's energy equals ``interaction_energy(X[b], beta[b], normalization=..., block=block)`` (or
        ``kernel_energy``) bit for bit.

    Notes
    -----
    Source: GLPR (arXiv 2312.10794) energy E_beta; GKPR normalised energy. Verified by:
    tests/numerics/test_core_energy.py (members against single systems bit for bit, an mpmath reference),
    core.energy-identity.
    """
    X = require_finite_array(X, "X", ndim=3)
    B, n, d = X.shape
    if n < 1 or d < 2:
        raise InputError(f"X must hold n >= 1 points of d >= 2 coordinates per member, got shape {X.shape}")
    off = np.abs(np.sqrt(np.einsum("bij,bij->bi", X, X)) - 1.0)
    if off.size and off.max() > SPHERE_TOLERANCE:
        b, i = np.unravel_index(int(np.argmax(off)), off.shape)
        raise InputError(f"X member {b} row {i} is off the unit sphere by {off[b, i]:.3g} > {SPHERE_TOLERANCE:g}")
    betas = require_finite_array(beta, "beta")
    betas = np.full(B, float(betas)) if betas.ndim == 0 else betas
    if betas.shape != (B,):
        raise InputError(f"beta must be one number or one per member ({B}), got shape {betas.shape}")
    block = require_int(block, "block", minimum=1)
    return batch_energies(X, betas, normalization, block=block, phi=phi, progress=progress)


def standalone_energy(X: np.ndarray, beta: float, normalization: str = "glpr-shifted", *, block: int,
                      backend: str = "numpy") -> float:
    """The energy of one validated system (X float64 (n, d), unit rows), on the engine of
    :func:`numerics.core.engines.choose_energy`.

    ``backend="numpy"`` (the default): :func:`batch_energies` of a batch of one, the bits every batch member gets.
    ``backend="numba"``: the compiled pair sum (``numerics.core._energy_kernels``: one expm1 per unordered pair,
    in column tiles)
    for ``glpr-shifted`` at EXPREL_MAX_BETA <= |beta| <= 500 and d <= 32, within
    :func:`numerics.core.engines.energy_rounding_bound` of the NumPy value; other requests run on NumPy.
    Verified by: tests/numerics/test_core_energy_kernel.py (mpmath at n = 5, the bound against NumPy).
    """
    if choose_energy(backend, normalization, beta, small_beta=EXPREL_MAX_BETA, d=X.shape[1]) == "numpy":
        return float(batch_energies(X[None], np.array([beta]), normalization, block=block)[0])
    from numerics.core import _energy_kernels as kernels  # only with Numba (choose_energy checked it)

    n, d = X.shape
    B, P = kernels.pack(np.ascontiguousarray(X, dtype=float), float(beta))
    total = kernels.shifted_pair_sum(B, P, d, kernels.tile_width(n, d), kernels.flush_rows(n)) / beta
    if not math.isfinite(total):
        raise InputError(f"E_beta overflows at beta={beta:g}; use normalization='log-mean-exp' (any beta) "
                         f"or 'gkpr' (beta >= 0)")
    return 0.5 * total / n**2


def batch_energies(X: np.ndarray, betas: np.ndarray, normalization: str | Sequence[str] = "glpr-shifted", *,
                   block: int, phi: Callable[[np.ndarray, float], np.ndarray] | None = None,
                   progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """:func:`pair_energies` of validated input: X a float64 (B, n, d) array of unit rows, ``betas`` (B,) floats."""
    B, n, d = X.shape
    b = max(1, min(block, n))
    done = [0]

    def advance(count: int) -> None:
        done[0] += count
        if progress is not None:
            progress(done[0], B)

    if phi is not None:
        out = np.empty(B)
        for value in np.unique(betas):  # phi is called with one beta at a time (its errors name it)
            rows = np.flatnonzero(betas == value)
            out[rows] = _kernel_energies(_take(X, rows), float(value), phi, b, advance)
        return out
    if isinstance(normalization, str):  # one normalisation (a single system's case: no per-member bookkeeping)
        kind = _normalization(normalization)
        _require_gkpr_beta(kind, betas)
        return _chunked(_ENERGIES[kind], X, betas, b, advance)
    kinds = [_normalization(k) for k in normalization]
    if len(kinds) != B:
        raise InputError(f"normalization must be one name or one per member ({B}), got {len(kinds)}")
    out = np.empty(B)
    for kind in sorted(set(kinds)):
        rows = np.flatnonzero([k == kind for k in kinds])
        _require_gkpr_beta(kind, betas[rows])
        out[rows] = _chunked(_ENERGIES[kind], _take(X, rows), betas[rows], b, advance)
    return out


def _normalization(name: str) -> str:
    return require_choice(name, "normalization", tuple(_ENERGIES))


def _require_gkpr_beta(kind: str, betas: np.ndarray) -> None:
    if kind == "gkpr" and (betas < 0).any():
        raise InputError(f"the gkpr normalisation needs beta >= 0, got {betas[betas < 0][0]:g}")


def _take(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return X if rows.size == X.shape[0] else X[rows]


def _chunked(fn, X: np.ndarray, betas: np.ndarray, b: int, advance) -> np.ndarray:
    """fn(X[c], betas[c], b) over chunks c of members with at most CHUNK_ENTRIES pair terms per block."""
    B, n, _ = X.shape
    size = max(1, CHUNK_ENTRIES // (b * n))
    if size >= B:
        out = fn(X, betas, b)
        advance(B)
        return out
    out = np.empty(B)
    for a in range(0, B, size):
        c = slice(a, min(B, a + size))
        out[c] = fn(X[c], betas[c], b)
        advance(c.stop - c.start)
    return out


def _pair_sums(left: np.ndarray, right: np.ndarray, terms, b: int) -> np.ndarray:
    """Per member, sum_{i,j} f(<l_i, r_j>) for terms symmetric in (i, j), from the upper block triangle only.

    Block row [a, e) forms G = left[:, a:e] right[:, a:]^T into one preallocated buffer (half the GEMM and half
    the ``terms`` work of the full n x n sum); the off-diagonal part counts twice, the diagonal block
    G[:, :, :e - a] once. ``terms(G)`` returns f(G) and may overwrite G. One member is computed on 2D views
    (the same BLAS call and sums; a stacked matmul and axis reductions cost ~3 us more per block).
    """
    C, n, _ = left.shape
    if C == 1:
        left, right = left[0], right[0]
    rightT = np.swapaxes(right, -1, -2)
    buf = np.empty(C * b * n)
    total, axes = (0.0, None) if C == 1 else (np.zeros(C), (1, 2))  # one member: full reductions, the same sums
    for start in range(0, n, b):
        stop = min(n, start + b)
        m = stop - start
        G = buf[:C * m * (n - start)].reshape(left.shape[:-2] + (m, n - start))
        np.matmul(left[..., start:stop, :], rightT[..., start:], out=G)
        F = terms(G)
        total += 2.0 * F.sum(axis=axes) - F[..., :m].sum(axis=axes)
    return np.reshape(total, (C,))


def _expm1_terms(G: np.ndarray) -> np.ndarray:
    return np.expm1(G, out=G)


def _exp_terms(G: np.ndarray) -> np.ndarray:
    return np.exp(G, out=G)


def _shifted_sums(X: np.ndarray, betas: np.ndarray, b: int) -> np.ndarray:
    """Per member sum_{i,j} (e^{beta s_ij} - 1) / beta.

    For |beta| >= 1e-6: ``expm1`` of the tiles of (beta X) X^T, summed, divided by beta once (one GEMM and one
    expm1 per pair term; a few ulp per term while beta s is a normal number, else the term is below 1e-296).
    For |beta| < 1e-6 (0 and the subnormals included) the exact form s exprel(beta s), exprel(z) = (e^z - 1)/z
    (``scipy.special.exprel``), whose limit at beta = 0 is s.
    """
    small = np.abs(betas) < EXPREL_MAX_BETA
    count = np.count_nonzero(small)  # one call, not any() and all(): ~1 us each, per call of interaction_energy
    some, every = count > 0, count == small.size
    if not some:
        return _pair_sums(betas[:, None, None] * X, X, _expm1_terms, b) / betas
    out = np.empty(X.shape[0])
    if not every:
        Y, bs = X[~small], betas[~small]
        out[~small] = _pair_sums(bs[:, None, None] * Y, Y, _expm1_terms, b) / bs
    Y, bs = (X, betas) if every else (X[small], betas[small])
    b3 = bs[:, None, None] if bs.size > 1 else bs[0]  # one member: its terms are 2D (see _pair_sums)
    out[small] = _pair_sums(Y, Y, lambda G: G * exprel(b3 * G), b)  # left is right: NumPy's A A^T path, as alone
    return out


def _glpr_shifted(X: np.ndarray, betas: np.ndarray, b: int) -> np.ndarray:
    n = X.shape[1]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # an overflow is reported below, by member
        total = _shifted_sums(X, betas, b)
    if np.count_nonzero(np.isfinite(total)) < total.size:
        bad = np.flatnonzero(~np.isfinite(total))
        raise InputError(f"E_beta overflows at beta={betas[bad[0]]:g}; use normalization='log-mean-exp' (any beta) "
                         f"or 'gkpr' (beta >= 0)")
    return total / (2.0 * n**2)


def _gkpr(X: np.ndarray, betas: np.ndarray, b: int) -> np.ndarray:
    C, n, _ = X.shape
    b3 = betas[:, None, None]
    ones = np.ones((C, n, 1))
    # e^{beta (s - 1)} from one GEMM with an extra column: [beta X, -beta] [X, 1]^T
    left = np.concatenate([b3 * X, -b3 * ones], axis=2)
    return _pair_sums(left, np.concatenate([X, ones], axis=2), _exp_terms, b) / n**2


def _log_mean_exp(X: np.ndarray, betas: np.ndarray, b: int) -> np.ndarray:
    """(1/beta) log mean_ij e^{beta s_ij}: log1p(beta mean_s) / beta for |beta| <= 1 (mean_s = the shifted
    mean, no cancellation as beta -> 0), a running log-sum-exp with the largest exponent factored out otherwise
    (no overflow for any beta). The scalar steps run per member in Python floats (math, as for one system)."""
    C, n, _ = X.shape
    out = np.empty(C)
    near = np.abs(betas) <= 1.0
    if np.count_nonzero(near):
        rows = np.flatnonzero(near)
        mean = _shifted_sums(_take(X, rows), betas[rows], b) / n**2  # mean of (e^{beta s} - 1) / beta
        for k, r in enumerate(rows):
            beta, mean_s = float(betas[r]), float(mean[k])
            out[r] = mean_s if beta == 0.0 else math.log1p(beta * mean_s) / beta
    if np.count_nonzero(near) < C:
        rows = np.flatnonzero(~near)
        Y, bs = _take(X, rows), betas[rows]
        YT, b3 = Y.transpose(0, 2, 1), bs[:, None, None]
        top, acc = np.full(rows.size, -math.inf), np.zeros(rows.size)
        for start in range(0, n, b):
            Z = Y[:, start:start + b] @ YT
            Z *= b3
            peak = Z.max(axis=(1, 2))
            for k in np.flatnonzero(peak > top):  # a new largest exponent: rescale the running sum
                acc[k] *= math.exp(top[k] - peak[k]) if top[k] > -math.inf else 0.0
                top[k] = peak[k]
            Z -= top[:, None, None]
            acc += np.exp(Z, out=Z).sum(axis=(1, 2))
        for k, r in enumerate(rows):
            out[r] = (float(top[k]) + math.log(float(acc[k]) / n**2)) / float(bs[k])
    return out


_ENERGIES = {"glpr-shifted": _glpr_shifted, "gkpr": _gkpr, "log-mean-exp": _log_mean_exp}


def _kernel_energies(X: np.ndarray, beta: float, phi, b: int, advance) -> np.ndarray:
    """1/(2 n^2) sum_ij phi(s_ij) per member for one beta."""
    n = X.shape[1]

    def one(Xc: np.ndarray, _betas: np.ndarray, block_rows: int) -> np.ndarray:
        # phi(G) may be a read-only broadcast (a constant phi): summed, never written
        return _pair_sums(Xc, Xc, lambda G: phi(G, beta), block_rows) / (2.0 * n**2)

    return _chunked(one, X, np.full(X.shape[0], beta), b, advance)


__all__ = ["CHUNK_ENTRIES", "EXPREL_MAX_BETA", "batch_energies", "pair_energies", "standalone_energy"]
