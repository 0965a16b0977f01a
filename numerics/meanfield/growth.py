r"""Measured growth rates of the modes of a perturbed uniform measure: from the PDE and from particles.

In the linear phase around the uniform measure (BPA arXiv 2410.23228; :mod:`theory.meanfield`) every Fourier mode
(:math:`\mathbb{S}^1`) or spherical-harmonic degree :math:`l` (:math:`\mathbb{S}^{d-1}`) grows like
:math:`e^{\lambda_l t}`. We measure :math:`\lambda_l` by least squares on the log-amplitude over an
automatically chosen window: from ``start`` to the last frame before the largest relative perturbation exceeds
``threshold`` (after that, quadratic terms are no longer negligible). The window, the number of frames and the
standard error of each slope are reported.

Amplitudes:

- PDE on :math:`\mathbb{S}^1`: :math:`\lvert c_k\rvert / c_0 = 2 \pi \lvert c_k\rvert` (relative to the uniform
  density).
- particles on :math:`\mathbb{S}^1`: :math:`\lvert r_k\rvert` with :math:`r_k = \frac{1}{n} \sum_j e^{i k \theta_j}`
  (same normalisation: :math:`2 \pi c_k` for a density).
- particles on :math:`\mathbb{S}^{d-1}`: the degree-:math:`l` power
  :math:`P_l = \frac{1}{n^2} \sum_{i,j} Z_l(\langle x_i, x_j\rangle)` with the zonal profile
  :math:`Z_l = C_l^{(d-2)/2}/C_l^{(d-2)/2}(1)` (Legendre :math:`P_l` on :math:`\mathbb{S}^2`, :math:`T_l` on
  :math:`\mathbb{S}^1`); by the addition theorem :math:`P_l` is a sum of squared harmonic coefficients, so it grows
  at :math:`2 \lambda_l` and the amplitude is :math:`\sqrt{P_l}`.

Verified by: meanfield.pde-rates, meanfield.particle-rates.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.core.field import MODELS, TIME_UNITS, block_rows, make_field
from numerics.meanfield.pde import DensityHistory
from numerics.core.trajectory import uniform_sphere


@dataclass(frozen=True)
class GrowthFit:
    """Least-squares slope of log(amplitude) for one mode over the fitted window."""

    mode: int
    rate: float
    stderr: float
    t_start: float
    t_stop: float
    points: int


@dataclass(frozen=True)
class MeasuredGrowth:
    """Fitted rates of several modes, the window, and the predicted rates for comparison."""

    fits: list[GrowthFit]
    predicted: list[float]          # predicted lambda_l for the same modes (theory.meanfield)
    window: tuple[float, float]
    threshold: float
    meta: dict = field(default_factory=dict)

    @property
    def modes(self) -> list[int]:
        return [f.mode for f in self.fits]

    @property
    def rates(self) -> list[float]:
        return [f.rate for f in self.fits]

    @property
    def dominant_mode(self) -> int:
        """The mode with the largest measured rate."""
        return self.fits[int(np.argmax(self.rates))].mode

    def relative_errors(self) -> list[float]:
        return [abs(f.rate - p) / abs(p) if p else math.inf for f, p in zip(self.fits, self.predicted)]

    def to_dict(self) -> dict:
        return {"modes": self.modes, "measured_rates": self.rates, "predicted_rates": self.predicted,
                "stderr": [f.stderr for f in self.fits], "relative_errors": self.relative_errors(),
                "window": list(self.window), "window_points": self.fits[0].points if self.fits else 0,
                "threshold": self.threshold, "dominant_mode": self.dominant_mode, **self.meta}


def linear_window(times: np.ndarray, size: np.ndarray, threshold: float, start: float = 0.0,
                  min_points: int = 5) -> tuple[int, int]:
    """Indices [i0, i1) of the linear phase: frames with time >= ``start`` before ``size`` first exceeds
    ``threshold``. Raises InputError if fewer than ``min_points`` frames qualify."""
    times, size = np.asarray(times, float), np.asarray(size, float)
    over = np.nonzero(size > threshold)[0]
    i1 = int(over[0]) if over.size else times.size
    i0 = int(np.searchsorted(times, start))
    if i1 - i0 < min_points:
        raise InputError(f"linear phase too short to fit: {max(i1 - i0, 0)} frames in [{start:g}, "
                         f"{times[min(i1, times.size - 1)]:g}] before the perturbation reaches {threshold:g} "
                         f"(lower the amplitude, raise the threshold or save more frames)")
    return i0, i1


def fit_log_growth(times: np.ndarray, amplitudes: np.ndarray, modes, window: tuple[int, int],
                   power: float = 1.0) -> list[GrowthFit]:
    """Slope of log(amplitudes[:, j]) / power over frames window[0]:window[1] for each column j (mode modes[j]).

    ``power = 2`` for quadratic amplitudes (degree powers P_l). The standard error is the least-squares one.
    """
    i0, i1 = window
    t = np.asarray(times, float)[i0:i1]
    out = []
    for j, mode in enumerate(modes):
        y = np.log(np.maximum(np.asarray(amplitudes, float)[i0:i1, j], np.finfo(float).tiny)) / power
        A = np.vstack([t, np.ones_like(t)]).T
        coef, res, *_ = np.linalg.lstsq(A, y, rcond=None)
        dof = max(t.size - 2, 1)
        resid = y - A @ coef
        s2 = float(resid @ resid) / dof
        se = math.sqrt(s2 / float(((t - t.mean()) ** 2).sum()))
        out.append(GrowthFit(int(mode), float(coef[0]), se, float(t[0]), float(t[-1]), int(t.size)))
    return out


def predicted_rates(model: str, d: int, beta: float, modes, time_unit: str = "natural") -> list[float]:
    """lambda_l for the given modes from the generated code of :func:`theory.meanfield.growth_rate_function`."""
    from theory.meanfield import growth_rate_at_beta_zero, growth_rate_function

    modes = np.asarray(list(modes), dtype=float)
    if beta == 0:
        return [float(growth_rate_at_beta_zero(int(m), d)) for m in modes]
    return [float(v) for v in growth_rate_function(model, d, time_unit)(modes, float(beta))]


def fastest_predicted_rate(model: str, d: int, beta: float, time_unit: str = "natural") -> float:
    r""":math:`\max_l \lambda_l(\beta)`, searched over :math:`l \le 4 \sqrt{\lvert\beta\rvert} + 11` (far past the
    peak)."""
    return max(predicted_rates(model, d, beta, range(1, 4 * int(math.sqrt(abs(beta))) + 12), time_unit))


def pde_growth_rates(history: DensityHistory, modes=None, threshold: float = 1e-2) -> MeasuredGrowth:
    r"""Fit the growth of Fourier modes of a :class:`numerics.meanfield.pde.DensityHistory` over its linear phase.

    ``modes`` default: the perturbed modes :math:`1, \dots, K`. Amplitude of mode :math:`k`:
    :math:`2 \pi \lvert c_k(t)\rvert` (relative to the mean); the linear phase ends when the largest relative
    amplitude over all modes exceeds ``threshold``.
    Verified by: meanfield.pde-rates.
    """
    threshold = require_real(threshold, "threshold", minimum=0.0, strict_minimum=True)
    K = history.meta.get("perturbation_modes") or 8
    modes = list(range(1, K + 1)) if modes is None else [require_int(m, "mode", minimum=1) for m in modes]
    rel = 2 * np.pi * np.abs(history.coefficients)
    window = linear_window(history.times, rel[:, 1:].max(axis=1), threshold)
    fits = fit_log_growth(history.times, rel[:, modes], modes, window)
    meta = history.meta
    pred = predicted_rates(meta["model"], 2, meta["beta"], modes, meta["time_unit"])
    noise = float(meta.get("noise") or 0.0)
    pred = [p - noise * k * k for p, k in zip(pred, modes)]    # Fokker-Planck: lambda_k - D k^2 (theory.noise)
    return MeasuredGrowth(fits, pred, (fits[0].t_start, fits[0].t_stop), threshold,
                          {"source": "pde", "time_unit": meta["time_unit"], "noise": noise})


# -- particles on S^1 (Fourier fast path) -----------------------------------------------------------------------
def circle_order_parameters(theta: np.ndarray, K: int) -> np.ndarray:
    """|r_k| = |(1/n) sum_j e^{i k theta_j}| for k = 1..K, by running powers (O(n K), O(n) memory)."""
    z = np.exp(1j * np.asarray(theta, float))
    w = np.ones_like(z)
    out = np.empty(K)
    for k in range(K):
        w *= z
        out[k] = abs(w.mean())
    return out


def particle_time_step(model: str, beta: float, time_unit: str, rate: float) -> float:
    """A RK4 step resolving both the growth (rate) and the collapse inside a cluster (unit speed for sa,
    e^{|beta| - c beta} for usa): 0.1 / max(rate, collapse rate)."""
    collapse = 1.0 if model == "sa" else math.exp(abs(beta) - (beta if time_unit == "rescaled" else 0.0))
    return 0.1 / max(rate, collapse, 1e-12)


def simulate_circle_angles(theta0: np.ndarray, beta: float, model: str, t_end: float, dt: float, saves: int,
                           observe: Callable[[np.ndarray], np.ndarray], *, tol: float = 1e-10,
                           time_unit: str = "natural", progress=None):
    """RK4 for n particles on S^1 with the O(n K) Fourier field (:func:`numerics.circle.fourier.make_fourier_field`).

    The field keeps |x_i| and moves the angle at d theta_i/dt = omega_i exactly, so RK4 on x = (cos, sin) is RK4
    on the angles; rows are renormalised after each step. Returns (times (saves,), observations (saves, ...),
    final angles). Only ``observe(theta)`` is stored per frame (n = 1e5 particles x hundreds of frames would
    not fit in memory otherwise). The field is built once: ``fourier_angle_velocity`` regenerates its Bessel
    coefficients on every call, which costs ~20 ms (measured with benchmarks/bench_meanfield.py).
    """
    from numerics.circle.fourier import make_fourier_field

    field_fn = make_fourier_field(beta, model, tol=tol, time_unit=time_unit)
    theta = np.asarray(theta0, dtype=float)
    X0 = np.column_stack([np.cos(theta), np.sin(theta)])
    times, obs, X = rk4_frames(field_fn, X0, t_end, dt, saves, lambda X: observe(np.arctan2(X[:, 1], X[:, 0])),
                               progress)
    return times, obs, np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)


def rk4_frames(field_fn, X: np.ndarray, t_end: float, dt: float, saves: int,
               observe: Callable[[np.ndarray], np.ndarray], progress=None):
    """RK4 (``numerics.core.integrators.step_rk4``, renormalised) with steps <= dt, observing ``saves`` equally
    spaced frames in [0, t_end]. Returns (times, stacked observations, final X)."""
    from numerics.core.integrators import step_rk4

    save_times = np.linspace(0.0, t_end, saves)
    obs = [observe(X)]
    t = 0.0
    for target in save_times[1:]:
        steps = max(1, math.ceil((target - t) / dt - 1e-9))
        h = (target - t) / steps
        for _ in range(steps):
            X = step_rk4(field_fn, X, h)
        t = float(target)
        obs.append(observe(X))
        if progress is not None:
            progress(t, t_end)
    return save_times, np.array(obs), X


def _check_common(beta, model, time_unit):
    beta = require_real(beta, "beta")
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    return beta, model, time_unit


def _linear_phase_end(n: int, rate: float, threshold: float, margin: float = 1.5) -> float:
    """Time for an amplitude 1/sqrt(n) to grow to ``threshold`` at ``rate``, times a margin."""
    return margin * math.log(max(threshold * math.sqrt(n), math.e)) / rate


def particle_growth_rates_circle(beta: float, model: str, n: int, *, seed, modes: int = 8, threshold: float = 0.05,
                                 saves: int = 60, tol: float = 1e-10, time_unit: str = "natural",
                                 progress=None) -> MeasuredGrowth:
    r"""Growth rates of :math:`\lvert r_k\rvert` from :math:`n` uniform random particles on :math:`\mathbb{S}^1`
    (Fourier fast path).

    The initial sampling noise gives :math:`\lvert r_k(0)\rvert \sim 1/\sqrt{n}` in every mode; each grows like
    :math:`e^{\lambda_k t}` until
    the largest reaches ``threshold`` (the end of the fitted window). Simulated to 1.5 times the predicted
    end of the linear phase.
    Verified by: meanfield.particle-rates.
    """
    beta, model, time_unit = _check_common(beta, model, time_unit)
    n = require_int(n, "n", minimum=100)
    modes = require_int(modes, "modes", minimum=1)
    threshold = require_real(threshold, "threshold", minimum=0.0, strict_minimum=True)
    ks = list(range(1, modes + 1))
    lam = fastest_predicted_rate(model, 2, beta, time_unit)
    t_end = _linear_phase_end(n, lam, threshold)
    rng = np.random.default_rng(seed)
    theta0 = rng.uniform(0, 2 * np.pi, size=n)
    times, amps, _ = simulate_circle_angles(theta0, beta, model, t_end, particle_time_step(model, beta, time_unit, lam),
                                            saves, lambda th: circle_order_parameters(th, modes), tol=tol,
                                            time_unit=time_unit, progress=progress)
    # start after one e-folding time of the fastest mode: the O(1/n) quadratic forcing of the empirical
    # measure shifts each amplitude by ~Q_k/lambda_k during a transient of that length
    window = linear_window(times, amps[:, :modes].max(axis=1), threshold, start=1.0 / lam)
    fits = fit_log_growth(times, amps[:, :modes], ks, window)
    return MeasuredGrowth(fits, predicted_rates(model, 2, beta, ks, time_unit), (fits[0].t_start, fits[0].t_stop), threshold,
                          {"source": "particles", "n": n, "d": 2, "seed": seed, "time_unit": time_unit,
                           "integrator": "rk4 on angles, Fourier fast path", "t_end": t_end})


# -- particles on S^{d-1}: degree power spectrum -----------------------------------------------------------------
def zonal_profile_sums(G: np.ndarray, d: int, lmax: int) -> np.ndarray:
    """sum over the entries of G of Z_l(G) for l = 1..lmax, Z_l = C_l^{(d-2)/2}/C_l^{(d-2)/2}(1).

    Three-term recurrences (vectorised over G): Chebyshev T_{l+1} = 2 t T_l - T_{l-1} for d = 2, and
    C_{l+1} = (2 (l + lam) t C_l - (l + 2 lam - 1) C_{l-1}) / (l + 1) for lam = (d-2)/2 > 0, normalised by
    C_l(1) = binom(l + 2 lam - 1, l). Tested against scipy.special.eval_gegenbauer / eval_chebyt.
    """
    lam = (d - 2) / 2
    out = np.empty(lmax)
    prev, cur = np.ones_like(G), G.copy() if d == 2 else 2 * lam * G
    norm_prev, norm_cur = 1.0, 1.0 if d == 2 else 2 * lam
    for l in range(1, lmax + 1):
        out[l - 1] = cur.sum() / norm_cur
        if d == 2:
            prev, cur = cur, 2 * G * cur - prev
        else:
            prev, cur = cur, (2 * (l + lam) * G * cur - (l + 2 * lam - 1) * prev) / (l + 1)
            norm_prev, norm_cur = norm_cur, (2 * (l + lam) * norm_cur - (l + 2 * lam - 1) * norm_prev) / (l + 1)
    return out


def degree_power_spectrum(X: np.ndarray, lmax: int) -> np.ndarray:
    r""":math:`P_l = \frac{1}{n^2} \sum_{i,j} Z_l(\langle x_i, x_j\rangle)`, :math:`l = 1, \dots,` ``lmax``
    (blocked: no :math:`n \times n` array).

    For iid uniform points :math:`E[P_l] = 1/n` (the diagonal);
    :math:`P_l = \frac{\lvert \mathbb{S}^{d-1}\rvert}{n^2 N_l} \sum_m \big\lvert \sum_i Y_{lm}(x_i)\big\rvert^2` by
    the addition theorem (:math:`N_l` harmonics of degree :math:`l`), so :math:`P_l \ge 0` and grows at
    :math:`2 \lambda_l` in the linear phase.
    """
    X = np.asarray(X, float)
    n, d = X.shape
    total = np.zeros(lmax)
    step = block_rows(n, 1 << 20)
    for i in range(0, n, step):
        G = np.clip(X[i:i + step] @ X.T, -1.0, 1.0)
        total += zonal_profile_sums(G, d, lmax)
    return total / (n * n)


def particle_growth_rates_sphere(beta: float, model: str, n: int, d: int, *, seed, lmax: int = 8,
                                 threshold: float = 0.2, saves: int = 40, time_unit: str = "natural",
                                 progress=None) -> MeasuredGrowth:
    r"""Growth rates of :math:`\sqrt{P_l}` from a direct simulation of :math:`n` uniform random particles on
    :math:`\mathbb{S}^{d-1}`.

    Direct :math:`O(n^2)` field (:func:`numerics.core.field.make_field`), RK4, renormalised. The window ends when
    :math:`\max_l \sqrt{P_l}` exceeds ``threshold``; rates are slopes of :math:`\log(P_l)/2`.
    Verified by: meanfield.particle-rates.
    """
    beta, model, time_unit = _check_common(beta, model, time_unit)
    n = require_int(n, "n", minimum=50)
    d = require_int(d, "d", minimum=2)
    lmax = require_int(lmax, "lmax", minimum=1)
    threshold = require_real(threshold, "threshold", minimum=0.0, strict_minimum=True)
    ls = list(range(1, lmax + 1))
    lam = fastest_predicted_rate(model, d, beta, time_unit)
    t_end = _linear_phase_end(n, lam, threshold)
    dt = particle_time_step(model, beta, time_unit, lam)
    field_fn = make_field(d, beta, model, time_unit=time_unit)
    save_times, powers, _ = rk4_frames(field_fn, uniform_sphere(n, d, seed), t_end, dt, saves,
                                       lambda X: degree_power_spectrum(X, lmax), progress)
    P = np.maximum(powers, 0.0)
    window = linear_window(save_times, np.sqrt(P.max(axis=1)), threshold, start=1.0 / lam)
    fits = fit_log_growth(save_times, P, ls, window, power=2.0)
    return MeasuredGrowth(fits, predicted_rates(model, d, beta, ls, time_unit), (fits[0].t_start, fits[0].t_stop), threshold,
                          {"source": "particles", "n": n, "d": d, "seed": seed, "time_unit": time_unit,
                           "integrator": "rk4 (direct field), renormalised", "t_end": t_end})
