r"""The gap-counting view of the critical inverse temperature (Karakida and Hayase, arXiv 2605.12697).

One softmax row with scores :math:`a_1 \ge a_2 \ge \dots \ge a_n` puts the weight
:math:`1/(1 + \sum_{k \ge 2} e^{-\beta g_k})` on its top key, :math:`g_k = a_1 - a_k`. Counting the competitors
within :math:`\delta` of the top, :math:`N(\delta) = \#\{k : g_k \le \delta\}`, the level :math:`\delta` holds
about :math:`N(\delta) e^{-\beta \delta}` of the top key's mass; attention concentrates once
:math:`e^{\beta \delta}` beats :math:`N(\delta)` at every level, i.e. beyond the **accumulation scale**

.. math::

    A_n = \sup_{\delta > 0} \frac{\log \bar N_n(\delta)}{\delta},

with :math:`\bar N_n` the expected count within :math:`\delta` of the typical maximum :math:`a_n`
(:math:`n \bar F(a_n) = 1`). This is our reading of the abstract (the full text was not at hand); for a
log-concave tail the sup is the slope at 0, the hazard rate at :math:`a_n`, and the classical extreme-value
scale of the top spacings. Four score families give the four laws (theory.longcontext.accumulation_scale_laws;
:math:`A_n` as computed exactly here, and its law):

- ``gaussian``: scores iid :math:`N(0, 1)`; :math:`A_n = n \varphi(a_n)`; law :math:`(2 \log n)^{1/2}`;
- ``simplex``: one score 1, :math:`n - 1` scores :math:`\rho` (arXiv 2510.05554);
  :math:`A_n = \log n / (1 - \rho)`; law :math:`\log n`;
- ``flat-edge``: scores :math:`-1/Y`, :math:`Y \sim \mathrm{Exp}(1)` (:math:`\bar F(-x) = e^{-1/x}`);
  :math:`A_n = (\log n)^2`; law :math:`(\log n)^2`;
- ``sphere``: scores :math:`\langle q, k\rangle`, :math:`k` uniform on :math:`\mathbb{S}^{d-1}`
  (arXiv 2605.08505); :math:`A_n = n f_u(u_n)`; law :math:`m (\kappa_d n)^{1/m}`, :math:`m = (d-1)/2`.

The measured critical :math:`\beta_{1/2}(n)` (:math:`E W_1 = 1/2` over independent rows) divided by :math:`A_n`
tends to a constant: 1 for the simplex, the Gumbel-domain constant :math:`c_G` for the Gaussian and the flat edge
(both have the Poisson process of intensity :math:`e^{-x}` as limit of their rescaled top scores; with
:math:`\beta = c A_n` the top weights are Poisson-Dirichlet(:math:`1/c`), and :math:`c_G` solves
:math:`E V_1 = \int_0^\infty e^{-l} / (1 + a l^a G_a(l))\, dl = 1/2`, :math:`a = 1/c`,
:math:`G_a(l) = \int_0^l (1 - e^{-z}) z^{-a-1}\, dz`: :func:`gumbel_half_constant`), and
:math:`C_d / (m \kappa_d^{1/m})` for the sphere
(:func:`numerics.longcontext.fixed_query.poisson_half_constant_quadrature`). The first two families reach their
limit slowly (corrections of order :math:`1/\log n`): the measured ratios are reported with their standard errors
and a fit :math:`c + b / \log n` over the stated window.

Verified by: longcontext.gap-counting.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammainc, logsumexp
from scipy.stats import norm

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_array, check_work
from numerics.longcontext import fixed_query
from numerics.longcontext.unit_mass import logsumexp_rows, mean_half_root

FAMILIES = ("gaussian", "simplex", "flat-edge", "sphere")
#: the law of each family's accumulation scale, for tables
LAWS = {"gaussian": "(2 log n)^(1/2)", "simplex": "log n / (1 - rho)", "flat-edge": "(log n)^2",
        "sphere": "m (kappa_d n)^(1/m), m = (d-1)/2"}
#: smallest gaps kept exactly per row; the others are summarised by :data:`BINS` geometric bins (count and mean
#: gap per bin: the bin's mass is then exact to a relative (beta width)^2 / 8); entropies use every key
KEEP = 1024
BINS = 4096


class ScoreFamily:
    """One family of attention rows: sampler of the gaps from the top score, expected counts, scales."""

    def __init__(self, name: str, rho: float = 0.5, d: int = 3):
        if name not in FAMILIES:
            raise InputError(f"family must be one of {', '.join(FAMILIES)}; got {name!r}")
        self.name = name
        self.rho = require_real(rho, "rho", minimum=0.0, maximum=1.0 - 1e-12)
        self.d = require_int(d, "d", minimum=2)

    # -- the expected counts and the scale -----------------------------------------------------------------
    def typical_max(self, n: int) -> float:
        """a_n with n Fbar(a_n) = 1 (for the sphere: the distance u_n with n F_u(u_n) = 1)."""
        if self.name == "gaussian":
            return float(norm.isf(1.0 / n))
        if self.name == "flat-edge":
            return -1.0 / math.log(n)
        if self.name == "sphere":
            return float(fixed_query.distance_quantile(self.d, 1.0 / n))
        return 1.0

    def expected_count(self, n: int, delta) -> np.ndarray:
        """Nbar_n(delta): the expected number of scores within delta of the typical maximum."""
        delta = np.asarray(delta, dtype=float)
        a = self.typical_max(n)
        if self.name == "gaussian":
            return n * norm.sf(a - delta)
        if self.name == "flat-edge":
            x = -a + delta  # Fbar(-x) = e^{-1/x}
            return n * np.exp(-1.0 / x)
        if self.name == "sphere":
            return n * fixed_query.distance_cdf(self.d, a + delta)
        return 1.0 + (n - 1.0) * (delta >= 1.0 - self.rho)

    def accumulation_scale(self, n: int) -> float:
        """A_n, exactly: the hazard rate at a_n for the three log-concave tails, log n / (1 - rho) for the simplex."""
        n = require_int(n, "n", minimum=3)
        a = self.typical_max(n)
        if self.name == "gaussian":
            return float(n * norm.pdf(a))
        if self.name == "flat-edge":
            return 1.0 / (a * a)
        if self.name == "sphere":
            return float(n * fixed_query.distance_density(self.d, a))
        return math.log(n) / (1.0 - self.rho)

    def accumulation_scale_numeric(self, n: int) -> float:
        """A_n as the sup of log Nbar_n(delta) / delta over delta (bounded search on a log scale): the second
        route to :meth:`accumulation_scale` (equal where the tail is log-concave)."""
        n = require_int(n, "n", minimum=3)
        if self.name == "simplex":
            deltas = np.array([(1 - self.rho) * (1 - 1e-12), 1 - self.rho, 2.0])
            return float(np.max(np.log(self.expected_count(n, deltas)) / deltas))
        scale = 1.0 / self.accumulation_scale(n)

        def neg(logd):
            dd = scale * math.exp(logd)
            return -float(np.log(self.expected_count(n, dd))) / dd

        grid = np.linspace(-12, 4, 161)
        vals = [neg(g) for g in grid]
        i = int(np.argmin(vals))
        if i == 0:  # the sup is at delta -> 0: the slope there (central value of the smallest deltas)
            return -vals[0]
        res = minimize_scalar(neg, bracket=(grid[i - 1], grid[i], grid[min(i + 1, len(grid) - 1)]))
        return -float(res.fun)

    def leading_law(self, n: int) -> float:
        """The leading law of A_n (theory.longcontext.accumulation_scale_laws)."""
        L = math.log(n)
        if self.name == "gaussian":
            return math.sqrt(2 * L)
        if self.name == "flat-edge":
            return L * L
        if self.name == "sphere":
            m = (self.d - 1) / 2.0
            return m * (fixed_query.poisson_constant(self.d) * n) ** (1.0 / m)
        return L / (1.0 - self.rho)

    # -- samples ------------------------------------------------------------------------------------------------
    def sample_row(self, n: int, rng) -> np.ndarray:
        """The n gaps a_1 - a_k of one row, the top key's own gap 0 included, unsorted (O(n))."""
        if self.name == "simplex":
            g = np.full(n, 1.0 - self.rho)
            g[0] = 0.0
            return g
        if self.name == "gaussian":
            a = -rng.standard_normal(n)          # minus the score: the smallest is the top score
        elif self.name == "flat-edge":
            a = 1.0 / rng.exponential(size=n)    # minus the score
        else:
            a = fixed_query.direct_distances(n, self.d, rng)
        return a - a.min()

    def limit_ratio(self) -> float:
        """lim_n beta_{1/2}(n) / A_n (see the module docstring)."""
        if self.name == "simplex":
            return 1.0
        if self.name == "sphere":
            m = (self.d - 1) / 2.0
            return (fixed_query.poisson_half_constant_quadrature(self.d)
                    / (m * fixed_query.poisson_constant(self.d) ** (1.0 / m)))
        return gumbel_half_constant()


def gumbel_top_weight(c: float) -> float:
    r""":math:`E V_1` of Poisson-Dirichlet(:math:`a, 0`), :math:`a = 1/c` (:math:`c > 1`): the limit of the mean
    top weight at :math:`\beta = c A_n` for a tail in the Gumbel domain. By Mecke's formula,
    :math:`E V_1 = \int_0^\infty e^{-l} / (1 + a l^a G_a(l))\, dl` with
    :math:`a l^a G_a(l) = l^a \Gamma(1 - a) P(1 - a, l) - (1 - e^{-l})` (integration by parts; :math:`P` the
    regularised lower incomplete gamma). 0 for :math:`c \le 1` (the sum of the weights diverges: no macroscopic top
    weight)."""
    c = require_real(c, "c", minimum=0.0)
    if c <= 1.0:
        return 0.0
    a = 1.0 / c
    g1 = math.gamma(1.0 - a)

    def f(lam):
        if lam <= 0:
            return 1.0
        return math.exp(-lam) / (math.exp(-lam) + lam**a * g1 * float(gammainc(1.0 - a, lam)))

    val = sum(integrate.quad(f, lo, hi, limit=200)[0] for lo, hi in ((0.0, 1.0), (1.0, 50.0), (50.0, np.inf)))
    return val


def gumbel_half_constant() -> float:
    """c_G > 1 with E V_1 = 1/2 for Poisson-Dirichlet(1/c_G, 0) (:func:`gumbel_top_weight`)."""
    return brentq(lambda c: gumbel_top_weight(c) - 0.5, 1.0 + 1e-9, 50.0, xtol=1e-12, rtol=1e-12)


def measure_family(family: ScoreFamily, n: int, rows: int, seed: int = 0, progress=None) -> dict:
    r""":math:`\beta_{1/2}(n)` (:math:`E W_1 = 1/2` over ``rows`` independent rows; standard error by the
    delta method), its ratio to :math:`A_n`, and the mean entropy at :math:`\beta = A_n / 2` and :math:`2 A_n`."""
    n = require_int(n, "n", minimum=3)
    rows = require_int(rows, "rows", minimum=10)
    check_work(rows * n * 60.0, f"gap-counting rows with n={n} x {rows}")
    check_array((rows, KEEP + 3 * BINS), f"gap-counting rows with n={n} x {rows}", copies=2)  # kept gaps and bins
    rng = np.random.default_rng([seed, FAMILIES.index(family.name), n % (2**63)])
    A = family.accumulation_scale(n)
    keep = min(KEEP, n - 1)
    nbins = BINS if n - 1 > keep + BINS else 0
    G = np.empty((rows, keep))
    means = np.zeros((rows, nbins))
    log_counts = np.full((rows, nbins), -np.inf)
    widths = np.zeros((rows, nbins))
    entropy = np.empty((rows, 2))
    for i in range(rows):
        g = family.sample_row(n, rng)
        entropy[i] = [_entropy(g, factor * A) for factor in (0.5, 2.0)]  # all n keys
        part = np.partition(g, keep) if keep + 1 < g.size else g
        G[i] = np.sort(part[:keep + 1])[1:]  # the top key's own 0 dropped
        if nbins:
            rest = part[keep + 1:]
            lo, hi = float(rest.min()), float(rest.max()) * (1 + 1e-12)
            step = math.log(hi / lo) / nbins
            idx = np.minimum((np.log(rest / lo) / step).astype(np.int64), nbins - 1)
            counts = np.bincount(idx, minlength=nbins)
            sums = np.bincount(idx, weights=rest, minlength=nbins)
            full = counts > 0
            means[i, full] = sums[full] / counts[full]
            log_counts[i, full] = np.log(counts[full])
            widths[i] = np.diff(lo * np.exp(step * np.arange(nbins + 1)))
        if progress is not None:
            progress(i + 1, rows)

    def W_at(c):
        head = logsumexp_rows(-c * A * G, axis=1)
        if nbins:
            head = np.logaddexp(head, logsumexp_rows(log_counts - c * A * means, axis=1))
        return np.exp(-np.logaddexp(0.0, head))

    if family.name == "simplex":  # deterministic: the root is log(n - 1) / (1 - rho), no spread
        c, se = math.log(n - 1.0) / ((1.0 - family.rho) * A), 0.0
    else:
        c, se = mean_half_root(W_at, rows, guess=1.0)
    binning = 0.0
    if nbins:  # the bins' share of the mass times their relative error (c A width)^2 / 8, worst row
        b = c * A
        heads = np.logaddexp(logsumexp_rows(-b * G, axis=1), logsumexp_rows(log_counts - b * means, axis=1))
        logZ = np.logaddexp(0.0, heads)
        share = np.exp(log_counts - b * means - logZ[:, None])
        binning = float(np.max((share * (b * widths) ** 2 / 8.0).sum(axis=1)))
    return {"family": family.name, "n": n, "rows": rows, "seed": seed, "accumulation_scale": A,
            "leading_law": family.leading_law(n), "beta_half": c * A, "ratio": c, "ratio_se": se,
            "binning_relative_error": binning,
            "entropy_half_scale": float(entropy[:, 0].mean()), "entropy_double_scale": float(entropy[:, 1].mean()),
            "log_n": math.log(n)}


def _entropy(gaps: np.ndarray, beta: float) -> float:
    """Entropy of the weights proportional to e^{-beta g_k} (all keys, the top one with g = 0): log Z + beta <g>."""
    e = np.exp(-beta * gaps)  # no overflow: gaps >= 0, and the top term is 1
    Z = float(e.sum())
    return math.log(Z) + beta * float(np.dot(e, gaps)) / Z


def ratio_fit(rows: list[dict]) -> dict:
    """Fit ratio(n) = c + b / log n (weighted by the standard errors) over the rows; c with its standard error."""
    x = 1.0 / np.array([r["log_n"] for r in rows])
    y = np.array([r["ratio"] for r in rows])
    s = np.array([max(r["ratio_se"], 1e-12) for r in rows])
    if x.size < 3:
        raise InputError("the ratio fit needs at least 3 values of n")
    A = np.column_stack([np.ones_like(x), x]) / s[:, None]
    coef, *_ = np.linalg.lstsq(A, y / s, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    chi2 = float(np.sum(((y - coef[0] - coef[1] * x) / s) ** 2))
    return {"intercept": float(coef[0]), "intercept_se": float(math.sqrt(cov[0, 0])), "slope": float(coef[1]),
            "chi2": chi2, "dof": int(x.size - 2), "window": [math.exp(1 / x.max()), math.exp(1 / x.min())]}
