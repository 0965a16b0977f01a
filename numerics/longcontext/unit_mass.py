"""The root shared by every long-context transition: beta with sum_k e^{-beta g_k} = 1 for gaps g_k >= 0.

A softmax row whose top score leads the others by gaps g_k puts the weight 1/(1 + S(beta)),
S(beta) = sum_k e^{-beta g_k}, on its top key; the top weight is 1/2 exactly when S = 1. log S is convex and
decreasing in beta (its derivative is minus the S-weighted mean gap), from log m at beta = 0 (m gaps) to -oo, so
the root is unique when m >= 2 and the gaps are not all zero. Newton's method on log S from the left of the root
converges monotonically; a bisection step guards every iterate. Vectorised over the columns of a gap matrix.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from numerics.common.errors import InputError

#: relative tolerance of the root (Newton converges quadratically: three more digits cost one more pass)
RTOL = 1e-12
MAX_ITERATIONS = 100
#: elements of the gap matrix processed at once (each temporary is 8 bytes times this)
CHUNK_ELEMENTS = 1 << 22


def logsumexp_rows(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log sum exp along ``axis`` (max-shifted; -inf rows give -inf). A plain NumPy version: scipy's
    ``logsumexp`` costs several times more on the (replicates, keys) arrays of the root searches."""
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(x - top).sum(axis=axis)) + np.squeeze(top, axis=axis)


def log_mass(gaps: np.ndarray, beta) -> np.ndarray:
    """log sum_k e^{-beta g_k} over axis 0 (gaps of shape (m, columns), beta of shape (columns,))."""
    return logsumexp_rows(-np.asarray(beta)[None, :] * gaps, axis=0)


def unit_mass_beta(gaps, start=None, mass: float = 1.0) -> np.ndarray:
    """For each column of ``gaps`` (shape (m, columns), or (m,) for one row) the beta >= 0 with
    sum_k e^{-beta g_k} = ``mass`` (1: top weight 1/2; (1 - w)/w: top weight w). ``start`` (optional, per
    column) is a guess; the bracket is [0, log(m / mass) / min g]."""
    g = np.asarray(gaps, dtype=float)
    single = g.ndim == 1
    g = g[:, None] if single else g
    if g.ndim != 2 or g.shape[0] < 2:
        raise InputError(f"unit_mass_beta needs at least 2 gaps per column, got shape {np.shape(gaps)}")
    if not np.all(np.isfinite(g)) or np.any(g < 0):
        raise InputError("gaps must be finite and >= 0")
    cols = max(1, CHUNK_ELEMENTS // g.shape[0])  # bounded temporaries: columns in chunks
    if g.shape[1] > cols:
        guess = None if start is None else np.broadcast_to(np.asarray(start, float), (g.shape[1],))
        out = np.concatenate([unit_mass_beta(g[:, a:a + cols], None if guess is None else guess[a:a + cols], mass)
                              for a in range(0, g.shape[1], cols)])
        return out[0] if single else out
    m = g.shape[0]
    if not 0 < mass < m:
        raise InputError(f"the target mass must lie in (0, {m}) (the value of the sum at beta = 0), got {mass!r}")
    gmin = g.min(axis=0)
    if np.any(gmin <= 0):
        raise InputError("a zero gap (a tie with the top score) keeps the sum above 1 for every beta")
    log_target = np.log(mass)
    lo = np.zeros(g.shape[1])
    hi = np.log(m / mass) / gmin  # every term is at most e^{-beta gmin}: S(hi) <= m e^{-log(m/mass)} = mass
    guess = np.log(m / mass) / g.mean(axis=0)
    beta = np.clip(guess if start is None else np.asarray(start, float), lo, hi)
    for _ in range(MAX_ITERATIONS):
        w = -beta[None, :] * g
        top = w.max(axis=0)
        e = np.exp(w - top[None, :])
        s = e.sum(axis=0)
        f = top + np.log(s) - log_target          # log S(beta) - log mass
        slope = -(e * g).sum(axis=0) / s          # d log S / d beta = - <g>
        lo = np.where(f > 0, beta, lo)
        hi = np.where(f <= 0, beta, hi)
        step = beta - f / slope
        inside = (step >= lo) & (step <= hi)
        new = np.where(inside, step, 0.5 * (lo + hi))
        done = np.abs(new - beta) <= RTOL * np.maximum(new, 1e-300)
        beta = new
        if np.all(done):
            break
    return beta[0] if single else beta


def half_root(mean_at, guess: float = 1.0, rtol: float = 1e-10) -> float:
    """The root of the increasing function ``mean_at(c) = 1/2``, bracketed from [guess/4, 4 guess] (widened by
    factors of 4 as needed); relative tolerance ``rtol``."""
    lo, hi = guess / 4.0, guess * 4.0
    while mean_at(lo) > 0.5:
        lo /= 4.0
    while mean_at(hi) < 0.5:
        hi *= 4.0
    return brentq(lambda c: mean_at(c) - 0.5, lo, hi, xtol=rtol * lo, rtol=max(rtol, 4.5e-16))


def mean_half_root(W_at, replicates: int, guess: float = 1.0) -> tuple[float, float]:
    """Root c of mean(W_at(c)) = 1/2 (``W_at`` returns one top weight per replicate, with the replicates'
    randomness fixed: common random numbers in c) and its delta-method standard error
    sd(W_at(c)) / sqrt(replicates) / |d mean W / dc| (central difference, h = 1e-4 c)."""
    c = half_root(lambda x: float(np.mean(W_at(x))), guess)
    W = W_at(c)
    h = 1e-4 * c
    slope = (float(np.mean(W_at(c + h))) - float(np.mean(W_at(c - h)))) / (2 * h)
    se = float(np.std(W, ddof=1) / math.sqrt(replicates)) / abs(slope)
    return c, se
