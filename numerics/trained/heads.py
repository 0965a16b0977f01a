r"""A trained layer's heads as attnflow model parameters, their effective inverse temperature and sign structure.

Head :math:`h` of a BERT layer (weights in PyTorch layout :math:`y = x W^\top + b`, head width :math:`k = d / H`)
is, in the layout of :class:`numerics.core.blocks.MultiHead` (blocks of shape ``(H, k, d)``)::

    Q_h = W_q[h k:(h+1) k, :],  K_h = W_k[h k:(h+1) k, :],  V_h = W_v[h k:(h+1) k, :],  W_h = W_o[:, h k:(h+1) k]^T

with scores :math:`\langle Q_h x_i, K_h x_j\rangle / \sqrt{k}` (scale :math:`1/\sqrt{k}`); the biases are dropped
(they are not part of the attnflow model; :mod:`numerics.trained.flows` measures what they change).

Effective inverse temperature. The score map is :math:`S_h = Q_h^\top K_h / \sqrt{k}`. For tokens of norm
:math:`r` (:math:`x = ru` with :math:`u` on the sphere) the scores are :math:`r^2 \langle u_i, S_h u_j\rangle`,
so on the sphere the head acts with :math:`\beta S_h / \lVert S_h\rVert` where
``beta_spec`` :math:`= r^2 \lVert S_h\rVert_2` (largest singular value) is the largest inverse temperature it
reaches and ``beta_iso`` :math:`= r^2 \operatorname{tr}(S_h) / d` is the inverse temperature of the nearest
multiple of the identity (Frobenius projection onto :math:`\operatorname{span}\{I\}`; the attnflow model
:math:`Q^\top K = \beta I`). ``isotropy`` :math:`= \operatorname{tr}(S_h) / (\sqrt{d}\, \lVert S_h\rVert_F)` is
the cosine between :math:`S_h` and :math:`I` (1 for :math:`\beta I`, :math:`\approx 0` for a head far from it).
:math:`r^2` is the mean squared token norm at the layer's input.

Sign structure (the Gaussian picture of Castin, Ablin, Carrillo, Peyre, arXiv 2501.18322): with
:math:`A_h = K_h^\top Q_h / \sqrt{k}` (weights :math:`e^{y^\top A x}`, :math:`x` the query) and :math:`V = I`, a
Gaussian :math:`N(\alpha, \Sigma)` stays Gaussian with
:math:`\dot\Sigma = \Sigma (A + A^\top) \Sigma = 2 \Sigma \operatorname{sym}(A) \Sigma`. For :math:`\Sigma_0 = I`
the solution is :math:`\Sigma(t) = (I - 2t \operatorname{sym}(A))^{-1}`: the variance along an eigenvector of
:math:`\operatorname{sym}(A)` with eigenvalue :math:`\lambda > 0` blows up at :math:`t = 1 / (2\lambda)` (the
first at :math:`t^* = 1 / (2\lambda_{\max})`), along :math:`\lambda < 0` it collapses like
:math:`1 / (1 + 2 \lvert\lambda\rvert t)` (low-rank collapse), and the kernel is left unchanged. A head is
classified by the signs of :math:`\operatorname{sym}(A_h)` (eigenvalues with
:math:`\lvert\lambda\rvert \le 10^{-9} \max\lvert\lambda\rvert` count as zero):

- ``blow-up``: :math:`\operatorname{sym}(A)` positive semidefinite and nonzero;
- ``collapse``: negative semidefinite and nonzero;
- ``mixed, blow-up dominant`` / ``mixed, collapse dominant``: indefinite, by whether :math:`\lambda_{\max}` or
  :math:`\lvert\lambda_{\min}\rvert` is larger (the faster of the two effects for :math:`\Sigma_0 = I`).

The value maps are ignored in this classification (:math:`V = I` in CACP's picture); a trained head's
:math:`W_h^\top V_h` is far from :math:`I`, which the table reports (``value_trace``:
:math:`\operatorname{tr}(W_h^\top V_h) / d`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.core.blocks import MultiHead
from numerics.trained.checkpoint import Checkpoint, LayerWeights

ZERO_EIGEN = 1e-9


def head_blocks(w: LayerWeights, H: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Q, K, V, W), each (H, k, d), of one layer (module docstring)."""
    d = w.Wq.shape[1]
    k = d // H
    Q = w.Wq.reshape(H, k, d)
    K = w.Wk.reshape(H, k, d)
    V = w.Wv.reshape(H, k, d)
    W = w.Wo.T.reshape(H, k, d)
    return Q, K, V, W


def multihead(w: LayerWeights, H: int, beta: float = 1.0) -> MultiHead:
    """The layer's heads as :class:`numerics.core.blocks.MultiHead` with scale beta / sqrt(k) (biases dropped).

    ``beta`` multiplies the scores: beta = r^2 makes unit tokens see the scores of tokens of norm r.
    """
    Q, K, V, W = head_blocks(w, H)
    return MultiHead(Q, K, V, W, scale=beta / np.sqrt(Q.shape[1]))


@dataclass(frozen=True)
class HeadReport:
    """One head's parameters as attnflow sees them (module docstring for every quantity)."""

    layer: int
    head: int
    r2: float
    score_norm: float          # |S_h|_2
    beta_spec: float           # r^2 |S_h|_2
    beta_iso: float            # r^2 tr(S_h) / d
    isotropy: float            # tr(S_h) / (sqrt(d) |S_h|_F)
    sym_positive: int          # eigenvalues of sym(A_h) > 0 (above the zero threshold)
    sym_negative: int
    lambda_max: float          # largest eigenvalue of sym(A_h), unit tokens
    lambda_min: float
    blowup_time: float | None  # 1 / (2 r^2 lambda_max) for Sigma_0 = I, tokens of norm r; None if lambda_max <= 0
    value_trace: float         # tr(W_h^T V_h) / d
    value_norm: float          # |W_h^T V_h|_2
    label: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def classify(eigs: np.ndarray) -> tuple[str, int, int]:
    """(label, #positive, #negative) of the eigenvalues of sym(A) (module docstring)."""
    scale = float(np.abs(eigs).max())
    if scale == 0:
        return "zero", 0, 0
    pos = int((eigs > ZERO_EIGEN * scale).sum())
    neg = int((eigs < -ZERO_EIGEN * scale).sum())
    if neg == 0:
        return "blow-up", pos, neg
    if pos == 0:
        return "collapse", pos, neg
    return ("mixed, blow-up dominant" if eigs.max() >= -eigs.min() else "mixed, collapse dominant"), pos, neg


def head_reports(ckpt: Checkpoint, layer: int, r2: float) -> list[HeadReport]:
    """:class:`HeadReport` of every head of ``layer`` (0-based) for input tokens of mean squared norm ``r2``."""
    w = ckpt.layer_weights[layer]
    Q, K, V, W = head_blocks(w, ckpt.heads)
    k, d = Q.shape[1], Q.shape[2]
    out = []
    for h in range(ckpt.heads):
        S = Q[h].T @ K[h] / np.sqrt(k)
        eigs = sym_eigenvalues(Q[h], K[h], 1.0 / np.sqrt(k))
        label, pos, neg = classify(eigs)
        M = W[h].T @ V[h]
        snorm = float(np.linalg.norm(S, 2))
        lmax = float(eigs.max())
        out.append(HeadReport(
            layer=layer + 1, head=h, r2=float(r2), score_norm=snorm, beta_spec=float(r2) * snorm,
            beta_iso=float(r2) * float(np.trace(S)) / d,
            isotropy=float(np.trace(S) / (np.sqrt(d) * np.linalg.norm(S))),
            sym_positive=pos, sym_negative=neg, lambda_max=lmax, lambda_min=float(eigs.min()),
            blowup_time=blowup_time(eigs, r2), value_trace=float(np.trace(M)) / d,
            value_norm=float(np.linalg.norm(M, 2)), label=label))
    return out


def sym_eigenvalues(Qh: np.ndarray, Kh: np.ndarray, scale: float) -> np.ndarray:
    """Eigenvalues (ascending) of sym(A), A = scale K_h^T Q_h (d x d; Q_h, K_h of shape (k, d)).

    sym(A) = [K; Q]^T [[0, I/2], [I/2, 0]] [K; Q] scale is congruent to a form of signature (k, k): for k <= d/2
    and [K; Q] of full rank 2k it has exactly k positive and k negative eigenvalues, whatever the training.
    """
    A = scale * (Kh.T @ Qh)
    return np.linalg.eigvalsh(0.5 * (A + A.T))


def blowup_time(eigs: np.ndarray, r2: float = 1.0) -> float | None:
    """t* = 1 / (2 r^2 lambda_max(sym A)) for Sigma_0 = I (V = I; CACP arXiv 2501.18322), None if lambda_max <= 0."""
    lmax = float(np.max(eigs))
    return 1.0 / (2.0 * float(r2) * lmax) if lmax > ZERO_EIGEN * float(np.abs(eigs).max()) else None


def mean_square_norm(X: np.ndarray) -> float:
    """r^2 = mean_i |x_i|^2 of token states (n, d)."""
    return float(np.mean(np.einsum("ij,ij->i", X, X)))
