r"""Low-temperature concentration of the mean-field consensus flow (Alcalde, Bungert, Riedl, Roith, arXiv 2605.10931).

The flow is the consensus form of :mod:`numerics.rd.consensus` for a measure :math:`\mu_t` on
:math:`\mathbb{R}^d`:

.. math::

    \frac{dz}{dt} = V (m_\beta[\mu_t](z) - z), \qquad
    m_\beta[\mu](z) = \frac{\int y\, e^{\beta y^T A z}\, d\mu(y)}{\int e^{\beta y^T A z}\, d\mu(y)}.

At zero temperature :math:`m` is the maximiser :math:`T(z)` of :math:`y^T A z` over the support; with
:math:`A = V = I` and :math:`\mu_0` uniform on the unit disc, :math:`T(z) = z/\lvert z\rvert` and every point
moves straight to the circle: :math:`\lvert z(t)\rvert = 1 - e^{-t}(1 - \lvert z_0\rvert)`, so
:math:`W_2(\mu_t, T_\#\mu_0) = e^{-t}/\sqrt{6}` (:math:`T_\#\mu_0` is the uniform measure on the circle). At
finite :math:`\beta` the circle is only metastable: this module measures how close :math:`\mu_t` gets to
:math:`T_\#\mu_0` and when, and the terminal phase set by :math:`V`.

Routes (derivations in ``proofs_notes/meanfield-low-temperature-*.md``):

- :func:`radial_flow`: the rotation-invariant mean field reduced exactly to its radial law. With rings of radii
  :math:`s_k` and equal masses,
  :math:`m_\beta(r e) = e \sum_k s_k I_1(\beta r s_k) / \sum_k I_0(\beta r s_k)`, so
  :math:`dr/dt = g(r) - r` (:math:`V = A = I`; Bessel functions as ``i0e``, ``i1e``: no overflow);
- :func:`ring_particles`: the same measure as rings of equally spaced points, moved by the 2-D consensus field of
  :func:`numerics.rd.consensus.integrate_flow` (no symmetry used in the field);
- :func:`consensus_gaussian_moments`: for :math:`\mu_0 = N(\alpha, \Sigma)` the flow keeps :math:`\mu_t`
  Gaussian (:math:`m` is affine, :math:`m(z) = \alpha + \beta \Sigma A z`),
  :math:`d\alpha/dt = \beta V \Sigma A \alpha`, :math:`d\Sigma/dt = J \Sigma + \Sigma J^T` with
  :math:`J = V(\beta \Sigma A - I)`; for small :math:`\beta \Sigma` the spread decays like
  :math:`e^{-tV} \Sigma e^{-tV^T}`: the terminal phase is set by the spectrum of :math:`V`.

Verified by: meanfield.low-temperature-concentration, meanfield.low-temperature-terminal.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.limits import check_work, steps_of
from numerics.common.stepping import rk4_at_times


def radial_defect(Z: np.ndarray) -> float:
    """sqrt(mean_i (1 - |z_i|)^2): for a rotation-invariant measure this is W_2(mu, uniform on the unit circle)
    (the radial projection is pointwise the nearest point of the circle and maps mu to that measure)."""
    r = np.linalg.norm(np.asarray(Z, float), axis=1)
    return float(np.sqrt(np.mean((1.0 - r) ** 2)))


def zero_temperature_defect(t) -> np.ndarray:
    """W_2(mu_t, T#mu_0) = e^{-t} / sqrt(6) of the zero-temperature flow from the uniform disc (E(1-|z_0|)^2 = 1/6)."""
    return np.exp(-np.asarray(t, float)) / math.sqrt(6.0)


#: stretching of the radial mass grid toward the edge r = 1 (smallest ring spacing about a / (2 m (e^a - 1)))
EDGE_STRETCH = 8.0


def disc_rings(m: int, stretch: float = EDGE_STRETCH) -> tuple[np.ndarray, np.ndarray]:
    """m rings of the uniform disc crowding toward the edge, where the boundary layer of width ~1/beta forms:
    mass coordinate u = r^2 = 1 - (e^{a(1 - v)} - 1)/(e^a - 1) at the mid-points v of (0, 1); returns (radii,
    masses) with masses du (summing to 1)."""
    v = (np.arange(m) + 0.5) / m
    a = stretch
    u = 1.0 - np.expm1(a * (1.0 - v)) / math.expm1(a)
    du = a * np.exp(a * (1.0 - v)) / math.expm1(a) / m
    return np.sqrt(u), du / du.sum()


@functools.lru_cache(maxsize=1)
def _bessel_table():
    """Cubic splines of log i0e(x) and i1e(x)/i0e(x) in log x on [1e-8, 1e7] (6000 nodes; relative error below
    1e-10, checked against scipy.special in the tests); below 1e-8 the series values are used."""
    from scipy.interpolate import CubicSpline
    from scipy.special import i0e, i1e

    lx = np.linspace(math.log(1e-8), math.log(1e7), 6000)
    x = np.exp(lx)
    return CubicSpline(lx, np.log(i0e(x))), CubicSpline(lx, i1e(x) / i0e(x))


def bessel_i0e_ratio(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i0e(x), I_1(x)/I_0(x)) for x >= 0 from :func:`_bessel_table` (x < 1e-8: 1 - x and x/2)."""
    log_i0e, ratio = _bessel_table()
    x = np.asarray(x, float)
    small = x < 1e-8
    lx = np.log(np.where(small, 1.0, x))
    return np.where(small, 1.0 - x, np.exp(log_i0e(lx))), np.where(small, 0.5 * x, ratio(lx))


def radial_velocity(r: np.ndarray, w: np.ndarray, beta: float) -> np.ndarray:
    """g(r_i) - r_i with g(r) = sum_k w_k s_k I_1(beta r s_k) / sum_k w_k I_0(beta r s_k), s = r (the current
    rings, masses w). I_nu(x) = i_nu_e(x) e^{x}; the factor e^{beta r_i s_k - beta r_i max s} cancels."""
    x = beta * np.outer(r, r)
    e0, q = bessel_i0e_ratio(x)
    e = w[None, :] * e0 * np.exp(x - x.max(axis=1, keepdims=True))
    return (e * q) @ r / e.sum(axis=1) - r


def radial_time_step(beta: float) -> float:
    """RK4 step: rings near the origin leave it at rate about beta E[s^2]/2 - 1 <= beta/4 (stability needs
    h lambda < 2.78); the rest of the dynamics has rates of order 1."""
    return min(0.05, 2.0 / (beta / 4.0 + 1.0))


def radial_flow(beta: float, rings: int, t_end: float, saves: int = 201, *, stretch: float = EDGE_STRETCH,
                progress: Callable[[float, float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""RK4 of the radial reduction from the uniform disc (:func:`disc_rings`, steps :func:`radial_time_step`);
    returns (times, :math:`W_2(\mu_t, \text{uniform measure on the circle})` at each saved time)."""
    beta = require_real(beta, "beta", minimum=0.0, strict_minimum=True)
    rings = require_int(rings, "rings", minimum=2)
    t_end = require_real(t_end, "t_end", minimum=0.0)
    saves = require_int(saves, "saves", minimum=2)
    dt = radial_time_step(beta)
    check_work(4.0 * (steps_of(t_end, dt) + saves) * (40.0 * rings * rings + 1e5),
               f"the radial mean field ({rings} rings, t = {t_end:g})")
    r, w = disc_rings(rings, stretch)
    f = lambda y: radial_velocity(y, w, beta)  # noqa: E731
    defect = lambda y: float(np.sqrt(w @ (1.0 - y) ** 2))  # noqa: E731
    times = np.linspace(0.0, t_end, saves)
    out = [defect(r)]
    for t, r in rk4_at_times(f, r, times, dt):
        out.append(defect(r))
        if progress is not None:
            progress(t, t_end)
    return times, np.array(out)


def ring_points(rings: int, per_ring: int, seed: int = 0,
                stretch: float = EDGE_STRETCH) -> tuple[np.ndarray, np.ndarray]:
    """The uniform disc as the rings of :func:`disc_rings`, each of ``per_ring`` equally spaced points turned by a
    seeded random angle: a quadrature of mu_0 by rings * per_ring weighted points. Returns (points, masses)."""
    rng = np.random.default_rng(seed)
    r, w = disc_rings(rings, stretch)
    phi = 2 * np.pi * (np.arange(per_ring)[None, :] / per_ring + rng.uniform(0, 1, (rings, 1)))
    Z = np.column_stack([(r[:, None] * np.cos(phi)).ravel(), (r[:, None] * np.sin(phi)).ravel()])
    return Z, np.repeat(w / per_ring, per_ring)


def ring_particles(beta: float, rings: int, per_ring: int, t_end: float, saves: int = 201, *, seed: int = 0,
                   progress=None) -> tuple[np.ndarray, np.ndarray]:
    r"""The 2-D consensus flow (:math:`A = V = I`) of the weighted points of :func:`ring_points`, RK4 with the
    steps of :func:`radial_time_step`; returns (times, :math:`W_2(\mu_t, \text{uniform on the circle})`)
    (weighted radial defect)."""
    from numerics.rd.consensus import integrate_flow

    Z, w = ring_points(rings, per_ring, seed)
    defect = lambda Y: float(np.sqrt(w @ (1.0 - np.linalg.norm(Y, axis=1)) ** 2))  # noqa: E731
    times, D = integrate_flow(Z, np.eye(2), beta, t_end, radial_time_step(beta), saves=saves, weights=w,
                              observe=defect, progress=progress)
    return times, np.array(D)


def closest_approach(times: np.ndarray, D: np.ndarray) -> tuple[float, float]:
    """(t*, D*): the minimum of the defect curve, refined by a parabola through the three points around it."""
    i = int(np.argmin(D))
    if 0 < i < len(D) - 1:
        y0, y1, y2 = D[i - 1], D[i], D[i + 1]
        h = times[i + 1] - times[i]
        denom = y0 - 2 * y1 + y2
        if denom > 0:
            s = 0.5 * (y0 - y2) / denom
            return float(times[i] + s * h), float(y1 - 0.25 * (y0 - y2) * s)
    return float(times[i]), float(D[i])


#: relative accuracy the defaults of ``attnflow low-temperature`` are chosen to meet (estimated, see
#: :func:`refined_approach`); at 120 and 240 rings the estimate is below 7e-3 for beta = 16, 64, 256
TARGET_RTOL = 1e-2


def refined_approach(beta: float, rings: int) -> dict[str, float]:
    """t* and W_2* with an accuracy estimate: :func:`radial_flow` at ``rings`` and ``2 rings``, extrapolated.

    Parameters
    ----------
    beta : float
        Inverse temperature (> 0).
    rings : int
        Coarse ring count N; the flow is also run at 2N.

    Returns
    -------
    dict
        ``t_star`` and ``W2_star`` (Richardson values 2 f(2N) - f(N)), ``t_star_error`` and ``W2_star_error``
        (|f(2N) - f(N)|), and the raw values ``t_star_N``, ``t_star_2N``, ``W2_star_N``, ``W2_star_2N``.

    Notes
    -----
    The ring quadrature is first order in 1/N (measured at beta = 16: the differences between 60, 120, 240 and 480
    rings halve, 0.0237, 0.0115, 0.0059 in t*), so f(N) ~ f + a/N and 2 f(2N) - f(N) cancels the leading term.
    The error estimate |f(2N) - f(N)| is the error of f(N) itself: deliberately conservative for the
    extrapolated value, because the next term is not a clean 1/N^2 (the extrapolated values of successive pairs
    move by about 1e-3).
    """
    t_end = math.log(beta) + 2.0
    saves = int(40 * t_end) + 1
    out: dict[str, float] = {}
    for label, n in (("N", rings), ("2N", 2 * rings)):
        times, D = radial_flow(beta, n, t_end, saves=saves)
        out[f"t_star_{label}"], out[f"W2_star_{label}"] = closest_approach(times, D)
    for key in ("t_star", "W2_star"):
        coarse, fine = out[f"{key}_N"], out[f"{key}_2N"]
        out[key] = 2.0 * fine - coarse
        out[f"{key}_error"] = abs(fine - coarse)
    return out


def consensus_gaussian_moments(alpha0, Sigma0, A, V, beta: float, t_end: float, saves: int = 101):
    r"""The exact Gaussian solution of the consensus flow: (times, :math:`\alpha` ``(saves, d)``, :math:`\Sigma`
    ``(saves, d, d)``) by scipy's DOP853 (rtol 1e-11): :math:`d\alpha/dt = \beta V \Sigma A \alpha`,
    :math:`d\Sigma/dt = J \Sigma + \Sigma J^T`, :math:`J = V(\beta \Sigma A - I)`."""
    from scipy.integrate import solve_ivp

    alpha0, Sigma0 = np.asarray(alpha0, float), np.asarray(Sigma0, float)
    A, V = np.asarray(A, float), np.asarray(V, float)
    d = alpha0.size
    if Sigma0.shape != (d, d) or A.shape != (d, d) or V.shape != (d, d):
        raise InputError(f"alpha0 (d,), Sigma0, A and V (d, d) must agree, d = {d}")
    I = np.eye(d)

    def rhs(t, y):
        a, S = y[:d], y[d:].reshape(d, d)
        J = V @ (beta * S @ A - I)
        return np.concatenate([beta * V @ S @ A @ a, (J @ S + S @ J.T).ravel()])

    times = np.linspace(0.0, t_end, saves)
    sol = solve_ivp(rhs, (0.0, t_end), np.concatenate([alpha0, Sigma0.ravel()]), t_eval=times, method="DOP853",
                    rtol=1e-11, atol=1e-14)
    if not sol.success:
        raise InputError(f"the Gaussian moment equations failed: {sol.message}")
    return sol.t, sol.y[:d].T, sol.y[d:].T.reshape(-1, d, d)
