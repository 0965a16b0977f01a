"""Known answers for the measurements of the mean-field area: the zonal sums that turn particles on S^{d-1}
into degree power spectra, and the dominant mode reported by the metastable experiment.

- :func:`zonal_sums_error`: :func:`numerics.meanfield.growth.zonal_profile_sums` (three-term recurrences)
  against SciPy's ``eval_gegenbauer``/``eval_chebyt`` at random inner products, d = 2..7, degrees 1..12;
  :func:`power_spectrum_error`: :func:`numerics.meanfield.growth.degree_power_spectrum` on S^2 against the
  addition theorem with SciPy's spherical harmonics, P_l = 4 pi / (n^2 (2l + 1)) sum_m |sum_i Y_lm(x_i)|^2.
- :func:`planted_mode_cases`: equispaced angles with two planted Fourier modes: a slow mode that leads at
  t = 0 and a fast one that overtakes it. Linear theory says which mode crosses the threshold first, and when
  (t_k = log(threshold / |r_k(0)|) / lambda_k); the experiment must report that mode and that time.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.meanfield.growth import circle_order_parameters, degree_power_spectrum, predicted_rates, zonal_profile_sums


def zonal_sums_error(seed: int = 0, lmax: int = 12) -> float:
    """Largest |recurrence - SciPy| / max(1, |SciPy|) over d = 2..7 and l = 1..lmax."""
    from scipy import special

    rng = np.random.default_rng(seed)
    worst = 0.0
    for d in range(2, 8):
        G = np.clip(rng.uniform(-1, 1, (5, 7)), -1, 1)
        got = zonal_profile_sums(G, d, lmax)
        lam = (d - 2) / 2
        for l in range(1, lmax + 1):
            if d == 2:
                ref = special.eval_chebyt(l, G).sum()
            else:
                ref = (special.eval_gegenbauer(l, lam, G) / special.eval_gegenbauer(l, lam, 1.0)).sum()
            worst = max(worst, abs(got[l - 1] - ref) / max(1.0, abs(ref)))
    return worst


def _sph_harm(m: int, l: int, polar: np.ndarray, azimuth: np.ndarray) -> np.ndarray:
    from scipy import special

    if hasattr(special, "sph_harm_y"):  # SciPy >= 1.15: sph_harm_y(n, m, theta (polar), phi (azimuth))
        return special.sph_harm_y(l, m, polar, azimuth)
    return special.sph_harm(m, l, azimuth, polar)  # pragma: no cover - older SciPy


def power_spectrum_error(seed: int = 1, n: int = 40, lmax: int = 6) -> float:
    """Largest relative error of the degree power spectrum on S^2 against the addition theorem."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) + np.array([0.8, -0.3, 0.5])   # not uniform: P_l of order one
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    polar, azimuth = np.arccos(np.clip(X[:, 2], -1, 1)), np.arctan2(X[:, 1], X[:, 0])
    got = degree_power_spectrum(X, lmax)
    ref = np.array([4 * math.pi / (n * n * (2 * l + 1)) *
                    sum(abs(_sph_harm(m, l, polar, azimuth).sum()) ** 2 for m in range(-l, l + 1))
                    for l in range(1, lmax + 1)])
    return float(np.max(np.abs(got - ref) / ref))


#: (beta, n, planted {mode: initial |r_k|}); the first case's slow mode 1 leads at t = 0 and mode 3 (= l_max)
#: overtakes it, the second's mode 2 stays ahead of the faster mode 4 (the reported mode is not l_max)
PLANTED = ((4.7, 1000, {1: 0.02, 3: 2e-3}), (4.7, 1000, {2: 0.03, 4: 1e-3}))
THRESHOLD = 0.3


def planted_angles(n: int, amplitudes: dict) -> np.ndarray:
    """theta_j = phi_j + sum_k (2 A_k / k) sin(k phi_j) on the equispaced phi_j: |r_k(0)| ~ A_k, other modes 0."""
    phi = 2 * math.pi * np.arange(n) / n
    return phi + sum((2 * A / k) * np.sin(k * phi) for k, A in amplitudes.items())


def planted_mode_cases() -> list[dict]:
    from numerics.meanfield.metastable import metastable_run

    rows = []
    for beta, n, amplitudes in PLANTED:
        theta0 = planted_angles(n, amplitudes)
        modes = sorted(amplitudes)
        start = circle_order_parameters(theta0, max(modes))
        rates = predicted_rates("sa", 2, beta, modes)
        crossing = {k: math.log(THRESHOLD / start[k - 1]) / lam for k, lam in zip(modes, rates)}
        expected = min(crossing, key=crossing.get)
        run = metastable_run(beta, "sa", n, 0, theta0=theta0, linear_threshold=THRESHOLD, tol=1e-8, collapse_time=4.0)
        rows.append({"beta": beta, "n": n, "planted": {str(k): float(start[k - 1]) for k in modes},
                     "leading_at_t0": int(modes[int(np.argmax(start[np.array(modes) - 1]))]),
                     "rates": dict(zip(map(str, modes), rates)), "predicted_crossings": {str(k): v for k, v in
                                                                                          crossing.items()},
                     "expected_mode": expected, "reported_mode": run.dominant_mode,
                     "expected_time": crossing[expected], "reported_time": run.t_linear_end})
    return rows
