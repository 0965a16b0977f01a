r"""A fixed query against :math:`n` iid uniform keys on :math:`\mathbb{S}^{d-1}` (arXiv 2605.08505): the critical
:math:`\beta^*_n \sim n^{2/(d-1)}`.

Only the distances :math:`u_k = 1 - \langle q, k_k\rangle` matter (the weights are
:math:`e^{-\beta u_k} / \sum`), and by rotation invariance :math:`u = 2 B` with
:math:`B \sim \mathrm{Beta}((d-1)/2, (d-1)/2)` (:math:`d \ge 3`; on :math:`\mathbb{S}^1`,
:math:`u = 2 \sin^2(\theta/2)` with :math:`\theta` uniform): the scores are drawn directly, :math:`O(n)` per
query, without drawing the keys, and with full relative precision near :math:`u = 0`. Three routes to the same
statistics (top weight :math:`W_1`, entropy, output component along :math:`q`):

- **direct**: all :math:`n` distances per query (:func:`direct_distances`), blocked; :math:`n` up to
  :math:`\sim 10^6` per query;
- **order statistics**: the :math:`K` smallest distances of :math:`n`, exactly in distribution
  (:math:`U_{(k)} = G_k / G_{n+1}` with partial sums of exponentials, :math:`u = 2 I^{-1}(U)`), and the other
  :math:`n - K` keys through their conditional mean given :math:`u_{(K)}` (Gauss-Laguerre in the gap beyond
  :math:`u_{(K)}`); any :math:`n` (:math:`10^{12}` costs what :math:`10^3` costs);
- **Poisson limit**: :math:`s_k = n^{2/(d-1)} u_{(k)}` converge to the points of a Poisson process with intensity
  measure :math:`\kappa_d s^{m}`, :math:`m = (d-1)/2` (theory.longcontext.poisson_constant), i.e.
  :math:`s_k = (G_k / \kappa_d)^{1/m}`; at :math:`\beta_n = c\, n^{2/(d-1)}` the weights are
  :math:`e^{-c s_k} / \sum`: a non-degenerate limit (the critical regime).

The constant the paper leaves open, made definite here: :math:`C_d` such that :math:`E W_1 = 1/2` at
:math:`\beta_n = C_d n^{2/(d-1)}` as :math:`n \to \infty` (:func:`poisson_half_constant`), with a Monte Carlo
standard error; finite :math:`n` by :func:`finite_n_half_constant`. Three regimes (:func:`regime_table`):
:math:`\beta_n = c\, n^{a}`, :math:`E W_1 \to 0` for :math:`a < 2/(d-1)`, :math:`\to 1` for :math:`a > 2/(d-1)`,
and to the Poisson value at :math:`a = 2/(d-1)`. Subcritical output (:func:`subcritical_output`): at fixed
:math:`\beta`, :math:`\sum_k w_k \langle q, k_k\rangle \to I_{d/2}(\beta)/I_{d/2-1}(\beta)` with Gaussian
fluctuations of variance :math:`E[w^2 (t - A)^2] / (n E[w]^2)` (:math:`w = e^{\beta t}`).

Verified by: longcontext.fixed-query-critical-constant, longcontext.fixed-query-regimes,
longcontext.fixed-query-subcritical.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import betainc, betaincinv, gammaln, ive, logsumexp, roots_genlaguerre, roots_legendre

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_array, check_work
from numerics.longcontext.unit_mass import half_root, logsumexp_rows, mean_half_root

#: top keys kept exactly by the order-statistics and Poisson routes
TOP_K = 64
#: Gauss-Laguerre nodes for the conditional mean beyond the K-th key
LAGUERRE_NODES = 64
#: distances drawn per block by the direct route
BLOCK = 1 << 16


def critical_exponent(d: int) -> float:
    """2/(d - 1): beta*_n ~ n^{2/(d-1)}."""
    return 2.0 / (require_int(d, "d", minimum=2) - 1.0)


def poisson_constant(d: int) -> float:
    """kappa_d = c_d 2^{(d-1)/2}/(d - 1): P(u <= x) ~ kappa_d x^{(d-1)/2} (same closed form as
    theory.longcontext.poisson_constant_value, recomputed here without SymPy)."""
    d = require_int(d, "d", minimum=2)
    log_c = gammaln(d / 2.0) - 0.5 * math.log(math.pi) - gammaln((d - 1) / 2.0)
    return math.exp(log_c + 0.5 * (d - 1) * math.log(2.0)) / (d - 1.0)


# -- the distance distribution --------------------------------------------------------------------------------------
def distance_cdf(d: int, x) -> np.ndarray:
    """P(u <= x), u = 1 - <q, k>: the regularised incomplete beta I_{x/2}((d-1)/2, (d-1)/2) (d >= 3), and
    (2/pi) arcsin(sqrt(x/2)) on S^1."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, 2.0)
    if d == 2:
        return (2.0 / math.pi) * np.arcsin(np.sqrt(x / 2.0))
    a = (d - 1) / 2.0
    return betainc(a, a, x / 2.0)


def distance_quantile(d: int, y) -> np.ndarray:
    """The inverse of :func:`distance_cdf` (accurate for y down to the smallest positive floats)."""
    y = np.asarray(y, dtype=float)
    if d == 2:
        return 2.0 * np.sin(0.5 * math.pi * y) ** 2
    a = (d - 1) / 2.0
    return 2.0 * betaincinv(a, a, y)


def distance_density(d: int, x) -> np.ndarray:
    """The density of u on (0, 2): c_d (u (2 - u))^{(d-3)/2} (0 outside)."""
    x = np.asarray(x, dtype=float)
    log_c = gammaln(d / 2.0) - 0.5 * math.log(math.pi) - gammaln((d - 1) / 2.0)
    inside = (x > 0) & (x < 2)
    xs = np.where(inside, x, 1.0)
    return np.where(inside, np.exp(log_c + 0.5 * (d - 3) * np.log(xs * (2.0 - xs))), 0.0)


def direct_distances(n: int, d: int, rng) -> np.ndarray:
    """n iid distances u = 1 - <q, k> for k uniform on S^{d-1} (drawn in blocks)."""
    out = np.empty(n)
    for a in range(0, n, BLOCK):
        size = min(BLOCK, n - a)
        if d == 2:
            out[a:a + size] = 2.0 * np.sin(0.5 * math.pi * rng.random(size)) ** 2
        elif d == 3:  # Beta(1, 1) is uniform (Archimedes): the faster sampler, same law
            out[a:a + size] = 2.0 * rng.random(size)
        else:
            a_ = (d - 1) / 2.0
            out[a:a + size] = 2.0 * rng.beta(a_, a_, size)
    return out


# -- statistics of one softmax row ------------------------------------------------------------------------------------
def row_statistics(u: np.ndarray, beta: float) -> dict:
    """Top weight, entropy and output component along q of the weights e^{-beta u} / sum (one row)."""
    g = u - u.min()
    logw = -beta * g
    logZ = logsumexp(logw)
    w = np.exp(logw - logZ)
    return {"top_weight": float(w.max()), "entropy": float(logZ + beta * np.dot(w, g)),
            "along": float(np.dot(w, 1.0 - u))}


class TopKeys:
    """The K smallest distances of n keys plus the conditional tail beyond the K-th (order-statistics route),
    or the first K points of the Poisson limit (``n=None``; distances then in the rescaled unit s)."""

    def __init__(self, n: int | None, d: int, replicates: int, rng, K: int = TOP_K):
        self.d, self.n, self.K = d, n, K
        m = (d - 1) / 2.0
        self.m = m
        G = np.cumsum(rng.exponential(size=(replicates, K + 1)), axis=1)
        if n is None:
            self.top = (G[:, :K] / poisson_constant(d)) ** (1.0 / m)
            self.tail_from = self.top[:, -1]
        else:
            if K >= n:
                raise InputError(f"the order-statistics route keeps K = {K} keys: it needs n > K, got n = {n}")
            # U_(k) = G_k / G_{n+1}; G_{n+1} = G_{K+1} + Gamma(n - K) (independent)
            total = G[:, K] + rng.gamma(n - K, size=replicates)
            U = G[:, :K + 1] / total[:, None]
            u = distance_quantile(d, U)
            self.top = u[:, :K]
            self.tail_from = u[:, K - 1]
            self.tail_mass = 1.0 - distance_cdf(d, self.tail_from)

    def log_weights_sum(self, beta) -> tuple[np.ndarray, np.ndarray]:
        """(log sum of the weights e^{-beta (u - u_1)} over all keys, the same for the top key only = 0) per
        replicate; beta is a scalar (on the Poisson route: the constant c of beta = c n^{2/(d-1)})."""
        g = self.top - self.top[:, :1]
        head = logsumexp_rows(-beta * g, axis=1)
        return np.logaddexp(head, self.log_tail(beta)), g

    def log_tail(self, beta) -> np.ndarray:
        """log of the sum over the keys beyond the K-th of e^{-beta (u - u_1)} (its conditional mean)."""
        u1, uK = self.top[:, 0], self.tail_from
        if self.n is None:  # Poisson: int_{s_K}^oo e^{-c (s - s_1)} kappa m s^{m-1} ds
            y, w = roots_genlaguerre(LAGUERRE_NODES, 0.0)
            s = uK[:, None] + y[None, :] / beta
            dens = poisson_constant(self.d) * self.m * s ** (self.m - 1.0)
            integral = (dens * w[None, :]).sum(axis=1) / beta
            return -beta * (uK - u1) + np.log(integral)
        y, w = roots_genlaguerre(LAGUERRE_NODES, 0.0)
        x = uK[:, None] + y[None, :] / beta
        integral = (distance_density(self.d, x) * w[None, :]).sum(axis=1) / beta
        with np.errstate(divide="ignore"):
            return (-beta * (uK - u1) + np.log(self.n - self.K) + np.log(integral)
                    - np.log(self.tail_mass))

    def top_weight(self, beta) -> np.ndarray:
        """W_1 per replicate."""
        logZ, _ = self.log_weights_sum(beta)
        return np.exp(-logZ)


def poisson_top_weight(d: int, c: float, nodes: tuple[int, int, int] = (48, 48, 72)) -> float:
    r""":math:`E W_1` in the Poisson limit at :math:`\beta_n = c\, n^{2/(d-1)}`, by quadrature (no Monte Carlo).

    Mecke's formula for the point :math:`x` of the process that is the smallest, and the Laplace functional of the
    points beyond it (independent of the empty interval :math:`[0, x)`), give, with
    :math:`\Lambda(x) = \kappa_d x^m`,

    .. math::

        \begin{aligned}
        E W_1 &= \int_0^\infty \Lambda'(x) e^{-\Lambda(x)} \int_0^\infty e^{-\lambda} e^{-J(x, \lambda)}\,
        d\lambda\, dx, \\
        J(x, \lambda) &= \int_0^\infty (\Lambda(x + w/c) - \Lambda(x))\, \lambda e^{-w} e^{-\lambda e^{-w}}\, dw
        \end{aligned}

    (:math:`1/(1 + S) = \int e^{-\lambda (1 + S)}\, d\lambda`; :math:`J` after an integration by parts).
    Gauss-Legendre in :math:`y = \sqrt{x}` (two panels to :math:`\Lambda = 60`), Gauss-Laguerre in
    :math:`\lambda`, and in :math:`w` two panels around :math:`\log \lambda` (the first in :math:`\sqrt{w}`,
    smooth at the square-root edge of :math:`\mathbb{S}^1`). For :math:`d = 3` (:math:`\Lambda` linear) it
    reduces to :math:`\int e^{-\lambda - \kappa \operatorname{Ein}(\lambda)/c}\, d\lambda`. Agreement with doubled
    nodes: about 1e-13 (tests).
    """
    d = require_int(d, "d", minimum=2)
    c = require_real(c, "c", minimum=0.0, strict_minimum=True)
    ny, nl, nw = nodes
    m, kap = (d - 1) / 2.0, poisson_constant(d)
    g, wg = roots_legendre(ny)
    Y = (60.0 / kap) ** (1.0 / (2.0 * m))
    y = np.concatenate([0.5 * (hi - lo) * g + 0.5 * (hi + lo) for lo, hi in ((0.0, Y / 4), (Y / 4, Y))])
    wy = np.concatenate([0.5 * (hi - lo) * wg for lo, hi in ((0.0, Y / 4), (Y / 4, Y))])
    x = y * y
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(x > 0, 2.0 * y * kap * m * x ** (m - 1.0) * np.exp(-kap * x**m), 0.0)
    lam, wl = roots_genlaguerre(nl, 0.0)
    gw, wgw = roots_legendre(nw)
    L = np.log(lam)
    lo1, hi1 = np.sqrt(np.maximum(L - 6.0, 0.0)), np.sqrt(np.maximum(L, 0.0) + 8.0)
    v = 0.5 * (hi1 - lo1)[:, None] * gw[None, :] + 0.5 * (hi1 + lo1)[:, None]
    w1, ww1 = v * v, 0.5 * (hi1 - lo1)[:, None] * wgw[None, :] * 2.0 * v
    a2, b2 = hi1**2, hi1**2 + 50.0
    w2 = 0.5 * (b2 - a2)[:, None] * gw[None, :] + 0.5 * (b2 + a2)[:, None]
    ww2 = 0.5 * (b2 - a2)[:, None] * wgw[None, :]
    W, WW = np.concatenate([w1, w2], 1), np.concatenate([ww1, ww2], 1)
    kernel = lam[:, None] * np.exp(-W - lam[:, None] * np.exp(-W)) * WW
    J = ((kap * (x[:, None, None] + W[None] / c) ** m - (kap * x**m)[:, None, None]) * kernel[None]).sum(axis=2)
    F = (wl[None, :] * np.exp(-J)).sum(axis=1)
    return float((wy * dens * F).sum())


def scale_guess(d: int) -> float:
    """m kappa_d^{1/m}, m = (d-1)/2: the leading constant of the accumulation scale A_n / n^{2/(d-1)}, a start
    for the root searches (C_d is within a factor 3 of it for d = 2 .. 9)."""
    m = (d - 1) / 2.0
    return m * poisson_constant(d) ** (1.0 / m)


@lru_cache(maxsize=None)
def poisson_half_constant_quadrature(d: int) -> float:
    """:math:`C_d` with :math:`E W_1 = 1/2` in the Poisson limit, by root-finding on :func:`poisson_top_weight`
    (cached)."""
    return half_root(lambda c: poisson_top_weight(d, c), scale_guess(d), rtol=1e-12)


def _scale(n, d) -> float:
    return float(n) ** critical_exponent(d)


def poisson_half_constant(d: int, replicates: int = 20000, seed: int = 0, K: int = TOP_K) -> dict:
    r""":math:`C_d = \lim_n \beta_{1/2} / n^{2/(d-1)}` with :math:`E W_1 = 1/2`, from simulated Poisson processes
    (Monte Carlo, standard error by the delta method over ``replicates`` independent processes; the quadrature
    route is :func:`poisson_half_constant_quadrature`)."""
    d = require_int(d, "d", minimum=2)
    replicates = require_int(replicates, "replicates", minimum=10)
    check_array((replicates, K + 1), f"Poisson limit with {replicates} replicates", copies=6)
    top = TopKeys(None, d, replicates, np.random.default_rng([seed, d]), K)
    c, se = mean_half_root(top.top_weight, replicates, scale_guess(d))
    return {"d": d, "constant": c, "standard_error": se, "replicates": replicates, "seed": seed, "K": K,
            "route": "poisson"}


def finite_n_half_constant(n: int, d: int, replicates: int = 4000, seed: int = 0, route: str = "order",
                           K: int = TOP_K, progress=None) -> dict:
    r""":math:`\beta_{1/2}(n) / n^{2/(d-1)}` with :math:`E W_1 = 1/2` at finite :math:`n`: ``order`` (top
    :math:`K` exact + conditional tail, any :math:`n`) or ``direct`` (all :math:`n` distances, :math:`O(n)` per
    replicate, rows held in memory)."""
    n = require_int(n, "n", minimum=2)
    d = require_int(d, "d", minimum=2)
    replicates = require_int(replicates, "replicates", minimum=10)
    scale = _scale(n, d)
    rng = np.random.default_rng([seed, d, n % (2**63)])
    if route == "order":
        top = TopKeys(n, d, replicates, rng, K)
        c, se = mean_half_root(lambda x: top.top_weight(x * scale), replicates, scale_guess(d))
    elif route == "direct":
        top, bound = direct_smallest(n, d, replicates, rng, progress=progress)
        G = top - top[:, :1]

        def W_at(c):  # an upper bound of W_1 (keys beyond the kept ones left out): exact where bound() is small
            return np.exp(-logsumexp_rows(-c * scale * G, axis=1))

        c, se = mean_half_root(W_at, replicates, scale_guess(d))
        left_out = bound(0.999 * c * scale)
        if left_out > DIRECT_TAIL_TOLERANCE:
            raise InputError(f"direct route: the keys beyond the {top.shape[1]} kept ones could carry "
                             f"{left_out:.2g} of the top key's mass at the root (keep more keys)")
    else:
        raise InputError(f"route must be order or direct, got {route!r}")
    return {"n": n, "d": d, "constant": c, "standard_error": se, "replicates": replicates, "seed": seed,
            "route": route, "K": K if route == "order" else DIRECT_KEEP}


#: distances kept per row by the direct route (the rest bounded; see :func:`direct_smallest`)
DIRECT_KEEP = 2048
#: largest mass (relative to the top key) the direct route may leave out: each W_1 is then off by <= 1e-6,
#: four orders below the Monte Carlo standard errors of the claims (1e-2)
DIRECT_TAIL_TOLERANCE = 1e-6


def direct_smallest(n: int, d: int, replicates: int, rng, keep: int = DIRECT_KEEP, progress=None):
    """The ``keep`` smallest of n directly drawn distances per row, sorted (rows, keep), and a function giving,
    at beta, an upper bound on the mass the other keys carry relative to the top key:
    max over rows of (n - keep) e^{-beta (u_(keep) - u_(1))}. O(n) per row, memory O(rows keep)."""
    keep = min(keep, n)
    check_work(replicates * n * 70.0, f"direct fixed-query rows with n={n} x {replicates}")
    check_array((replicates, keep), f"direct fixed-query rows with n={n} x {replicates}", copies=4)
    top = np.empty((replicates, keep))
    for i in range(replicates):
        u = direct_distances(n, d, rng)
        top[i] = np.sort(np.partition(u, keep - 1)[:keep]) if keep < n else np.sort(u)
        if progress is not None:
            progress(i + 1, replicates)
    spread = top[:, -1] - top[:, 0]
    rest = n - keep

    def bound(beta):
        return 0.0 if rest == 0 else float(np.max(rest * np.exp(-beta * spread)))

    return top, bound


def direct_top_weight(n: int, d: int, beta: float, replicates: int, seed: int = 0, progress=None) -> dict:
    """Mean top weight, entropy and output component along q at one beta by the direct route, with standard
    errors (rows drawn and discarded one at a time: memory O(n))."""
    n = require_int(n, "n", minimum=2)
    d = require_int(d, "d", minimum=2)
    beta = require_real(beta, "beta", minimum=0.0)
    check_work(replicates * n * 80.0, f"direct fixed-query rows with n={n} x {replicates}")
    rng = np.random.default_rng([seed, d, n % (2**63), 1])
    rows = []
    for i in range(replicates):
        rows.append(row_statistics(direct_distances(n, d, rng), beta))
        if progress is not None:
            progress(i + 1, replicates)
    out = {"n": n, "d": d, "beta": beta, "replicates": replicates, "seed": seed}
    for key in ("top_weight", "entropy", "along"):
        v = np.array([r[key] for r in rows])
        out[key] = float(v.mean())
        out[key + "_se"] = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
        out[key + "_sd"] = float(v.std(ddof=1)) if v.size > 1 else float("nan")
    return out


def regime_table(d: int, ns, offsets=(-0.5, 0.0, 0.5), c: float = 1.0, replicates: int = 2000,
                 seed: int = 0) -> list[dict]:
    """E W_1 (with standard errors) at beta_n = c n^{a}, a = (1 + offset) 2/(d-1), over the given n (order route)."""
    d = require_int(d, "d", minimum=2)
    a_c = critical_exponent(d)
    rows = []
    for n in ns:
        n = require_int(int(n), "n", minimum=TOP_K + 1)
        top = TopKeys(n, d, replicates, np.random.default_rng([seed, d, n % (2**63), 2]))
        for off in offsets:
            beta = c * float(n) ** (a_c * (1.0 + off))
            W = top.top_weight(beta)
            rows.append({"n": n, "offset": off, "exponent": a_c * (1 + off), "beta": beta,
                         "top_weight": float(W.mean()), "standard_error": float(W.std(ddof=1) / math.sqrt(W.size))})
    return rows


def mean_resultant(d: int, beta: float) -> float:
    """I_{d/2}(beta)/I_{d/2-1}(beta) (overflow-safe with ``ive``): the limit of the output component along q."""
    return float(ive(d / 2.0, beta) / ive(d / 2.0 - 1.0, beta))


def output_fluctuation_sd(d: int, beta: float) -> float:
    """sqrt(n) times the standard deviation of sum_k w_k t_k around its limit A (ratio-estimator CLT):
    sqrt(E[e^{2 beta (t-1)} (t - A)^2]) / E[e^{beta (t-1)}], by quadrature over the density of u = 1 - t."""
    A = mean_resultant(d, beta)

    def moment(f):
        val, _ = integrate.quad(lambda x: f(x) * float(distance_density(d, x)), 0.0, 2.0, limit=200,
                                points=[min(1.0, 10.0 / max(beta, 1e-9))])
        return val

    num = moment(lambda x: math.exp(-2 * beta * x) * ((1 - x) - A) ** 2)
    den = moment(lambda x: math.exp(-beta * x))
    return math.sqrt(num) / den


def subcritical_output(n: int, d: int, beta: float, replicates: int = 200, seed: int = 0, progress=None) -> dict:
    """The output component along q at a fixed beta (subcritical: beta << n^{2/(d-1)}): measured mean and spread
    over ``replicates`` rows against the limit I_{d/2}/I_{d/2-1} and the CLT standard deviation."""
    res = direct_top_weight(n, d, beta, replicates, seed, progress)
    A = mean_resultant(d, beta)
    sd = output_fluctuation_sd(d, beta) / math.sqrt(n)
    return {**res, "limit": A, "bias": 1.0 - A, "predicted_sd": sd, "measured_sd": res["along_sd"],
            "z": (res["along"] - A) / (sd / math.sqrt(replicates))}
