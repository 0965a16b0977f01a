"""THE integration loop: a solver (:mod:`numerics.core.solvers`) x a step-size controller
(:mod:`numerics.core.controllers`) x a space (:mod:`numerics.core.space`), with breakpoints.

:func:`integrate` runs fixed steps (``layer``, ``rk4``, or a caller's stepper such as the SDE schemes of
:mod:`numerics.noise.sde`), adaptive steps shared by the whole state (``dp5``, ``dop853``) and adaptive steps per
member of a (B, n, d) ensemble (``dp5``). :mod:`numerics.core.integrators` keeps the historical entry points as
thin wrappers over it.

**Fields and breakpoints.** A plain field is ``field(X)``. A time-dependent one has ``time_dependent = True`` and
is called ``field(X, t)``. A *piecewise* field (``piecewise = True``: a depth schedule's layers,
:class:`numerics.core.blocks.ScheduledField`) is autonomous between the times of ``field.breakpoints(t0, t_end)``;
``field.piece(t)`` is the autonomous field ``piece(X)`` of the segment that holds t. The loop

- never lets a step straddle a breakpoint: a fixed step that would cross one is split there (the step grid and
  the saved times are unchanged), an adaptive step is shortened to land on it (as on a save time);
- evaluates every stage of a step with the piece of the segment the step lies in (:func:`stage_field`), so
  that RK4 keeps its order 4 with a schedule (a stage at the step's end time must not see the next layer).

A piece may itself be time-dependent (``piece(X, t)``). A piecewise field with ``restarts = True`` (Mix-LN's
switch, :class:`numerics.core.norms.SwitchedField`) restarts the run at each breakpoint: the state there is
saved (fixed steps; adaptive runs get it among their save times from the caller), fixed steps start a new grid
there and adaptive steps a new initial step, as two runs one after the other would.

A time-dependent field that is not piecewise (the normalisation schemes, a callable schedule) is evaluated at
each stage's own time, as before.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError
from numerics.common.limits import budget_exhausted, steps_of
from numerics.core.controllers import Adaptive, Fixed
from numerics.core.solvers import DOP853, Embedded, Explicit, dop853_dense, dop853_error, dop853_stages, \
    dop853_tableau, dp5_error, dp5_stages
from numerics.core.space import SPHERE


def is_time_dependent(field) -> bool:
    """True for fields called ``field(X, t)`` (attribute ``time_dependent``)."""
    return bool(getattr(field, "time_dependent", False))


def is_piecewise(field) -> bool:
    """True for time-dependent fields that are autonomous between breakpoints (attribute ``piecewise``)."""
    return bool(getattr(field, "piecewise", False))


def stage_field(field, t: float | None):
    """``g(X, tau)``: the field of a step that starts at t, at the stage time tau.

    Piecewise fields: the piece of the segment holding t for every stage (tau ignored, unless the piece is
    itself time-dependent); other time-dependent fields: ``field(X, tau)``; plain fields: ``field(X)``.
    """
    if is_time_dependent(field):
        if t is None:
            raise InputError("a time-dependent field needs the time of the step")
        if is_piecewise(field):
            piece = field.piece(t)
            return piece if is_time_dependent(piece) else (lambda X, tau: piece(X))
        return field
    return lambda X, tau: field(X)


class Segments:
    """The breakpoints of ``field`` strictly inside (t0, t_end) and the per-step field of each segment.

    A breakpoint closer than ``tol`` to a step's end counts as that end (layer times on the step grid are equal
    to grid times only up to rounding).
    """

    def __init__(self, field, t0: float, t_end: float, timed: Callable = stage_field):
        self.field, self.timed = field, timed
        self.tol = 1e-12 * max(1.0, abs(t0), abs(t_end))
        points = getattr(field, "breakpoints", None)
        raw = [] if points is None or not is_piecewise(field) else points(t0, t_end)
        self.points = sorted(float(b) for b in raw if t0 + self.tol < b < t_end - self.tol)
        self.restarts = bool(getattr(field, "restarts", False)) and bool(self.points)
        self._cache: dict[int, Callable] = {}

    def index(self, t: float) -> int:
        """The segment holding a step that starts at t (0: before the first breakpoint)."""
        return bisect.bisect_right(self.points, t + self.tol)

    def start(self, t: float) -> float:
        """The start time t of a step, moved onto its segment's first breakpoint if it lies a rounding error
        before it (the step belongs to that segment)."""
        j = self.index(t)
        return t if j == 0 else max(t, self.points[j - 1])

    def step_field(self, t: float):
        """``g(X, tau)`` (:func:`stage_field`) for a step starting at t, built once per segment."""
        j = self.index(t)
        g = self._cache.get(j)
        if g is None:
            g = self._cache[j] = self.timed(self.field, self.start(t))
        return g

    def next_after(self, t: float) -> float:
        """The first breakpoint after t (inf if none)."""
        j = self.index(t)
        return self.points[j] if j < len(self.points) else math.inf

    def inside(self, a: float, b: float) -> list[float]:
        """The breakpoints strictly inside the step [a, b]."""
        return [p for p in self.points if a + self.tol < p < b - self.tol]


@dataclass
class AdaptiveStats:
    """Counters of an adaptive run."""

    accepted: int = 0
    rejected: int = 0
    evaluations: int = 0
    last_step: float = float("nan")
    #: with an event: :func:`_event_record` (set when the run stopped, else at the end)
    events: dict | None = None


def integrate(field, X0: np.ndarray, t0: float, t_end: float, solver, controller, space=SPHERE, *,
              save_times=None, on_save: Callable[[np.ndarray], None] | None = None,
              progress: Callable[[float, float], None] | None = None, max_evaluations: float = math.inf,
              timed: Callable = stage_field, tableau=None, event=None, decided: dict | None = None):
    """Integrate ``field`` from ``X0`` at t0 to t_end.

    Parameters
    ----------
    field : callable
        ``field(X)``, ``field(X, t)`` or a piecewise field (module docstring).
    solver : Explicit, Embedded or callable
        :data:`numerics.core.solvers.LAYER`/``RK4`` (with :class:`Fixed`), ``DP5``/``DOP853`` (with
        :class:`Adaptive`), or a caller's stepper ``step(field, X, h[, t=])`` returning the next state, retraction
        included (with :class:`Fixed`; it gets the field itself and evaluates a time-dependent one at its own
        stage times, which the split at breakpoints keeps inside the step's segment unless it uses the end time).
    controller : Fixed or Adaptive
        Step sizes (``Adaptive(per_member=True)``: one step per member of a (B, n, d) ensemble, ``dp5`` only).
    space : object with ``retract(X)``
        Applied after each fixed step and accepted ``dp5`` step, and to ``dop853``'s outputs.
    save_times : sequence of float
        Adaptive runs: the output times (non-decreasing, starting at t0). Fixed steps: see :class:`Fixed`.
    on_save : callable
        Fixed steps: called with X0 and every later saved state from which another step starts, before that
        step evaluates the field there (the direct field's ``request_energy``).
    progress : callable
        ``progress(t, t_end)`` after each (accepted) step.
    max_evaluations : float
        Adaptive runs stop with :class:`InputError` past this many field evaluations (the work limit).
    timed : callable
        ``timed(field, t) -> g(X, tau)``, the field of a step (default :func:`stage_field`; a parameter so that
        the historical entry points keep their hook).
    tableau : tuple
        DOP853's coefficients (default :func:`numerics.core.solvers.dop853_tableau`).
    event : numerics.core.events.Event, optional
        Fixed steps of an explicit solver, per-member ``dp5`` and one system's ``dp5`` (section "Events" below):
        after each accepted step the members whose event fired leave the batch.
    decided : dict, optional
        With ``event``: the members already decided (member -> decision time), a resumed run's; they do not move
        and keep their decision times in the record.

    Returns
    -------
    ``(times, states, stats)``: ``stats`` is a dict for fixed and per-member steps (``steps``, or the per-member
    counters), an :class:`AdaptiveStats` for shared adaptive steps. With an event, ``stats["events"]``
    (:func:`_event_record`; ``stats.events`` for one system's ``dp5``).

    Events
    ------
    A member whose event fired after a step (``event.fired`` on the state after the retraction) stops: it is no
    longer stepped (the field is evaluated on the members still moving, ``field.take``; a single system, X0 of
    shape (n, d), simply stops stepping), its state and the end time of that step (its *decision time*) are
    kept, and every later saved frame holds that decided state. The steps of the members still moving are
    unchanged (the same sizes, the same grid), so up to its decision a member equals its run without the event.
    One system with shared ``dp5`` steps (the same thing as per-member ``dp5`` with B = 1) stops after the
    accepted step that decided it (its steps land on the save times, so up to that step the run is the run
    without the event). Shared adaptive steps of a batch (a member leaving would change the error norm, hence the
    steps, of the others), ``dop853`` (its dense output interpolates unprojected states) and time-dependent fields
    are refused with one line.
    """
    fixed = isinstance(controller, Fixed)
    # a shared adaptive step lets a member stop only when it is the whole state (one system, ``dp5``: the steps
    # land on the save times, so the decided state is a step's end); in a batch the members still moving would
    # get other steps once a decided member no longer enters the error norm
    supported = (isinstance(solver, Explicit) if fixed else
                 controller.per_member or (X0.ndim == 2 and getattr(solver, "name", None) == "dp5"))
    if event is not None and (is_time_dependent(field) or not supported):
        raise InputError("events run with fixed steps (layer, rk4), per-member dp5 steps (--step per-member) or, "
                         "for one system, dp5 steps, of a field without time")
    if fixed:
        return _fixed(field, X0, t0, t_end, solver, controller, space, on_save, progress, timed, event, decided)
    if controller.per_member:
        return _per_member(field, X0, save_times, solver, controller, space, progress, max_evaluations, event,
                           decided)
    return _adaptive(field, X0, save_times, solver, controller, space, progress, max_evaluations, timed, tableau,
                     event, decided)


def _fixed(field, X0, t0, t_end, solver, ctl: Fixed, space, on_save, progress, timed, event=None, decided=None):
    """Fixed steps on each interval (the whole span, or between save times), split at breakpoints.

    With an ``event`` (the field then has no time, so no breakpoints) the members whose event fired after a step
    leave the batch (section "Events" of :func:`integrate`); without one nobody leaves and this is the plain run,
    the same operations in the same order."""
    f = field  # the field of the members still moving (all of them until one leaves)
    segments = Segments(f, t0, t_end, timed)
    time_dependent = is_time_dependent(field)
    if isinstance(solver, Explicit):
        step = solver.step

        def advance(X, a, h):
            return space.retract(step(segments.step_field(a), X, a, h))
    else:  # a caller's stepper evaluates a time-dependent field at its own stage times (inside the step)
        def advance(X, a, h):
            return solver(f, X, h, t=segments.start(a)) if time_dependent else solver(f, X, h)

    if ctl.save_times is None:
        ends = [t0] + (segments.points if segments.restarts else []) + [t_end]
        intervals = [(a, b, steps_of(b, ctl.dt, a)) for a, b in zip(ends[:-1], ends[1:])]
    else:
        save = np.asarray(ctl.save_times, dtype=float)
        intervals = [(float(a), float(b), steps_of(float(b), ctl.dt, float(a))) for a, b in zip(save[:-1], save[1:])]
    X = X0.copy()
    # with an event: ``active`` the indices of the members still moving (X holds them, in order), ``whole`` the
    # whole state once some member has left (None before: X is the whole state); a single system (n, d) is one
    # member that simply stops stepping
    single = X0.ndim == 2
    B = 1 if single else X0.shape[0]
    active = np.arange(B)
    whole = None
    moving = True
    decided = dict(decided or {}) if event is not None else {}
    member_steps = 0
    if decided:  # a resumed run: the members decided before do not move
        if single:
            moving = False
        else:
            keep = np.array([b not in decided for b in range(B)])
            whole, active, X = X.copy(), active[keep], X[keep]
            moving = bool(active.size)
            if moving:  # the field restricted to the members still undecided (``active``)
                f = _on(field, np.flatnonzero(keep), B)
                segments = Segments(f, t0, t_end, timed)
    times, states, taken = [t0], [X0.copy()], 0
    if on_save is not None:
        on_save(X0 if whole is None else whole)
    for i, (a, b, steps) in enumerate(intervals):
        h = (b - a) / steps
        final = i == len(intervals) - 1
        for k in range(1, steps + 1):
            start, end, size = a + (k - 1) * h, a + k * h, h
            if moving:
                for p in segments.inside(start, end) if segments.points else ():
                    X = advance(X, start, p - start)  # the step would straddle a breakpoint: split it there
                    start, size, taken = p, end - p, taken + 1
                X = advance(X, start, size)
                taken += 1
                if event is not None:
                    member_steps += active.size
                    fired = event.fired(X[None] if single else X)
                    if fired.any():
                        for m in active[fired]:
                            decided[int(m)] = float(end)
                        if single:
                            moving = False
                        else:
                            if whole is None:
                                whole = X.copy()
                            else:
                                whole[active] = X
                            keep = ~fired
                            active, X = active[keep], X[keep]
                            moving = bool(active.size)
                            if moving:  # the field restricted to the members still moving
                                f = _on(field, active, B)
                                segments = Segments(f, t0, t_end, timed)
            last = k == steps
            if ctl.save_times is None:
                saved = k % ctl.save_every == 0 or last
                if saved:
                    times.append(end)
            else:
                saved = last
                if saved:
                    times.append(b)
            if saved:
                if whole is not None and moving:
                    whole[active] = X
                state = X if whole is None else whole
                states.append(state.copy())
                if on_save is not None and moving and not (last and final):
                    on_save(state)
            if progress is not None:
                progress(end, t_end)
    stats = {"steps": taken}
    if event is not None:
        full_steps = float(B) * sum(steps for _, _, steps in intervals)
        stats["events"] = _event_record(event, decided, B, float(member_steps), full_steps)
    return np.array(times), np.array(states), stats


def _event_record(event, decided: dict, B: int, member_steps: float, full_steps: float | None) -> dict:
    """``stats["events"]``: the event, which members stopped and when (``times[b]``: the decision time of member
    b, None if it ran to the end), and the work: member-steps taken against those of the run without it."""
    return {"event": event.to_meta(), "stopped": sorted(decided), "times": [decided.get(b) for b in range(B)],
            "count": len(decided), "member_steps": member_steps, "member_steps_without": full_steps,
            "frames_after": "the decided state repeated"}


def _adaptive(field, X0, save_times, solver: Embedded, ctl: Adaptive, space, progress, max_evaluations, timed,
              tableau, event=None, decided=None):
    """One step size for the whole state; ``dp5`` lands on save times, ``dop853`` interpolates them.

    With an ``event`` (one system, ``dp5``: :func:`integrate` refuses the rest) the run stops after the accepted
    step whose end state fired: the save times after it get that decided state (``stats.events``)."""
    save_times = np.asarray(save_times, dtype=float)
    if event is not None and decided:  # a resumed run already decided: every frame is the decided state
        stats = AdaptiveStats(events=_event_record(event, dict(decided), 1, 0.0, None))
        return save_times.copy(), np.array([X0.copy() for _ in save_times]), stats
    dense = solver is DOP853
    coeffs = (dop853_tableau() if tableau is None else tableau) if dense else None
    stats = AdaptiveStats()
    t, t_end = float(save_times[0]), float(save_times[-1])
    segments = Segments(field, t, t_end, timed)
    X = X0.copy()
    g = segments.step_field(t)
    fX = g(X, t)
    stats.evaluations += 1
    h, extra = ctl.hinit(g, X, fX, t)
    stats.evaluations += extra
    first = X.copy() if solver.retracts_each_step else space.retract(X.copy())
    states = [first]
    k_out = 1
    while k_out < save_times.size and save_times[k_out] <= t:  # repeated initial times
        states.append(first.copy())
        k_out += 1
    K = np.empty((16,) + X.shape) if dense else None
    what = "adaptive" if solver.name == "dp5" else solver.name
    rejected_last = False
    while k_out < save_times.size:
        if stats.accepted + stats.rejected >= ctl.max_steps:
            raise InputError(f"{what} integrator exceeded {ctl.max_steps} steps at t={t:g}")
        if stats.evaluations >= max_evaluations:
            raise budget_exhausted(f"the {solver.name} run (at t={t:g} of {t_end:g})", stats.evaluations)
        stop = float(save_times[k_out]) if solver.lands_on_saves else t_end
        if segments.points:
            stop = min(stop, segments.next_after(t))
        h_try = min(h, stop - t)
        landed = h_try >= stop - t
        t_new = stop if landed else t + h_try
        if dense:
            X_new = dop853_stages(g, X, fX, t, h_try, K, coeffs)
            K[12] = f_new = g(X_new, t_new)
            scale = ctl.scale(X, X_new)
            err = dop853_error(K, h_try, scale, ctl.measure, coeffs)
        else:
            K5, X_new = dp5_stages(g, X, fX, t, h_try)
            err = ctl.error(dp5_error(K5, h_try), ctl.scale(X, X_new))
        stats.evaluations += solver.evaluations
        if err <= 1.0:
            if dense and save_times[k_out] <= t_new:
                interpolate = dop853_dense(g, X, X_new, fX, f_new, K, t, h_try, coeffs[1], coeffs[0], coeffs[5])
                stats.evaluations += 3
                while k_out < save_times.size and save_times[k_out] <= t_new:
                    target = float(save_times[k_out])
                    states.append(space.retract(X_new.copy() if target == t_new else interpolate(target)))
                    k_out += 1
            changed = bool(segments.points) and segments.index(t_new) != segments.index(t)
            restart = changed and segments.restarts
            t = t_new
            X = space.retract(X_new) if solver.retracts_each_step or restart else X_new
            if changed:
                g = segments.step_field(t)
            if solver.retracts_each_step or changed:
                # FSAL does not survive the retraction, nor a breakpoint (the next piece's first stage): re-evaluate
                fX = g(X, t)
                stats.evaluations += 1
            else:
                fX = f_new
            stats.accepted += 1
            stats.last_step = h_try
            h = ctl.accept(err, h_try, h, landed, rejected_last)
            if restart:
                h, extra = ctl.hinit(g, X, fX, t)
                stats.evaluations += extra
            rejected_last = False
            if progress is not None:
                progress(t, t_end)
            if solver.lands_on_saves:
                while k_out < save_times.size and save_times[k_out] <= t:
                    states.append(X.copy())
                    k_out += 1
            if event is not None and event.fired(X[None])[0]:
                stats.events = _event_record(event, {0: float(t)}, 1, float(stats.accepted + stats.rejected), None)
                while k_out < save_times.size:  # the later frames: the decided state
                    states.append(X.copy())
                    k_out += 1
        else:
            stats.rejected += 1
            rejected_last = True
            h = ctl.reject(err, h_try, t, f"{what} step size underflow at t={t:g}")
    if event is not None and stats.events is None:
        stats.events = _event_record(event, {}, 1, float(stats.accepted + stats.rejected), None)
    return save_times.copy(), np.array(states), stats


def _on(field, idx: np.ndarray, B: int):
    """The batched field restricted to the members ``idx`` (the field itself when all are there)."""
    if idx.size == B:
        return field
    take = getattr(field, "take", None)
    if take is None:
        raise InputError("per-member steps need a batched field that can be restricted to some members")
    return take(idx)


def _per_member(field, X0, save_times, solver: Embedded, ctl: Adaptive, space, progress, max_evaluations,
                event=None, decided=None):
    """One step size and accept/reject per member (``dp5``): member b takes exactly its single run's steps.

    At every round the members that have not reached the next save time attempt one step each, of their own
    size, in one evaluation of the field restricted to them (``field.take``); the step control runs member by
    member in Python floats (the single run's operations). With an ``event``, a member whose event fired after an
    accepted step attempts no more steps (its later frames repeat its state)."""
    if solver.name != "dp5":
        raise InputError(f"per-member adaptive steps run dp5 only, got {solver.name}")
    if is_time_dependent(field):
        raise InputError("per-member steps take a field without time (no depth schedule); use --step shared")
    save_times = np.asarray(save_times, dtype=float)
    B = X0.shape[0]
    X = X0.copy()
    t = [float(save_times[0])] * B
    k_first = field(X)
    work = 1.0
    accepted, rejected, evaluations = [0] * B, [0] * B, [1] * B
    h = [ctl.hinit(None, X[b], k_first[b], t[b])[0] for b in range(B)]
    states = [X.copy()]
    t_end = float(save_times[-1])
    decided = dict(decided or {}) if event is not None else {}  # a resumed run's decided members do not move
    for target in save_times[1:]:
        while True:
            active = [b for b in range(B) if t[b] < target and b not in decided]
            if not active:
                break
            for b in active:
                if accepted[b] + rejected[b] >= ctl.max_steps:
                    raise InputError(f"adaptive integrator exceeded {ctl.max_steps} steps at t={t[b]:g} (member {b})")
            if work >= max_evaluations:
                raise budget_exhausted(f"the per-member dp5 run (at t={min(t):g} of {t_end:g})", work)
            idx = np.array(active)
            h_try = [min(h[b], target - t[b]) for b in active]
            f = _on(field, idx, B)
            hcol = np.array(h_try, dtype=float).reshape(-1, 1, 1)
            Xa = X[idx]
            K, X_new = dp5_stages(lambda Y, _t: f(Y), Xa, k_first[idx], 0.0, hcol)
            work += 6.0 * idx.size / B
            norms = ctl.error(dp5_error(K, hcol), ctl.scale(Xa, X_new))
            ok = []
            for i, b in enumerate(active):
                err = float(norms[i])
                evaluations[b] += 6
                if err <= 1.0:
                    landed = h_try[i] >= target - t[b]
                    t[b] = target if landed else t[b] + h_try[i]
                    accepted[b] += 1
                    h[b] = ctl.accept(err, h_try[i], h[b], landed)
                    ok.append(i)
                else:
                    rejected[b] += 1
                    h[b] = ctl.reject(err, h_try[i], t[b], f"adaptive step size underflow at t={t[b]:g} (member {b})")
            if ok:
                done = idx[ok]
                X[done] = space.retract(X_new[ok])
                k_first[done] = _on(field, done, B)(X[done])  # FSAL does not survive the retraction
                work += done.size / B
                for b in done:
                    evaluations[b] += 1
                if event is not None:
                    for b in done[event.fired(X[done])]:
                        decided[int(b)] = float(t[b])
            if progress is not None:
                progress(min(t), t_end)
        states.append(X.copy())
    stats = {"accepted_steps": accepted, "rejected_steps": rejected, "field_evaluations": evaluations,
             "batched_evaluations": work, "method_used": "dp5", "step": "per-member"}
    if event is not None:  # member-steps: attempted steps (the run without the event is not known here)
        stats["events"] = _event_record(event, decided, B, float(sum(accepted) + sum(rejected)), None)
    return save_times.copy(), np.array(states), stats
