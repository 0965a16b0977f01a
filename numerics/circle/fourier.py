r"""The :math:`O(nK)` Fourier fast path for self-attention dynamics on the circle :math:`\mathbb{S}^1` (:math:`d = 2`).

For :math:`x_i = (\cos\theta_i, \sin\theta_i)` the ``sa`` and ``usa`` fields of :mod:`numerics.core.field` are
:math:`v_i = \omega_i (-\sin\theta_i, \cos\theta_i)` with the angle velocities (docs/conventions.md, GLPR arXiv
2312.10794)

.. math::

    \begin{aligned}
    \texttt{usa}:\quad \omega_i &= \frac{1}{n} \sum_j e^{\beta\cos(\theta_j - \theta_i)} \sin(\theta_j - \theta_i), \\
    \texttt{sa}:\quad \omega_i &= \frac{1}{Z_i} \sum_j e^{\beta\cos(\theta_j - \theta_i)} \sin(\theta_j - \theta_i),
    \qquad Z_i = \sum_j e^{\beta\cos(\theta_j - \theta_i)}.
    \end{aligned}

With the modified Bessel functions :math:`I_k` (generating function
:math:`e^{(\beta/2)(z + 1/z)} = \sum_k I_k(\beta) z^k`, derived and checked in :mod:`theory.circle`)

.. math::

    \begin{aligned}
    e^{\beta\cos u} &= I_0(\beta) + 2 \sum_{k\ge1} I_k(\beta) \cos(ku), \\
    e^{\beta\cos u} \sin u &= \sum_{k\ge1} b_k(\beta) \sin(ku), \qquad
    b_k = I_{k-1}(\beta) - I_{k+1}(\beta) = 2k I_k(\beta)/\beta,
    \end{aligned}

so with the order parameters :math:`r_k = \frac{1}{n} \sum_j e^{ik\theta_j}`

.. math::

    \begin{aligned}
    \texttt{usa}:\quad \omega_i &= \sum_{k\ge1} b_k \operatorname{Im}(r_k e^{-ik\theta_i}), \\
    \texttt{sa}:\quad \omega_i &= \frac{\sum_k b_k \operatorname{Im}(r_k e^{-ik\theta_i})}
    {I_0 + 2 \sum_k I_k \operatorname{Re}(r_k e^{-ik\theta_i})}.
    \end{aligned}

Every :math:`I_k` is replaced by the scaled ``ive(k, beta)`` :math:`= I_k(\beta) e^{-\lvert\beta\rvert}` (finite for
any :math:`\beta`): ``sa`` is a ratio of two sums with the same scale, so it is exact; ``usa`` is multiplied back by
:math:`e^{\lvert\beta\rvert}` in the natural time unit and by :math:`e^{\lvert\beta\rvert - \beta}` in the rescaled
unit :math:`t' = e^{\beta} t` (as in :mod:`numerics.core.field`).

Truncation (:func:`harmonics_for_tolerance`): keeping :math:`k \le K` changes :math:`e^{\beta\cos u} \sin u` by at
most :math:`\sum_{k>K} \lvert b_k\rvert \le \sum_{k\ge K} I_k(\lvert\beta\rvert)` (since
:math:`0 \le b_k \le I_{k-1}` for :math:`\beta \ge 0`) and :math:`e^{\beta\cos u}` by at most
:math:`2 \sum_{k>K} I_k(\lvert\beta\rvert) \le 2 \sum_{k\ge K} I_k`; with Amos' ratio bound (Amos 1974, Math.
Comp. 28)

.. math::

    \frac{I_{k+1}(x)}{I_k(x)} \le q_k = \frac{x}{k + 1/2 + \sqrt{x^2 + (k + 1/2)^2}} < 1, \quad \text{decreasing in } k,

:math:`\sum_{k\ge K} I_k \le I_K / (1 - q_K)`. :math:`K` is the smallest with
:math:`3 I_K/(1 - q_K) \le \mathrm{tol}\, I_0(\lvert\beta\rvert)`: both truncated kernels are then uniformly within
:math:`\mathrm{tol}\, I_0(\lvert\beta\rvert)` of the exact ones, so the ``usa`` field is exact to
:math:`\mathrm{tol}\, I_0(\lvert\beta\rvert)` (the mean kernel weight of a uniform configuration). For ``sa`` the
error of particle :math:`i` is at most :math:`3\,(\text{tail}) / (Z_i / n)`, and rounding in the cancelling sums
(about :math:`10^{-16} I_0`) is amplified by the same factor :math:`I_0 / (Z_i / n)`. Rows with
:math:`Z_i / n < 10^{-4} I_0` (isolated particles; most particles when :math:`\beta \ll 0`, where :math:`Z_i / n`
can be as small as :math:`e^{-2\lvert\beta\rvert} / n`) are therefore recomputed directly in :math:`O(n)` each, and
:math:`K` is chosen so that :math:`3\,(\text{tail}) \le 10^{-4}\, \mathrm{tol}\, I_0`: every ``sa`` angle velocity is
exact to ``tol`` for every configuration.

Cost: two passes over the particles with :math:`K` harmonics each (order parameters by running powers, the field by
Horner's rule in :math:`e^{-i\theta_i}`), i.e. :math:`O(nK)` time and :math:`O(n)` memory.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_points, require_real
from numerics.core.field import ENERGY_ALIASES, GLPR_ENERGY_MAX_BETA, MODELS, TIME_UNITS, interaction_energy

#: particles processed at once (a complex block of 1 MB stays in cache while the K harmonics run over it)
FOURIER_BLOCK = 65536
#: hard cap on the number of harmonics (beta = 1e3 needs about 250 at tol = 1e-12)
MAX_HARMONICS = 100_000
#: sa rows whose Fourier denominator Z_i/n falls below this fraction of I_0(|beta|) (isolated particles; most
#: particles when beta << 0) are recomputed directly: rounding in the cancelling sums (~1e-16 I_0) would otherwise
#: be amplified by I_0 n / Z_i. At 1e-4 the amplified rounding stays near 1e-12.
SA_DENOMINATOR_GUARD = 1e-4
#: largest |beta| accepted (the fast path is tested up to 1e3; beyond, K ~ sqrt(beta) still works)
MAX_BETA = 1e6


def _amos_ratio_bound(k: np.ndarray | int, x: float):
    """Upper bound q_k >= I_{k+1}(x) / I_k(x) for x >= 0, k >= 0 (Amos 1974): x / (k+1/2 + sqrt(x^2+(k+1/2)^2))."""
    h = np.asarray(k, dtype=float) + 0.5
    return x / (h + np.sqrt(x * x + h * h))


def bessel_tail_bound(K: int, beta: float) -> float:
    """Upper bound on e^{-|beta|} sum_{k>=K} I_k(|beta|), from the Amos ratio bound (geometric majorant).

    Returns I_K e^{-|beta|} / (1 - q_K) with q_K = |beta| / (K + 1/2 + sqrt(beta^2 + (K + 1/2)^2)).
    """
    x = abs(float(beta))
    q = float(_amos_ratio_bound(K, x))
    return float(special.ive(K, x)) / (1.0 - q)


def harmonics_for_tolerance(beta: float, tol: float = 1e-12, *, model: str = "usa") -> int:
    r"""Number of harmonics :math:`K` for which the truncated Fourier field is exact to ``tol``.

    Parameters
    ----------
    beta : float
        Inverse temperature (any finite real; only :math:`\lvert\beta\rvert` matters for the tail).
    tol : float
        Tolerance in (0, 1).
    model : {"usa", "sa"}
        Which guarantee (below); ``usa`` is also the criterion for the energy and the order-parameter sums.

    Returns
    -------
    int
        ``usa``: the smallest :math:`K \ge 1` with
        :math:`3\, \mathrm{bound}_K \le \mathrm{tol}\, I_0(\lvert\beta\rvert) e^{-\lvert\beta\rvert}`, where
        :math:`\mathrm{bound}_K \ge e^{-\lvert\beta\rvert} \sum_{k\ge K} I_k(\lvert\beta\rvert)` is
        :func:`bessel_tail_bound`. Both truncated kernels (:math:`e^{\beta\cos u} \sin u` and :math:`e^{\beta\cos u}`)
        are then within :math:`\mathrm{tol}\, I_0(\lvert\beta\rvert)` of the exact ones, uniformly in :math:`u`, so the
        ``usa`` field is exact to :math:`\mathrm{tol}\, I_0(\lvert\beta\rvert)` (relative to the mean kernel weight).
        ``sa``: :math:`3\, \mathrm{bound}_K \le \mathrm{tol}\, g\, I_0(\lvert\beta\rvert) e^{-\lvert\beta\rvert}` with
        :math:`g` = :data:`SA_DENOMINATOR_GUARD`. The ``sa`` error of particle :math:`i` is at most
        :math:`(\lvert dN_i\rvert + \lvert\omega_i\rvert \lvert dZ_i\rvert) / (Z_i/n)
        \le 3\, \mathrm{bound}_K / (Z_i/n)` (scaled sums), and rows with :math:`Z_i/n < g I_0 e^{-\lvert\beta\rvert}`
        are recomputed directly, so every angle velocity is exact to ``tol`` (absolute;
        :math:`\lvert\omega_i\rvert \le 1`) for every configuration.

    Notes
    -----
    The tail decays like a Gaussian :math:`e^{-K^2 / (2 \lvert\beta\rvert)}` for :math:`K \ll \lvert\beta\rvert` and
    super-exponentially for :math:`K \gg \lvert\beta\rvert`, so
    :math:`K \sim \sqrt{2 \lvert\beta\rvert \log(1/\mathrm{tol})}`:
    :math:`K` = 13, 28, 79, 247 at :math:`\beta` = 1, 10, 100, 1000 (``tol = 1e-12``, ``usa``) and 16, 33, 88, 264 for
    ``sa``.
    Source: docs/conventions.md (Fourier form on :math:`\mathbb{S}^1`); Amos (1974) for the ratio bound.
    Verified by: circle.fourier-field.
    """
    beta = require_real(beta, "beta", minimum=-MAX_BETA, maximum=MAX_BETA)
    tol = require_real(tol, "tol", minimum=0.0, maximum=1.0, strict_minimum=True)
    model = require_choice(model, "model", MODELS)
    x = abs(beta)
    factor = SA_DENOMINATOR_GUARD if model == "sa" else 1.0
    return _harmonics(x, tol * factor * float(special.ive(0, x)) / 3.0)


@lru_cache(maxsize=1024)
def _harmonics(x: float, target: float) -> int:
    """Smallest K >= 1 with bessel_tail_bound(K, x) <= target."""
    # The bound decreases in K; locate the first K below target by doubling then bisection.
    if bessel_tail_bound(1, x) <= target:
        return 1
    lo, hi = 1, 2
    while bessel_tail_bound(hi, x) > target:
        lo, hi = hi, hi * 2
        if hi > MAX_HARMONICS:
            raise InputError(f"more than {MAX_HARMONICS} harmonics needed for beta={x:g} (tail target {target:g})")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bessel_tail_bound(mid, x) > target:
            lo = mid
        else:
            hi = mid
    return hi


def fourier_coefficients(beta: float, K: int):
    """Scaled Fourier coefficients (a, b) of the circle kernels, k = 0..K and k = 1..K.

    a_k = I_k(beta) e^{-|beta|} (e^{beta cos u} e^{-|beta|} = a_0 + 2 sum_k a_k cos ku) and
    b_k = (I_{k-1}(beta) - I_{k+1}(beta)) e^{-|beta|} (e^{beta cos u} sin u e^{-|beta|} = sum_k b_k sin ku).
    """
    from theory.circle import scaled_fourier_coefficient_function  # codegen once per (process, expression)

    ks = np.arange(0, K + 2, dtype=float)
    cos_coef, sin_coef = scaled_fourier_coefficient_function()(ks, float(beta))
    return np.asarray(cos_coef[: K + 1], float), np.asarray(sin_coef[1: K + 1], float)


def _usa_scale(beta: float, time_unit: str) -> float:
    """Factor turning e^{-|beta|}-scaled usa sums into the requested time unit (InputError on overflow)."""
    exponent = abs(beta) - (beta if time_unit == "rescaled" else 0.0)
    if exponent > 709.0:
        hint = "use time_unit='rescaled' (t' = e^beta t)" if time_unit == "natural" else "use model='sa'"
        raise InputError(f"usa field overflows at beta={beta:g} in the {time_unit} time unit; {hint}")
    return math.exp(exponent)


def _order_parameters(z: np.ndarray, K: int, block: int = FOURIER_BLOCK) -> np.ndarray:
    """r_k = (1/n) sum_j z_j^k for k = 1..K (running powers per cache-sized block; error about k * 1e-16)."""
    r = np.zeros(K, dtype=complex)
    for start in range(0, z.size, block):
        zz = z[start:start + block]
        p = zz.copy()
        r[0] += p.sum()
        for k in range(1, K):
            p *= zz
            r[k] += p.sum()
    return r / z.size


def _conjugate_series(z: np.ndarray, W: np.ndarray, block: int = FOURIER_BLOCK) -> np.ndarray:
    """S[c, i] = sum_{k=1}^K W[c, k-1] conj(z_i)^k for every particle, by Horner's rule in conj(z) (stable: the
    Bessel weights decay in k, and Horner runs from the smallest term up). One 1-D pass per row of W (faster than
    broadcasting over a (rows, block) array)."""
    rows, K = W.shape
    out = np.empty((rows, z.size), dtype=complex)
    for start in range(0, z.size, block):
        zc = z[start:start + block].conj()
        for c in range(rows):
            p = np.full(zc.size, W[c, K - 1])
            for k in range(K - 2, -1, -1):
                p *= zc
                p += W[c, k]
            p *= zc
            out[c, start:start + block] = p
    return out


#: up to this many (particle, harmonic) pairs the whole power table is built at once (fewer NumPy calls);
#: above it the blocked Horner path avoids large complex GEMMs (OpenBLAS threads contend on shared cores)
SMALL_TABLE = 1 << 14


def _power_table(z: np.ndarray, K: int) -> np.ndarray:
    """(K, n) table z_j^k, k = 1..K, by doubling (log2 K vectorised products; error about log2(k) * 1e-16)."""
    E = np.empty((K, z.size), dtype=complex)
    E[0] = z
    filled = 1
    while filled < K:
        m = min(filled, K - filled)
        np.multiply(E[:m], E[filled - 1], out=E[filled:filled + m])
        filled += m
    return E


def _angle_velocity(z: np.ndarray, a: np.ndarray, b: np.ndarray, model: str, scale: float,
                    beta: float) -> np.ndarray:
    """omega from unit complex numbers z_j = e^{i theta_j} and scaled coefficients a (K+1,), b (K,). Hot path."""
    K = b.size
    if z.size * K <= SMALL_TABLE:
        # small systems: one (K, n) table of powers z_j^k, a few NumPy calls
        E = _power_table(z, K)
        r = E.mean(axis=1)
        W = np.stack([b * r, a[1:] * r]) if model == "sa" else (b * r)[None, :]
        S = W @ E.conj()
    else:
        r = _order_parameters(z, K)
        S = _conjugate_series(z, np.stack([b * r, a[1:] * r]) if model == "sa" else (b * r)[None, :])
    if model == "usa":
        return S[0].imag * scale
    den = a[0] + 2.0 * S[1].real
    unreliable = np.flatnonzero(den < SA_DENOMINATOR_GUARD * a[0])
    den[unreliable] = 1.0
    omega = S[0].imag / den
    if unreliable.size:
        omega[unreliable] = _direct_sa_rows(z, unreliable, beta)
    return omega


def _direct_sa_rows(z: np.ndarray, rows: np.ndarray, beta: float) -> np.ndarray:
    """Exact sa angle velocities of the given rows: sum_j w_ij sin(theta_j - theta_i) / sum_j w_ij with
    w_ij = e^{beta cos(theta_j - theta_i) - max_j(...)} (O(n) per row, blocked; no overflow)."""
    out = np.empty(rows.size)
    step = max(1, (1 << 22) // z.size)
    for start in range(0, rows.size, step):
        idx = rows[start:start + step]
        P = z[None, :] * z[idx].conj()[:, None]  # e^{i(theta_j - theta_i)}
        logits = beta * P.real
        logits -= logits.max(axis=1, keepdims=True)
        w = np.exp(logits)
        out[start:start + step] = (w * P.imag).sum(axis=1) / w.sum(axis=1)
    return out


class _Coefficients:
    """Validated parameters and the scaled coefficients of the truncated series."""

    def __init__(self, beta, model, tol, harmonics, time_unit):
        self.model = require_choice(model, "model", MODELS)
        time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
        self.beta = require_real(beta, "beta", minimum=-MAX_BETA, maximum=MAX_BETA)
        self.tol = require_real(tol, "tol", minimum=0.0, maximum=1.0, strict_minimum=True)
        if harmonics is None:
            self.K = harmonics_for_tolerance(self.beta, self.tol, model=self.model)
        else:
            self.K = require_int(harmonics, "harmonics", minimum=1, maximum=MAX_HARMONICS)
        self.scale = _usa_scale(self.beta, time_unit) if self.model == "usa" else 1.0
        self.a, self.b = fourier_coefficients(self.beta, self.K)

    def velocity(self, z: np.ndarray) -> np.ndarray:
        return _angle_velocity(z, self.a, self.b, self.model, self.scale, self.beta)


def fourier_angle_velocity(theta, beta: float, model: str = "usa", *, tol: float = 1e-12,
                           harmonics: int | None = None, time_unit: str = "natural") -> np.ndarray:
    r"""Angle velocities :math:`d\theta_i / dt` of ``sa`` / ``usa`` on the circle in :math:`O(nK)` operations.

    Parameters
    ----------
    theta : (n,) array_like
        Angles :math:`\theta_i` of :math:`x_i = (\cos\theta_i, \sin\theta_i)`.
    beta : float
        Inverse temperature (:math:`\lvert\beta\rvert \le 10^6`; tested up to :math:`10^3`).
    model : {"sa", "usa"}
        ``usa``: :math:`\omega_i = \frac{1}{n} \sum_j e^{\beta\cos(\theta_j - \theta_i)} \sin(\theta_j - \theta_i)`;
        ``sa``: the same sum divided by :math:`Z_i / n = \frac{1}{n} \sum_j e^{\beta\cos(\theta_j - \theta_i)}`.
    tol : float
        Truncation tolerance (see :func:`harmonics_for_tolerance`: ``usa`` exact to
        :math:`\mathrm{tol}\, I_0(\lvert\beta\rvert)`; ``sa`` exact to ``tol`` absolute for any configuration);
        ignored if ``harmonics`` is given.
    harmonics : int, optional
        Number of harmonics :math:`K` to keep (overrides ``tol``).
    time_unit : {"natural", "rescaled"}
        ``usa`` only: ``rescaled`` gives :math:`d\theta / dt'` with :math:`t' = e^{\beta} t` (finite for any
        :math:`\beta`).

    Returns
    -------
    (n,) ndarray
        :math:`\omega_i = \sum_{k=1}^K b_k \operatorname{Im}(r_k e^{-ik\theta_i})` (``usa``, times the unit's scale) or
        that sum over :math:`a_0 + 2 \sum_k a_k \operatorname{Re}(r_k e^{-ik\theta_i})` (``sa``),
        :math:`r_k = \frac{1}{n} \sum_j e^{ik\theta_j}`, with the Bessel coefficients of the module docstring.

    Notes
    -----
    Source: GLPR (arXiv 2312.10794), the Kuramoto form at :math:`d = 2`; docs/conventions.md.
    Verified by: circle.fourier-field, circle.angle-equations.
    """
    coef = _Coefficients(beta, model, tol, harmonics, time_unit)
    theta = require_finite_array(theta, "theta", ndim=1)
    if theta.size < 1:
        raise InputError("theta must hold at least one angle, got an empty array")
    return coef.velocity(np.cos(theta) + 1j * np.sin(theta))


#: circle_energy falls back to the direct O(n^2) sum when its rounding estimate exceeds this relative accuracy
#: (only possible for beta < 0, where the Bessel weights alternate in sign), up to this many particles
ENERGY_RELATIVE_ACCURACY = 1e-12
ENERGY_DIRECT_MAX_N = 4096


def _half_i0_minus_one_over_beta(beta: float) -> float:
    """(I_0(beta) - 1) / (2 beta) without cancellation: power series for |beta| < 1/2, else direct."""
    if beta == 0.0:
        return 0.0
    if abs(beta) < 0.5:
        # sum_{m>=1} (beta/2)^{2m} / (m!)^2 / (2 beta); 12 terms: (1/4)^24 / (12!)^2 ~ 1e-31 relative
        q = (beta / 2.0) ** 2
        term, total = 1.0, 0.0
        for m in range(1, 13):
            term *= q / (m * m)
            total += term
        return total / (2.0 * beta)
    return (float(special.ive(0, beta)) * math.exp(abs(beta)) - 1.0) / (2.0 * beta)


def circle_energy(theta, beta: float, *, normalization: str = "glpr-shifted", tol: float = 1e-12) -> float:
    r"""Interaction energy on the circle from the order parameters, :math:`O(nK)`.

    ``glpr-shifted`` (alias ``glpr``):
    :math:`E_\beta = \frac{I_0(\beta) - 1}{2\beta} + \sum_{k\ge1} \frac{I_k(\beta)}{\beta} \lvert r_k\rvert^2`
    (:math:`= \frac{1}{2\beta n^2} \sum_{ij} (e^{\beta\cos(\theta_i - \theta_j)} - 1)`, GLPR's energy minus
    :math:`1/(2\beta)`; :math:`\lvert r_1\rvert^2 / 2` at :math:`\beta = 0`).
    ``gkpr``: :math:`\frac{1}{n^2} \sum_{ij} e^{\beta(\cos - 1)} = \tilde I_0(\beta) + 2 \sum_k \tilde I_k(\beta)
    \lvert r_k\rvert^2` (:math:`\beta \ge 0`), with :math:`\tilde I_k(\beta) = I_k(\beta) e^{-\lvert\beta\rvert}`
    = ``ive(k, beta)``.
    Truncated at :math:`K` = ``harmonics_for_tolerance(beta, tol)`` (tail below
    :math:`\mathrm{tol}\, I_0(\lvert\beta\rvert) / \lvert\beta\rvert` resp. :math:`\mathrm{tol}\, \tilde I_0`).
    For :math:`\beta > 0` every term is positive (no cancellation). For :math:`\beta < 0` the weights alternate in sign
    and a small :math:`E` (e.g. a clustered state at :math:`\beta = -20`: :math:`E \sim 1/(2\lvert\beta\rvert)` against
    terms :math:`\sim e^{\lvert\beta\rvert}/\lvert\beta\rvert`) is lost to rounding: then the direct :math:`O(n^2)` sum
    is used (:math:`n \le 4096`) or InputError is raised. ``log-mean-exp``
    (:math:`\frac{1}{\beta} \log \operatorname{mean} e^{\beta\cos}`, every :math:`\beta`) is the blocked direct sum of
    :func:`numerics.core.field.interaction_energy`.

    Source: GLPR (arXiv 2312.10794) :math:`E_\beta`; the order-parameter form is docs/literature.md claim 7.
    Verified by: circle.energy-order-parameters.
    """
    beta = require_real(beta, "beta")
    normalization = require_choice(ENERGY_ALIASES.get(normalization, normalization), "normalization",
                                   ("glpr-shifted", "gkpr", "log-mean-exp"))
    theta = require_finite_array(theta, "theta", ndim=1)
    if theta.size < 1:
        raise InputError("theta must hold at least one angle, got an empty array")
    if normalization == "log-mean-exp":
        # blocked direct sum: finite for every beta (the alternating Bessel weights of beta < 0 cancel badly)
        return interaction_energy(np.c_[np.cos(theta), np.sin(theta)], beta, normalization=normalization)
    K = harmonics_for_tolerance(beta, tol)
    R = np.abs(_order_parameters(np.exp(1j * theta), K)) ** 2
    ks = np.arange(1, K + 1)
    if normalization == "gkpr":
        if beta < 0:
            raise InputError(f"the gkpr normalisation needs beta >= 0, got {beta:g}")
        return float(special.ive(0, beta) + 2.0 * np.dot(special.ive(ks, beta), R))
    if beta == 0.0:
        return 0.5 * float(R[0])
    if abs(beta) > GLPR_ENERGY_MAX_BETA:
        raise InputError(f"E_beta overflows at beta={beta:g}; use normalization='log-mean-exp' or 'gkpr'")
    # I_k(beta)/beta = ive(k, beta) e^{|beta|} / beta (finite for |beta| <= 600)
    weights = special.ive(ks, beta) * (math.exp(abs(beta)) / beta)
    energy = _half_i0_minus_one_over_beta(beta) + float(np.dot(weights, R))
    if beta < 0:
        # the weights alternate in sign: rounding ~1e-16 sum_k |w_k| may swamp a small E (clustered states)
        rounding = 1e-16 * (K + 1) * (abs(_half_i0_minus_one_over_beta(beta)) + float(np.abs(weights).sum()))
        if rounding > ENERGY_RELATIVE_ACCURACY * abs(energy):
            if theta.size > ENERGY_DIRECT_MAX_N:
                raise InputError(f"E_beta from order parameters loses accuracy at beta={beta:g} for this state "
                                 f"(rounding ~{rounding:.1e} vs |E| = {abs(energy):.1e}) and n={theta.size} > "
                                 f"{ENERGY_DIRECT_MAX_N} is too large for the direct sum")
            return interaction_energy(np.c_[np.cos(theta), np.sin(theta)], beta)
    return energy


def make_fourier_field(beta: float, model: str, *, tol: float = 1e-12, time_unit: str = "natural",
                       harmonics: int | None = None):
    r"""Drop-in for :func:`numerics.core.field.make_field` at :math:`d = 2`: ``field(X) -> (n, 2)`` via the
    Fourier series.

    ``field(X)`` returns :math:`v_i = \omega_i(\theta) J x_i` with
    :math:`\theta_i = \operatorname{atan2}(x_{i2}, x_{i1})` and :math:`J` the rotation by +90 degrees, i.e.
    :math:`\omega_i (-\sin\theta_i, \cos\theta_i)` on the circle. Off the circle (Runge-Kutta stage points) this
    extension keeps :math:`\lvert x_i\rvert` fixed and :math:`d\theta_i/dt = \omega_i` exactly, a smooth extension under
    which the circle is invariant (as the :math:`P_x` extension of :mod:`numerics.core.field`).

    ``field.harmonics`` is the number of harmonics :math:`K` used. ``field.energy(X, normalization)`` is the interaction
    energy of a state from its order parameters (:func:`circle_energy`, :math:`O(nK)` instead of the direct
    :math:`O(n^2)` sum); :func:`numerics.core.trajectory.simulate` uses it for the energy column of Fourier runs.

    Verified by: circle.fourier-field, circle.sphere-vs-angle.
    """
    coef = _Coefficients(beta, model, tol, harmonics, time_unit)

    def field(X: np.ndarray) -> np.ndarray:
        z = X[:, 0] + 1j * X[:, 1]
        z /= np.abs(z)  # e^{i theta_i}; stage points of Runge-Kutta methods are slightly off the circle
        omega = coef.velocity(z)
        out = np.empty_like(X)
        out[:, 0] = -omega * X[:, 1]
        out[:, 1] = omega * X[:, 0]
        return out

    def energy(X: np.ndarray, normalization: str = "glpr") -> float:
        return circle_energy(angles_of(X), beta, normalization=normalization, tol=tol)

    field.harmonics = coef.K
    field.energy = energy
    return field


#: cost model (seconds), calibrated with benchmarks/bench_fourier.py and a sweep n = 8..2048, beta = 1..100 on the
#: 2-core development machine: direct field ~ DIRECT_OVERHEAD + DIRECT_PAIR_COST n^2; Fourier field ~
#: FOURIER_OVERHEAD + FOURIER_TERM_COST n (K + 1), plus FOURIER_HARMONIC_OVERHEAD per harmonic and block on the
#: blocked path (n K > SMALL_TABLE: a few NumPy calls per harmonic)
DIRECT_PAIR_COST = 1.5e-8
DIRECT_OVERHEAD = 5e-5
FOURIER_TERM_COST = 2.5e-8
FOURIER_OVERHEAD = 4e-5
FOURIER_HARMONIC_OVERHEAD = 6e-6


def fourier_is_faster(n: int, beta: float, tol: float = 1e-12) -> bool:
    r"""Whether the Fourier field is predicted faster than the direct :math:`O(n^2)` field for n particles at ``beta``.

    Cost model (seconds): direct :math:`\sim c_0 + c_d n^2`; Fourier :math:`\sim f_0 + c_f n (K + 1)`
    (:math:`+\, c_h (K + 1) \lceil n / \mathrm{block}\rceil` when :math:`nK >` :data:`SMALL_TABLE`), with
    :math:`K` = ``harmonics_for_tolerance(beta, tol, model="sa")`` and the constants above. (``sa`` rows recomputed
    directly, see :data:`SA_DENOMINATOR_GUARD`, are not modelled.)
    Measured on the development machine (noisy, shared cores) the Fourier field wins for every :math:`n \ge 8` at
    :math:`\beta \le 10`; at :math:`\beta = 100` (:math:`K \sim 80`) the crossover is near :math:`n \sim 100`.
    """
    n = require_int(n, "n", minimum=1)
    K = harmonics_for_tolerance(beta, tol, model="sa")  # the larger K of the two models
    fourier = FOURIER_OVERHEAD + FOURIER_TERM_COST * n * (K + 1)
    if n * K > SMALL_TABLE:
        fourier += FOURIER_HARMONIC_OVERHEAD * (K + 1) * math.ceil(n / FOURIER_BLOCK)
    return fourier < DIRECT_OVERHEAD + DIRECT_PAIR_COST * n * n


def angles_of(X) -> np.ndarray:
    """Angles theta_i = atan2(x_i2, x_i1) of unit vectors of R^2 (validated)."""
    X = require_points(X, "X", d=2)
    return np.arctan2(X[:, 1], X[:, 0])


def check_fourier_bench(n: int, n_large: int, repeats: int, beta: float = 10.0) -> tuple[int, int, int]:
    """Validate the sizes of :func:`bench_fourier` and refuse, before any work, a run beyond the limits: per
    model (repeats + 1) direct O(n^2) and Fourier O(n K) evaluations, then (repeats + 1) Fourier evaluations at
    ``n_large``; memory: the angles, the points and the field at ``n_large`` (a dozen (n_large, 2) arrays)."""
    from numerics.common.errors import require_int
    from numerics.common.limits import check_array, check_work

    n = require_int(n, "fourier-n", minimum=2)
    n_large = require_int(n_large, "fourier-large-n", minimum=2)
    repeats = require_int(repeats, "repeats", minimum=1)
    K = max(harmonics_for_tolerance(beta, 1e-12, model=m) for m in ("sa", "usa"))
    for size, name in ((n, "fourier-n"), (n_large, "fourier-large-n")):
        check_array((size, 2), f"the Fourier benchmark at --{name} {size}", copies=12)
    work = (repeats + 1) * (2 * (float(n) * n * 12 + 20.0 * n * K) + 20.0 * n_large * K)
    check_work(work, f"the Fourier benchmark at n={n}, n_large={n_large}, {repeats} repeats")
    return n, n_large, repeats


def bench_fourier(n: int = 16384, beta: float = 10.0, n_large: int = 1_000_000, repeats: int = 3,
                  seed: int = 0) -> dict:
    """Benchmark the Fourier field against the direct field of :mod:`numerics.core.field` in this process.

    For each model (``sa``, ``usa`` in the rescaled unit): direct (O(n^2)) and Fourier evaluations at n
    alternating in ``repeats`` rounds, the minimum of each, the speed-up and the relative error
    max_i |F_i - D_i| / max_i |D_i|; then the best of ``repeats`` Fourier evaluations at ``n_large``.
    Uniform random angles from ``seed``.
    Targets: speed-up >= 50 and relative error <= 1e-12 at n = 16384, beta = 10; under 1 s at n = 10^6.
    """
    from numerics.common.timing import best_interleaved
    from numerics.core.field import make_field

    n, n_large, repeats = check_fourier_bench(n, n_large, repeats, beta)
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-np.pi, np.pi, n)
    X = np.c_[np.cos(theta), np.sin(theta)]
    report = {"n": n, "beta": beta, "tol": 1e-12, "models": {}}
    for model in ("sa", "usa"):
        direct_fn = make_field(2, beta, model, time_unit="rescaled")
        fast_fn = make_fourier_field(beta, model, time_unit="rescaled")
        direct, fast = direct_fn(X), fast_fn(X)  # warm-up, and the values compared
        t_direct, t_fast = best_interleaved([lambda: direct_fn(X), lambda: fast_fn(X)], repeats)
        report["models"][model] = {
            "harmonics": harmonics_for_tolerance(beta, 1e-12, model=model),
            "direct_seconds": t_direct, "fourier_seconds": t_fast, "speedup": t_direct / t_fast,
            "relative_error": float(np.abs(fast - direct).max() / np.abs(direct).max())}
    theta = rng.uniform(-np.pi, np.pi, n_large)
    X = np.c_[np.cos(theta), np.sin(theta)]
    large_fn = make_fourier_field(beta, "sa")
    (t_large,) = best_interleaved([lambda: large_fn(X)], repeats)
    report["large"] = {"n": n_large, "model": "sa", "fourier_seconds": t_large,
                       "harmonics": harmonics_for_tolerance(beta, 1e-12, model="sa"),
                       "predicted_direct_seconds": DIRECT_PAIR_COST * n_large ** 2}
    return report
