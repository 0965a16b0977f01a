r"""Quantitative clustering of the mean-field dynamics on :math:`\mathbb{S}^1` (Chen, Lin, Polyanskiy, Rigollet,
arXiv 2504.14697).

CLPR prove, for the ``usa`` continuity equation on :math:`\mathbb{S}^{d-1}` (:math:`d \ge 2`) from a density
:math:`f_0` in :math:`L^2` with :math:`R_0 = \lvert \int x\, d\mu_0\rvert^2 > 0` and
:math:`\lvert\beta\rvert < \beta_0(\mu_0)`, that :math:`W_2(\mu_t, \delta_{x_\infty}) \le C_0 e^{-t/100}` for
:math:`t \ge T_0` (as restated in the survey arXiv 2512.01868, section "Global rates of clustering in the mean-field
limit"). This module computes the distance to the nearest Dirac mass along the flow by three routes and the
sharp asymptotic rate (derived in ``proofs_notes/meanfield-quantitative-rate.md``):

- :func:`ott_antonsen_w2`: :math:`\beta = 0`, ``usa``, :math:`d = 2` from a wrapped Cauchy (Poisson kernel)
  density of mean resultant :math:`\rho_0`: the Ott-Antonsen reduction is exact,
  :math:`\lvert r_1(t)\rvert^2 = u_0 e^t / (1 - u_0 + u_0 e^t)`, :math:`u_0 = \rho_0^2`, and
  :math:`W_2^2 = 2 (1 - \lvert r_1\rvert)`;
- :func:`lagrangian_circle`: the mean field by characteristics: angles on a uniform grid carrying the masses
  :math:`f_0(\theta_j)\, 2 \pi / m`, moved by the exact field of the weighted measure (its Fourier series
  truncated as in :mod:`numerics.circle.fourier`, RK4); the uniform grid resolves the antipode, where the slow
  mass sits;
- particles (the equal-mass quantiles of :math:`f_0` moved by
  :func:`numerics.meanfield.growth.simulate_circle_angles`) and the Eulerian PDE (:func:`numerics.meanfield.pde.solve_continuity_circle`) in the claims.

The sharp rate (:func:`sharp_w2_rate`): a density positive near the antipode :math:`-x_\infty` loses mass there at
the repulsion rate of the antipode, :math:`e^{-\beta}` (``usa``) or 1 (``sa``), in each of :math:`d - 1`
directions, while mass near :math:`x_\infty` contracts at :math:`e^{\beta}` (``usa``) or 1 (``sa``); so
:math:`W_2` decays like :math:`e^{-\lambda t}` with :math:`\lambda = \min((d - 1) e^{-\beta} / 2, e^{\beta})`
(``usa``) and :math:`\min((d - 1) / 2, 1)` (``sa``). At :math:`\beta = 0`, :math:`d = 2` the Ott-Antonsen
formula gives exactly 1/2. A finite particle system is faster once its last particle has left the antipode (near
time :math:`\log n / e^{-\beta}`): then only the contraction rate remains.

Verified by: meanfield.quantitative-ott-antonsen, meanfield.quantitative-rate.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.common.limits import check_work, steps_of
from numerics.common.stepping import rk4_at_times

MODELS = ("sa", "usa")
#: CLPR's explicit rate in W_2(mu_t, delta) <= C_0 e^{-t/100} (survey arXiv 2512.01868)
CLPR_RATE = 0.01


def sharp_w2_rate(beta: float, model: str, d: int = 2) -> float:
    r""":math:`\lambda = \min((d-1) e^{-\beta}/2, e^{\beta})` (``usa``) or :math:`\min((d-1)/2, 1)` (``sa``): the
    asymptotic decay rate of :math:`W_2(\mu_t, \delta_{x_\infty})` for a density positive near the antipode of
    :math:`x_\infty` (natural time)."""
    model = require_choice(model, "model", MODELS)
    d = require_int(d, "d", minimum=2)
    if model == "sa":
        return min((d - 1) / 2.0, 1.0)
    return min((d - 1) * math.exp(-beta) / 2.0, math.exp(beta))


def wrapped_cauchy_density(theta, rho0: float) -> np.ndarray:
    r"""The Poisson kernel :math:`(1 - \rho_0^2) / (2 \pi (1 - 2 \rho_0 \cos \theta + \rho_0^2))`: density w.r.t.
    :math:`d\theta` with mean resultant :math:`\int e^{i \theta} f = \rho_0` (in :math:`L^2` for
    :math:`\rho_0 < 1`; :math:`R_0 = \rho_0^2`)."""
    theta = np.asarray(theta, float)
    return (1 - rho0 ** 2) / (2 * math.pi * (1 - 2 * rho0 * np.cos(theta) + rho0 ** 2))


def wrapped_cauchy_quantiles(n: int, rho0: float) -> np.ndarray:
    """The n mid-quantiles (j + 1/2)/n of the wrapped Cauchy law on (-pi, pi): its distribution function is
    1/2 + arctan(((1+rho0)/(1-rho0)) tan(theta/2))/pi, so theta = 2 arctan(((1-rho0)/(1+rho0)) tan(pi(u - 1/2)))."""
    u = (np.arange(n) + 0.5) / n
    return 2 * np.arctan((1 - rho0) / (1 + rho0) * np.tan(np.pi * (u - 0.5)))


def _check_rho0(rho0) -> float:
    rho0 = require_real(rho0, "rho0", minimum=0.0, maximum=1.0, strict_minimum=True)
    if rho0 == 1.0:
        raise InputError("rho0 must be < 1 (rho0 = 1 is a Dirac mass)")
    return rho0


def ott_antonsen_w2(t, rho0: float) -> np.ndarray:
    r"""Exact :math:`W_2(\mu_t, \delta_{x_\infty})` for ``usa`` at :math:`\beta = 0` on :math:`\mathbb{S}^1` from
    the wrapped Cauchy density (see module). :math:`1 - \lvert r_1\rvert` is evaluated as
    :math:`(1 - u)/(1 + \sqrt{u})` with :math:`1 - u = (1 - u_0)/(1 - u_0 + u_0 e^t)`, no cancellation."""
    rho0 = _check_rho0(rho0)
    t = np.asarray(t, float)
    u0 = rho0 ** 2
    et = np.exp(t)
    one_minus_u = (1 - u0) / (1 - u0 + u0 * et)
    u = 1 - one_minus_u
    return np.sqrt(2 * one_minus_u / (1 + np.sqrt(u)))


def dirac_distance(theta, weights=None) -> float:
    """min over x of W_2(mu, delta_x) = sqrt(sum_j w_j |x_j - x_hat|^2), x_hat the direction of the mean (the
    nearest Dirac mass); computed as sum_j w_j 4 sin^2((theta_j - phi)/2) (no cancellation near 0)."""
    theta = np.asarray(theta, float)
    w = np.full(theta.size, 1.0 / theta.size) if weights is None else np.asarray(weights, float)
    phi = math.atan2(float(w @ np.sin(theta)), float(w @ np.cos(theta)))
    return float(np.sqrt(w @ (4.0 * np.sin(0.5 * (theta - phi)) ** 2)))


def weighted_angle_velocity(theta: np.ndarray, w: np.ndarray, beta: float, model: str, K: int,
                            coefficients: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Angle velocity of every theta_i under the weighted measure sum_j w_j delta_{theta_j} (sum w = 1): usa
    sum_j w_j e^{beta cos(theta_j - theta_i)} sin(theta_j - theta_i), sa the same divided by
    sum_j w_j e^{beta cos(theta_j - theta_i)}; Fourier series in k <= K (coefficients of
    :func:`numerics.circle.fourier.fourier_coefficients`, scaled by e^{-|beta|}; pass them as ``coefficients``
    in a loop: computing them costs more than the velocity)."""
    from numerics.circle.fourier import fourier_coefficients

    a, b = coefficients if coefficients is not None else fourier_coefficients(beta, K)
    k = np.arange(1, K + 1)
    E = np.exp(1j * np.outer(k, theta))           # (K, n): e^{i k theta_j}
    r = E @ w                                     # weighted order parameters r_k
    Ec = E.conj()
    num = ((b * r) @ Ec).imag
    if model == "usa":
        return num * math.exp(abs(beta))
    den = a[0] + 2.0 * ((a[1:] * r) @ Ec).real
    return num / den


#: stretching of the characteristics grid toward the antipode (smallest spacing about 2 pi a / (m sinh a))
ANTIPODE_STRETCH = 20.0


def antipode_grid(m: int, stretch: float = ANTIPODE_STRETCH) -> tuple[np.ndarray, np.ndarray]:
    """m angles crowding geometrically toward the antipode theta = pi of x_inf = (1, 0), and their spacing d theta:
    theta = pi + pi sinh(a u) / sinh(a) at the m mid-points u of (-1, 1) (a = ``stretch``)."""
    u = -1.0 + (2.0 * np.arange(m) + 1.0) / m
    a = stretch
    theta = np.pi + np.pi * np.sinh(a * u) / math.sinh(a)
    dtheta = np.pi * a * np.cosh(a * u) / math.sinh(a) * (2.0 / m)
    return theta, dtheta


def lagrangian_circle(beta: float, model: str, density: Callable[[np.ndarray], np.ndarray], grid: int,
                      t_end: float, dt: float, saves: int = 101, K: int | None = None,
                      stretch: float = ANTIPODE_STRETCH,
                      progress: Callable[[float, float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The mean field from a density on :math:`\mathbb{S}^1` by characteristics: ``grid`` angles of
    :func:`antipode_grid` (for a density symmetric about :math:`\theta = 0`, whose limit is
    :math:`x_\infty = (1, 0)`: the slow mass sits at the antipode) with masses
    :math:`\text{density}(\theta_j)\, d\theta_j`, moved by the exact field of that weighted measure (RK4, steps
    :math:`\le` ``dt``). Returns (times ``(saves,)``, :math:`W_2` to the nearest Dirac ``(saves,)``). ``K`` defaults to
    :func:`numerics.circle.fourier.harmonics_for_tolerance` at 1e-13."""
    from numerics.circle.fourier import fourier_coefficients, harmonics_for_tolerance

    model = require_choice(model, "model", MODELS)
    beta = require_real(beta, "beta", minimum=-50.0, maximum=50.0)
    grid = require_int(grid, "grid", minimum=8)
    t_end = require_real(t_end, "t_end", minimum=0.0)
    dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
    saves = require_int(saves, "saves", minimum=2)
    K = K or harmonics_for_tolerance(beta, 1e-13, model=model)
    steps = steps_of(t_end, dt)
    check_work(4.0 * (steps + saves) * (8.0 * grid * K + 1e5), f"the mean-field characteristics ({grid} angles, "
               f"{K} harmonics, t = {t_end:g})")
    theta, dtheta = antipode_grid(grid, stretch)
    w = np.asarray(density(theta), float) * dtheta
    if w.shape != theta.shape or np.any(w < 0) or not w.sum() > 0:
        raise InputError("the density must be non-negative with a positive sum on the grid")
    w = w / w.sum()
    coefficients = fourier_coefficients(beta, K)
    f = lambda th: weighted_angle_velocity(th, w, beta, model, K, coefficients)  # noqa: E731
    times = np.linspace(0.0, t_end, saves)
    W = [dirac_distance(theta, w)]
    for t, theta in rk4_at_times(f, theta, times, dt):
        W.append(dirac_distance(theta, w))
        if progress is not None:
            progress(t, t_end)
    return times, np.array(W)


def density_dirac_distance(theta: np.ndarray, density: np.ndarray) -> np.ndarray:
    """W_2 to the nearest Dirac of densities on a uniform grid (rows of ``density``), by the rectangle rule
    (spectrally accurate for smooth periodic densities)."""
    theta = np.asarray(theta, float)
    rho = np.atleast_2d(np.asarray(density, float))
    h = 2 * math.pi / theta.size
    c, s = rho @ np.cos(theta) * h, rho @ np.sin(theta) * h
    phi = np.arctan2(s, c)
    return np.sqrt(np.sum(rho * 4.0 * np.sin(0.5 * (theta[None, :] - phi[:, None])) ** 2, axis=1) * h)


def fitted_rate(times: np.ndarray, W: np.ndarray, window: tuple[float, float]) -> dict:
    """Least-squares slope of log W over ``window``: the decay rate lambda (W ~ e^{-lambda t}) with its standard
    error and the points used."""
    times, W = np.asarray(times, float), np.asarray(W, float)
    sel = (times >= window[0]) & (times <= window[1]) & (W > 0)
    if sel.sum() < 3:
        raise InputError(f"the fit window {window} holds fewer than 3 positive points")
    x, y = times[sel], np.log(W[sel])
    spread = float(np.sum((x - x.mean()) ** 2))
    if not spread > 0:  # times too close for float64 (t_end near the underflow threshold): no slope to fit
        raise InputError(f"the fit window {window} holds no spread of times that float64 can resolve "
                         f"(is t_end too small?)")
    X = np.column_stack([np.ones_like(x), x])
    coef, res, *_ = np.linalg.lstsq(X, y, rcond=None)
    dof = max(1, x.size - 2)
    s2 = float(np.sum((y - X @ coef) ** 2)) / dof
    se = math.sqrt(s2 / spread)
    return {"rate": float(-coef[1]), "stderr": se, "points": int(sel.sum()), "window": [float(window[0]),
                                                                                      float(window[1])]}
