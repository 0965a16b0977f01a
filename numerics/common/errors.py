"""Input validation at the public boundary: one exception type, messages that show the bad value.

Every public function of :mod:`numerics` raises :class:`InputError` (a ``ValueError``) for bad user input;
the CLI turns it into one line on stderr, ``error: <message>``, and exit code 2.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: |beta| beyond which e^{beta s} on [-1, 1] overflows float64 (e^709.8): the range of the commands that
#: evaluate the attention kernel unscaled (critical, spectrum, meanfield, conjecture); stated in their --help
EXP_BETA_MAX = 700.0

#: rows of X may deviate from unit norm by at most this much before they count as off the sphere
SPHERE_TOLERANCE = 1e-8


class InputError(ValueError):
    """Bad input from a user (shape, value, range, file). The message is one line and shows the value."""


def require_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be <= {maximum}, got {value}")
    return value


def require_real(value, name: str, minimum: float | None = None, maximum: float | None = None,
                 strict_minimum: bool = False) -> float:
    if isinstance(value, (complex, np.complexfloating)):
        raise InputError(f"{name} must be a real number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a real number, got {_short(value)}") from None
    except OverflowError:
        raise InputError(f"{name} must be finite, got {_short(value)}") from None
    if not math.isfinite(out):
        raise InputError(f"{name} must be finite, got {value!r}")
    if minimum is not None and (out < minimum or (strict_minimum and out == minimum)):
        op = ">" if strict_minimum else ">="
        raise InputError(f"{name} must be {op} {minimum}, got {out:g}")
    if maximum is not None and out > maximum:
        raise InputError(f"{name} must be <= {maximum}, got {out:g}")
    return out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def require_choice(value, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def require_finite_array(a, name: str, ndim: int | None = None) -> np.ndarray:
    """``a`` as a finite float64 array (complex, object, string and boolean arrays are refused, not cast)."""
    raw = np.asarray(a) if not isinstance(a, np.ndarray) else a
    if raw.dtype.kind == "c" or (raw.dtype.kind == "O" and any(isinstance(v, complex) for v in raw.flat)):
        raise InputError(f"{name} must be real, got a complex array (dtype {raw.dtype})")
    if raw.dtype.kind not in "fiuO":
        raise InputError(f"{name} must be a numeric array, got dtype {raw.dtype}")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a numeric array") from None
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InputError(f"{name} has a non-finite entry at index {tuple(int(i) for i in bad)}")
    return arr


def unit_rows(arr: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """``(arr / |row|, |row|)`` along ``axis``, overflow- and underflow-safe: |x| = s |x / s| with s = max |x_k|,
    so rows of 1e200 or 1e-200 keep their direction (a plain norm squares them to inf or 0). Zero rows give
    nan directions and norm 0: callers refuse them first (``norms == 0``)."""
    scale = np.max(np.abs(arr), axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        U = arr / scale
        size = np.linalg.norm(U, axis=axis, keepdims=True)
        return U / size, np.squeeze(np.where(scale > 0, scale * size, 0.0), axis=axis)


def require_points(X, name: str = "X", normalize: bool = False, d: int | None = None) -> np.ndarray:
    """Validate an (n, d) array of points of S^{d-1}; optionally renormalise rows instead of rejecting them."""
    arr = require_finite_array(X, name, ndim=2)
    n, dim = arr.shape
    if n < 1:
        raise InputError(f"{name} must hold at least one point, got shape {arr.shape}")
    if dim < 2:
        raise InputError(f"{name} must have d >= 2 columns, got shape {arr.shape}")
    if d is not None and dim != d:
        raise InputError(f"{name} must have {d} columns, got shape {arr.shape}")
    if normalize:
        U, norms = unit_rows(arr, axis=1)
        if np.any(norms == 0):
            raise InputError(f"{name} row {int(np.argmin(norms))} is zero and cannot be normalised")
        return U
    norms = np.linalg.norm(arr, axis=1)
    err = np.abs(norms - 1.0)
    worst = int(np.argmax(err))
    if err[worst] > SPHERE_TOLERANCE:
        raise InputError(f"{name} row {worst} has norm {norms[worst]:.12g}, off the unit sphere by "
                         f"{err[worst]:.3g} > {SPHERE_TOLERANCE:g} (pass normalize=True / --normalize)")
    return arr


def require_square(M, name: str, d: int) -> np.ndarray | None:
    if M is None:
        return None
    arr = require_finite_array(M, name, ndim=2)
    if arr.shape != (d, d):
        raise InputError(f"{name} must be {d} x {d}, got shape {arr.shape}")
    return arr
