r"""Time steppers on the product of spheres :math:`(\mathbb{S}^{d-1})^n`.

All methods take a vector field ``field(X) -> (n, d)`` (the projected attention field, see
:func:`numerics.core.field.make_field`) and return points with unit rows.

- ``layer``: the transformer layer, projected Euler with renormalisation
  :math:`x \leftarrow (x + h v(x)) / \lVert x + h v(x)\rVert`. First order. (The authors' code steps the
  *unprojected* field instead, which distorts time by :math:`1/(1 + h\langle x, v\rangle)`; attnflow always steps
  the projected field.)
- ``rk4``: classical Runge-Kutta on the projected field (stage points are off the sphere by :math:`O(h^2)`; the
  formula :math:`P_x y = y - \langle x, y\rangle x` extends the field smoothly with the sphere invariant),
  renormalised after each full step. Fourth order.
- ``dp5``: Dormand-Prince 5(4) embedded pair with error control on
  :math:`\max_i \lvert \mathrm{err}_i\rvert / (\mathrm{atol} + \mathrm{rtol}\, \lvert x_i\rvert)`, renormalised after
  each accepted step, for long horizons. Hits every requested output time exactly.
- ``dop853``: Dormand-Prince 8(5,3) (Hairer, Norsett, Wanner, Solving ODEs I, section II.10; the DOP853 code)
  with its 7th-order dense output: steps are not shortened to land on output times, the outputs are
  interpolated (3 more evaluations in a step that holds output times). 12 evaluations a step (FSAL). Error
  in the RMS norm and the initial step of Hairer's ``hinit``, as in the DOP853 code and SciPy.
- ``adaptive``: the one of the two with fewer field evaluations at the requested tolerance
  (:func:`adaptive_scheme`: ``dop853`` for ``rtol`` :math:`\le 10^{-3}`, ``dp5`` above); the choice is returned in the
  run's statistics (``method_used``) and recorded in trajectory metadata.

Time-dependent fields are called ``field(X, t)`` and carry the attribute ``field.time_dependent = True``
(:func:`is_time_dependent`); plain fields stay ``field(X)``. Depth schedules (:mod:`numerics.core.blocks`) are
*piecewise*: their layer times are breakpoints of the loop, no step straddles one, and every stage of a step uses
the layer the step lies in (``layer`` with :math:`h = 1` and layer times :math:`0, 1, \dots, L-1` applies layer
:math:`l` on step :math:`l`; RK4 keeps its order 4). Other time-dependent fields are evaluated at each stage's time
(``rk4``: :math:`t, t + h/2, t + h/2, t + h`; ``dp5``, ``dop853``: :math:`t + c_i h`).

The integration itself is one loop, :func:`numerics.core.loop.integrate` (solvers :mod:`numerics.core.solvers`,
step-size control :mod:`numerics.core.controllers`, spaces :mod:`numerics.core.space`); this module keeps the
historical entry points, with their signatures, as wrappers over it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from numerics.common.errors import InputError, require_real
from numerics.common.limits import steps_of
from numerics.core import loop
from numerics.core.controllers import DOP853_CONTROL, Adaptive, Fixed, rms
from numerics.core.loop import AdaptiveStats, is_time_dependent  # noqa: F401 - re-exported
from numerics.core.solvers import DP5, DOP853, EXPLICIT, dop853_dense, dop853_stages, dop853_tableau, dp5_stages
from numerics.core.solvers import DP_A as _DP_A, DP_B4 as _DP_B4, DP_B5 as _DP_B5  # noqa: F401 - re-exported
from numerics.core.solvers import DP_C as _DP_C, DP_E as _DP_E  # noqa: F401 - re-exported
from numerics.core.solvers import layer as _layer, rk4 as _rk4
from numerics.core.space import Sphere, space_of

Field = Callable[[np.ndarray], np.ndarray]
# re-exported; defined without heavy imports for the CLI
from numerics.core.names import ADAPTIVE_METHODS, METHODS  # noqa: E402, F401
#: ``adaptive`` runs ``dop853`` at rtol up to this, ``dp5`` above (:func:`adaptive_scheme`)
ADAPTIVE_DOP853_MAX_RTOL = 1e-3

#: rows back to the unit sphere (:meth:`numerics.core.space.Sphere.retract`)
renormalize = Sphere.retract
#: the field of a step from t at absolute stage times, ``g(X, tau)`` (:func:`numerics.core.loop.stage_field`);
#: every wrapper below passes it to the loop by name, so a test can plant a wrong stage timing here
_timed = loop.stage_field
_rms = rms
_dp5_stages = dp5_stages
_dop853_stages = dop853_stages
_dop853_dense = dop853_dense
_dop853_tableau = dop853_tableau


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


def _start(t: float | None) -> float:
    return 0.0 if t is None else t


def step_layer(field: Field, X: np.ndarray, h: float, t: float | None = None) -> np.ndarray:
    r"""One transformer layer: :math:`x \leftarrow (x + h v(x, t)) / \lVert x + h v(x, t)\rVert` (projected Euler;
    :math:`t` for time-dependent fields)."""
    return renormalize(_layer(_timed(field, t), X, _start(t), h))


def _identity(X: np.ndarray) -> np.ndarray:
    return X


def step_rk4(field: Field, X: np.ndarray, h: float, project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
             t: float | None = None) -> np.ndarray:
    """One classical RK4 step of the projected field, then ``project`` (renormalisation; ``None``: no projection,
    for flat state spaces such as angles). ``t``: start time, for time-dependent fields."""
    return (project or _identity)(_rk4(_timed(field, t), X, _start(t), h))


FIXED_STEPPERS = {"layer": step_layer, "rk4": step_rk4}


def step_dp5(field: Field, X: np.ndarray, h: float,
             project: Callable[[np.ndarray], np.ndarray] | None = renormalize) -> np.ndarray:
    """One fixed Dormand-Prince 5(4) step (the 5th-order solution, 6 evaluations), then ``project``: the
    stepper of ``dp5`` without error control (the same stages as :func:`integrate_adaptive`), for order tests
    by step halving."""
    _, X_new = _dp5_stages(lambda Y, t: field(Y), X, field(X), 0.0, h, fsal=False, b5=_DP_B5)
    return (project or _identity)(X_new)


def step_dop853(field: Field, X: np.ndarray, h: float,
                project: Callable[[np.ndarray], np.ndarray] | None = renormalize, t: float | None = None) -> np.ndarray:
    """One fixed DOP853 step (8th order, 12 evaluations), then ``project``: for order tests by step halving."""
    g = _timed(field, t)
    K = np.empty((16,) + X.shape)
    X_new = _dop853_stages(g, X, g(X, _start(t)), _start(t), h, K, _dop853_tableau())
    return (project or _identity)(X_new)


def _fixed_solver(method: str, steppers):
    """The loop's solver of a fixed-step ``method``: the sphere's own, or the caller's ``steppers[method]``."""
    table = FIXED_STEPPERS if steppers is None else steppers
    if method not in table:
        raise InputError(f"method must be one of {', '.join(table)} for fixed steps, got {method!r}")
    return EXPLICIT[method] if steppers is None else steppers[method]


def integrate_fixed(field: Field, X0: np.ndarray, t_end: float, dt: float, method: str, save_every: int = 1,
                    progress: Callable[[float, float], None] | None = None, t0: float = 0.0, steppers=None,
                    on_save: Callable[[np.ndarray], None] | None = None):
    r"""Fixed-step integration from ``t0`` to ``t_end`` with :math:`N = \lceil (t_{\mathrm{end}} - t_0) / dt\rceil`
    equal steps :math:`h \le dt`.

    Returns ``(times, states)`` with a frame every ``save_every`` steps and always the last one. ``steppers``
    maps method names to ``step(field, X, h)`` (default: the sphere steppers :data:`FIXED_STEPPERS`).
    ``on_save(X)`` is called with X0 and every later saved state from which another step starts, before that
    step evaluates the field there (the direct field's ``request_energy``: the step's first evaluation then
    also sums the frame's energy terms). A step that would straddle a breakpoint of a piecewise field (a depth
    schedule's layer time) is split there (:mod:`numerics.core.loop`).
    """
    times, states, _ = loop.integrate(field, X0, t0, t_end, _fixed_solver(method, steppers),
                                      Fixed(dt, save_every), progress=progress, on_save=on_save, timed=_timed)
    return times, states


def _check_save_times(save_times) -> np.ndarray:
    save_times = np.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size < 1 or np.any(np.diff(save_times) < 0):
        raise InputError("save_times must be a non-empty non-decreasing 1-D sequence")
    return save_times


def integrate_adaptive(field: Field, X0: np.ndarray, save_times: Sequence[float], rtol: float = 1e-9,
                       atol: float = 1e-12, h0: float | None = None, max_steps: int = 10_000_000,
                       progress: Callable[[float, float], None] | None = None,
                       project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
                       max_evaluations: float = math.inf):
    r"""Dormand-Prince 5(4) with step-size control; returns ``(times, states, stats)`` at ``save_times``.

    ``save_times`` must be non-decreasing and start at the initial time. Error on
    :math:`\max_i \lvert \mathrm{err}_i\rvert / (\mathrm{atol} + \mathrm{rtol}\, \lvert x_i\rvert)`. Each accepted step
    is followed by ``project`` (renormalisation onto the spheres; ``None`` for flat state spaces such as angles); steps
    land on every save time and on every breakpoint of a piecewise field. A run that needs more than ``max_steps`` steps
    or ``max_evaluations`` field evaluations (the work limit, :func:`numerics.common.limits.evaluation_budget`) stops
    with :class:`InputError`.
    """
    save_times = _check_save_times(save_times)
    safety, fac_min, fac_max = 0.9, 0.2, 5.0
    control = Adaptive(rtol, atol, norm="max", safety=safety, fac_min=fac_min, fac_max=fac_max, order=5, h0=h0,
                       max_steps=max_steps)
    return loop.integrate(field, X0, float(save_times[0]), float(save_times[-1]), DP5, control, space_of(project),
                          save_times=save_times, progress=progress, max_evaluations=max_evaluations, timed=_timed)


def integrate_dop853(field: Field, X0: np.ndarray, save_times: Sequence[float], rtol: float = 1e-9,
                     atol: float = 1e-12, h0: float | None = None, max_steps: int = 10_000_000,
                     progress: Callable[[float, float], None] | None = None,
                     project: Callable[[np.ndarray], np.ndarray] | None = renormalize,
                     max_evaluations: float = math.inf):
    r"""Dormand-Prince 8(5,3) with step-size control and dense output; returns ``(times, states, stats)``.

    Error norm: :math:`h \lVert e_5\rVert^2 / \sqrt{\lVert e_5\rVert^2 + 0.01 \lVert e_3\rVert^2}` with
    :math:`\lVert\cdot\rVert` the root mean square of the components scaled by
    :math:`\mathrm{atol} + \mathrm{rtol} \max(\lvert x\rvert, \lvert x_{\mathrm{new}}\rvert)` (the DOP853 estimate
    and norm, as in Hairer's code and SciPy: for :math:`n` particles in :math:`\mathbb{R}^d` the largest component
    error can exceed the tolerance by up to :math:`\sqrt{nd}`; ``dp5`` uses the
    max norm). Initial step: Hairer's ``hinit`` (one more evaluation) unless ``h0`` is given. Output states at
    ``save_times`` come from the 7th-order interpolant, then ``project``. The state is integrated without projection
    between outputs: the exact orthogonal projection inside the field (:func:`make_field`) keeps every
    :math:`\lVert x_i\rVert` constant along the extended flow, so the norm drift is part of the controlled error, and
    the first-same-as-last evaluation survives (12 evaluations a step instead of 13). The returned frames are projected.
    Steps land on every breakpoint of a piecewise field (one more evaluation there: the next piece's
    first stage). ``max_steps`` and ``max_evaluations``: as in :func:`integrate_adaptive`.
    """
    save_times = _check_save_times(save_times)
    control = Adaptive(rtol, atol, **dict(DOP853_CONTROL, norm=_rms), h0=h0, max_steps=max_steps)
    return loop.integrate(field, X0, float(save_times[0]), float(save_times[-1]), DOP853, control,
                          space_of(project), save_times=save_times, progress=progress,
                          max_evaluations=max_evaluations, timed=_timed, tableau=_dop853_tableau())


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
    times, states, stats = loop.integrate(field, X0, t0, t_end, _fixed_solver(method, steppers),
                                          Fixed(dt, save_every), progress=progress, on_save=on_save, timed=_timed)
    return times, states, {"steps": stats["steps"], "step": (t_end - t0) / steps_of(t_end, dt, t0)}


def _fixed_at_times(field, X0, save_times, dt, method, progress, steppers, on_save=None):
    """Fixed steps h <= dt landing exactly on every save time (each interval split into equal steps)."""
    save_times = np.asarray(save_times, dtype=float)
    _, states, stats = loop.integrate(field, X0, float(save_times[0]), float(save_times[-1]),
                                      _fixed_solver(method, steppers), Fixed(dt, save_times=save_times),
                                      progress=progress, on_save=on_save, timed=_timed)
    return save_times.copy(), states, {"steps": stats["steps"], "step": None, "max_step": dt}


def _hinit(field, X, f0, t, rtol, atol, order):
    """Initial step of Hairer's ``hinit`` (Hairer, Norsett, Wanner, Solving ODEs I, section II.4; one more field
    evaluation), :meth:`numerics.core.controllers.Adaptive.hinit` in the RMS norm; ``field(X, t)``."""
    return Adaptive(rtol, atol, norm=_rms, hinit_order=order).hinit(field, X, f0, t)[0]


def _initial_step(X, k, rtol, atol):
    """``dp5``'s initial step 0.01 |x| / |f| in the scaled max norm
    (:meth:`numerics.core.controllers.Adaptive.hinit`)."""
    return Adaptive(rtol, atol, norm="max").hinit(None, X, k, 0.0)[0]


def observed_order(field: Field, X0: np.ndarray, t_end: float, method: str, dts: Sequence[float],
                   reference: np.ndarray, steppers=None) -> tuple[float, list[float]]:
    r"""Observed convergence order of a fixed-step method by step halving.

    Integrates to ``t_end`` with each step in ``dts`` (e.g. successive halvings), measures the error
    :math:`\max_i \lVert x_i(t_{\mathrm{end}}) - \mathrm{reference}_i\rVert` and returns (least-squares slope of log
    error against log dt, errors). Expected: 1 for ``layer``, 4 for ``rk4``; ``steppers`` (as in
    :func:`integrate_fixed`) runs others, such as the fixed steps of ``dp5`` (5) and ``dop853`` (8). Verified by:
    core.integrator-orders.
    """
    errors = []
    for dt in dts:
        _, states = integrate_fixed(field, X0, t_end, dt, method, save_every=10**9, steppers=steppers)
        errors.append(float(np.max(np.linalg.norm(states[-1] - reference, axis=1))))
    slope = float(np.polyfit(np.log(np.asarray(dts, float)), np.log(errors), 1)[0])
    return slope, errors
