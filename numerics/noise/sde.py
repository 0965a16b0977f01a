r"""Stochastic integrators for noisy self-attention on :math:`(\mathbb{S}^{d-1})^n`.

The SDE (Stratonovich; :math:`B_i` independent standard Brownian motions of :math:`\mathbb{R}^d`)

.. math::

    dx_i = v_i(X)\, dt + \sqrt{2 D}\, P_{x_i} \circ dB_i, \qquad P_x = I - x x^T,

whose noise part is Brownian motion on :math:`\mathbb{S}^{d-1}` with generator :math:`D \Delta_S`
(:math:`E\langle x(t), x(0)\rangle = e^{-D (d-1) t}`). Its Ito form has the extra normal drift
:math:`-D (d-1) x_i` (:func:`theory.noise.ito_correction_derivation`).

Schemes (``xi`` are standard normal ``(n, d)`` arrays; :math:`h` the step):

- ``euler-maruyama`` (projected):
  :math:`x \leftarrow (x + h v(x) + \sqrt{2 D h}\, P_x \xi) / \lVert \cdots \rVert`. The renormalisation supplies
  the Ito-Stratonovich correction: :math:`\lVert x + \eta\rVert^{-1} = 1 - \lVert\eta\rVert^2/2 + \dots`,
  :math:`E \lVert\eta\rVert^2 = 2 D h (d-1)`, so the mean normal drift is :math:`-D (d-1) x h`, exactly the Ito
  correction; adding it explicitly as well doubles it (the planted error of the note). Weak order 1, strong order
  1/2 (the noise :math:`P_x\, dB` is not commutative for :math:`d \ge 3`). With :math:`D = 0` this is the
  ``layer`` step of :mod:`numerics.core.integrators`.
- ``geodesic-weak2``: Strang splitting, half a midpoint-RK2 step of the drift (renormalised), then the geodesic
  noise step :math:`x \leftarrow \cos\lVert\eta\rVert\, x + \sin\lVert\eta\rVert\, \eta/\lVert\eta\rVert` with
  :math:`\eta = \sqrt{2 D h (1 - (d-2) D h / 3)}\, P_x \xi`, then half a drift step. The curvature-corrected
  variance makes the isotropic step match the heat semigroup to :math:`O(h^3)` on every spherical harmonic
  (:func:`theory.noise.zonal_taylor_derivation`), hence weak order 2. It samples the law of a step, not a
  Brownian path: no strong order is claimed.

Verified by: noise.brownian-moments (claim), tests/numerics/test_noise_sde.py (weak and strong orders).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from numerics.common.errors import InputError, require_choice, require_real
from numerics.common.limits import steps_of
from numerics.core.integrators import renormalize

Field = Callable[[np.ndarray], np.ndarray]

#: scheme -> (weak order, strong order or None)
SDE_METHODS = {"euler-maruyama": (1, 0.5), "geodesic-weak2": (2, None)}
#: the deterministic ``Solver.method`` a noisy run maps to each scheme
FROM_SOLVER_METHOD = {"layer": "euler-maruyama", "rk4": "geodesic-weak2"}
SCHEMES = {"euler-maruyama": "projected Euler-Maruyama x <- (x + h v + sqrt(2Dh) P_x xi)/|.| (weak 1, strong 1/2; "
                             "the renormalisation is the Stratonovich correction)",
           "geodesic-weak2": "Strang splitting: RK2 drift half steps around a geodesic Gaussian step of variance "
                             "2Dh(1-(d-2)Dh/3) (weak 2)"}


def zero_field(X: np.ndarray, t: float | None = None) -> np.ndarray:
    """The field of a run with attention switched off (``Model(attention=False)``): the noise alone."""
    return np.zeros_like(X)


def tangent(X: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """P_x xi row by row: the tangential part of ``xi`` at each point."""
    return xi - np.sum(X * xi, axis=-1, keepdims=True) * X


def step_euler_maruyama(field: Field, X: np.ndarray, h: float, D: float, xi: np.ndarray) -> np.ndarray:
    """Projected Euler-Maruyama: (x + h v(x) + sqrt(2 D h) P_x xi) / |...|."""
    return renormalize(X + h * field(X) + np.sqrt(2.0 * D * h) * tangent(X, xi))


def geodesic_noise(X: np.ndarray, h: float, D: float | np.ndarray, xi: np.ndarray,
                   correction: bool = True) -> np.ndarray:
    """Isotropic geodesic step exp_x(eta), eta = sqrt(2 D h c) P_x xi, c = 1 - (d-2) D h / 3 (``correction``).

    Without the correction (c = 1) the step is the geodesic random walk, weak order 1 for d >= 3. ``D`` is one
    number or an array that broadcasts against ``X`` (an ensemble's (B, 1, 1) per-member noise): the same
    operations element by element, so a member's step equals its single run's bit for bit.
    """
    d = X.shape[-1]
    c = 1.0 - (d - 2) * D * h / 3.0 if correction else 1.0
    if np.any(c <= 0):
        raise InputError("step too large for the weak-order-2 noise step: need D h < 3/(d-2), got D h = "
                         f"{float(np.max(D)) * h:g}")
    eta = np.sqrt(2.0 * D * h * c) * tangent(X, xi)
    size = np.linalg.norm(eta, axis=-1, keepdims=True)
    safe = np.where(size > 0, size, 1.0)
    return renormalize(np.cos(size) * X + np.sin(size) * eta / safe)


def _half_drift(field: Field, X: np.ndarray, h: float, t: float | None = None) -> np.ndarray:
    """Midpoint RK2 drift step of length h from time t (``t`` only for time-dependent fields)."""
    if t is None:
        mid = X + 0.5 * h * field(X)
        return renormalize(X + h * field(mid))
    mid = X + 0.5 * h * field(X, t)
    return renormalize(X + h * field(mid, t + 0.5 * h))


def step_geodesic_weak2(field: Field, X: np.ndarray, h: float, D: float, xi: np.ndarray,
                        correction: bool = True, t: float | None = None) -> np.ndarray:
    """Strang splitting: drift h/2 (midpoint RK2), geodesic noise step h, drift h/2. Weak order 2.

    ``t`` is the step's start time, needed (and only used) for time-dependent fields ``field(X, t)``: the drift
    half steps act on [t, t + h/2] and [t + h/2, t + h]."""
    X = _half_drift(field, X, 0.5 * h, t)
    X = geodesic_noise(X, h, D, xi, correction)
    return _half_drift(field, X, 0.5 * h, None if t is None else t + 0.5 * h)


_STEPS = {"euler-maruyama": step_euler_maruyama, "geodesic-weak2": step_geodesic_weak2}


def noisy_steppers(D: float | np.ndarray, rng, scheme: str) -> dict:
    """``{name: step(field, X, h)}`` for :func:`numerics.core.integrators.integrate`, drawing xi from ``rng``.

    ``D`` is one number, or an array broadcasting against the state (an ensemble's (B, 1, 1) per-member noise);
    ``rng`` is anything with ``standard_normal(shape)`` (a NumPy generator, or an ensemble's per-member streams).
    """
    scheme = require_choice(scheme, "scheme", tuple(SDE_METHODS))
    if np.ndim(D) == 0:
        D = require_real(D, "noise", minimum=0.0)
    else:
        D = np.asarray(D, dtype=float)
        if not np.all(np.isfinite(D)) or np.any(D < 0):
            raise InputError("noise must be finite and >= 0 for every member")
    step = _STEPS[scheme]

    def stepper(field, X, h, t=None):
        xi = rng.standard_normal(X.shape)
        if t is None:
            return step(field, X, h, D, xi)
        if scheme == "euler-maruyama":                  # the drift at the step's start time
            return step(lambda Y: field(Y, t), X, h, D, xi)
        return step(field, X, h, D, xi, t=t)

    return {scheme: stepper}


def generator_state(rng: np.random.Generator) -> dict:
    """The JSON-safe state of ``rng``'s bit generator (integers as decimal strings: PCG64 holds 128-bit ones).

    Saved with a noisy trajectory, it lets :func:`generator_from_state` continue the random stream exactly
    where the run stopped (``attnflow simulate --resume``)."""
    def encode(v):
        if isinstance(v, dict):
            return {k: encode(x) for k, x in v.items()}
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return str(int(v))
        return v

    return encode(rng.bit_generator.state)


def generator_from_state(state) -> np.random.Generator:
    """A ``numpy.random.Generator`` continuing the stream saved by :func:`generator_state`."""
    if not isinstance(state, dict) or not isinstance(state.get("bit_generator"), str):
        raise InputError("invalid noise state: expected the saved bit-generator state (a JSON object)")
    name = state["bit_generator"]
    if name not in ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937"):
        raise InputError(f"invalid noise state: unknown bit generator {name!r}")

    def decode(v):
        if isinstance(v, dict):
            return {k: decode(x) for k, x in v.items()}
        if isinstance(v, str) and v.lstrip("-").isdigit():
            return int(v)
        return v

    bitgen = getattr(np.random, name)()
    try:
        bitgen.state = decode(state)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise InputError(f"invalid noise state: {exc}") from None
    return np.random.Generator(bitgen)


def integrate_sde(field: Field, X0: np.ndarray, t_end: float, dt: float, D: float, *, seed=0,
                  scheme: str = "euler-maruyama", save_every: int = 1, t0: float = 0.0, progress=None):
    """Fixed-step integration of the noisy dynamics; returns ``(times, states, stats)``.

    ``seed`` is an int or a ``numpy.random.Generator`` (the only source of randomness).
    ``N = ceil((t_end - t0)/dt)`` equal steps ``h <= dt``, as :func:`numerics.core.integrators.integrate_fixed`;
    each step draws one standard normal ``(n, d)`` array. ``stats["noise_state"]`` is the generator's state at the
    end (:func:`generator_state`): a run continued from it with the same step draws the same numbers as the run
    in one piece.
    """
    from numerics.core.integrators import integrate

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    steppers = noisy_steppers(D, rng, scheme)
    times, states, stats = integrate(field, X0, t_end, scheme, dt=dt, t0=t0, save_every=save_every,
                                     progress=progress, steppers=steppers)
    weak, strong = SDE_METHODS[scheme]
    stats.update({"scheme": scheme, "weak_order": weak, "strong_order": strong, "noise": D,
                  "noise_state": generator_state(rng)})
    return times, states, stats


def initial_particles(n: int, d: int, start: str, seed) -> np.ndarray:
    """Start of a phase experiment: ``clustered`` (all n tokens at e_1) or ``uniform`` (iid, from ``seed``)."""
    from numerics.core.sampling import uniform_sphere

    start = require_choice(start, "start", ("clustered", "uniform"))
    if start == "uniform":
        return uniform_sphere(n, d, seed)
    X0 = np.zeros((n, d))
    X0[:, 0] = 1.0
    return X0


def brownian_correlation_mc(d: int, D: float, t: float, dt: float, samples: int, seed=0,
                            scheme: str = "euler-maruyama", correction: bool = True) -> tuple[float, float]:
    r"""Monte Carlo :math:`E\langle x(t), x(0)\rangle` of pure Brownian motion on :math:`\mathbb{S}^{d-1}`
    (:math:`v = 0`): (mean, standard error).

    ``samples`` independent walkers from :math:`x(0) = e_1` (the law of :math:`\langle x(t), x(0)\rangle` does not
    depend on :math:`x(0)`).
    """
    X = np.zeros((samples, d))
    X[:, 0] = 1.0
    rng = np.random.default_rng(seed)
    steps = steps_of(t, dt)
    h = t / steps
    zero = np.zeros_like
    for _ in range(steps):
        xi = rng.standard_normal(X.shape)
        if scheme == "euler-maruyama":
            X = step_euler_maruyama(zero, X, h, D, xi)
        else:
            X = geodesic_noise(X, h, D, xi, correction)
    c = X[:, 0]
    return float(c.mean()), float(c.std(ddof=1) / np.sqrt(samples))


def scheme_mean_factor(d: int, D: float, h: float, scheme: str, correction: bool = True, nodes: int = 64) -> float:
    """E<x_{k+1}, x_k> of one noise step (v = 0), by Gauss-Laguerre-type quadrature over |xi_tangent|^2 ~ chi^2_{d-1}.

    The scheme's exact mean after N steps is this factor to the power N (isotropy): the deterministic part of
    the weak error, free of sampling noise. The integrand is the scheme's own step function
    (:func:`step_euler_maruyama` with v = 0, :func:`geodesic_noise`) applied at x = e_1 to tangent draws
    xi = |xi| e_2 at the quadrature nodes (by isotropy <x', x> depends on |P_x xi| only), so an error in a
    step changes this factor; the closed forms 1/sqrt(1 + 2 D h |xi|^2) and cos(sqrt(2 D h c) |xi|) are the
    independent check in tests/numerics/test_noise.py.
    """
    from scipy.special import roots_genlaguerre

    if d < 2:
        raise InputError(f"d must be >= 2, got {d}")
    k = d - 1                                           # |P_x xi|^2 ~ chi^2_k = 2 Gamma(k/2)
    x, w = roots_genlaguerre(nodes, k / 2 - 1)           # weight x^{k/2-1} e^{-x}
    w = w / w.sum()
    X = np.zeros((nodes, d))
    X[:, 0] = 1.0
    xi = np.zeros((nodes, d))
    xi[:, 1] = np.sqrt(2 * x)                           # |xi|^2 = chi^2_k at the nodes
    if scheme == "euler-maruyama":
        moved = step_euler_maruyama(lambda Y: np.zeros_like(Y), X, h, D, xi)
    else:
        moved = geodesic_noise(X, h, D, xi, correction)
    return float(np.sum(w * moved[:, 0]))
