r"""A decoder's heads as attnflow parameters, their effective inverse temperature, rotary and value structure.

**From the block to unit tokens.** Write a token of the residual stream as :math:`x = ru`,
:math:`\lVert u\rVert = 1`. The attention of a ``llama`` block reads

.. math::

    y = \mathrm{RMSNorm}(x) = \frac{g \odot x}{\sqrt{\lVert x\rVert^2 / d + \epsilon}}
      = \frac{\sqrt{d}\, G u}{\sqrt{1 + \epsilon d / r^2}}

with :math:`G = \operatorname{diag}(g)`; for :math:`r^2 \gg \epsilon d` (:math:`r \ge 2` in SmolLM2,
:math:`\epsilon d = 0.006`) :math:`y = \sqrt{d}\, G u`. So query head :math:`h` (key/value head
:math:`g(h) = \lfloor h / (H / H_{kv}) \rfloor`) scores

.. math::

    \frac{\langle W_q^h y_i, W_k^g y_j\rangle}{\sqrt{k}} = \frac{d}{\sqrt{k}} \langle Q_h u_i, K_h u_j\rangle,
    \qquad Q_h = W_q^h G, \quad K_h = W_k^g G,

and moves the direction :math:`u_i`, to first order in the update, by
:math:`(\sqrt{d} / r_i)\, P_{u_i}(O_h V_h a_i^h)` with :math:`V_h = W_v^g G`, ``O_h = W_o[:, h k:(h+1) k]`` and
:math:`a_i^h` the attention average of the :math:`u_j`. In attnflow's layout
(:class:`numerics.core.blocks.MultiHead`) the layer is the heads :math:`(Q_h, K_h, V_h, W_h = s O_h^\top)` with
score scale :math:`d / \sqrt{k}`, :math:`\beta = 1` and speed :math:`s = \sqrt{d} / r` (:func:`layer_heads`). The
rotary rotation of the queries and keys (scores :math:`\langle Q_h u_i, R_{j-i} K_h u_j\rangle`) and the MLP are
not in this picture. For the ``gpt2`` family the LayerNorm also centres: :math:`G` is replaced by :math:`GC`,
:math:`C = I - \mathbf{1}\mathbf{1}^\top / d`, and its biases are dropped.

**Per head** (:func:`head_reports`):

- the score map :math:`S_h = (d / \sqrt{k})\, Q_h^\top K_h`; ``beta_spec`` :math:`= \lVert S_h\rVert_2` (the
  largest inverse temperature the head reaches on unit tokens), ``beta_iso`` :math:`= \operatorname{tr}(S_h) / d`
  (the nearest multiple of the identity, attnflow's :math:`Q^\top K = \beta I`), as in
  :mod:`numerics.trained.heads`;
- the spectrum of :math:`\operatorname{sym}(A_h)`, :math:`A_h = K_h^\top Q_h\, d / \sqrt{k}`: :math:`k` positive
  and :math:`k` negative eigenvalues by structure (signature :math:`(k, k)`, :func:`sym_spectrum`), their extremes
  and the dominant side (CACP arXiv 2501.18322, Gaussian picture);
- the rotary structure: pair :math:`p` of the head (coordinates :math:`p` and :math:`p + k/2`) turns by
  :math:`\theta_p = \mathrm{base}^{-2p/k}` per position; its share of the head's scores is
  :math:`w_p = \lVert Q_h \text{ rows } p, p + k/2\rVert_F\, \lVert K_h \text{ rows } p, p + k/2\rVert_F
  / \sum_p w_p`. ``rotary_slow_share`` is the share of pairs that turn by less than :math:`2\pi` over the
  model's context (wavelength :math:`2\pi / \theta_p \ge` context): the position-blind part that attnflow's flow
  keeps;
- the value-output map :math:`M_h = s O_h V_h` (:math:`d \times d`, rank :math:`\le k`): spectral radius, the
  leading eigenvalue (largest modulus), how many of its :math:`k` nonzero eigenvalues have positive and negative
  real part (computed on the :math:`k \times k` matrix :math:`V_h s O_h`, which has the same nonzero
  eigenvalues).

**Per layer** (:func:`layer_values`): :math:`M = \sum_h M_h` and its eigenvalue of largest real part with
eigenvector :math:`e` (the direction a residual update :math:`x \leftarrow x + Mx` amplifies most; the
power-method picture of Li and Altafini, arXiv 2605.25619), and the Rayleigh rate
:math:`\rho = \langle c, Mc\rangle` at the mean token direction :math:`c`: near a cluster at :math:`c` the tangent
differences of attnflow's flow shrink like :math:`e^{-\rho t}` (:mod:`numerics.decoder.predictions`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.core.blocks import MultiHead
from numerics.decoder.forward import rotary_frequencies
from numerics.decoder.weights import BlockWeights, Decoder
from numerics.trained.heads import blowup_time, classify


def _fold(model: Decoder, w: BlockWeights, W: np.ndarray) -> np.ndarray:
    """W F for the attention input map y = sqrt(d) F u: F = G (llama), G C (gpt2, C = I - 11^T / d)."""
    WG = W * w.attn_norm_g[None, :]
    if model.config.family == "llama":
        return WG
    return WG - WG.mean(axis=1, keepdims=True)


def head_blocks(model: Decoder, layer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Q, K, V, O^T), each (H, k, d): layer ``layer``'s (0-based) heads on unit tokens, key/value heads
    repeated for their query heads (module docstring); O^T is without the speed s."""
    cfg = model.config
    w = model.blocks[layer]
    k, H = cfg.d_head, cfg.heads
    Q = _fold(model, w, w.Wq).reshape(H, k, cfg.d)
    Kg = _fold(model, w, w.Wk).reshape(cfg.kv_heads, k, cfg.d)
    Vg = _fold(model, w, w.Wv).reshape(cfg.kv_heads, k, cfg.d)
    groups = [cfg.kv_head(h) for h in range(H)]
    O = w.Wo.T.reshape(H, k, cfg.d)
    return Q, Kg[groups], Vg[groups], O


def layer_heads(model: Decoder, layer: int, speed: float) -> MultiHead:
    r"""Layer ``layer``'s heads as :class:`MultiHead` (:math:`W_h = \mathrm{speed} \cdot O_h^\top`, score scale
    :math:`d / \sqrt{k}`, :math:`\beta = 1`)."""
    Q, K, V, O = head_blocks(model, layer)
    return MultiHead(Q, K, V, speed * O, scale=model.config.d / np.sqrt(model.config.d_head))


def speed_of(states: np.ndarray, d: int) -> float:
    """s = sqrt(d) / r with r the median token norm of ``states`` (n, d) (robust to a massive first token)."""
    return float(np.sqrt(d) / np.median(np.linalg.norm(states, axis=1)))


@dataclass(frozen=True)
class DecoderHeadReport:
    """One head as attnflow sees it (module docstring for every quantity)."""

    layer: int
    head: int
    kv_head: int
    speed: float
    beta_spec: float
    beta_iso: float
    isotropy: float
    sym_positive: int
    sym_negative: int
    lambda_max: float
    lambda_min: float
    blowup_time: float | None
    label: str
    rotary_slow_share: float | None
    value_radius: float
    value_leading_real: float
    value_leading_imag: float
    value_positive: int
    value_negative: int
    value_trace: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def rotary_shares(Qh: np.ndarray, Kh: np.ndarray) -> np.ndarray:
    """w_p, p < k/2: the share of rotary pair p (rows p and p + k/2) in the head's scores (module docstring)."""
    half = Qh.shape[0] // 2
    qn = np.sqrt(np.sum(Qh[:half] ** 2, axis=1) + np.sum(Qh[half:] ** 2, axis=1))
    kn = np.sqrt(np.sum(Kh[:half] ** 2, axis=1) + np.sum(Kh[half:] ** 2, axis=1))
    w = qn * kn
    return w / w.sum()


def sym_spectrum(Qh: np.ndarray, Kh: np.ndarray, scale: float) -> np.ndarray:
    """The 2k eigenvalues (ascending) of sym(A), A = scale K_h^T Q_h, that can be nonzero, from a 2k x 2k matrix.

    sym(A) = B^T J B scale / 2 with B = [K_h; Q_h] (2k x d) and J = [[0, I], [I, 0]], whose nonzero eigenvalues are
    those of J (B B^T) scale / 2 (2k x 2k; similar to a symmetric matrix, so real). O(k^2 d) instead of the
    O(d^3) of :func:`numerics.trained.heads.sym_eigenvalues`, which the tests compare it with.
    """
    k = Qh.shape[0]
    B = np.vstack([Kh, Qh])
    G = B @ B.T
    JG = np.vstack([G[k:], G[:k]])
    return np.sort(np.linalg.eigvals(0.5 * scale * JG).real)


def value_spectrum(Vh: np.ndarray, Wh: np.ndarray) -> np.ndarray:
    """The k nonzero-candidate eigenvalues of M_h = W_h^T V_h (d x d), from the k x k matrix V_h W_h^T."""
    return np.linalg.eigvals(Vh @ Wh.T)


def score_norms(Qh: np.ndarray, Kh: np.ndarray) -> tuple[float, float, float]:
    """(|Q_h^T K_h|_2, |Q_h^T K_h|_F, tr(Q_h^T K_h)) through k x k matrices: with thin QR factorisations
    Q_h^T = A R and K_h^T = B T, Q_h^T K_h = A (R T^T) B^T has the singular values of R T^T."""
    R = np.linalg.qr(Qh.T, mode="r")
    T = np.linalg.qr(Kh.T, mode="r")
    core = R @ T.T
    return float(np.linalg.norm(core, 2)), float(np.linalg.norm(core)), float(np.sum(Qh * Kh))


def head_reports(model: Decoder, layer: int, speed: float) -> list[DecoderHeadReport]:
    """:class:`DecoderHeadReport` of every query head of ``layer`` (0-based) with speed s (module docstring)."""
    cfg = model.config
    Q, K, V, O = head_blocks(model, layer)
    scale = cfg.d / np.sqrt(cfg.d_head)
    slow = None if cfg.rope_base is None else 2 * np.pi / rotary_frequencies(cfg.d_head, cfg.rope_base) >= cfg.context
    out = []
    for h in range(cfg.heads):
        spec, frob, trace = (scale * v for v in score_norms(Q[h], K[h]))
        eigs = sym_spectrum(Q[h], K[h], scale)
        label, pos, neg = classify(eigs)
        ev = value_spectrum(V[h], speed * O[h])
        lead = ev[np.argmax(np.abs(ev))]
        out.append(DecoderHeadReport(
            layer=layer + 1, head=h, kv_head=cfg.kv_head(h), speed=speed, beta_spec=spec, beta_iso=trace / cfg.d,
            isotropy=trace / (np.sqrt(cfg.d) * frob), sym_positive=pos, sym_negative=neg,
            lambda_max=float(eigs.max()), lambda_min=float(eigs.min()), blowup_time=blowup_time(eigs), label=label,
            rotary_slow_share=None if slow is None else float(rotary_shares(Q[h], K[h])[slow].sum()),
            value_radius=float(np.abs(ev).max()), value_leading_real=float(lead.real),
            value_leading_imag=float(lead.imag), value_positive=int(np.sum(ev.real > 0)),
            value_negative=int(np.sum(ev.real < 0)), value_trace=float(np.sum(ev.real))))
    return out


def beta_iso_values(model: Decoder, layer: int) -> list[float]:
    """beta_iso = tr(S_h) / d of every query head of ``layer`` (0-based), the same arithmetic as
    :func:`head_reports` without its spectra (the layer study needs only this number: computing the reports for it
    took two thirds of ``decoder tokens``)."""
    cfg = model.config
    Q, K, _, _ = head_blocks(model, layer)
    scale = cfg.d / np.sqrt(cfg.d_head)
    return [scale * float(np.sum(Q[h] * K[h])) / cfg.d for h in range(cfg.heads)]


@dataclass(frozen=True)
class LayerValues:
    """The layer's value-output map M = sum_h M_h (speed included) and what the theory reads from it."""

    layer: int
    speed: float
    leading: complex          # eigenvalue of largest real part
    radius: float             # spectral radius of M
    rayleigh: float           # rho = <c, M c> at the mean token direction c
    basis: np.ndarray         # (d, 1) or (d, 2): orthonormal basis of the leading real invariant subspace

    def to_dict(self) -> dict:
        return {"layer": self.layer, "speed": self.speed, "leading_real": self.leading.real,
                "leading_imag": self.leading.imag, "radius": self.radius, "rayleigh": self.rayleigh,
                "leading_dimension": int(self.basis.shape[1])}


def value_map(model: Decoder, layer: int, speed: float) -> np.ndarray:
    """M = speed sum_h O_h V_h (d x d) of ``layer`` (0-based)."""
    _, _, V, O = head_blocks(model, layer)
    return speed * np.einsum("hkd,hke->de", O, V)


def layer_values(model: Decoder, layer: int, speed: float, U: np.ndarray) -> LayerValues:
    """:class:`LayerValues` of ``layer`` (0-based) for unit tokens U (n, d) at its input (module docstring)."""
    M = value_map(model, layer, speed)
    ev, vecs = np.linalg.eig(M)
    i = int(np.argmax(ev.real))
    v = vecs[:, i]
    B = np.column_stack([v.real, v.imag]) if abs(ev[i].imag) > 1e-12 * abs(ev[i]) else v.real[:, None]
    B, _ = np.linalg.qr(B)
    c = U.mean(axis=0)
    c = c / np.linalg.norm(c)
    return LayerValues(layer + 1, speed, complex(ev[i]), float(np.abs(ev).max()), float(c @ M @ c), B)


def alignment(U: np.ndarray, basis: np.ndarray) -> float:
    """Mean over tokens of |P_B u_i|, the length of the projection of the unit token on span(B)."""
    return float(np.mean(np.linalg.norm(U @ basis, axis=1)))


def random_alignment(d: int, dim: int, samples: int = 4096, seed: int = 0) -> float:
    """The same mean for uniformly random unit vectors and a fixed dim-dimensional subspace (the baseline)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((samples, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return float(np.mean(np.linalg.norm(X[:, :dim], axis=1)))
