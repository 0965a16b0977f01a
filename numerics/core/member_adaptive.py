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

Only ``dp5`` is offered per member: DOP853's dense output would have to be formed per member at its own step
(not implemented; ``dop853`` and ``adaptive`` at rtol <= 1e-3 are refused with one line). Time-dependent
fields (depth schedules) are refused too: one evaluation cannot hold several times.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError
from numerics.common.limits import budget_exhausted
from numerics.core.integrators import _DP_E, _dp5_stages, _initial_step, is_time_dependent, renormalize

#: the step-size control of :func:`numerics.core.integrators.integrate_adaptive` (kept equal: a test compares)
SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 5.0


def _on(field, idx: np.ndarray, B: int):
    """The batched field restricted to the members ``idx`` (the field itself when all are there)."""
    if idx.size == B:
        return field
    take = getattr(field, "take", None)
    if take is None:
        raise InputError("per-member steps need a batched field that can be restricted to some members")
    return take(idx)


def integrate_per_member(field, X0: np.ndarray, save_times, rtol: float = 1e-9, atol: float = 1e-12,
                         h0: float | None = None, max_steps: int = 10_000_000, progress=None,
                         project=renormalize, max_evaluations: float = math.inf):
    """Dormand-Prince 5(4) on an ensemble ``X0`` (B, n, d) with a step per member (module docstring).

    Returns ``(times, states, stats)`` with ``states`` of shape (frames, B, n, d) and ``stats`` holding, per
    member, ``accepted_steps``, ``rejected_steps`` and ``field_evaluations`` (counted as the single run counts
    them), and ``batched_evaluations``: the work in units of one evaluation of the whole batch (a round with m
    active members costs m / B). ``max_steps`` applies per member, ``max_evaluations`` to the batched work.
    """
    if is_time_dependent(field):
        raise InputError("per-member steps take a field without time (no depth schedule); use --step shared")
    save_times = np.asarray(save_times, dtype=float)
    if save_times.ndim != 1 or save_times.size < 1 or np.any(np.diff(save_times) < 0):
        raise InputError("save_times must be a non-empty non-decreasing 1-D sequence")
    B = X0.shape[0]
    X = X0.copy()
    t = [float(save_times[0])] * B
    k_first = field(X)
    work = 1.0
    accepted, rejected, evaluations = [0] * B, [0] * B, [1] * B
    h = [h0 if h0 is not None else _initial_step(X[b], k_first[b], rtol, atol) for b in range(B)]
    states = [X.copy()]
    t_end = float(save_times[-1])
    for target in save_times[1:]:
        while True:
            active = [b for b in range(B) if t[b] < target]
            if not active:
                break
            for b in active:
                if accepted[b] + rejected[b] >= max_steps:
                    raise InputError(f"adaptive integrator exceeded {max_steps} steps at t={t[b]:g} (member {b})")
            if work >= max_evaluations:
                raise budget_exhausted(f"the per-member dp5 run (at t={min(t):g} of {t_end:g})", work)
            idx = np.array(active)
            h_try = [min(h[b], target - t[b]) for b in active]
            f = _on(field, idx, B)
            hcol = np.array(h_try, dtype=float).reshape(-1, 1, 1)
            Xa = X[idx]
            K, X_new = _dp5_stages(lambda Y, _t: f(Y), Xa, k_first[idx], 0.0, hcol)
            work += 6.0 * idx.size / B
            err = hcol * sum(e * K[j] for j, e in enumerate(_DP_E) if e != 0.0)
            scale = atol + rtol * np.maximum(np.abs(Xa), np.abs(X_new))
            norms = (np.abs(err) / scale).max(axis=(1, 2)) if err[0].size else np.zeros(idx.size)
            ok = []
            for i, b in enumerate(active):
                err_norm = float(norms[i])
                evaluations[b] += 6
                if err_norm <= 1.0:
                    last = h_try[i] >= target - t[b]
                    t[b] = target if last else t[b] + h_try[i]
                    accepted[b] += 1
                    fac = FAC_MAX if err_norm == 0 else min(FAC_MAX, SAFETY * err_norm ** (-1 / 5))
                    if not last or h_try[i] >= h[b]:
                        h[b] = h_try[i] * fac
                    ok.append(i)
                else:
                    rejected[b] += 1
                    h[b] = h_try[i] * max(FAC_MIN, SAFETY * err_norm ** (-1 / 5))
                    if h[b] < 1e-14 * max(1.0, abs(t[b])):
                        raise InputError(f"adaptive step size underflow at t={t[b]:g} (member {b})")
            if ok:
                done = idx[ok]
                X[done] = project(X_new[ok])
                k_first[done] = _on(field, done, B)(X[done])  # FSAL does not survive the projection
                work += done.size / B
                for b in done:
                    evaluations[b] += 1
            if progress is not None:
                progress(min(t), t_end)
        states.append(X.copy())
    return save_times.copy(), np.array(states), {
        "accepted_steps": accepted, "rejected_steps": rejected, "field_evaluations": evaluations,
        "batched_evaluations": work, "method_used": "dp5", "step": "per-member"}
