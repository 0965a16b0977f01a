r"""Lost in the middle: the retrieval profile of causal attention with ALiBi on the circle, and its threshold.

Model (Duerinckx, Geshkovski, Rossi, arXiv 2605.09213; we read the abstract and the authors' public scripts, not
the full text): :math:`N` tokens :math:`\theta_1, \dots, \theta_N` on the circle, iid uniform at :math:`t = 0`, token
:math:`j` at position :math:`s = j/N` attends causally to the earlier tokens with ALiBi weights
:math:`q_{jm} = e^{-\lambda (j - m)/N}` normalised over :math:`m`:

.. math::

    \frac{d\theta_j}{dt} = \frac{\sum_{m < j} q_{jm} W'(\theta_j - \theta_m)}{\sum_{m < j} q_{jm}}, \qquad
    W(u) = e^{\beta\cos u}.

The uniform measure is stationary; the fluctuations are of order :math:`N^{-1/2}` and the correlations of order
:math:`1/N`. At leading order the mode-:math:`n` correlation
:math:`c_n(t; j, k) = \mathbb{E}[e^{in(\theta_j(t) - \theta_k(0))}]` (:math:`k < j`) obeys the linear triangular
system (our derivation, ``proofs_notes/architectures-lost-in-the-middle.md``)

.. math::

    \frac{d}{dt} c_n(j, k) = a_n \sum_{m < j} w_{jm} c_n(m, k), \qquad c_n(k, k) = 1, \qquad a_n = n^2 I_n(\beta),

with :math:`w_{jm}` the normalised weights: :math:`c_n(t) = \exp(t a_n W)` (:func:`discrete_correlation`). In the
kinetic limit :math:`N c_n(t; j, k) \to G_n(t, s; \sigma)` solves the Volterra equation in the position label

.. math::

    \begin{aligned}
    \frac{d}{dt} G &= a_n \Bigl[\kappa(s, \sigma) + \int_\sigma^s \kappa(s, \tau)\, G(t, \tau; \sigma)\, d\tau\Bigr], \\
    \kappa(s, \tau) &= \frac{\lambda e^{\lambda\tau}}{e^{\lambda s} - 1},
    \end{aligned}

whose :math:`m`-fold iterated kernels are
:math:`K_m(s, \sigma) = \lambda e^{\lambda\sigma} Y^{m - 1} / ((e^{\lambda s} - 1)(m-1)!)`,
:math:`Y = \log((e^{\lambda s} - 1)/(e^{\lambda\sigma} - 1))`; summing the series at :math:`s = 1`:

.. math::

    \begin{aligned}
    G_n(t, 1; \sigma) &= \kappa(1, \sigma)\, \psi_{a_n t}(Y_\lambda(\sigma)), \qquad
    \psi_c(y) = \sum_k \frac{c^{k+1} y^k}{k!\,(k+1)!} = \sqrt{c / y}\, I_1(2\sqrt{c y}), \\
    Y_\lambda(\sigma) &= \log\frac{e^\lambda - 1}{e^{\lambda\sigma} - 1}.
    \end{aligned}

The retrieval profile is :math:`S_t(\sigma) = \sum_{n=1}^{n_{\max}} \omega_n G_n(t, 1; \sigma)` with the window
:math:`\omega_n = e^{-\pi^2 n^2 / (2 M^2)}` (the Fourier coefficients of a wrapped Gaussian of width :math:`\pi/M`).
It diverges at :math:`\sigma \to 0` (primacy) and its slope at :math:`\sigma = 1` is

.. math::

    \kappa(1,1)\, t \Bigl[\lambda \sum \omega_n a_n - \frac{t \lambda \sum \omega_n a_n^2}{2(1 - e^{-\lambda})}\Bigr],

positive (recency, a U shape) exactly for :math:`t < t_{\text{crit}}`,

.. math::

    t_{\text{crit}} = 2 (1 - e^{-\lambda}) \frac{\sum_n \omega_n a_n}{\sum_n \omega_n a_n^2}.

Time units: ``time="paper"`` uses the force :math:`W'` (rates :math:`a_n = n^2 I_n(\beta)`); attnflow's ``sa`` with
a causal mask and ALiBi has, at leading order, the force :math:`W'/(\beta I_0(\beta))` (the softmax normaliser
averages to :math:`I_0(\beta)`), so ``time="sa"`` uses :math:`a_n = n^2 I_n(\beta) / (\beta I_0(\beta))` and
:math:`t_{\text{crit}}` is :math:`\beta I_0(\beta)` times larger.

Routes (claim architectures.lost-in-the-middle): the closed form (Bessel) against the series, the finite-:math:`N`
matrix exponential, the masked mean field of :mod:`numerics.architectures.masked_meanfield` (ALiBi kernel, linear
response of :math:`M` curves) and the causal ALiBi particle system of :mod:`numerics.core` (Monte Carlo over iid
uniform starts with the exact estimator
:math:`\mathbb{E}[\partial\theta_N(t)/\partial\theta_k(0)\, e^{in(\theta_N(t) - \theta_k(0))}] = c_n(t; N, k)`,
integration by parts in :math:`\theta_k(0)`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm
from scipy.special import iv, ive

from numerics.common.errors import InputError, require_choice, require_int, require_real

#: the authors' script: lambda = 1, M = 8, n_max = 20
DEFAULT_LAMBDA, DEFAULT_M, DEFAULT_NMAX = 1.0, 8.0, 20
TIME_UNITS = ("paper", "sa")


def validate(beta: float, lam: float, M: float, n_max: int) -> tuple[float, float, float, int]:
    """(beta, lambda, M, n_max) checked: beta > 0, lambda >= 0, M > 0, 1 <= n_max <= 200."""
    beta = require_real(beta, "beta", minimum=0.0, strict_minimum=True, maximum=700.0)
    lam = require_real(lam, "lambda", minimum=0.0, maximum=700.0)
    M = require_real(M, "M", minimum=0.0, strict_minimum=True)
    n_max = require_int(n_max, "n_max", minimum=1, maximum=200)
    return beta, lam, M, n_max


def window(n_max: int, M: float) -> np.ndarray:
    """omega_n = exp(-pi^2 n^2 / (2 M^2)), n = 1, ..., n_max."""
    n = np.arange(1, n_max + 1)
    return np.exp(-0.5 * (np.pi * n / M) ** 2)


def mode_rates(beta: float, n_max: int, time: str = "paper") -> np.ndarray:
    """a_n = n^2 I_n(beta) (``paper``) or n^2 I_n(beta) / (beta I_0(beta)) (``sa``: attnflow's softmax time)."""
    time = require_choice(time, "time", TIME_UNITS)
    n = np.arange(1, n_max + 1)
    if time == "paper":
        return n**2 * iv(n, beta)
    return n**2 * (ive(n, beta) / ive(0, beta)) / beta


def label_kernel(s, sigma, lam: float) -> np.ndarray:
    """kappa(s, sigma) = lambda e^{lambda sigma} / (e^{lambda s} - 1) for sigma < s (lambda = 0: 1/s)."""
    s, sigma = np.asarray(s, float), np.asarray(sigma, float)
    if lam == 0.0:
        return 1.0 / s + 0.0 * sigma
    return lam * np.exp(lam * (sigma - s)) / -np.expm1(-lam * s)


def y_lambda(sigma, lam: float) -> np.ndarray:
    """Y_lambda(sigma) = log((e^lambda - 1)/(e^{lambda sigma} - 1)) >= 0 (lambda = 0: log(1/sigma))."""
    sigma = np.asarray(sigma, float)
    if lam == 0.0:
        return -np.log(sigma)
    return np.log(np.expm1(lam) / np.expm1(lam * sigma))


def psi(c, y) -> np.ndarray:
    """psi_c(y) = sum_k c^{k+1} y^k / (k! (k+1)!) = sqrt(c/y) I_1(2 sqrt(c y)) (c, y >= 0; psi_c(0) = c).

    Evaluated as c ive(1, z) e^z / (z/2) with z = 2 sqrt(c y) (overflow-safe scaling), and by the series for
    z < 1e-4 (where the quotient loses digits).
    """
    c, y = np.broadcast_arrays(np.asarray(c, float), np.asarray(y, float))
    z = 2.0 * np.sqrt(c * y)
    out = np.empty(z.shape)
    small = z < 1e-4
    cy = c[small] * y[small]
    out[small] = c[small] * (1.0 + cy / 2.0 + cy**2 / 12.0)
    zz = z[~small]
    out[~small] = c[~small] * ive(1, zz) * np.exp(zz) / (zz / 2.0)
    return out


def psi_series(c: float, y: float, terms: int = 400) -> float:
    """psi_c(y) by its defining series (an independent path for the checks; exact rationals are not needed)."""
    term, total = float(c), float(c)
    for k in range(terms):
        term *= c * y / ((k + 1) * (k + 2))
        total += term
        if abs(term) <= 1e-17 * abs(total):
            break
    return total


def correlation(t: float, sigma, a: float, lam: float) -> np.ndarray:
    """G(t, 1; sigma) = kappa(1, sigma) psi_{a t}(Y_lambda(sigma)): N x the correlation of the last token at time t
    with the token at position sigma in (0, 1) at time 0, one Fourier mode of rate a (module docstring)."""
    return label_kernel(1.0, sigma, lam) * psi(a * t, y_lambda(sigma, lam))


def profile(sigma, t: float, beta: float, lam: float = DEFAULT_LAMBDA, M: float = DEFAULT_M,
            n_max: int = DEFAULT_NMAX, time: str = "paper") -> np.ndarray:
    r""":math:`S_t(\sigma) = \sum_{n \le n_{\max}} \omega_n G_n(t, 1; \sigma)`: the retrieval profile over source
    positions :math:`\sigma`."""
    beta, lam, M, n_max = validate(beta, lam, M, n_max)
    sigma = np.asarray(sigma, float)
    if np.any(sigma <= 0) or np.any(sigma > 1):
        raise InputError("source positions sigma must lie in (0, 1]")
    a, w = mode_rates(beta, n_max, time), window(n_max, M)
    with np.errstate(over="ignore", invalid="ignore"):
        out = sum(wn * correlation(t, sigma, an, lam) for an, wn in zip(a, w))
    if not np.all(np.isfinite(out)):
        raise InputError(f"the profile overflows float64 at t = {t:g}, beta = {beta:g} (rates up to {np.max(a):.3g}): "
                         "take a smaller t or beta")
    return out


def threshold(beta: float, lam: float = DEFAULT_LAMBDA, M: float = DEFAULT_M, n_max: int = DEFAULT_NMAX,
              time: str = "paper") -> float:
    r""":math:`t_{\text{crit}} = 2 (1 - e^{-\lambda}) \sum \omega_n a_n / \sum \omega_n a_n^2` (0 for
    :math:`\lambda = 0`: no recency)."""
    beta, lam, M, n_max = validate(beta, lam, M, n_max)
    b, w = _scaled_rates(beta, n_max, time), window(n_max, M)
    # a_n = e^beta b_n in paper time (b_n = n^2 ive(n, beta)): the ratio is formed without overflow
    scale = np.exp(-beta) if time == "paper" else 1.0
    return float(-2.0 * np.expm1(-lam) * scale * np.sum(w * b) / np.sum(w * b * b))


def _scaled_rates(beta: float, n_max: int, time: str) -> np.ndarray:
    """a_n e^{-beta} (``paper``, finite for every beta) or a_n (``sa``, already finite)."""
    n = np.arange(1, n_max + 1)
    return n**2 * ive(n, beta) if time == "paper" else mode_rates(beta, n_max, time)


def right_end_slope(t: float, beta: float, lam: float = DEFAULT_LAMBDA, M: float = DEFAULT_M,
                    n_max: int = DEFAULT_NMAX, time: str = "paper") -> float:
    """dS_t/dsigma at sigma = 1 from the closed form: kappa(1, 1) t lambda (sum w a - t sum w a^2/(2(1 - e^{-lambda})))."""
    beta, lam, M, n_max = validate(beta, lam, M, n_max)
    b, w = _scaled_rates(beta, n_max, time), window(n_max, M)
    # c = t e^beta (paper time) multiplies the scaled rates b_n: a_n t = c b_n, formed without overflow
    c = float(np.exp(beta + np.log(t))) if time == "paper" else float(t)
    if lam == 0.0:
        return float(-0.5 * c * c * np.sum(w * b * b))
    return float(label_kernel(1.0, 1.0, lam) * lam * c * (np.sum(w * b) + c * np.sum(w * b * b) / (2.0 * np.expm1(-lam))))


def profile_shape(sigma: np.ndarray, values: np.ndarray) -> dict:
    """Where the profile has its minimum, and whether it is U-shaped (interior minimum, both ends higher)."""
    i = int(np.argmin(values))
    interior = 0 < i < values.size - 1
    local_minima = int(np.sum((values[1:-1] < values[:-2]) & (values[1:-1] < values[2:])))
    return {"argmin": float(sigma[i]), "minimum": float(values[i]), "u_shaped": bool(interior),
            "interior_local_minima": local_minima, "right_end": float(values[-1])}


# -- finite N: the matrix exponential of the attention weights ------------------------------------------------------
def attention_weights(N: int, beta: float, lam: float, model: str = "paper") -> np.ndarray:
    """W (N x N), strictly lower triangular: the leading-order weights of the linear system (module docstring).

    ``paper``: w_jm = q_jm / sum_{m' < j} q_jm' (the authors' script: token j attends to m < j).
    ``sa``: attnflow's causal softmax with ALiBi (token j attends to m <= j, labels j/N): the normaliser averages to
    I_0(beta) sum_{m < j} q_jm + e^beta (the token itself, at distance 0), w_jm = I_0(beta) q_jm / that.
    """
    N = require_int(N, "N", minimum=2, maximum=20000)
    j = np.arange(N)
    Q = np.exp(-lam * (j[:, None] - j[None, :]) / N) * (j[None, :] < j[:, None])
    if model == "paper":
        Z = Q.sum(axis=1, keepdims=True)
        Z[0] = 1.0
        return Q / Z
    I0 = ive(0, beta)  # e^{-beta} I_0(beta): the normaliser in units of e^beta
    return I0 * Q / (I0 * Q.sum(axis=1, keepdims=True) + 1.0)


def discrete_correlation(N: int, t: float, beta: float, lam: float, a: float, model: str = "paper") -> np.ndarray:
    """N [exp(t a W)]_{N, k}, k = 1..N-1: the finite-N leading-order N c_n(t; N, k) (labels sigma_k = k/N)."""
    W = attention_weights(N, beta, lam, model)
    return N * expm(t * a * W)[-1, :-1]


# -- the masked mean field: linear response of M curves ------------------------------------------------------------
def masked_meanfield_response(t: float, beta: float, lam: float, n: int, bump_centres, bump_width: float = 0.12,
                              curves: int = 16, N: int = 48, eps: float = 1e-5, kind: str = "sa") -> list[dict]:
    """Linear response of the masked mean field (:func:`numerics.architectures.masked_meanfield.solve_masked_meanfield`
    with the ALiBi label kernel) around the uniform measure, against the closed form.

    The uniform measure on S^1 is represented by ``curves`` constant curves at the angles 2 pi a / curves (weights
    equal; exact for the modes |n| < curves up to aliasing terms I_{curves - n}(beta)). Each curve is displaced by
    +-eps phi(s) sin(n theta_a) with phi a Gaussian bump of width ``bump_width`` centred at c; the central difference
    of the displacement at s = 1 projected on sin(n theta_a) is the response phi(t, 1), which the linearised
    equation predicts as phi(1) + int_0^1 G_n(t, 1; sigma) phi(sigma) d sigma (quadrature of the closed form,
    :func:`correlation` in attnflow's ``sa`` time). Returns one row per centre.
    """
    from scipy.integrate import quad

    from numerics.architectures.masked_meanfield import solve_masked_meanfield

    angles = 2.0 * np.pi * np.arange(curves) / curves
    a_n = mode_rates(beta, n, "sa" if kind == "sa" else "paper")[-1]
    rows = []
    for c in bump_centres:
        phi = (lambda s, c=c: np.exp(-0.5 * ((np.asarray(s) - c) / bump_width) ** 2))
        finals = []
        for sign in (1.0, -1.0):
            def initial(s, sign=sign):
                th = angles[:, None] + sign * eps * phi(s)[None, :] * np.sin(n * angles)[:, None]
                return np.stack([np.cos(th), np.sin(th)], axis=-1)

            sol = solve_masked_meanfield(initial, t, beta, kind=kind, N=N, alibi=lam)
            end = sol.at(np.array([1.0]))[:, 0, :]
            finals.append(np.arctan2(end[:, 1], end[:, 0]))
        disp = np.angle(np.exp(1j * (finals[0] - finals[1]))) / (2.0 * eps)
        measured = float(2.0 * np.mean(disp * np.sin(n * angles)))
        integral, _ = quad(lambda x: float(correlation(t, x, a_n, lam)) * float(phi(x)), 0.0, 1.0, limit=200,
                           epsabs=1e-12, epsrel=1e-11)
        expected = float(phi(1.0)) + integral
        rows.append({"centre": float(c), "measured": measured, "expected": expected,
                     "relative_error": abs(measured - expected) / abs(expected)})
    return rows


# -- the particle system: Monte Carlo with the exact derivative estimator -------------------------------------------
def angle_velocity_and_jacobian(theta: np.ndarray, beta: float, lam: float, labels: np.ndarray):
    """Causal sa with ALiBi on S^1 in angles, batched: theta (R, N) -> (v (R, N), A (R, N, N) = dv/dtheta).

    v_j = sum_{m <= j} p_jm sin(theta_m - theta_j), p_jm = softmax_m(beta cos(theta_j - theta_m) - lambda|p_j - p_m|)
    (the tangential component of :func:`numerics.core.blocks.block_velocity`); for m != j
    dv_j/dtheta_m = p_jm [cos u_jm - beta sin u_jm (sin u_jm - v_j)], u_jm = theta_m - theta_j, and the diagonal
    makes every row sum to zero (rotation invariance).
    """
    R, N = theta.shape
    u = theta[:, None, :] - theta[:, :, None]  # u[r, j, m] = theta_m - theta_j
    mask = np.tril(np.ones((N, N), dtype=bool))
    L = beta * np.cos(u) - lam * np.abs(labels[:, None] - labels[None, :])
    L = np.where(mask, L, -np.inf)
    L -= L.max(axis=2, keepdims=True)
    P = np.exp(L)
    P /= P.sum(axis=2, keepdims=True)
    su, cu = np.sin(u), np.cos(u)
    v = np.einsum("rjm,rjm->rj", P, su)
    A = P * (cu - beta * su * (su - v[:, :, None]))
    idx = np.arange(N)
    A[:, idx, idx] = 0.0
    A[:, idx, idx] = -A.sum(axis=2)
    return v, A


def particle_tangent(theta0: np.ndarray, t_end: float, dt: float, beta: float, lam: float,
                     labels: np.ndarray, progress: Callable[[float, float], None] | None = None):
    """RK4 on (theta, J), J = dtheta(t)/dtheta(0) (the exact derivative of the RK4 map), batched over R runs.

    Returns (theta(t_end) (R, N), J[:, -1, :] (R, N): the last token's row)."""
    R, N = theta0.shape
    steps = max(1, int(np.ceil(t_end / dt - 1e-12)))
    h = t_end / steps
    th = theta0.copy()
    J = np.broadcast_to(np.eye(N), (R, N, N)).copy()
    for k in range(steps):
        v1, A1 = angle_velocity_and_jacobian(th, beta, lam, labels)
        K1 = A1 @ J
        v2, A2 = angle_velocity_and_jacobian(th + 0.5 * h * v1, beta, lam, labels)
        K2 = A2 @ (J + 0.5 * h * K1)
        v3, A3 = angle_velocity_and_jacobian(th + 0.5 * h * v2, beta, lam, labels)
        K3 = A3 @ (J + 0.5 * h * K2)
        v4, A4 = angle_velocity_and_jacobian(th + h * v3, beta, lam, labels)
        K4 = A4 @ (J + h * K3)
        th = th + h / 6.0 * (v1 + 2 * v2 + 2 * v3 + v4)
        J = J + h / 6.0 * (K1 + 2 * K2 + 2 * K3 + K4)
        if progress is not None:
            progress(k + 1, steps)
    return th, J[:, -1, :]


@dataclass(frozen=True)
class ParticleProfile:
    """Monte Carlo estimate of N-scaled correlations of the last token with the tokens in bins of positions."""

    centres: np.ndarray   # bin centres (mean sigma of the tokens in the bin)
    mean: np.ndarray      # estimate of sum_n omega_n G_n(t, 1; sigma) (or one mode) per bin
    stderr: np.ndarray    # standard error over the runs
    runs: int
    N: int


def particle_profile(N: int, t: float, beta: float, lam: float, *, runs: int = 16, bins: int = 8,
                     M: float = DEFAULT_M, n_max: int = DEFAULT_NMAX, modes=None, dt: float = 0.05, seed: int = 0,
                     progress: Callable[[float, float], None] | None = None) -> ParticleProfile:
    r"""The retrieval profile of the causal ALiBi ``sa`` particle system (attnflow time; labels :math:`j/N`, slope
    :math:`\lambda`).

    Estimator (exact at finite :math:`N`, integration by parts in the uniform :math:`\theta_k(0)`): for each run and
    source :math:`k < N`, :math:`N J_k \sum_n \omega_n \cos(n (\theta_N(t) - \theta_k(0)))`,
    :math:`J_k = \partial\theta_N(t) / \partial\theta_k(0)`; averaged over the tokens of each bin (tokens
    :math:`1, \dots, N-1` split into ``bins`` consecutive groups) and over ``runs`` independent iid uniform starts
    (``numpy.random.default_rng(seed)``). ``modes`` (a list of :math:`n`) replaces the window by those modes with
    weight 1 (e.g. ``[1]`` for :math:`G_1` alone). Work: ``runs`` :math:`\times` steps :math:`\times\, 4 N^3`.
    """
    N = require_int(N, "N", minimum=4, maximum=512)
    runs = require_int(runs, "runs", minimum=2, maximum=100000)
    bins = require_int(bins, "bins", minimum=1, maximum=N - 1)
    rng = np.random.default_rng(seed)
    labels = np.arange(1, N + 1) / N
    if modes is None:
        ns, ws = np.arange(1, n_max + 1), window(n_max, M)
    else:
        ns, ws = np.asarray(modes, int), np.ones(len(modes))
    groups = np.array_split(np.arange(N - 1), bins)
    per_run = np.empty((runs, bins))
    batch = 8
    done = 0
    while done < runs:
        r = min(batch, runs - done)
        theta0 = rng.uniform(0.0, 2.0 * np.pi, size=(r, N))
        sub = None if progress is None else (lambda k, K, base=done: progress(base + r * k / K, runs))
        th, row = particle_tangent(theta0, t, dt, beta, lam, labels, sub)
        diff = th[:, -1:] - theta0[:, :-1]
        kernel = np.sum(ws[None, None, :] * np.cos(ns[None, None, :] * diff[:, :, None]), axis=2)
        est = N * row[:, :-1] * kernel
        for b, g in enumerate(groups):
            per_run[done:done + r, b] = est[:, g].mean(axis=1)
        done += r
    centres = np.array([labels[g].mean() for g in groups])
    return ParticleProfile(centres, per_run.mean(axis=0), per_run.std(axis=0, ddof=1) / np.sqrt(runs), runs, N)


#: public names (``attnflow.retrieval_profile``, ``attnflow.lost_in_the_middle_threshold``)
retrieval_profile = profile
lost_in_the_middle_threshold = threshold
