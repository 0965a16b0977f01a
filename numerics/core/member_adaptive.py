"""Per-member adaptive steps of an ensemble: Dormand-Prince 5(4) with one step size and one accept/reject per member.

:func:`numerics.core.integrators.integrate_adaptive` run on a (B, n, d) ensemble with a *shared* step lets the
worst member set everybody's step. Here member b keeps its own time t_b, step h_b, error norm and counters, and
takes exactly the steps its single run takes: at every round, the members that have not yet reached the next
save time (the *active* ones) attempt one step each, of their own size h_b, in one vectorised evaluation of the
field on those members only (``field.take(indices)``, the batched field restricted to them); members that
reached the save time wait until all have (their state is saved then). The step-size control is the single
run's, evaluated member by member with the same scalar operations, so with a batched field that gives each
member the bits of its single field (the ``direct`` backend) every member equals its single ``dp5`` run bit
for bit, its step counts included.

The loop is :func:`numerics.core.loop.integrate` with ``Adaptive(per_member=True)``: the same solver and the
same controller (:class:`numerics.core.controllers.Adaptive`) as the shared-step run.

Only ``dp5`` is offered per member: DOP853's dense output would have to be formed per member at its own step
(not implemented; ``dop853`` and ``adaptive`` at rtol <= 1e-3 are refused with one line). Time-dependent
fields (depth schedules) are refused too: one evaluation cannot hold several times.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError
from numerics.core import loop
from numerics.core.controllers import Adaptive
from numerics.core.integrators import is_time_dependent, renormalize
from numerics.core.loop import _on  # noqa: F401 - re-exported
from numerics.core.solvers import DP5
from numerics.core.space import space_of

#: the step-size control of :func:`numerics.core.integrators.integrate_adaptive` (kept equal: a test compares)
SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 5.0


def integrate_per_member(field, X0: np.ndarray, save_times, rtol: float = 1e-9, atol: float = 1e-12,
                         h0: float | None = None, max_steps: int = 10_000_000, progress=None,
                         project=renormalize, max_evaluations: float = math.inf, event=None, decided=None):
    """Dormand-Prince 5(4) on an ensemble ``X0`` (B, n, d) with a step per member (module docstring).

    Returns ``(times, states, stats)`` with ``states`` of shape (frames, B, n, d) and ``stats`` holding, per
    member, ``accepted_steps``, ``rejected_steps`` and ``field_evaluations`` (counted as the single run counts
    them), and ``batched_evaluations``: the work in units of one evaluation of the whole batch (a round with m
    active members costs m / B). ``max_steps`` applies per member, ``max_evaluations`` to the batched work.
    ``event`` (:class:`numerics.core.events.Event`): a member whose event fired after an accepted step stops
    there (``stats["events"]``; :func:`numerics.core.loop.integrate`, section "Events"); ``decided``: the members
    decided before (a resumed run's, member -> decision time), which do not move.
    """
    if is_time_dependent(field):
        raise InputError("per-member steps take a field without time (no depth schedule); use --step shared")
    save_times = np.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size < 1 or np.any(np.diff(save_times) < 0):
        raise InputError("save_times must be a non-empty non-decreasing 1-D sequence")
    control = Adaptive(rtol, atol, norm="max", per_member=True, safety=SAFETY, fac_min=FAC_MIN, fac_max=FAC_MAX,
                       order=5, h0=h0, max_steps=max_steps)
    return loop.integrate(field, X0, float(save_times[0]), float(save_times[-1]), DP5, control, space_of(project),
                          save_times=save_times, progress=progress, max_evaluations=max_evaluations, event=event,
                          decided=decided)
