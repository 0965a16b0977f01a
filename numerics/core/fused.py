"""The attention field as one fused compiled kernel (Numba): logits, exp and the second product per L1 tile.

The NumPy path (:func:`numerics.core.field.make_field`) is the default and the reference. It computes, per tile of
rows, ``W = [beta X M, -c] [X, 1]^T`` (GEMM), ``exp(W)`` in place and ``W [XV, 1]`` (GEMM): every logit is
written by the first GEMM, read and rewritten by the exp and read by the second GEMM. This module computes the
same sums

    acc_i = sum_j exp(<l_i, r_j>) w_j,    l_i = [beta M^T x_i, -c_i],  r_j = [x_j, 1],  w_j = [V x_j, 1]

with 2 rows x 256 columns of logits at a time in a 4 KiB scratch tile (L1 cache; the two rows share every load
of the column block): the logits never leave the core's caches and no n x n block (nor a b x n one) is ever
allocated. The exp is a branch-free Cody-Waite reduction x = k ln 2 + r, |r| <= ln 2 / 2, a degree-13 Taylor
polynomial of e^r and the factor 2^k assembled from its exponent bits, so that the compiler vectorises it (a
call to libm's scalar exp would not be); its relative error is below 2 ulp on [-707, 709.78] (tested against
``np.exp``; measured 1 ulp), it returns exactly 0 below -707 (where e^x < 1e-307; NumPy returns a subnormal)
and inf above 709.78. Logits are summed over k in order, rows of the second product over j in vector lanes.

Summation order differs from the NumPy path's BLAS, so the two agree to rounding, not bitwise: see
:func:`fused_rounding_bound` and ``proofs_notes/core-fused-kernel.md``.

The kernel runs on one thread by default (no threading layer is started, so a process that used it can still
fork safely); ``fused_accumulate(..., threads=k)`` spreads pairs of rows over k threads (prange).

Numba is an optional dependency (extra ``fast``); :func:`require_numba` raises one clear ``InputError`` when it
is absent. The kernel is compiled on first use and cached on disk (``cache=True``): the first call of a fresh
install pays the compile time (measured separately by :func:`compile_seconds`), later processes load it.
"""
from __future__ import annotations

import time

import numpy as np

from numerics.common.errors import InputError
from numerics.core.engines import fused_rounding_bound  # noqa: F401 (its old home; written once there)

#: the compiled kernels (filled on first use by :func:`_build`)
_KERNELS: dict = {}


def numba_available() -> bool:
    """True when Numba can be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def require_numba():
    """The ``numba`` module, or :class:`InputError` with the install line when it is not installed."""
    try:
        import numba
    except ImportError:
        raise InputError("the numba backend needs Numba: pip install 'attnflow[fast]' (or pip install numba)") from None
    return numba


def _build():
    """Compile (or load from Numba's on-disk cache) the kernels; returns ``(accumulate, exp_array)``."""
    if not _KERNELS:
        numba = require_numba()
        from numerics.core import _fused_kernels as k

        _KERNELS.update(accumulate=k.accumulate, parallel=k.accumulate_parallel, exp=k.exp_array, numba=numba)
    return _KERNELS["accumulate"], _KERNELS["exp"]


def fused_exp(x: np.ndarray) -> np.ndarray:
    """The kernel's exp applied to a float64 array (same shape): for tests and the error bound."""
    _, exp_array = _build()
    x = np.ascontiguousarray(x, dtype=np.float64)
    return exp_array(x.ravel()).reshape(x.shape)


def fused_accumulate(lhs: np.ndarray, right: np.ndarray, rhs: np.ndarray, *, threads: int | None = None) -> np.ndarray:
    """acc = exp(lhs right^T) rhs without forming lhs right^T: (m x p), (n x p), (n x q) -> (m x q).

    ``threads``: None or 1 runs the one-thread kernel (the default: no threading layer is started, so the
    process stays safe to fork); k > 1 spreads pairs of rows over k Numba threads (prange).
    Overflow of a weight raises ``FloatingPointError`` (as NumPy's ``errstate(over="raise")`` does).
    """
    accumulate, _ = _build()
    from numerics.core._fused_kernels import TJ

    m, p = lhs.shape
    n = right.shape[0]
    blocks = max(1, -(-n // TJ))
    Rb = np.zeros((blocks * TJ, p))
    Rb[:n] = right
    Rb = np.ascontiguousarray(Rb.reshape(blocks, TJ, p).transpose(0, 2, 1))
    Wb = np.zeros((blocks * TJ, rhs.shape[1]))
    Wb[:n] = rhs
    Wb = np.ascontiguousarray(Wb.reshape(blocks, TJ, -1).transpose(0, 2, 1))
    rows = m + (m % 2)  # the kernel takes rows in pairs: an odd count gets a zero row, dropped below
    L = np.zeros((rows, p))
    L[:m] = lhs
    out = np.empty((rows, rhs.shape[1]))
    if threads is None or int(threads) <= 1:
        accumulate(L, Rb, Wb, n, out)
    else:
        numba = _KERNELS["numba"]
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
        _KERNELS["parallel"](L, Rb, Wb, n, out)
    out = out[:m]
    if not np.all(np.isfinite(out)):
        raise FloatingPointError("overflow in the fused kernel")
    return out


def compile_seconds() -> float:
    """Seconds to make the kernels ready in this process (compile, or load from Numba's cache) and run them once
    on a tiny input; 0 when this was done already. Reported apart from every timing. (Not keyed on the
    imported module: Numba compiles lazily, at a kernel's first call, so an import says nothing.)"""
    if _WARMED and _KERNELS:  # (tests empty _KERNELS to stand for a process without Numba)
        return 0.0
    start = time.perf_counter()
    X = np.ones((9, 3)) / np.sqrt(3.0)
    fused_accumulate(X, X, X)
    fused_exp(np.zeros(3))
    _WARMED.append(True)
    return time.perf_counter() - start


#: set once :func:`compile_seconds` has run the kernels (a list: module state without ``global``)
_WARMED: list = []
