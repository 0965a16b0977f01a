r"""The simplex transition at finite :math:`n` and :math:`d`: random almost-simplex tokens in :math:`\mathbb{R}^d`.

An exact simplex of :math:`n` tokens needs :math:`d \ge n`; in a fixed dimension :math:`d` the closest model is
(our construction; the paper's "almost-simplex" experiments are described only in words in the parts we could
read)

.. math::

    y_k = \sqrt{\rho}\, e_0 + \sqrt{1 - \rho}\, z_k, \qquad
    z_k \text{ iid uniform on the unit sphere } \mathbb{S}^{d-2} \text{ of } e_0^\perp,

so that :math:`\langle y_i, y_k\rangle = \rho + (1 - \rho) t_{ik}` with :math:`t_{ik} = \langle z_i, z_k\rangle`
of mean 0 and variance :math:`1/(d - 1)`. The self weight of token :math:`i` at :math:`\beta = \gamma \log n` is
:math:`p_i = 1/(1 + S_i(b))`, :math:`S_i(b) = \sum_{k \ne i} e^{-b (1 - t_{ik})}`,
:math:`b = \gamma (1 - \rho) \log n`. Per query token, :math:`O(n d)` work (the scores) and :math:`O(n)` per
Newton pass; the :math:`n` scores of a group of query tokens are held in memory (bounded by
:data:`MEMORY_BYTES`), keys are regenerated per group from per-block seeds, so the same seed gives the same
numbers whatever the grouping of the queries.

Measured per query: :math:`\gamma_{1/2,i}` (:math:`p_i = 1/2`), :math:`\gamma_{0.1,i}` and
:math:`\gamma_{0.9,i}`; reported with the mean, its standard error over configurations (independent key sets),
the spread over queries (the disorder width) and the median per-query 10-90 width (the intrinsic width,
:math:`2 \log 9 / ((1 - \rho) \log n)` for an exact simplex).

Prediction (annealed): :math:`E S_i(b) = (n - 1) e^{-b} M_{d-1}(b)`,
:math:`M_m(b) = \Gamma(m/2) (2/b)^{m/2-1} I_{m/2-1}(b)` (the moment of :math:`t` on :math:`\mathbb{S}^{m-1}`); its
root :math:`b_{\text{ann}}` gives :math:`\gamma_{\text{ann}} = b_{\text{ann}} / ((1 - \rho) \log n) \to
1/(1 - \rho)` as :math:`d \to \infty`, with the shift
:math:`\gamma_{\text{ann}} (1 - \rho) \sim 1 + \log n / (2 (d - 1))` at large :math:`d`. It is a good prediction
while :math:`S_i` concentrates (:math:`\log n` well below :math:`d - 1`); beyond, the extremes of :math:`t_{ik}`
dominate (a random-energy regime).

Verified by: longcontext.almost-simplex-finite-d.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, ive

from numerics.common.errors import InputError, require_int
from numerics.common.limits import check_work
from numerics.longcontext.simplex import _rho
from numerics.longcontext.unit_mass import unit_mass_beta

#: memory for the scores of one group of query tokens (n floats per query)
MEMORY_BYTES = 64 * 2**20
#: keys generated per block (each block has its own seed)
KEY_BLOCK = 1 << 15
#: the p-levels whose crossing gammas are measured per query
LEVELS = (0.1, 0.5, 0.9)
#: Newton passes over the scores per level (estimate for the work limit)
PASSES = 12


def _unit_rows(rng, rows: int, m: int) -> np.ndarray:
    Z = rng.standard_normal((rows, m))
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def log_moment_shifted(m: int, b: float) -> float:
    r""":math:`\log(e^{-b} M_m(b)) = \log(e^{-b} E e^{b t})` for :math:`t = \langle z, z'\rangle` on
    :math:`\mathbb{S}^{m-1}`: ``gammaln(m/2)`` + log of :math:`(2/b)^\nu e^{-b} I_\nu(b)`, :math:`\nu = m/2 - 1`,
    from ``ive`` or, where it underflows (:math:`b` small against :math:`\nu`), from the series
    :math:`\sum_k (b/2)^{2k} / (k!\, \Gamma(\nu + k + 1))`."""
    nu = m / 2.0 - 1.0
    if b >= 0.5 * (nu + 1.0):
        return gammaln(m / 2.0) + nu * math.log(2.0 / b) + math.log(ive(nu, b))
    k = np.arange(60)
    terms = 2 * k * math.log(b / 2.0) - gammaln(k + 1.0) - gammaln(nu + k + 1.0) if b > 0 else -gammaln(nu + 1.0)
    return gammaln(m / 2.0) - b + float(np.logaddexp.reduce(np.atleast_1d(terms)))


def annealed_gamma(n: float, d: int, rho: float, level: float = 0.5) -> float:
    r""":math:`\gamma` at which :math:`1/(1 + E S(b))` = ``level``, :math:`E S(b) = (n - 1) e^{-b} M_{d-1}(b)`
    (overflow-safe)."""
    rho = _rho(rho)
    m = d - 1
    target = math.log((1.0 - level) / level)

    def log_mass(b):  # log((n - 1) e^{-b} M_m(b)), decreasing in b from log(n - 1)
        return math.log(n - 1.0) + log_moment_shifted(m, b)

    hi = 2.0 * math.log(n) + 10.0
    while log_mass(hi) > target:
        hi *= 2.0
    b = brentq(lambda x: log_mass(x) - target, 0.0, hi, xtol=1e-13, rtol=1e-14)
    return b / ((1.0 - rho) * math.log(n))


def quenched_gamma(n: float, d: int, rho: float, level: float = 0.5) -> float:
    r"""The annealed root corrected at second order for the randomness of :math:`S` (a sum of :math:`n - 1` iid
    terms given the query): :math:`E \log S \sim \log E S - \operatorname{Var} S / (2 (E S)^2)`,
    :math:`\operatorname{Var} S = (n - 1) (e^{-2b} M(2b) - (e^{-b} M(b))^2)`."""
    rho = _rho(rho)
    m = d - 1
    target = math.log((1.0 - level) / level)

    def f(b):
        l1 = log_moment_shifted(m, b)
        l2 = log_moment_shifted(m, 2.0 * b)
        log_mean = math.log(n - 1.0) + l1
        rel_var = math.exp(l2 - 2.0 * l1 - math.log(n - 1.0)) - 1.0 / (n - 1.0)
        return log_mean - 0.5 * rel_var - target

    hi = 2.0 * math.log(n) + 10.0
    while f(hi) > 0:
        hi *= 2.0
    lo = annealed_gamma(n, d, rho, level) * (1.0 - rho) * math.log(n) * 0.5  # the correction lowers the root
    if f(lo) < 0:
        lo = 0.0
    b = brentq(f, lo, hi, xtol=1e-13, rtol=1e-14)
    return b / ((1.0 - rho) * math.log(n))


def work_estimate(n: int, d: int, queries: int, configurations: int) -> float:
    """Operations: key generation and scores per group, plus Newton passes per level over n scores per query."""
    group = max(1, MEMORY_BYTES // (8 * n))
    groups = math.ceil(queries / group)
    return configurations * (groups * n * (d - 1) * (2.0 * min(group, queries) + 30.0)
                             + len(LEVELS) * PASSES * 20.0 * n * queries)


def crossing_gammas(n: int, d: int, rho: float, queries: int = 8, configurations: int = 4, seed: int = 0,
                    progress=None) -> dict:
    r""":math:`\gamma_{\text{level},i}` for every query token :math:`i` of every configuration (arrays of shape
    ``(configurations, queries)`` per level), with the annealed prediction; see the module docstring."""
    n = require_int(n, "n", minimum=12)  # the 10% level needs S(0) = n - 1 > 9
    d = require_int(d, "d", minimum=3)
    rho = _rho(rho)
    queries = require_int(queries, "queries", minimum=1, maximum=n)
    configurations = require_int(configurations, "configurations", minimum=1)
    seed = require_int(seed, "seed", minimum=0)
    check_work(work_estimate(n, d, queries, configurations),
               f"almost-simplex transition with n={n}, d={d}, {queries} queries x {configurations} configurations")
    m = d - 1
    group = max(1, MEMORY_BYTES // (8 * n))
    scale = (1.0 - rho) * math.log(n)
    out = {lv: np.empty((configurations, queries)) for lv in LEVELS}
    done, total = 0, configurations * queries
    for c in range(configurations):
        Zq = _unit_rows(np.random.default_rng([seed, c, 0]), queries, m)
        for a in range(0, queries, group):
            sel = slice(a, min(queries, a + group))
            gaps = np.empty((n, sel.stop - sel.start))
            gaps[:queries] = 1.0 - Zq @ Zq[sel].T                  # the other query tokens are keys too
            for b, k0 in enumerate(range(queries, n, KEY_BLOCK)):
                k1 = min(n, k0 + KEY_BLOCK)
                Zk = _unit_rows(np.random.default_rng([seed, c, 1 + b]), k1 - k0, m)
                gaps[k0:k1] = 1.0 - Zk @ Zq[sel].T
            keep = np.ones(n, dtype=bool)
            for j in range(sel.stop - sel.start):  # drop each query's own key (gap 0: the self score)
                keep[:] = True
                keep[sel.start + j] = False
                col = gaps[keep, j]
                start = None
                for lv in LEVELS:
                    bval = unit_mass_beta(col, start=start, mass=(1.0 - lv) / lv)
                    out[lv][c, sel.start + j] = bval / scale
                    start = bval
                done += 1
                if progress is not None:
                    progress(done, total)
    return {"n": n, "d": d, "rho": rho, "queries": queries, "configurations": configurations, "seed": seed,
            "gammas": out, "annealed": {lv: annealed_gamma(n, d, rho, lv) for lv in LEVELS},
            "quenched": {lv: quenched_gamma(n, d, rho, lv) for lv in LEVELS},
            "simplex_midpoint": math.log(n - 1.0) / scale, "critical_gamma": 1.0 / (1.0 - rho)}


def summarise(result: dict) -> dict:
    r"""Mean :math:`\gamma_{1/2}` with its standard error over configurations, the spread over all queries, the
    median per-query 10-90 width, and the annealed and exact-simplex values beside them."""
    g = result["gammas"][0.5]
    per_config = g.mean(axis=1)
    cfg = per_config.size
    se = float(per_config.std(ddof=1) / math.sqrt(cfg)) if cfg > 1 else float("nan")
    width = result["gammas"][0.9] - result["gammas"][0.1]
    n, rho = result["n"], result["rho"]
    return {"n": n, "d": result["d"], "gamma_half": float(g.mean()), "standard_error": se,
            "spread": float(g.std(ddof=1)) if g.size > 1 else 0.0,
            "median_width": float(np.median(width)),
            "annealed_gamma_half": result["annealed"][0.5],
            "quenched_gamma_half": result["quenched"][0.5],
            "annealed_width": result["annealed"][0.9] - result["annealed"][0.1],
            "simplex_gamma_half": result["simplex_midpoint"],
            "simplex_width": 2 * math.log(9.0) / ((1 - rho) * math.log(n)),
            "critical_gamma": result["critical_gamma"], "samples": int(g.size), "configurations": cfg,
            "seed": result["seed"]}
