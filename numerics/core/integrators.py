"""Time steppers on the product of spheres (S^{d-1})^n.

All methods take a vector field ``field(X) -> (n, d)`` (the projected attention field, see
:func:`numerics.core.field.make_field`) and return points with unit rows.

- ``layer``: the transformer layer, projected Euler with renormalisation
  x <- (x + h v(x)) / |x + h v(x)|. First order. (The authors' code steps the *unprojected* field instead,
  which distorts time by 1/(1 + h<x, v>); attnflow always steps the projected field.)
- ``rk4``: classical Runge-Kutta on the projected field (stage points are off the sphere by O(h^2); the
  formula P_x y = y - <x, y> x extends the field smoothly with the sphere invariant), renormalised after each
  full step. Fourth order.
- ``dp5``: Dormand-Prince 5(4) embedded pair with error control on max_i |err_i| / (atol + rtol |x_i|),
  renormalised after each accepted step, for long horizons. Hits every requested output time exactly.
- ``dop853``: Dormand-Prince 8(5,3) (Hairer, Norsett, Wanner, Solving ODEs I, section II.10; the DOP853 code)
  with its 7th-order dense output: steps are not shortened to land on output times, the outputs are
  interpolated (3 more evaluations in a step that holds output times). 12 evaluations a step (FSAL). Error
  in the RMS norm and the initial step of Hairer's ``hinit``, as in the DOP853 code and SciPy.
- ``adaptive``: the one of the two with fewer field evaluations at the requested tolerance
  (:func:`adaptive_scheme`: ``dop853`` for rtol <= 1e-3, ``dp5`` above); the choice is returned in the run's
  statistics (``method_used``) and recorded in trajectory metadata.

Time-dependent fields (depth schedules, :mod:`numerics.core.blocks`) are called ``field(X, t)`` and carry the
attribute ``field.time_dependent = True`` (:func:`is_time_dependent`); every stepper evaluates them at its stage
times (``layer``: the step's start t, so a schedule with layer times 0, 1, ..., L-1 and h = 1 applies layer l
on step l; ``rk4``: t, t + h/2, t + h/2, t + h; ``adaptive``: t + c_i h). Plain fields stay ``field(X)``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_real
from numerics.common.limits import budget_exhausted, steps_of

Field = Callable[[np.ndarray], np.ndarray]
# re-exported; defined without heavy imports for the CLI
from numerics.core.names import ADAPTIVE_METHODS, METHODS  # noqa: E402, F401
#: ``adaptive`` runs ``dop853`` at rtol up to this, ``dp5`` above (:func:`adaptive_scheme`)
ADAPTIVE_DOP853_MAX_RTOL = 1e-3


def adaptive_scheme(rtol: float) -> str:
    """The scheme ``method="adaptive"`` runs at relative tolerance ``rtol``: ``dop853`` for rtol <= 1e-3, ``dp5``
    above.

    Rule from field evaluations at matched accuracy (``attnflow bench --suite adaptive``; ``sa``, n = 16..32,
    d = 3..4, beta = 1..9, errors measured against a tight reference): at rtol 1e-3 to 1e-11 DOP853 needs
    0.9-1.2x the evaluations of SciPy's DOP853 at the same error and Dormand-Prince 5(4) 1.1-3.9x (the gap
    grows as the tolerance tightens); at rtol 1e-2 DP5 reaches errors near 4e-4 with about as many
    evaluations as DOP853 needs for 5e-3. See proofs_notes/core-integrator-orders.md.
    """
    return "dop853" if rtol <= ADAPTIVE_DOP853_MAX_RTOL else "dp5"


def renormalize(X: np.ndarray) -> np.ndarray:
    """Project rows back to the unit sphere."""
    return X / np.linalg.norm(X, axis=-1, keepdims=True)


def is_time_dependent(field) -> bool:
    """True for fields called ``field(X, t)`` (attribute ``time_dependent``)."""
    return bool(getattr(field, "time_dependent", False))


def _timed(field, t: float | None):
    """``g(X, c)``: the field at time t + c (time-dependent fields) or ``field(X)``."""
    if is_time_dependent(field):
        if t is None:
            raise InputError("a time-dependent field needs the time of the step")
        return lambda X, c: field(X, t + c)
    return lambda X, c: field(X)


def step_layer(field: Field, X: np.ndarray, h: float, t: float | None = None) -> np.ndarray:
    """One transformer layer: x <- (x + h v(x, t)) / |x + h v(x, t)| (projected Euler; t for time-dependent fields)."""
    return renormalize(X + h * _timed(field, t)(X, 0.0))


def _identity(X: np.ndarray) -> np.ndarray:
    return X


def step_rk4(field: Field, X: np.ndarray, h: float, project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
             t: float | None = None) -> np.ndarray:
    """One classical RK4 step of the projected field, then ``project`` (renormalisation; ``None``: no projection,
    for flat state spaces such as angles). ``t``: start time, for time-dependent fields."""
    f = _timed(field, t)
    k1 = f(X, 0.0)
    k2 = f(X + 0.5 * h * k1, 0.5 * h)
    k3 = f(X + 0.5 * h * k2, 0.5 * h)
    k4 = f(X + h * k3, h)
    return (project or _identity)(X + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4))


FIXED_STEPPERS = {"layer": step_layer, "rk4": step_rk4}

# Dormand-Prince 5(4) tableau (Hairer, Norsett, Wanner, Solving ODEs I, Table 5.2)
_DP_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_DP_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_DP_B5 = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
_DP_B4 = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
_DP_E = _DP_B5 - _DP_B4


def _dp5_stages(field, X: np.ndarray, k_first: np.ndarray, t: float, h: float, fsal: bool = True):
    """The Dormand-Prince 5(4) stages of one step from X at time t (``field(Y, t)``; ``k_first`` = field at X):
    returns ``(K, X_new)`` with X_new the 5th-order solution; with ``fsal`` the 7th stage, the field at X_new
    (the last row of A is the 5th-order weights), is appended to K for the error estimate."""
    K = [k_first]
    for stage in range(1, 6):
        K.append(field(X + h * sum(a * K[j] for j, a in enumerate(_DP_A[stage]) if a != 0.0), t + _DP_C[stage] * h))
    X_new = X + h * sum(b * K[j] for j, b in enumerate(_DP_B5[:6]) if b != 0.0)
    if fsal:
        K.append(field(X_new, t + h))
    return K, X_new


def step_dp5(field: Field, X: np.ndarray, h: float,
             project: Callable[[np.ndarray], np.ndarray] | None = renormalize) -> np.ndarray:
    """One fixed Dormand-Prince 5(4) step (the 5th-order solution, 6 evaluations), then ``project``: the
    stepper of ``dp5`` without error control (the same stages as :func:`integrate_adaptive`), for order tests
    by step halving."""
    _, X_new = _dp5_stages(lambda Y, t: field(Y), X, field(X), 0.0, h, fsal=False)
    return (project or _identity)(X_new)


@dataclass
class AdaptiveStats:
    """Counters of an adaptive run."""

    accepted: int = 0
    rejected: int = 0
    evaluations: int = 0
    last_step: float = float("nan")


def integrate_fixed(field: Field, X0: np.ndarray, t_end: float, dt: float, method: str, save_every: int = 1,
                    progress: Callable[[float, float], None] | None = None, t0: float = 0.0, steppers=None,
                    on_save: Callable[[np.ndarray], None] | None = None):
    """Fixed-step integration from t0 to t_end with N = ceil((t_end - t0) / dt) equal steps h <= dt.

    Returns ``(times, states)`` with a frame every ``save_every`` steps and always the last one. ``steppers``
    maps method names to ``step(field, X, h)`` (default: the sphere steppers :data:`FIXED_STEPPERS`).
    ``on_save(X)`` is called with X0 and every later saved state from which another step starts, before that
    step evaluates the field there (the direct field's ``request_energy``: the step's first evaluation then
    also sums the frame's energy terms).
    """
    steppers = FIXED_STEPPERS if steppers is None else steppers
    if method not in steppers:
        raise InputError(f"method must be one of {', '.join(steppers)} for fixed steps, got {method!r}")
    span = t_end - t0
    steps = steps_of(t_end, dt, t0)
    h = span / steps
    stepper = steppers[method]
    timed = is_time_dependent(field)
    X = X0.copy()
    times, states = [t0], [X.copy()]
    if on_save is not None:
        on_save(X)
    for k in range(1, steps + 1):
        X = stepper(field, X, h, t=t0 + (k - 1) * h) if timed else stepper(field, X, h)
        if k % save_every == 0 or k == steps:
            times.append(t0 + k * h)
            states.append(X.copy())
            if on_save is not None and k < steps:
                on_save(X)
        if progress is not None:
            progress(t0 + k * h, t_end)
    return np.array(times), np.array(states)


def _adaptive_setup(field, save_times, project):
    """Common checks of the adaptive integrators: ``(project, g(X, t), save_times)``."""
    plain = field
    timed_field = (lambda X, t: plain(X, t)) if is_time_dependent(field) else (lambda X, t: plain(X))
    save_times = np.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size < 1 or np.any(np.diff(save_times) < 0):
        raise InputError("save_times must be a non-empty non-decreasing 1-D sequence")
    return project or _identity, timed_field, save_times


def integrate_adaptive(field: Field, X0: np.ndarray, save_times: Sequence[float], rtol: float = 1e-9,
                       atol: float = 1e-12, h0: float | None = None, max_steps: int = 10_000_000,
                       progress: Callable[[float, float], None] | None = None,
                       project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
                       max_evaluations: float = math.inf):
    """Dormand-Prince 5(4) with step-size control; returns ``(times, states, stats)`` at ``save_times``.

    ``save_times`` must be non-decreasing and start at the initial time. Each accepted step is followed by
    ``project`` (renormalisation onto the spheres; ``None`` for flat state spaces such as angles). A run that
    needs more than ``max_steps`` steps or ``max_evaluations`` field evaluations (the work limit,
    :func:`numerics.common.limits.evaluation_budget`) stops with :class:`InputError`.
    """
    project, field, save_times = _adaptive_setup(field, save_times, project)
    stats = AdaptiveStats()
    t = float(save_times[0])
    X = X0.copy()
    states = [X.copy()]
    k_first = field(X, t)
    stats.evaluations += 1
    h = h0 if h0 is not None else _initial_step(X, k_first, rtol, atol)
    safety, fac_min, fac_max = 0.9, 0.2, 5.0
    for target in save_times[1:]:
        while t < target:
            if stats.accepted + stats.rejected >= max_steps:
                raise InputError(f"adaptive integrator exceeded {max_steps} steps at t={t:g}")
            if stats.evaluations >= max_evaluations:
                raise budget_exhausted(f"the dp5 run (at t={t:g} of {float(save_times[-1]):g})", stats.evaluations)
            h_try = min(h, target - t)
            last = h_try >= target - t
            K, X_new = _dp5_stages(field, X, k_first, t, h_try)
            stats.evaluations += 6
            err = h_try * sum(e * K[j] for j, e in enumerate(_DP_E) if e != 0.0)
            scale = atol + rtol * np.maximum(np.abs(X), np.abs(X_new))
            err_norm = float(np.max(np.abs(err) / scale)) if err.size else 0.0
            if err_norm <= 1.0:
                t = target if last else t + h_try
                X = project(X_new)
                k_first = field(X, t)  # FSAL does not survive the projection: re-evaluate
                stats.evaluations += 1
                stats.accepted += 1
                stats.last_step = h_try
                fac = fac_max if err_norm == 0 else min(fac_max, safety * err_norm ** (-1 / 5))
                if not last or h_try >= h:
                    h = h_try * fac
                if progress is not None:
                    progress(t, float(save_times[-1]))
            else:
                stats.rejected += 1
                h = h_try * max(fac_min, safety * err_norm ** (-1 / 5))
                if h < 1e-14 * max(1.0, abs(t)):
                    raise InputError(f"adaptive step size underflow at t={t:g}")
        states.append(X.copy())
    return save_times.copy(), np.array(states), stats


def _dop853_tableau():
    """DOP853 coefficients (Hairer's code, as tabulated in ``scipy.integrate._ivp.dop853_coefficients``):
    C, A (16 x 16, the last 3 rows for the dense output), B, E3, E5 (13 weights, the 13th on f(y_new)), D."""
    from scipy.integrate._ivp import dop853_coefficients as c

    return c.C, c.A, c.B, c.E3, c.E5, c.D


def _dop853_stages(field, X: np.ndarray, f: np.ndarray, t: float, h: float, K: np.ndarray) -> np.ndarray:
    """The 11 further stages of one DOP853 step from X (f = field(X, t)) into K[:12]; returns the 8th-order
    solution at t + h."""
    C, A, B, _, _, _ = _dop853_tableau()
    K[0] = f
    for s in range(1, 12):
        K[s] = field(X + h * np.tensordot(A[s, :s], K[:s], axes=1), t + C[s] * h)
    return X + h * np.tensordot(B, K[:12], axes=1)


def step_dop853(field: Field, X: np.ndarray, h: float,
                project: Callable[[np.ndarray], np.ndarray] | None = renormalize, t: float | None = None) -> np.ndarray:
    """One fixed DOP853 step (8th order, 12 evaluations), then ``project``: for order tests by step halving."""
    g = _timed(field, t)
    K = np.empty((16,) + X.shape)
    t0 = 0.0 if t is None else t
    X_new = _dop853_stages(lambda Y, tau: g(Y, tau - t0), X, g(X, 0.0), t0, h, K)
    return (project or _identity)(X_new)


def integrate_dop853(field: Field, X0: np.ndarray, save_times: Sequence[float], rtol: float = 1e-9,
                     atol: float = 1e-12, h0: float | None = None, max_steps: int = 10_000_000,
                     progress: Callable[[float, float], None] | None = None,
                     project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
                     max_evaluations: float = math.inf):
    """Dormand-Prince 8(5,3) with step-size control and dense output; returns ``(times, states, stats)``.

    Error norm: h |e5|^2 / sqrt(|e5|^2 + 0.01 |e3|^2) with |.| the root mean square of the components scaled
    by atol + rtol max(|x|, |x_new|) (the DOP853 estimate and norm, as in Hairer's code and SciPy: for n
    particles in R^d the largest component error can exceed the tolerance by up to sqrt(n d); ``dp5`` uses the
    max norm). Initial step: Hairer's ``hinit`` (one more evaluation) unless ``h0`` is given. Output states
    at ``save_times`` come from the 7th-order interpolant, then ``project``. The state is integrated without
    projection between outputs: the exact orthogonal projection inside the field (:func:`make_field`) keeps
    every |x_i| constant along the extended flow, so the norm drift is part of the controlled error, and the
    first-same-as-last evaluation survives (12 evaluations a step instead of 13). The returned frames are
    projected. ``max_steps`` and ``max_evaluations``: as in :func:`integrate_adaptive`.
    """
    project, field, save_times = _adaptive_setup(field, save_times, project)
    C, A, B, E3, E5, D = _dop853_tableau()
    stats = AdaptiveStats()
    t, t_end = float(save_times[0]), float(save_times[-1])
    X = X0.copy()
    f = field(X, t)
    stats.evaluations += 1
    if h0 is None:
        h = _hinit(field, X, f, t, rtol, atol, 7)
        stats.evaluations += 1
    else:
        h = h0
    safety, fac_min, fac_max = 0.9, 0.2, 10.0
    states = [project(X.copy())]
    k_out = 1
    while k_out < save_times.size and save_times[k_out] <= t:  # repeated initial times
        states.append(states[0].copy())
        k_out += 1
    K = np.empty((16,) + X.shape)
    rejected_last = False
    while k_out < save_times.size:
        if stats.accepted + stats.rejected >= max_steps:
            raise InputError(f"dop853 integrator exceeded {max_steps} steps at t={t:g}")
        if stats.evaluations >= max_evaluations:
            raise budget_exhausted(f"the dop853 run (at t={t:g} of {t_end:g})", stats.evaluations)
        h_try = min(h, t_end - t)
        X_new = _dop853_stages(field, X, f, t, h_try, K)
        t_new = t_end if h_try >= t_end - t else t + h_try
        K[12] = f_new = field(X_new, t_new)
        stats.evaluations += 12
        scale = atol + rtol * np.maximum(np.abs(X), np.abs(X_new))
        e5 = _rms(np.tensordot(E5, K[:13], axes=1) / scale) if X.size else 0.0
        e3 = _rms(np.tensordot(E3, K[:13], axes=1) / scale) if X.size else 0.0
        err = 0.0 if e5 == 0.0 and e3 == 0.0 else h_try * e5 * e5 / math.sqrt(e5 * e5 + 0.01 * e3 * e3)
        if err <= 1.0:
            if k_out < save_times.size and save_times[k_out] <= t_new:
                interpolate = _dop853_dense(field, X, X_new, f, f_new, K, t, h_try, A, C, D)
                stats.evaluations += 3
                while k_out < save_times.size and save_times[k_out] <= t_new:
                    target = float(save_times[k_out])
                    states.append(project(X_new.copy() if target == t_new else interpolate(target)))
                    k_out += 1
            t, X, f = t_new, X_new, f_new
            stats.accepted += 1
            stats.last_step = h_try
            fac = fac_max if err == 0.0 else min(fac_max, safety * err ** (-1 / 8))
            h = h_try * (min(1.0, fac) if rejected_last else fac)
            rejected_last = False
            if progress is not None:
                progress(t, t_end)
        else:
            stats.rejected += 1
            rejected_last = True
            h = h_try * max(fac_min, safety * err ** (-1 / 8))
            if h < 1e-14 * max(1.0, abs(t)):
                raise InputError(f"dop853 step size underflow at t={t:g}")
    return save_times.copy(), np.array(states), stats


def _dop853_dense(field, X, X_new, f, f_new, K, t, h, A, C, D):
    """The 7th-order DOP853 interpolant on [t, t + h] (3 more stages); returns ``y(s)``."""
    for s in range(13, 16):
        K[s] = field(X + h * np.tensordot(A[s, :s], K[:s], axes=1), t + C[s] * h)
    delta = X_new - X
    F = [delta, h * f - delta, 2.0 * delta - h * (f_new + f)]
    F += [h * np.tensordot(D[k], K, axes=1) for k in range(D.shape[0])]

    def y(target: float) -> np.ndarray:
        x = (target - t) / h
        out = np.zeros_like(X)
        for i, Fi in enumerate(reversed(F)):
            out += Fi
            out *= x if i % 2 == 0 else 1.0 - x
        return out + X

    return y


def output_times(save_times, t_end: float) -> np.ndarray:
    """Validated output times of an adaptive run: strictly increasing from 0 to t_end (default: 101 equally
    spaced times)."""
    if save_times is None:
        return np.linspace(0.0, t_end, 101)
    save_times = np.asarray(save_times, dtype=float)
    if (save_times.ndim != 1 or save_times.size < 2 or save_times[0] != 0.0 or not np.isclose(save_times[-1], t_end)
            or np.any(np.diff(save_times) <= 0)):
        raise InputError("save_times must increase strictly from 0 to t_end")
    return save_times


def integrate(field: Field, X0: np.ndarray, t_end: float, method: str, *, dt: float | None = None, t0: float = 0.0,
              save_every: int = 1, save_times=None, rtol: float = 1e-9, atol: float = 1e-12,
              progress: Callable[[float, float], None] | None = None, steppers=None,
              project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
              on_save: Callable[[np.ndarray], None] | None = None, max_evaluations: float = math.inf):
    """Validate the integrator options and run ``method``; returns ``(times, states, stats)``.

    ``layer``/``rk4`` need ``dt`` (:func:`integrate_fixed`, with ``steppers``); ``dp5``/``dop853`` (and
    ``adaptive``, which picks one of them by :func:`adaptive_scheme`; the statistics say which in
    ``method_used``) use ``dt`` as the initial step hint and outputs at ``save_times`` (default: 101 equally spaced times from t0 = 0; a run from
    t0 != 0 must give them) with ``project`` after each accepted step (:func:`integrate_adaptive`). Fixed-step
    methods given ``save_times`` (from t0 = 0) land on each of them: every interval between two save times is
    split into ceil(length / dt) equal steps h <= dt (``save_every`` is then ignored). ``on_save``: see
    :func:`integrate_fixed` (fixed-step methods only; adaptive outputs are interpolated or step ends that
    were evaluated before they were known to be outputs). ``max_evaluations`` bounds the field evaluations of
    an adaptive run (the work limit, enforced as it runs: its length is not known in advance).
    """
    if method in ADAPTIVE_METHODS:
        rtol = require_real(rtol, "rtol", minimum=0.0, strict_minimum=True)
        atol = require_real(atol, "atol", minimum=0.0, strict_minimum=True)
        if t0 == 0.0:
            save_times = output_times(save_times, t_end)
        elif save_times is None:
            raise InputError("an adaptive run from t0 != 0 needs explicit save_times")
        h0 = None if dt is None else require_real(dt, "dt", minimum=0.0, strict_minimum=True)
        used = adaptive_scheme(rtol) if method == "adaptive" else method
        run = integrate_adaptive if used == "dp5" else integrate_dop853
        times, states, st = run(field, X0, save_times, rtol=rtol, atol=atol, h0=h0, progress=progress,
                                project=project, max_evaluations=max_evaluations)
        return times, states, {"accepted_steps": st.accepted, "rejected_steps": st.rejected,
                               "field_evaluations": st.evaluations, "method_used": used}
    if dt is None:
        raise InputError(f"method {method} needs a step dt")
    dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
    if save_times is not None and t0 == 0.0:
        return _fixed_at_times(field, X0, output_times(save_times, t_end), dt, method, progress, steppers,
                               on_save)
    times, states = integrate_fixed(field, X0, t_end, dt, method, save_every, progress=progress, t0=t0,
                                    steppers=steppers, on_save=on_save)
    steps = steps_of(t_end, dt, t0)
    return times, states, {"steps": steps, "step": (t_end - t0) / steps}


def _fixed_at_times(field, X0, save_times, dt, method, progress, steppers, on_save=None):
    """Fixed steps h <= dt landing exactly on every save time (one :func:`integrate_fixed` per interval)."""
    t_end = float(save_times[-1])
    states, steps = [X0.copy()], 0
    for a, b in zip(save_times[:-1], save_times[1:]):
        if on_save is not None:  # each interval starts at a saved state (X0, then the previous interval's end)
            on_save(states[-1])
        seg_progress = None if progress is None else (lambda t, _end: progress(t, t_end))
        _, seg = integrate_fixed(field, states[-1], float(b), dt, method, save_every=10**18, progress=seg_progress,
                                 t0=float(a), steppers=steppers)
        states.append(seg[-1])
        steps += steps_of(float(b), dt, float(a))
    return np.array(save_times, dtype=float), np.array(states), {"steps": steps, "step": None,
                                                                   "max_step": dt}


def _rms(Z: np.ndarray) -> float:
    """Root mean square of the entries (the error norm of Hairer's DOP853 code and SciPy); for an ensemble
    (B, n, d) the largest member's, so that the step shared by the members meets every member's tolerance."""
    if Z.ndim == 3:
        return float(np.sqrt(np.max(np.mean(Z * Z, axis=(1, 2)))))
    return float(np.sqrt(np.mean(Z * Z)))


def _hinit(field, X, f0, t, rtol, atol, order):
    """Initial step of Hairer's ``hinit`` (Hairer, Norsett, Wanner, Solving ODEs I, section II.4; one more field
    evaluation): h0 = 0.01 |X| / |f| in the scaled RMS norm, an Euler step to estimate the second derivative
    d2, and h = min(100 h0, (0.01 / max(|f|, d2))^(1 / (order + 1))); ``order`` is that of the error estimate
    (7 for DOP853: exponent 1/8, as Hairer's code with IORD = 8 and SciPy)."""
    scale = atol + rtol * np.abs(X)
    d0, d1 = _rms(X / scale), _rms(f0 / scale)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    f1 = field(X + h0 * f0, t + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** (1.0 / (order + 1))
    return min(100.0 * h0, h1)


def _initial_step(X, k, rtol, atol):
    scale = atol + rtol * np.abs(X)
    d0 = float(np.max(np.abs(X) / scale))
    d1 = float(np.max(np.abs(k) / scale))
    if d0 < 1e-5 or d1 < 1e-5:
        return 1e-6
    return 0.01 * d0 / d1


def observed_order(field: Field, X0: np.ndarray, t_end: float, method: str, dts: Sequence[float],
                   reference: np.ndarray, steppers=None) -> tuple[float, list[float]]:
    """Observed convergence order of a fixed-step method by step halving.

    Integrates to ``t_end`` with each step in ``dts`` (e.g. successive halvings), measures the error
    max_i |x_i(t_end) - reference_i| and returns (least-squares slope of log error against log dt, errors).
    Expected: 1 for ``layer``, 4 for ``rk4``; ``steppers`` (as in :func:`integrate_fixed`) runs others, such as
    the fixed steps of ``dp5`` (5) and ``dop853`` (8). Verified by: core.integrator-orders.
    """
    errors = []
    for dt in dts:
        _, states = integrate_fixed(field, X0, t_end, dt, method, save_every=10**9, steppers=steppers)
        errors.append(float(np.max(np.linalg.norm(states[-1] - reference, axis=1))))
    slope = float(np.polyfit(np.log(np.asarray(dts, float)), np.log(errors), 1)[0])
    return slope, errors
