r"""Position mechanisms of decoders as dynamics: ALiBi biases and rotary positions (RoPE), with position labels.

Every token carries a position label :math:`p_i` (default :math:`p_i = i`, the row order of X, counted from 0;
only differences :math:`p_i - p_j` enter). With a position mechanism the attention logits of head :math:`h` become

.. math::

    \begin{aligned}
    \text{ALiBi:}\quad s_{ij} &= \beta c \langle Q_h x_i, K_h x_j\rangle - \lambda_h \lvert p_i - p_j\rvert,
        \quad \lambda_h \ge 0 && (\text{Press et al. 2021}), \\
    \text{RoPE:}\quad s_{ij} &= \beta c \langle R(p_i) Q_h x_i, R(p_j) K_h x_j\rangle
        = \beta c \langle Q_h x_i, R(p_j - p_i) K_h x_j\rangle && (\text{Su et al. 2021})
    \end{aligned}

and both can be combined, with or without the causal mask. :math:`R(p)` is block diagonal on the head space
:math:`\mathbb{R}^k`: the coordinate pairs :math:`(2m, 2m + 1)`, :math:`m = 0, \dots, \lfloor k/2\rfloor - 1`, are
rotated by the angle :math:`p\, \theta_m` with the frequencies :math:`\theta_m = \mathrm{base}^{-2m/k'}`
(:math:`k' = k` for even :math:`k`). For odd :math:`k` the last coordinate is not rotated and :math:`k' = k - 1`
(the pairs use the even-dimensional formula of the rotated part; partial rotary embeddings leave the remaining
coordinates alone in the same way). The rotation is orthogonal, :math:`R(p)^\top R(q) = R(q - p)`.

ALiBi slopes: a scalar :math:`\lambda` gives head :math:`h` (1-based) of :math:`H` the slope
:math:`\lambda\, 2^{-8(h - 1)/H}`: the geometric sequence of the ALiBi paper with ratio :math:`2^{-8/H}`, started
at :math:`\lambda` (the paper's slopes :math:`2^{-8h/H}` are :math:`\lambda = 2^{-8/H}`, :func:`paper_slopes`);
with one head the slope is :math:`\lambda`. A sequence gives one slope per head.

The sign convention: the bias is *subtracted*, so a larger :math:`\lambda` forgets distant tokens faster;
:math:`\lambda = 0` is today's field bit for bit.

Sources: Press, Smith, Lewis, "Train short, test long: attention with linear biases", arXiv 2108.12409 (ALiBi);
Su et al., "RoFormer: enhanced transformer with rotary position embedding", arXiv 2104.09864 (RoPE).
Notes: ``proofs_notes/architectures-alibi-*.md``, ``proofs_notes/architectures-rope-*.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_finite_array, require_real

#: ALiBi's geometric ratio exponent: slopes lambda 2^{-RATIO (h - 1)/H} (the paper's 8)
ALIBI_RATIO_EXPONENT = 8.0


def paper_slopes(H: int) -> np.ndarray:
    r"""The ALiBi paper's slopes :math:`2^{-8h/H}`, :math:`h = 1, \dots, H` (1/2, 1/4, ..., 1/256 for
    :math:`H = 8`)."""
    return 2.0 ** (-ALIBI_RATIO_EXPONENT * np.arange(1, H + 1) / H)


def alibi_slopes(alibi, H: int) -> np.ndarray:
    r"""Per-head slopes ``(H,)``: a scalar :math:`\lambda \mapsto \lambda\, 2^{-8(h - 1)/H}`; a sequence of
    :math:`H` slopes as given."""
    arr = np.asarray(alibi, dtype=float)
    if arr.ndim == 0:
        return float(arr) * 2.0 ** (-ALIBI_RATIO_EXPONENT * np.arange(H) / H)
    if arr.size != H:
        raise InputError(f"alibi gives {arr.size} slopes, but the attention has {H} heads")
    return arr


def validate_alibi(alibi):
    """``None``, a real lambda >= 0, or a 1-D sequence of slopes >= 0 (stored as a read-only array)."""
    if alibi is None:
        return None
    if np.ndim(alibi) == 0:
        return require_real(alibi, "alibi lambda", minimum=0.0)
    arr = require_finite_array(alibi, "alibi slopes", ndim=1)
    if arr.size < 1 or np.any(arr < 0):
        raise InputError(f"alibi slopes must be >= 0 (one per head), got {arr.tolist()[:6]}")
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


def validate_rope(base):
    """``None`` or the RoPE base, a real number > 0 (10000 in RoFormer)."""
    if base is None:
        return None
    return require_real(base, "rope base", minimum=0.0, strict_minimum=True)


def validate_labels(labels):
    """``None`` (row order) or a 1-D array of finite position labels (read-only copy)."""
    if labels is None:
        return None
    arr = require_finite_array(labels, "position labels", ndim=1)
    if arr.size < 1:
        raise InputError("position labels must not be empty")
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


def rope_frequencies(k: int, base: float) -> np.ndarray:
    r""":math:`\theta_m = \mathrm{base}^{-2m/k'}` for :math:`m = 0, \dots, \lfloor k/2\rfloor - 1`,
    :math:`k' = 2 \lfloor k/2\rfloor` (odd :math:`k`: last coordinate fixed)."""
    half = k // 2
    return float(base) ** (-2.0 * np.arange(half) / (2 * half)) if half else np.zeros(0)


def rotate(Y: np.ndarray, labels: np.ndarray, base: float) -> np.ndarray:
    """R(p_i) y_i for each row of Y (n, k), or of each member of Y (B, n, k): pairs (2m, 2m + 1) rotated by
    p_i theta_m (module docstring)."""
    if Y.ndim == 3:  # the members' rows one after the other, each with its label (elementwise: the same bits)
        B, n, k = Y.shape
        return _rotate_rows(Y.reshape(B * n, k), np.tile(np.asarray(labels, float), B), base).reshape(B, n, k)
    return _rotate_rows(Y, labels, base)


def _rotate_rows(Y: np.ndarray, labels: np.ndarray, base: float) -> np.ndarray:
    """:func:`rotate` of the rows of an (n, k) array."""
    n, k = Y.shape
    half = k // 2
    if half == 0:
        return Y.copy()
    ang = np.asarray(labels, float)[:, None] * rope_frequencies(k, base)[None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = Y.copy()
    even, odd = Y[:, 0:2 * half:2], Y[:, 1:2 * half:2]
    out[:, 0:2 * half:2] = c * even - s * odd
    out[:, 1:2 * half:2] = s * even + c * odd
    return out


@dataclass(frozen=True, eq=False)
class PositionEncoding:
    r"""The position mechanism of a model, for the block field (:func:`numerics.core.blocks.block_velocity`).

    Parameters
    ----------
    alibi : float or (H,) array or None
        Slope :math:`\lambda` (geometric over heads) or per-head slopes, all :math:`\ge 0`.
    rope : float or None
        RoPE base (> 0).
    labels : (n,) array or None
        Position labels; ``None`` is the row order :math:`p_i = i`.
    """

    alibi: object = None
    rope: float | None = None
    labels: object = None

    def labels_for(self, n: int) -> np.ndarray:
        """The labels of n tokens (row order by default); given labels must number n."""
        if self.labels is None:
            return np.arange(n, dtype=float)
        if self.labels.size != n:
            raise InputError(f"{self.labels.size} position labels for {n} tokens")
        return self.labels

    def slopes(self, H: int) -> np.ndarray | None:
        return None if self.alibi is None else alibi_slopes(self.alibi, H)

    def head_inputs(self, X: np.ndarray, query: np.ndarray, key: np.ndarray):
        """(query side, key side) of one head after RoPE: query rows R(p_i) q_i, key rows R(p_j) k_j.

        ``X`` is one system's (n, d) state (only its n is read); ``query`` and ``key`` are (n, k) or, for the
        members of an ensemble, (B, n, k)."""
        if self.rope is None:
            return query, key
        p = self.labels_for(X.shape[0])
        return rotate(query, p, self.rope), rotate(key, p, self.rope)


def bias_block(slope: float, labels: np.ndarray, start: int, stop: int, cols: int) -> np.ndarray:
    """lambda |p_i - p_j| for rows i in [start, stop) and columns j < cols (subtracted from the logits)."""
    return slope * np.abs(labels[start:stop, None] - labels[None, :cols])


def load_labels(path) -> np.ndarray:
    """Position labels from a ``.npy`` file (1-D) or a text file of numbers (whitespace or comma separated)."""
    from numerics.common.readers import read_npy, read_text

    text_path = str(path)
    if text_path.endswith(".npy"):
        return validate_labels(read_npy(path, "position labels"))
    # missing files, directories and devices (/dev/zero) are refused before any read; the size is bounded
    raw = read_text(path, "position labels")
    try:
        values = [float(v) for v in raw.replace(",", " ").split()]
    except ValueError:
        raise InputError(f"position labels {path} must hold numbers (whitespace or comma separated)") from None
    return validate_labels(values)


def describe(model) -> list[str]:
    """Short descriptions of a model's position mechanism (for :func:`numerics.core.blocks.architecture_summary`)."""
    parts = []
    if model.alibi is not None:
        lam = model.alibi
        parts.append(f"ALiBi lambda={lam:g}" if np.ndim(lam) == 0 else f"ALiBi slopes {np.round(lam, 6).tolist()}")
    if model.rope is not None:
        parts.append(f"RoPE base={model.rope:g}")
    if model.positions is not None:
        parts.append(f"{model.positions.size} position labels")
    return parts
