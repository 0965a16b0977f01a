r"""The simplex layer of arXiv 2510.05554 at :math:`\beta = \gamma \log n`: the :math:`O(1)` reduction, the
particle layer, the transition over decades of :math:`n` and its finite-size width.

Tokens :math:`x_i = \sqrt{q}\, y_i`, unit directions with :math:`\langle y_i, y_j\rangle = \rho`
(:math:`i \ne j`). One layer (:math:`Q = K = V = I`, pre-LN):

.. math::

    x_i' = \sum_j A_{ij} y_j + \alpha x_i, \qquad
    A_{ij} = \operatorname{softmax}_j(\beta \langle y_i, y_j\rangle), \qquad \beta = \gamma \log n.

The output is again a simplex (theory.longcontext.simplex_layer_gram), so the layer is the :math:`O(1)` map
:math:`(q, \rho) \mapsto (q', \rho')` of :func:`simplex_layer`, computed in the spectral form (eigenvalues on
:math:`\mathbf{1}` and :math:`\mathbf{1}^\perp`) with the self weight
:math:`p = A_{ii} = \operatorname{expit}(\gamma (1 - \rho) \log n - \log(n - 1))` (no overflow for any :math:`n`,
even :math:`10^{300}`). :func:`particle_layer` is the :math:`O(n^2 d)` layer on explicit vectors (blocked rows,
memory :math:`O(\text{block}\, n)`) that the reduction is checked against. :func:`transition_table` measures the
transition in :math:`\gamma` over decades of :math:`n`:

- the midpoint :math:`\gamma_{1/2}(n)` where :math:`p = 1/2`, exactly
  :math:`\log(n - 1) / ((1 - \rho) \log n) \to 1/(1 - \rho)`;
- the 10-90 width of :math:`p` (and of :math:`\rho'`) in :math:`\gamma`; :math:`p` is a logistic function of
  :math:`\gamma (1 - \rho) \log n`, so the width of :math:`p` is exactly :math:`2 \log 9 / ((1 - \rho) \log n)`:
  the transition sharpens only like :math:`1/\log n`.

Verified by: longcontext.simplex-reduction, longcontext.simplex-transition.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logsumexp

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_array, check_work

#: rows of the particle layer per block (memory block * n floats)
BLOCK = 256


def _rho(rho) -> float:
    return require_real(rho, "rho", minimum=0.0, maximum=1.0 - 1e-12)


def check_parameters(rho, gamma=None, alpha=0.0, q=1.0) -> tuple:
    """Validated (rho, gamma, alpha, q): 0 <= rho < 1 (n -> oo needs rho >= 0), gamma > 0, alpha >= 0, q > 0."""
    out = [_rho(rho)]
    if gamma is not None:
        out.append(require_real(gamma, "gamma", minimum=0.0, strict_minimum=True))
    out.append(require_real(alpha, "alpha", minimum=0.0))
    out.append(require_real(q, "q", minimum=0.0, strict_minimum=True))
    return tuple(out)


def self_weight(n, gamma, rho) -> np.ndarray:
    r""":math:`p_n = A_{ii} = 1/(1 + (n - 1) n^{-\gamma (1 - \rho)})
    = \operatorname{expit}(\gamma (1 - \rho) \log n - \log(n - 1))` (broadcasts)."""
    n = np.asarray(n, dtype=float)
    return expit(np.asarray(gamma, float) * (1.0 - np.asarray(rho, float)) * np.log(n) - np.log(n - 1.0))


@dataclass(frozen=True)
class SimplexLayer:
    """One simplex layer: self weight ``p``, output squared norm ``q_out`` and inner product ``rho_out``."""

    p: np.ndarray
    q_out: np.ndarray
    rho_out: np.ndarray


def simplex_layer(n, gamma, rho, alpha=0.0, q=1.0) -> SimplexLayer:
    r""":math:`(p, q', \rho')` of one layer at :math:`\beta = \gamma \log n` (:math:`O(1)`, vectorised; ``n`` may
    be a float up to :math:`\sim 10^{300}`).

    Spectral form: :math:`\lambda_1 = (1 + r)^2 (1 + (n - 1) \rho)` on the all-ones vector,
    :math:`\lambda_\perp = (p - e + r)^2 (1 - \rho)` on its complement, :math:`e = (1 - p)/(n - 1)`,
    :math:`r = \alpha \sqrt{q}`; :math:`q' = (\lambda_1 + (n - 1) \lambda_\perp)/n` and
    :math:`\rho' = (\lambda_1 - \lambda_\perp)/(n q')`.
    """
    n = np.asarray(n, dtype=float)
    rho = np.asarray(rho, dtype=float)
    p = self_weight(n, gamma, rho)
    e = (1.0 - p) / (n - 1.0)
    rr = np.asarray(alpha, float) * np.sqrt(np.asarray(q, float))
    lam1_n = (1.0 + rr) ** 2 * (1.0 / n + (1.0 - 1.0 / n) * rho)  # lam_1 / n, without forming n rho
    lamp = (p - e + rr) ** 2 * (1.0 - rho)
    q_out = lam1_n + (1.0 - 1.0 / n) * lamp
    return SimplexLayer(p, q_out, (lam1_n - lamp / n) / q_out)


def simplex_tokens(n: int, rho: float, d: int | None = None, rng=None) -> np.ndarray:
    r""":math:`n` unit vectors in :math:`\mathbb{R}^d` (:math:`d \ge n + 1`, default :math:`n + 1`) with all
    pairwise inner products :math:`\rho`: :math:`y_i = \sqrt{1 - \rho}\, e_i + \sqrt{\rho}\, e_0`, rotated by a
    random orthogonal matrix when ``rng`` is given."""
    n = require_int(n, "n", minimum=2)
    rho = _rho(rho)
    d = n + 1 if d is None else require_int(d, "d", minimum=n + 1)
    check_array((n, d), f"simplex tokens with n={n}, d={d}", copies=3)
    Y = np.zeros((n, d))
    Y[:, 0] = math.sqrt(rho)
    Y[np.arange(n), np.arange(1, n + 1)] = math.sqrt(1.0 - rho)
    if rng is not None:
        Qm, R = np.linalg.qr(rng.standard_normal((d, d)))
        Y = Y @ (Qm * np.sign(np.diag(R))).T
    return Y


def particle_layer(X, beta: float, alpha: float = 0.0) -> np.ndarray:
    r"""The layer :math:`x_i' = \sum_j \operatorname{softmax}_j(\beta \langle y_i, y_j\rangle) y_j + \alpha x_i`
    on explicit tokens ``X`` ``(n, d)``, :math:`y = X/\lVert X\rVert`.

    Blocked over rows (memory :math:`O(\texttt{BLOCK}\, n)`); logsumexp-stable; :math:`O(n^2 d)` work. This is
    the full particle system that :func:`simplex_layer` reduces.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise InputError(f"X must be an (n, d) array with n >= 2, got shape {X.shape}")
    n, d = X.shape
    check_work(2.0 * n * n * d, f"a particle layer with n={n}, d={d}")
    norms = np.linalg.norm(X, axis=1)
    if np.any(norms == 0):
        raise InputError("a token of norm 0 has no direction (pre-layer normalisation divides by |x|)")
    Y = X / norms[:, None]
    out = np.empty_like(X)
    for a in range(0, n, BLOCK):
        L = beta * (Y[a:a + BLOCK] @ Y.T)
        W = np.exp(L - logsumexp(L, axis=1, keepdims=True))
        out[a:a + BLOCK] = W @ Y + alpha * X[a:a + BLOCK]
    return out


def gram_summary(X) -> tuple[float, float, float]:
    """(mean squared norm, mean off-diagonal cosine, max deviation from a simplex) of the rows of X."""
    X = np.asarray(X, dtype=float)
    G = X @ X.T
    diag = np.diag(G).copy()
    C = G / np.sqrt(np.outer(diag, diag))
    off = C[~np.eye(len(X), dtype=bool)]
    dev = max(float(np.ptp(diag) / diag.mean()), float(np.ptp(off)))
    return float(diag.mean()), float(off.mean()), dev


def transition_midpoint(n, rho) -> float:
    """gamma_{1/2}(n): the root of p_n(gamma) = 1/2, found by root-finding on :func:`self_weight`."""
    rho = _rho(rho)
    n = float(n)
    hi = 4.0 / (1.0 - rho)
    while self_weight(n, hi, rho) < 0.5:
        hi *= 2.0
    return brentq(lambda g: float(self_weight(n, g, rho)) - 0.5, 0.0, hi, xtol=1e-15, rtol=1e-15)


def transition_width(n, rho, alpha: float = 0.0, q: float = 1.0, quantity: str = "p",
                     low: float = 0.1, high: float = 0.9) -> float:
    """The width in gamma over which ``quantity`` (``p``: the self weight; ``rho``: the output inner product)
    moves from ``low`` to ``high`` of its way between its two limits (subcritical and supercritical)."""
    rho_ = _rho(rho)
    if quantity == "p":
        value, start, end = (lambda g: float(self_weight(n, g, rho_))), 0.0, 1.0
    elif quantity == "rho":
        # the two limits, read off the map at n = 1e300 (p = 1e-300 at gamma = 0, p = 1 at gamma = 1e3)
        lim = (simplex_layer(1e300, 0.0, rho_, alpha, q).rho_out, simplex_layer(1e300, 1e3, rho_, alpha, q).rho_out)

        def value(g):
            return float(simplex_layer(n, g, rho_, alpha, q).rho_out)

        start, end = float(lim[0]), float(lim[1])
    else:
        raise InputError(f"quantity must be p or rho, got {quantity!r}")
    hi = 64.0 / (1.0 - rho_)

    def crossing(level):
        target = start + level * (end - start)
        return brentq(lambda g: value(g) - target, 0.0, hi, xtol=1e-14, rtol=1e-15)

    return crossing(high) - crossing(low)


def transition_table(ns, rho: float, alpha: float = 0.0, q: float = 1.0) -> list[dict]:
    r"""One row per :math:`n`: midpoint :math:`\gamma_{1/2}`, the widths of :math:`p` and :math:`\rho'` (10-90)
    and width :math:`\times \log n`."""
    rho, alpha, q = check_parameters(rho, None, alpha, q)
    rows = []
    for n in ns:
        n = float(n)
        if not (n >= 3 and math.isfinite(n)):
            raise InputError(f"every n must be a finite number >= 3, got {n:g}")
        mid = transition_midpoint(n, rho)
        wp = transition_width(n, rho)
        wr = transition_width(n, rho, alpha, q, quantity="rho") if rho > 0 else float("nan")
        layer = simplex_layer(n, mid, rho, alpha, q)
        rows.append({"n": n, "gamma_half": mid, "width_p": wp, "width_p_log_n": wp * math.log(n),
                     "width_rho": wr, "rho_out_at_gamma_c": float(simplex_layer(n, 1 / (1 - rho), rho, alpha,
                                                                                   q).rho_out),
                     "rho_out_at_midpoint": float(layer.rho_out)})
    return rows


def width_scaling_fit(rows: list[dict], key: str = "width_p") -> dict:
    """Least-squares slope of log(width) against log(log n) (the finite-size-scaling exponent; -1 means the
    width shrinks like 1/log n), with its standard error and the fitted window."""
    x = np.log(np.log([r["n"] for r in rows]))
    y = np.log([r[key] for r in rows])
    if x.size < 3:
        raise InputError("the width fit needs at least 3 values of n")
    A = np.column_stack([x, np.ones_like(x)])
    coef, res, *_ = np.linalg.lstsq(A, y, rcond=None)
    dof = x.size - 2
    sigma2 = float(res[0]) / dof if res.size and dof > 0 else 0.0
    cov = sigma2 * np.linalg.inv(A.T @ A)
    return {"slope": float(coef[0]), "standard_error": float(math.sqrt(max(cov[0, 0], 0.0))),
            "window": [float(rows[0]["n"]), float(rows[-1]["n"])], "points": int(x.size), "quantity": key}
