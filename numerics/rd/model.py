r"""The :math:`\mathbb{R}^d` self-attention model without normalisation (GLPR arXiv 2305.05465; CACP arXiv 2501.18322).

.. math::

    \frac{dx_i}{dt} = V \sum_j P_{ij}(X) x_j, \qquad P = \text{softmax, L2 or Sinkhorn attention of the tokens } X,

with the logits of :mod:`numerics.gaussian.solutions` (softmax and Sinkhorn: :math:`L_{ij} = x_j^\top A x_i`,
:math:`A = K^\top Q`; L2: :math:`L_{ij} = -\lvert Q x_i - K x_j\rvert^2 / 2`). :class:`RdModel` is the frozen,
validated description (the counterpart of the sphere's :class:`numerics.core.model.Model`); the rescaled
integration lives in :mod:`numerics.rd.dynamics`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import expm

from numerics.common.errors import InputError, require_choice, require_int, require_square
from numerics.gaussian.solutions import ATTENTIONS, GaussianAttention, gaussian_attention

#: the rescaled logits are capped at this magnitude: beyond it exp(-|gap|) is 0 in float64 for every gap above
#: 1e-250 relative, so P (and the dynamics) are unchanged while A(t) = e^{tV^T} A e^{tV} cannot overflow
LOGIT_CAP = 1e250
#: e^{tV} by eigendecomposition V = S diag(mu) S^{-1} when cond(S) is below this (else scipy.linalg.expm)
EIG_CONDITION_LIMIT = 1e6


def _readonly(M):
    if M is None:
        return None
    M = np.array(M, dtype=float)
    M.flags.writeable = False
    return M


@dataclass(frozen=True, eq=False)
class RdModel:
    r"""Tokens in :math:`\mathbb{R}^d` moved by unnormalised self-attention: :math:`dx_i/dt = V \sum_j P_{ij} x_j`.

    Parameters
    ----------
    attention : {"softmax", "l2", "sinkhorn"}
        softmax: :math:`P_{ij} = e^{x_j^\top A x_i} / \sum_k e^{x_k^\top A x_i}`; l2: weights
        :math:`e^{-\lvert Q x_i - K x_j\rvert^2 / 2}`; sinkhorn: the doubly stochastic scaling of
        :math:`e^{x_j^\top A x_i}` (rows and columns of :math:`P` sum to 1 after :math:`n P / n`; see
        :func:`numerics.gaussian.solutions.particle_velocity`).
    d : int
        Dimension of the token space (:math:`d \ge 1`).
    V : (d, d) array_like
        Value matrix (required: no default for a physical parameter).
    A : (d, d) array_like, optional
        :math:`A = K^\top Q` (softmax, sinkhorn), so that :math:`\langle Q x, K y\rangle = y^\top A x`.
    Q, K : (d, d) array_like, optional
        Query and key matrices (l2 needs both; softmax and sinkhorn accept them instead of ``A`` and use
        :math:`A = K^\top Q`).

    Notes
    -----
    Conventions of arXiv 2501.18322 (time = depth, self-interaction included). Verified by: rd.polytope-leaders,
    rd.one-dimensional-boolean, rd.hyperplanes, rd.well-posedness (``proofs_notes/rd-*.md``).
    """

    attention: str
    d: int
    V: Any
    A: Any = None
    Q: Any = None
    K: Any = None

    def __post_init__(self) -> None:
        attention = require_choice(self.attention, "attention", ATTENTIONS)
        d = require_int(self.d, "d", minimum=1)
        object.__setattr__(self, "attention", attention)
        object.__setattr__(self, "d", d)
        if self.V is None:
            raise InputError("V is required")
        V = require_square(self.V, "V", d)
        A, Q, K = (None if M is None else require_square(M, name, d)
                   for M, name in ((self.A, "A"), (self.Q, "Q"), (self.K, "K")))
        if attention != "l2" and A is None and Q is not None and K is not None:
            A = K.T @ Q
        if attention != "l2" and (Q is None) != (K is None):
            raise InputError("give A, or both Q and K")
        if attention != "l2" and A is not None and Q is not None and not np.allclose(A, K.T @ Q, rtol=0, atol=1e-12):
            raise InputError("A must equal K^T Q when all three are given")
        for name, M in (("V", V), ("A", A), ("Q", Q), ("K", K)):
            object.__setattr__(self, name, _readonly(M))
        self.gaussian()  # validates the combination (l2 needs Q, K; softmax/sinkhorn need A)
        mu, S = np.linalg.eig(V)
        well_conditioned = np.linalg.cond(S) < EIG_CONDITION_LIMIT
        object.__setattr__(self, "_eig", (mu, S, np.linalg.inv(S)) if well_conditioned else None)
        object.__setattr__(self, "_growth", float(np.max(mu.real)))

    # -- the attention at time t in the rescaled variables ------------------------------------------------
    def gaussian(self) -> GaussianAttention:
        """The attention of the unrescaled tokens x (the :mod:`numerics.gaussian.solutions` object)."""
        if self.attention == "l2":
            return gaussian_attention("l2", self.d, V=self.V, Q=self.Q, K=self.K)
        return gaussian_attention(self.attention, self.d, V=self.V, A=self.A)

    @property
    def growth_rate(self) -> float:
        """lambda = the largest real part of an eigenvalue of V (tokens grow like e^{lambda t})."""
        return self._growth

    def shifted_propagator(self, t: float) -> np.ndarray:
        """E(t) = e^{t(V - lambda I)} (bounded for diagonalisable V; polynomial growth otherwise)."""
        if self._eig is None:
            return expm(t * (self.V - self._growth * np.eye(self.d)))
        mu, S, Sinv = self._eig
        E = (S * np.exp(t * (mu - self._growth))[None, :]) @ Sinv
        return E.real if np.isrealobj(self.V) else E

    def propagator(self, t: float) -> np.ndarray:
        """e^{tV} = e^{lambda t} E(t) (may overflow to inf for huge t; the dynamics never needs it unshifted)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return np.exp(self._growth * t) * self.shifted_propagator(t)

    def rescaled_attention(self, t: float, z_scale: float) -> tuple[GaussianAttention, float]:
        """The attention acting on z = e^{-tV} x at time t, and the logit scale actually used.

        x = e^{tV} z, so <Q x_i, K x_j> = z_j^T A(t) z_i with A(t) = e^{tV^T} A e^{tV} (l2: Q(t) = Q e^{tV},
        K(t) = K e^{tV}). Written as s(t) = e^{2 lambda t} times the bounded E^T A E, E = e^{t(V - lambda I)};
        s is capped so that |logits| <= LOGIT_CAP for tokens of norm <= z_scale (the cap changes P only for
        logit gaps below 1e-250 relative). The returned model has V = I: its particle velocity is
        sum_j P_ij z_j.
        """
        lam = self.growth_rate
        E = self.shifted_propagator(t)
        I = np.eye(self.d)
        if self.attention == "l2":
            Qh, Kh = self.Q @ E, self.K @ E
            size = max(np.linalg.norm(Qh), np.linalg.norm(Kh)) ** 2  # Frobenius >= spectral: a safe cap
        else:
            Ah = E.T @ self.A @ E
            size = np.linalg.norm(Ah)
        log_s = 2.0 * lam * t
        log_cap = np.log(LOGIT_CAP) - np.log(max(size * max(z_scale, 1e-300) ** 2, 1e-300))
        log_s = min(log_s, log_cap)
        s = float(np.exp(log_s))
        if self.attention == "l2":
            r = np.sqrt(s)
            Qs, Ks = r * Qh, r * Kh
            return GaussianAttention("l2", self.d, Ks.T @ Qs, I, Qs, Ks), s
        return GaussianAttention(self.attention, self.d, s * Ah, I), s

    # -- conversions --------------------------------------------------------------------------------------
    def to_meta(self) -> dict:
        """JSON-ready description (read back by :meth:`from_meta`)."""
        return {"attention": self.attention, "d": self.d, "V": self.V.tolist(),
                "A": None if self.A is None else self.A.tolist(),
                "Q": None if self.Q is None else self.Q.tolist(),
                "K": None if self.K is None else self.K.tolist()}

    @classmethod
    def from_meta(cls, meta: dict) -> "RdModel":
        """The model recorded by :meth:`to_meta`."""
        missing = {"attention", "d", "V"} - set(meta)
        if missing:
            raise InputError(f"metadata lacks {', '.join(sorted(missing))}")
        return cls(meta["attention"], meta["d"], V=meta["V"], A=meta.get("A"), Q=meta.get("Q"), K=meta.get("K"))
