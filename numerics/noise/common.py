"""Integrators of self-attention with common noise: every token driven by the same matrix Brownian motion.

The SDE (Stratonovich; Engel and Shalova, arXiv 2603.06187, for v = 0):

    dx_i = v_i(X) dt - sigma P_{x_i} o dQ_t x_i,

one increment dQ for all n tokens of a system (an ensemble member has its own). The law of Q
(:mod:`theory.common_noise`, where the constants below are derived):

- ``goe``: dQ = (dB + dB^T)/sqrt(2), B a d x d matrix of independent standard Brownian motions
  (E[dQ_ab dQ_ce] = (delta_ac delta_be + delta_ae delta_bc) dt);
- ``values``: dQ = dB / sqrt(d) (Gaussian value-matrix increments with the RMS normalisation E|dQ x|^2 = |x|^2 dt).

One token then performs Brownian motion on S^{d-1} with generator c Lap_S, c = sigma^2/2 (goe), sigma^2/(2d)
(values); the Ito form has the extra drift -c (d-1) x_i (normal to the sphere).

Schemes (xi a standard normal (d, d) array per step, dQ = sqrt(h) * law(xi), eta_i = -sigma P_{x_i} dQ x_i):

- ``projected-em`` (method ``layer``): x <- (x + h v(x) + eta) / |...|. As for the per-token noise, the
  renormalisation supplies the Ito-Stratonovich correction (E|eta|^2 = 2 c (d-1) h); weak order 1, strong 1/2.
- ``heun`` (method ``rk4``): the stochastic Heun scheme of the Stratonovich form, predictor
  p = (x + h v(x) + eta(x)) / |...|, corrector x <- (x + h (v(x) + v(p))/2 + (eta(x) + eta(p))/2) / |...|, the same
  dQ in both stages; weak order 1, strong 1/2 (the noise is not commutative for d >= 3). Its weak error
  constant in E<e, x(t)> is larger than projected Euler-Maruyama's (measured: 0.036 against 0.014 at h = 0.025,
  goe, d = 3, sigma = 0.8, t = 1); it is the scheme of the Stratonovich form as written.
- ``ito-em`` (API only, :func:`integrate_common`): Euler-Maruyama on the Ito form
  x <- x + h (v(x) - c (d-1) x) + eta, not renormalised: the check that the derived correction is the right one
  (without it the mean norm grows like 1 + 2c(d-1)t).

Verified by: noise.common-noise-* claims (numerics.noise.claims_common), tests/numerics/test_common_noise.py.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_choice, require_real
from numerics.common.limits import steps_of
from numerics.core.integrators import renormalize

#: laws of the matrix Brownian motion (the Model's ``common_noise_law``)
LAWS = ("goe", "values")
#: scheme -> (weak order, strong order)
METHODS = {"projected-em": (1, 0.5), "heun": (1, 0.5), "ito-em": (1, 0.5)}
#: the deterministic ``Solver.method`` a common-noise run maps to each scheme
FROM_SOLVER_METHOD = {"layer": "projected-em", "rk4": "heun"}
SCHEMES = {"projected-em": "projected Euler-Maruyama x <- (x + h v - sigma P_x dQ x)/|.|, one dQ for all tokens "
                           "(the renormalisation is the Stratonovich correction)",
           "heun": "stochastic Heun on the Stratonovich form, one dQ for all tokens, renormalised each stage",
           "ito-em": "Euler-Maruyama on the Ito form x <- x + h (v - c (d-1) x) - sigma P_x dQ x (not renormalised)"}


def diffusion_constant(law: str, d: int, sigma: float) -> float:
    """c of the one-point generator c Lap_S (:func:`theory.common_noise.diffusion_constant`)."""
    law = require_choice(law, "common noise law", LAWS)
    return sigma ** 2 / 2 if law == "goe" else sigma ** 2 / (2 * d)


def angle_coefficient(law: str, d: int, sigma: float) -> float:
    """a of the two-point generator a sin^2(theta) d^2/dtheta^2; the top Lyapunov exponent is -a."""
    law = require_choice(law, "common noise law", LAWS)
    return 2 * sigma ** 2 if law == "goe" else sigma ** 2 / d


def increment(law: str, xi: np.ndarray, h: float) -> np.ndarray:
    """dQ over a step h from standard normal ``xi`` of shape (..., d, d): one matrix per system."""
    if law == "goe":
        return np.sqrt(h / 2.0) * (xi + np.swapaxes(xi, -1, -2))
    return np.sqrt(h / xi.shape[-1]) * xi


def kick(X: np.ndarray, dQ: np.ndarray, sigma, exact_members: bool = True) -> np.ndarray:
    """-sigma P_x dQ x for every row x of X ((n, d) with dQ (d, d), or (B, n, d) with dQ (B, d, d)).

    A batch is done member by member with the single system's operations (``exact_members``), so that a
    member's increment equals its single run's bit for bit (a stacked matmul may take another BLAS path); the
    Monte Carlo studies below, with many small systems, use one einsum instead. ``sigma`` is a number.
    """
    if X.ndim == 3 and exact_members:
        QX = np.stack([X[b] @ dQ[b].T for b in range(X.shape[0])])
    elif X.ndim == 3:
        QX = np.einsum("bae,bie->bia", dQ, X)
    else:
        QX = X @ dQ.T
    return -sigma * (QX - np.sum(X * QX, axis=-1, keepdims=True) * X)


def _drift(field, X, t):
    return field(X) if t is None else field(X, t)


def step_projected_em(field, X, h, sigma, dQ, t=None, c=0.0, exact=True):
    """Projected Euler-Maruyama with the common increment ``dQ``."""
    return renormalize(X + h * _drift(field, X, t) + kick(X, dQ, sigma, exact))


def step_heun(field, X, h, sigma, dQ, t=None, c=0.0, exact=True):
    """Stochastic Heun (Stratonovich): predictor and corrector with the same ``dQ``, renormalised."""
    v0, k0 = _drift(field, X, t), kick(X, dQ, sigma, exact)
    P = renormalize(X + h * v0 + k0)
    v1 = _drift(field, P, None if t is None else t + h)
    return renormalize(X + 0.5 * h * (v0 + v1) + 0.5 * (k0 + kick(P, dQ, sigma, exact)))


def step_ito_em(field, X, h, sigma, dQ, t=None, c=0.0, exact=True):
    """Euler-Maruyama on the Ito form, drift v - c (d-1) x, no renormalisation (``c`` the diffusion constant).

    The coefficients are evaluated at x/|x| (extended off the sphere with degree 0): the cubic extension
    P_x dQ x makes plain Euler-Maruyama unstable once |x| drifts. |x| then moves by O(h) per step with zero
    mean (the correction cancels the mean of |eta|^2), and by + 2 c (d-1) h per step if the correction is
    dropped: the numerical check of the derived correction."""
    d = X.shape[-1]
    U = renormalize(X)
    return X + h * (_drift(field, U, t) - c * (d - 1) * U) + kick(U, dQ, sigma, exact)


_STEPS = {"projected-em": step_projected_em, "heun": step_heun, "ito-em": step_ito_em}


def common_steppers(sigma, law: str, rng, scheme: str) -> dict:
    """``{scheme: step(field, X, h, t=None)}`` for :func:`numerics.core.integrators.integrate`.

    ``rng`` has ``standard_normal(shape)``: a NumPy generator for one system ((d, d) per step), or an ensemble's
    :class:`numerics.core.members.MemberStreams` ((B, d, d): member b's draws are those of its single run).
    """
    scheme = require_choice(scheme, "common-noise scheme", tuple(METHODS))
    law = require_choice(law, "common noise law", LAWS)
    sigma = require_real(sigma, "common noise", minimum=0.0)
    step = _STEPS[scheme]

    def stepper(field, X, h, t=None):
        d = X.shape[-1]
        xi = rng.standard_normal(X.shape[:-2] + (d, d))
        c = diffusion_constant(law, d, sigma)
        return step(field, X, h, sigma, increment(law, xi, h), t=t, c=c)

    return {scheme: stepper}


from numerics.noise.sde import zero_field  # noqa: E402 - the one zero field of both noises


def integrate_common(field, X0: np.ndarray, t_end: float, dt: float, sigma: float, law: str = "goe", *,
                     seed=0, scheme: str = "projected-em", save_every: int = 1):
    """Fixed-step integration with common noise; ``(times, states, stats)``.

    ``field`` is ``f(X)`` or None (no attention). N = ceil(t_end/dt) equal steps; each step draws one standard
    normal (d, d) array from ``seed`` (an int or a generator), as :func:`numerics.core.simulate.simulate` does
    for ``Model(common_noise=sigma)``.
    """
    from numerics.core.integrators import integrate

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    steppers = common_steppers(sigma, law, rng, scheme)
    times, states, stats = integrate(zero_field if field is None else field, np.asarray(X0, dtype=float), t_end,
                                     scheme, dt=dt, save_every=save_every, steppers=steppers)
    weak, strong = METHODS[scheme]
    stats.update({"scheme": scheme, "weak_order": weak, "strong_order": strong})
    return times, states, stats


def brownian_paths(steps: int, d: int, samples: int, seed) -> np.ndarray:
    """Standard normal increments (steps, samples, d, d) for a strong-order study (one path per sample)."""
    return np.random.default_rng(seed).standard_normal((steps, samples, d, d))


def run_paths(X0: np.ndarray, t: float, xi: np.ndarray, sigma: float, law: str, scheme: str,
              coarsen: int = 1) -> np.ndarray:
    """No attention: ``samples`` independent systems X0 (samples, n, d) driven by the fine increments ``xi``.

    With ``coarsen`` = k, k consecutive fine normals are summed into one coarse increment (divided by sqrt(k)):
    the same Brownian path at step k h, for strong errors against the fine run.
    """
    fine = xi.shape[0]
    if fine % coarsen:
        raise InputError(f"coarsen={coarsen} must divide the {fine} fine steps")
    steps = fine // coarsen
    h = t / steps
    step = _STEPS[require_choice(scheme, "common-noise scheme", tuple(METHODS))]
    c = diffusion_constant(law, X0.shape[-1], sigma)
    X = np.array(X0, dtype=float)
    for k in range(steps):
        z = xi[k * coarsen:(k + 1) * coarsen].sum(axis=0) / np.sqrt(coarsen)
        X = step(zero_field, X, h, sigma, increment(law, z, h), c=c, exact=False)
    return X


def mean_alignment(d: int, sigma: float, law: str, t: float, dt: float, samples: int, seed=0,
                   scheme: str = "projected-em") -> tuple[float, float]:
    """Monte Carlo E<e_1, x(t)> of one token from e_1 without attention: (mean, standard error).

    The closed form is exp(-c (d-1) t) (:func:`diffusion_constant`)."""
    steps = steps_of(t, dt)
    h = t / steps
    rng = np.random.default_rng(seed)
    X = np.zeros((samples, 1, d))
    X[:, 0, 0] = 1.0
    step = _STEPS[require_choice(scheme, "common-noise scheme", tuple(METHODS))]
    c = diffusion_constant(law, d, sigma)
    for _ in range(steps):
        xi = rng.standard_normal((samples, d, d))
        X = step(zero_field, X, h, sigma, increment(law, xi, h), c=c, exact=False)
    e = X[:, 0, 0]
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(samples))


def lyapunov_rate(d: int, sigma: float, law: str, t: float, dt: float, samples: int, theta0: float = 1e-6,
                  seed=0, scheme: str = "heun") -> tuple[float, float]:
    """Measured top Lyapunov exponent: E[log(theta_t/theta_0)]/t of two tokens started theta0 apart
    (no attention), with its standard error. The derived value is -a (:func:`angle_coefficient`)."""
    steps = steps_of(t, dt)
    h = t / steps
    rng = np.random.default_rng(seed)
    X = start_pairs(samples, d, theta0)
    step = _STEPS[require_choice(scheme, "common-noise scheme", tuple(METHODS))]
    for _ in range(steps):
        xi = rng.standard_normal((samples, d, d))
        X = step(zero_field, X, h, sigma, increment(law, xi, h), exact=False)
    # the angle from the chord: robust for tiny angles (arccos of a dot product is not)
    chord = np.linalg.norm(X[:, 0] - X[:, 1], axis=-1)
    theta = 2 * np.arcsin(np.clip(chord / 2, 0.0, 1.0))
    rate = np.log(theta / theta0) / t
    return float(rate.mean()), float(rate.std(ddof=1) / np.sqrt(samples))


def lyapunov_rate_extrapolated(d: int, sigma: float, law: str, t: float, dt: float, samples: int,
                               theta0: float = 1e-6, seed=0, scheme: str = "heun") -> dict:
    r"""The rate of :func:`lyapunov_rate` (the same draws) with the step's bias removed in the run.

    Runs at steps :math:`2h` and :math:`4h` on the same Brownian path (each increment the sum of the fine run's)
    give the rates :math:`r(2h)`, :math:`r(4h)` of every path; the schemes have weak order 1, so
    :math:`(8 r(h) - 6 r(2h) + r(4h))/3` has no :math:`O(h)` and no :math:`O(h^2)` term. Its standard error comes
    from the per-path values (the runs are strongly correlated, which makes it small). From every path's
    :math:`\log\theta_t` the sum of its first-order noise increments
    :math:`\langle \delta, \eta_1 - \eta_2 \rangle / |\delta|^2` (:math:`\delta = x_1 - x_2`, :math:`\eta` the
    kicks at the start of each step) is subtracted: linear in a
    centred :math:`\mathrm{d}Q` independent of the state, it has mean exactly zero, so it changes no mean and
    removes most of the variance (a control variate).

    Parameters
    ----------
    d, sigma, law, t, dt, samples, theta0, seed, scheme
        As for :func:`lyapunov_rate`; ``t`` must be a multiple of four steps ``dt``.

    Returns
    -------
    dict
        ``rate``, ``se`` (extrapolated), ``first_order``, ``first_order_se`` (:math:`2 r(h) - r(2h)`), ``fine``,
        ``fine_se`` (:math:`r(h)`), ``coarse`` (:math:`r(2h)`), ``coarsest`` (:math:`r(4h)`), ``step_bias``
        (:math:`r(h) -` ``rate``), ``dt`` (:math:`h`), ``samples``.
    """
    steps = steps_of(t, dt)
    if steps % 4:
        raise InputError(f"the horizon {t} must be a multiple of 4 steps {dt} (the coarsest run takes four at once)")
    h = t / steps
    rng = np.random.default_rng(seed)
    runs = (1, 2, 4)
    X = {m: start_pairs(samples, d, theta0) for m in runs}
    M = {m: np.zeros(samples) for m in runs}
    acc = {m: 0.0 for m in runs}
    step = _STEPS[require_choice(scheme, "common-noise scheme", tuple(METHODS))]
    for k in range(steps):
        xi = rng.standard_normal((samples, d, d))
        for m in runs:
            acc[m] = acc[m] + xi
            if (k + 1) % m:
                continue
            # m fine normals summed and divided by sqrt(m): at step m h the increment is the sum of the fine ones
            dQ = increment(law, acc[m] / np.sqrt(m), m * h) if m > 1 else increment(law, xi, h)
            acc[m] = 0.0
            Z = X[m]
            # the first-order noise part of log|x_1 - x_2| over the step, <delta, eta_1 - eta_2>/|delta|^2 at its
            # start: linear in the centred dQ, so its mean is exactly zero (a control variate)
            eta = kick(Z, dQ, sigma, False)
            delta = Z[:, 0] - Z[:, 1]
            M[m] += np.sum(delta * (eta[:, 0] - eta[:, 1]), axis=-1) / np.sum(delta * delta, axis=-1)
            X[m] = step(zero_field, Z, m * h, sigma, dQ, exact=False)
    r = {}
    for m in runs:
        chord = np.linalg.norm(X[m][:, 0] - X[m][:, 1], axis=-1)
        r[m] = (np.log(2 * np.arcsin(np.clip(chord / 2, 0.0, 1.0)) / theta0) - M[m]) / t
    # Richardson twice: r(h) = r + c_1 h + c_2 h^2 + ..., so 2 r(h) - r(2h) = r - 2 c_2 h^2 + ... and
    # (8 r(h) - 6 r(2h) + r(4h))/3 = r + O(h^3)
    first = 2 * r[1] - r[2]
    second = (8 * r[1] - 6 * r[2] + r[4]) / 3
    root = np.sqrt(samples)
    return {"rate": float(second.mean()), "se": float(second.std(ddof=1) / root),
            "first_order": float(first.mean()), "first_order_se": float(first.std(ddof=1) / root),
            "fine": float(r[1].mean()), "fine_se": float(r[1].std(ddof=1) / root),
            "coarse": float(r[2].mean()), "coarsest": float(r[4].mean()),
            "step_bias": float((r[1] - second).mean()), "dt": h, "samples": samples}


def ito_paths(d: int, sigma: float, law: str, t: float, dt: float, samples: int, seed=0,
              correction: bool = True) -> dict:
    """One token from e_1, no attention, Euler-Maruyama on the Ito form (``ito-em``) with the derived drift
    -c (d-1) x or without it (``correction=False``): mean |x(t)|^2 and E<e_1, x(t)>, with standard errors."""
    steps = steps_of(t, dt)
    h = t / steps
    rng = np.random.default_rng(seed)
    X = np.zeros((samples, 1, d))
    X[:, 0, 0] = 1.0
    c = diffusion_constant(law, d, sigma) if correction else 0.0
    for _ in range(steps):
        xi = rng.standard_normal((samples, d, d))
        X = step_ito_em(zero_field, X, h, sigma, increment(law, xi, h), c=c, exact=False)
    norm2, e = np.sum(X[:, 0] ** 2, axis=-1), X[:, 0, 0]
    root = np.sqrt(samples)
    return {"norm2": float(norm2.mean()), "norm2_se": float(norm2.std(ddof=1) / root),
            "alignment": float(e.mean()), "alignment_se": float(e.std(ddof=1) / root)}


def pair_weight(beta: float, model: str, cos_theta):
    """w(theta) of two tokens with identity Q, K, V: d theta/dt = -w sin(theta) from the attention alone
    (usa: e^{beta cos theta}; sa: 2 e^{beta cos theta}/(e^beta + e^{beta cos theta}))."""
    e = np.exp(beta * (np.asarray(cos_theta) - 1.0))  # e^{beta (cos - 1)}: no overflow for large beta
    return np.exp(beta) * e if model == "usa" else 2 * e / (1.0 + e)


def antipodal_probability(law: str, d: int, sigma: float, beta: float, model: str, theta0: float) -> float:
    """P(the pair ends antipodal | theta(0) = theta0) from the scale function of the angle's diffusion.

    The angle has generator a sin^2(theta) h'' - w(theta) sin(theta) h' (attention plus the common noise, whose
    part has no drift: :func:`theory.common_noise.angle_generator`), so with
    s'(theta) = exp( int_{pi/2}^{theta} w(u) / (a sin u) du ) the probability is
    int_0^{theta0} s' / int_0^pi s', and 0 when the integral diverges at pi (w(pi) >= a).
    """
    from scipy.integrate import quad

    a = angle_coefficient(law, d, sigma)
    if pair_weight(beta, model, -1.0) >= a:
        return 0.0

    def exponent(theta):
        val, _ = quad(lambda u: float(pair_weight(beta, model, np.cos(u))) / (a * np.sin(u)), np.pi / 2, theta,
                      limit=200)
        return val

    def density(theta):
        return math.exp(exponent(theta))

    top, _ = quad(density, 0.0, np.pi, limit=400)
    part, _ = quad(density, 0.0, theta0, limit=400)
    return part / top


def pair_field(beta: float, model: str):
    """The attention field of (samples, 2, d) pairs with identity Q, K, V, written out (many small systems)."""
    def field(Y, t=None):
        rho = np.sum(Y[:, 0] * Y[:, 1], axis=-1)[:, None]
        w = pair_weight(beta, model, rho) / 2              # each token's share of d theta/dt = -w sin theta
        return np.stack([w * (Y[:, 1] - rho * Y[:, 0]), w * (Y[:, 0] - rho * Y[:, 1])], axis=1)

    return field


def start_pairs(samples: int, d: int, theta0: float) -> np.ndarray:
    """(samples, 2, d) pairs at angle theta0: e_1 and cos(theta0) e_1 + sin(theta0) e_2."""
    X = np.zeros((samples, 2, d))
    X[:, 0, 0] = 1.0
    X[:, 1, 0], X[:, 1, 1] = np.cos(theta0), np.sin(theta0)
    return X


def pair_angle(X: np.ndarray) -> np.ndarray:
    """The angle of each pair, from the chord (accurate for small and for near-antipodal angles alike)."""
    chord = np.linalg.norm(X[:, 0] - X[:, 1], axis=-1)
    return 2 * np.arcsin(np.clip(chord / 2, 0.0, 1.0))


def coercivity(law: str, d: int, sigma: float, beta: float, model: str, p: float = 0.5,
               points: int = 200001) -> tuple[float, float]:
    """(min over theta of kappa, its argmin) on a fine grid, kappa(theta) = a ((1-p) cos^2 + sin^2) + w cos
    (:func:`theory.common_noise.dissipation_derivation`): the noise is coercive relative to the drift iff > 0."""
    theta = np.linspace(0.0, np.pi, points)
    c = np.cos(theta)
    kappa = angle_coefficient(law, d, sigma) * ((1 - p) * c ** 2 + np.sin(theta) ** 2) + pair_weight(beta, model, c) * c
    k = int(np.argmin(kappa))
    return float(kappa[k]), float(theta[k])


def pair_dissipation(law: str, d: int, sigma: float, beta: float, model: str, theta0: float, p: float, t: float,
                     dt: float, samples: int, seed=0, every: int = 1) -> dict:
    """E (sin theta)^p of pairs from theta0 (attention plus common noise) every ``every`` steps: times, means and
    standard errors. Projected Euler-Maruyama."""
    steps = steps_of(t, dt)
    h = t / steps
    rng = np.random.default_rng(seed)
    X = start_pairs(samples, d, theta0)
    field = pair_field(beta, model)
    times, means, ses = [0.0], [math.sin(theta0) ** p], [0.0]
    for k in range(1, steps + 1):
        xi = rng.standard_normal((samples, d, d))
        X = step_projected_em(field, X, h, sigma, increment(law, xi, h), exact=False)
        if k % every == 0 or k == steps:
            V = np.sin(pair_angle(X)) ** p
            times.append(k * h)
            means.append(float(V.mean()))
            ses.append(float(V.std(ddof=1) / math.sqrt(samples)))
    return {"times": times, "mean": means, "se": ses}


def pair_initial_rate(law: str, d: int, sigma: float, beta: float, model: str, theta0: float, p: float,
                      span: float, dt: float, samples: int, seed=0) -> dict:
    r"""The initial rate :math:`\frac{\mathrm{d}}{\mathrm{d}t} \log \mathbb{E} (\sin\theta)^p` at
    :math:`t = 0` of pairs from ``theta0``, extrapolated in the difference's span and in the time step.

    Two runs of projected Euler-Maruyama on one Brownian path, at step :math:`h` = ``dt`` and :math:`2h` (whose
    increments are the sums of the fine run's pairs), each to :math:`2\Delta` (:math:`\Delta` = ``span``). On
    every path the forward differences :math:`D(\Delta)` and :math:`D(2\Delta)` of
    :math:`V = (\sin\theta)^p / V(0)` are formed, Richardson-extrapolated in the span,
    :math:`R = 2 D(\Delta) - D(2\Delta)` (bias :math:`O(\Delta^2)` for :math:`O(\Delta)`), then in the step,
    :math:`2 R(h) - R(2h)`. From every :math:`V` the sum of its noise increments to first order,
    :math:`\sum_k \partial_\rho V \, (\langle \eta_1, x_2 \rangle + \langle x_1, \eta_2 \rangle)` at the start of
    each step, is subtracted: its mean is exactly zero (the kicks :math:`\eta` are linear in a centred
    :math:`\mathrm{d}Q` independent of the current state), so the estimate keeps its mean and loses most of its
    variance (a control variate; measured: 13 to 40 times smaller standard errors).

    Parameters
    ----------
    law, d, sigma, beta, model, theta0, p
        As for :func:`pair_dissipation`.
    span : float
        :math:`\Delta`, a whole even number of steps ``dt``.
    dt : float
        The fine step :math:`h`.
    samples : int
        Pairs (one Brownian path each, shared by the two runs).
    seed
        Seed of the normal draws.

    Returns
    -------
    dict
        ``rate`` and ``se`` (the doubly extrapolated rate and its standard error, from the per-path values),
        ``forward`` and ``forward_se`` (:math:`D(\Delta)` at :math:`h`), ``span_richardson`` (:math:`R(h)`),
        ``coarse_richardson`` (:math:`R(2h)`), ``span_bias`` (:math:`D(\Delta) - R(h)`, the forward
        difference's estimated bias), ``step_bias`` (:math:`R(h) - \text{rate}`), ``span``, ``dt``, ``samples``.
    """
    per_span = steps_of(span, dt)
    if per_span % 2:
        raise InputError(f"span {span} must be an even number of steps {dt}")
    h = span / per_span
    rng = np.random.default_rng(seed)
    field = pair_field(beta, model)
    V0 = math.sin(theta0) ** p
    X = {1: start_pairs(samples, d, theta0), 2: start_pairs(samples, d, theta0)}
    M = {1: np.zeros(samples), 2: np.zeros(samples)}
    Y: dict[int, list] = {1: [], 2: []}

    def advance(run: int, dQ: np.ndarray, step: float) -> None:
        Z = X[run]
        eta = kick(Z, dQ, sigma, False)
        rho = np.sum(Z[:, 0] * Z[:, 1], axis=-1)
        # dV/d rho for V = (1 - rho^2)^(p/2); any weight of the current state keeps the control variate's mean 0
        weight = -p * rho * np.maximum(1.0 - rho * rho, 1e-300) ** (p / 2 - 1)
        M[run] += weight * (np.sum(eta[:, 0] * Z[:, 1], axis=-1) + np.sum(Z[:, 0] * eta[:, 1], axis=-1))
        X[run] = step_projected_em(field, Z, step, sigma, dQ, exact=False)

    first = None
    for k in range(1, 2 * per_span + 1):
        dQ = increment(law, rng.standard_normal((samples, d, d)), h)
        advance(1, dQ, h)
        if k % 2:
            first = dQ
        else:  # the coarse run's increment is the sum of the fine run's two: the same Brownian path
            advance(2, first + dQ, 2 * h)
        if k % per_span == 0:
            for run in (1, 2):
                Y[run].append((np.sin(pair_angle(X[run])) ** p - M[run]) / V0 - 1.0)
    forward = {run: Y[run][0] / span for run in (1, 2)}
    richardson = {run: 2 * forward[run] - Y[run][1] / (2 * span) for run in (1, 2)}
    rate = 2 * richardson[1] - richardson[2]
    root = math.sqrt(samples)
    return {"rate": float(rate.mean()), "se": float(rate.std(ddof=1) / root),
            "forward": float(forward[1].mean()), "forward_se": float(forward[1].std(ddof=1) / root),
            "span_richardson": float(richardson[1].mean()), "coarse_richardson": float(richardson[2].mean()),
            "span_bias": float((forward[1] - richardson[1]).mean()),
            "step_bias": float((richardson[1] - rate).mean()), "span": span, "dt": h, "samples": samples}


def two_token_outcomes(law: str, d: int, sigma: float, beta: float, model: str, theta0: float, t: float,
                       dt: float, samples: int, seed=0) -> dict:
    """Pairs of tokens (attention with identity matrices plus the common noise) from angle theta0 to time t:
    the fraction ending antipodal (theta(t) > pi/2), its standard error, and the fraction still undecided
    (pi/4 < theta(t) < 3 pi/4). Projected Euler-Maruyama with a two-token field written out here."""
    steps = steps_of(t, dt)
    h = t / steps
    rng = np.random.default_rng(seed)
    X = start_pairs(samples, d, theta0)

    field = pair_field(beta, model)
    for _ in range(steps):
        xi = rng.standard_normal((samples, d, d))
        X = step_projected_em(field, X, h, sigma, increment(law, xi, h), exact=False)
    theta = np.arccos(np.clip(np.sum(X[:, 0] * X[:, 1], axis=-1), -1.0, 1.0))
    anti = theta > np.pi / 2
    p = float(anti.mean())
    return {"antipodal": p, "se": math.sqrt(max(p * (1 - p), 1e-12) / samples),
            "undecided": float(np.mean((theta > np.pi / 4) & (theta < 3 * np.pi / 4)))}
