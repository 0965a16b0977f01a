r"""Self-attention dynamics on the circle in angle form: integrators, order parameters, energy, simulations.

On :math:`\mathbb{S}^1` (:math:`d = 2`), :math:`x_i = (\cos\theta_i, \sin\theta_i)` and the ``sa``/``usa`` dynamics
are the angle equations :math:`d\theta_i/dt = \omega_i(\theta)` (:mod:`theory.circle`; at :math:`\beta = 0` the
Kuramoto model with identical frequencies and coupling 1). The angle velocity comes from the :math:`O(nK)` Fourier
series (:mod:`numerics.circle.fourier`, default) or from the direct :math:`O(n^2)` sphere field
(:func:`numerics.core.field.attention_field`, as a cross-check).

Integrators (the methods of :mod:`numerics.core.integrators`, in angle coordinates):

- ``layer``: the transformer layer :math:`x \leftarrow (x + h v)/\lvert x + h v\rvert` written in angles. Since
  :math:`v_i = \omega_i \tau_i`, :math:`x_i + h v_i` has angle :math:`\theta_i + \arctan(h \omega_i)`:
  :math:`\theta \leftarrow \theta + \arctan(h \omega(\theta))`. This is the same map as
  :func:`numerics.core.integrators.step_layer` on the circle (no approximation).
- ``rk4``: classical Runge-Kutta on :math:`\theta` (the angle equations are an ODE on the flat torus; nothing to
  renormalise).
- ``dp5``, ``dop853``, ``adaptive``: the error-controlled methods of :mod:`numerics.core.integrators` without
  projection (``dp5`` hits every save time exactly, ``dop853`` interpolates them; ``adaptive`` runs ``dop853`` for
  ``rtol <= 1e-3`` and ``dp5`` above); they stop at the work limit (:func:`numerics.common.limits.evaluation_budget`).

Angles are kept unwrapped (continuous in time); wrap with ``np.angle(np.exp(1j * theta))`` when needed.
"""
from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_real
from numerics.common.limits import evaluation_budget
from numerics.core.field import MODELS, TIME_UNITS, attention_field
from numerics.circle.fourier import (  # noqa: F401 - circle_energy and its limits are re-exported here
    ENERGY_DIRECT_MAX_N, ENERGY_RELATIVE_ACCURACY, _Coefficients, _order_parameters, circle_energy,
    harmonics_for_tolerance)
from numerics.core.integrators import ADAPTIVE_METHODS, METHODS, integrate, step_rk4
from numerics.common.provenance import package_versions
from numerics.core.field import ENERGY_DEFINITIONS, energy_normalization_for
from numerics.core.model import SaveAt, Solver
from numerics.core.trajectory import check_simulation_cost, evaluation_cost, uniform_sphere

BACKENDS = ("fourier", "direct")
AngleField = Callable[[np.ndarray], np.ndarray]


# -- order parameters and energy ---------------------------------------------------------------------------------
def order_parameters(theta, harmonics: int) -> np.ndarray:
    r""":math:`r_k = \frac{1}{n} \sum_j e^{ik\theta_j}` for :math:`k = 1, \dots,` ``harmonics`` (complex array).

    :math:`\lvert r_1\rvert` is the Kuramoto order parameter (1 iff all angles coincide). Verified by:
    circle.energy-order-parameters.
    """
    theta = require_finite_array(theta, "theta", ndim=1)
    harmonics = require_int(harmonics, "harmonics", minimum=1)
    if theta.size < 1:
        raise InputError("theta must hold at least one angle, got an empty array")
    return _order_parameters(np.exp(1j * theta), harmonics)


def kuramoto_order_parameter(theta) -> np.ndarray:
    r""":math:`\lvert r_1\rvert = \bigl\lvert \frac{1}{n} \sum_j e^{i\theta_j} \bigr\rvert` over the last axis
    (``theta`` of shape ``(n,)`` or ``(m, n)``)."""
    theta = require_finite_array(theta, "theta")
    return np.abs(np.exp(1j * theta).mean(axis=-1))


# -- angle velocity fields -----------------------------------------------------------------------------------------
def make_angle_field(beta: float, model: str, *, backend: str = "fourier", tol: float = 1e-12,
                     harmonics: int | None = None, time_unit: str = "natural") -> AngleField:
    r"""``omega(theta) -> (n,)``: the angle velocity of ``sa``/``usa`` (no per-call validation; for integrators).

    ``fourier``: :func:`numerics.circle.fourier.fourier_angle_velocity` (:math:`O(nK)`); ``direct``: the tangential
    component :math:`\langle \tau_i, v_i\rangle` of :func:`numerics.core.field.attention_field` at
    :math:`x_i = (\cos\theta_i, \sin\theta_i)` (:math:`O(n^2)`).
    """
    backend = require_choice(backend, "backend", BACKENDS)
    if backend == "fourier":
        coef = _Coefficients(beta, model, tol, harmonics, time_unit)

        def omega(theta: np.ndarray) -> np.ndarray:
            return coef.velocity(np.cos(theta) + 1j * np.sin(theta))

        omega.harmonics = coef.K
        return omega
    model = require_choice(model, "model", MODELS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    beta = require_real(beta, "beta")

    def omega_direct(theta: np.ndarray) -> np.ndarray:
        c, s = np.cos(theta), np.sin(theta)
        V = attention_field(np.c_[c, s], beta, model, time_unit=time_unit)
        return c * V[:, 1] - s * V[:, 0]

    omega_direct.harmonics = None
    return omega_direct


# -- integrators in angle form -----------------------------------------------------------------------------------
def step_angle_layer(omega: AngleField, theta: np.ndarray, h: float) -> np.ndarray:
    """Transformer layer in angles: theta <- theta + arctan(h omega(theta)) (= x <- (x + h v)/|x + h v|)."""
    return theta + np.arctan(h * omega(theta))


def step_angle_rk4(omega: AngleField, theta: np.ndarray, h: float) -> np.ndarray:
    """One classical RK4 step of d theta/dt = omega(theta) (the sphere RK4 without projection)."""
    return step_rk4(omega, theta, h, project=None)


ANGLE_STEPPERS = {"layer": step_angle_layer, "rk4": step_angle_rk4}


# -- simulations -------------------------------------------------------------------------------------------------
@dataclass
class CircleTrajectory:
    r"""Angles over time of one circle simulation.

    Attributes
    ----------
    times : (m,) ndarray
        Save times in the unit named by ``meta["time_unit"]``.
    theta : (m, n) ndarray
        Unwrapped angles :math:`\theta_i(t)` of :math:`x_i = (\cos\theta_i, \sin\theta_i)`.
    order_parameter : (m,) ndarray
        Kuramoto order parameter :math:`\lvert r_1(t)\rvert`.
    energy : (m,) ndarray
        Interaction energy (normalisation in ``meta["energy_normalization"]``).
    meta : dict
        Parameters, seed, harmonics, integrator, versions.
    """

    times: np.ndarray
    theta: np.ndarray
    order_parameter: np.ndarray
    energy: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def X(self) -> np.ndarray:
        """States as points of R^2: (m, n, 2)."""
        return np.stack([np.cos(self.theta), np.sin(self.theta)], axis=-1)


def initial_angles(n: int, seed) -> np.ndarray:
    """Angles of :func:`numerics.core.trajectory.uniform_sphere` (n, 2, seed): the same seed gives the same particles
    as the sphere simulation."""
    X = uniform_sphere(n, 2, seed)
    return np.arctan2(X[:, 1], X[:, 0])


def simulate_circle(model: str, beta: float, t_end: float, *, n: int | None = None, theta0=None,
                    seed: int | None = None, method: str = "rk4", dt: float | None = None, save_every: int = 1,
                    save_times=None, time_unit: str = "natural", backend: str = "fourier", tol: float = 1e-12,
                    harmonics: int | None = None, rtol: float = 1e-9, atol: float = 1e-12,
                    progress: Callable[[float, float], None] | None = None) -> CircleTrajectory:
    r"""Simulate :math:`d\theta_i/dt = \omega_i(\theta)` for ``sa``/``usa`` on the circle.

    Parameters
    ----------
    model : {"sa", "usa"}
    beta : float
        Inverse temperature.
    t_end : float
        Final time (> 0) in ``time_unit`` (``usa`` only: ``rescaled`` means :math:`t' = e^{\beta} t`).
    n : int, optional
        Number of particles (with ``seed``, uniform angles as :func:`initial_angles`).
    theta0 : (n,) array_like, optional
        Initial angles (instead of ``n``/``seed``).
    method : {"layer", "rk4", "adaptive", "dp5", "dop853"}
        See the module docstring; ``dt`` is required for ``layer``/``rk4``.
    backend : {"fourier", "direct"}
        :math:`O(nK)` Fourier field (default) or the direct :math:`O(n^2)` sphere field.
    tol, harmonics : truncation of the Fourier series (see :func:`numerics.circle.fourier.harmonics_for_tolerance`).

    Returns
    -------
    CircleTrajectory

    Notes
    -----
    Source: GLPR (arXiv 2312.10794), SA/USA on :math:`\mathbb{S}^1` and the Kuramoto model.
    Verified by: circle.sphere-vs-angle, circle.kuramoto-two-particles.
    """
    model = require_choice(model, "model", MODELS)
    method = require_choice(method, "method", METHODS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    beta = require_real(beta, "beta")
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    save_every = require_int(save_every, "save_every", minimum=1)
    if theta0 is None:
        if n is None:
            raise InputError("give n (and a seed) or initial angles theta0")
        n = require_int(n, "n", minimum=1)
        theta0 = initial_angles(n, seed)
        init = "uniform"
    else:
        theta0 = require_finite_array(theta0, "theta0", ndim=1)
        if theta0.size < 1:
            raise InputError("theta0 must hold at least one angle, got an empty array")
        if n is not None and require_int(n, "n", minimum=1) != theta0.size:
            raise InputError(f"n={n} does not match theta0 with {theta0.size} angles")
        n = theta0.size
        init = "given"
    omega = make_angle_field(beta, model, backend=backend, tol=tol, harmonics=harmonics, time_unit=time_unit)
    # the angle field costs O(n K) per evaluation (O(n^2) for the direct backend): refuse absurd runs first
    per_eval = evaluation_cost(omega, backend, n, 2)
    check_simulation_cost(n, 2, t_end, Solver(method=method, dt=dt, rtol=rtol, atol=atol),
                          SaveAt(every=save_every, times=save_times), per_eval=per_eval)
    started = _time.perf_counter()
    # angles live on the flat torus: the sphere integrators without projection, with the angle steppers
    times, thetas, stats = integrate(omega, theta0, t_end, method, dt=dt, save_every=save_every,
                                     save_times=save_times, rtol=rtol, atol=atol, progress=progress,
                                     steppers=ANGLE_STEPPERS, project=None,
                                     max_evaluations=evaluation_budget(per_eval))
    seconds = _time.perf_counter() - started
    norm = energy_normalization_for(beta)
    energy = _energies(thetas, beta, norm, tol)
    meta = {
        "model": model, "beta": beta, "n": int(n), "d": 2, "t_end": t_end, "method": method, "dt": dt,
        "save_every": save_every, "seed": seed, "init": init, "time_unit": time_unit,
        "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model == "usa" and time_unit == "rescaled")
                           else "natural: time = depth"),
        "backend": backend, "harmonics": omega.harmonics, "tol": tol,
        "scheme": {"layer": "transformer layer in angles: theta <- theta + arctan(h omega)",
                   "rk4": "classical RK4 on the angles", "dp5": "Dormand-Prince 5(4), no projection",
                   "dop853": "Dormand-Prince 8(5,3) with dense output, no projection"}[
                       stats.get("method_used", method)],
        "energy_normalization": norm, "energy_definition": ENERGY_DEFINITIONS[norm],
        "integrator_stats": stats, "seconds": seconds,
        "energy_note": ("NaN where E_beta cannot be computed to 1e-12 from the order parameters (beta < 0, "
                        f"clustered state, n > {ENERGY_DIRECT_MAX_N})") if np.isnan(energy).any() else None,
        "versions": package_versions(),
    }
    return CircleTrajectory(times=times, theta=thetas, order_parameter=kuramoto_order_parameter(thetas),
                            energy=energy, meta=meta)


def _energies(thetas: np.ndarray, beta: float, normalization: str, tol: float) -> np.ndarray:
    """Energy per frame; NaN where it cannot be computed accurately (beta << 0 and large n, see circle_energy)."""
    out = np.empty(len(thetas))
    for i, th in enumerate(thetas):
        try:
            out[i] = circle_energy(th, beta, normalization=normalization, tol=tol)
        except InputError:
            out[i] = np.nan
    return out


def max_angle_deviation(theta_a: np.ndarray, theta_b: np.ndarray) -> float:
    """max over entries of the circular distance |angle(e^{i(a - b)})| between two (m, n) angle arrays."""
    return float(np.abs(np.angle(np.exp(1j * (np.asarray(theta_a) - np.asarray(theta_b))))).max())


def sphere_angle_deviation(circle: CircleTrajectory, progress: Callable[[float, float], None] | None = None) -> dict:
    """Re-run ``circle`` as a sphere simulation in R^2 (:func:`numerics.core.trajectory.simulate`, direct field, same
    method, step and save times) and return the max angle deviation over the run.

    Returns ``{"max_angle_deviation": float, "sphere_seconds": float, "frames": int, "backends": dict}``;
    ``backends`` records both compared code paths (the angle run's field and the sphere run's, pinned "direct").
    ``progress(t, t_end)`` follows the sphere simulation (O(n^2) per step: the slow part of a check at large n).
    Verified by: circle.sphere-vs-angle.
    """
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    m = circle.meta
    # the comparison is angle equations against the direct O(n^2) sphere field: pin the backend (never auto)
    solver = Solver(method=m["method"], dt=m["dt"], backend="direct")
    save = SaveAt(every=m["save_every"], times=circle.times if m["method"] in ADAPTIVE_METHODS else None)
    traj = simulate(Model(m["model"], m["beta"], time_unit=m["time_unit"]), circle.X[0], m["t_end"],
                    solver=solver, save=save, progress=progress)
    theta_sphere = np.arctan2(traj.X[..., 1], traj.X[..., 0])
    if traj.X.shape[0] != circle.theta.shape[0] or not np.allclose(traj.times, circle.times, rtol=0, atol=1e-12):
        raise InputError("sphere and angle simulations saved different times")
    return {"max_angle_deviation": max_angle_deviation(theta_sphere, circle.theta),
            "sphere_seconds": traj.meta["seconds"], "frames": int(traj.X.shape[0]),
            "backends": {"angles": m["backend"], "sphere": traj.meta["backend"]}}
