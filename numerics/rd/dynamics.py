r"""Integration of the :math:`\mathbb{R}^d` self-attention dynamics in the rescaled variables :math:`z = e^{-tV} x`.

Rescaled equation (derived and checked in :mod:`theory.rd`, note ``proofs_notes/rd-rescaled-equation.md``):

.. math::

    \frac{dz_i}{dt} = V \Bigl(\sum_j P_{ij}(t) z_j - z_i\Bigr), \qquad
    P(t) = \text{attention of } x = e^{tV} z,

with the logits :math:`\langle Q x_i, K x_j\rangle = z_j^\top e^{tV^\top} A e^{tV} z_i`. The :math:`z` stay bounded
(:math:`\operatorname{conv}\{z_j\}` is invariant for :math:`V = I`), and the growth :math:`e^{tV}` enters only
through the logit scale, which is applied in log form and capped
(:meth:`numerics.rd.model.RdModel.rescaled_attention`), so long horizons neither overflow nor lose precision.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_finite_array, require_int, require_real
from numerics.common.limits import check_memory, check_work, steps_of
from numerics.core.model import SaveAt, Solver
from numerics.gaussian.solutions import SinkhornState, attention_matrix, particle_velocity
from numerics.rd.model import RdModel

#: P(t) is stored in the output only up to this many tokens (n^2 doubles per saved time)
MAX_TOKENS_WITH_P = 2000
#: Sinkhorn iterations per field evaluation (warm-started). The iteration contracts slowly once the logit scale
#: e^{2 lambda t} is large (the plan tends to the identity permutation): with V = A = I and N(0, I) tokens it
#: stalls near t = 1.2 even with 20 000 iterations (measured). Sinkhorn runs are therefore limited to moderate
#: lambda t; beyond, the run stops with an InputError naming the tolerance (no epsilon-scaling yet)
SINKHORN_MAX_ITER = 5_000


@dataclass(frozen=True)
class RdRun:
    r"""A saved :math:`\mathbb{R}^d` run: ``times`` ``(m,)``, rescaled ``Z`` ``(m, n, d)``, :math:`X = e^{tV} Z`
    ``(m, n, d)`` (inf where it overflows), ``P`` ``(m, n, n)`` or None, and the metadata (model, solver, seeds)."""

    times: np.ndarray
    Z: np.ndarray
    X: np.ndarray
    P: np.ndarray | None
    meta: dict


def require_tokens(X0, d: int) -> np.ndarray:
    """An (n, d) finite array of n >= 2 tokens."""
    X0 = require_finite_array(X0, "X0", ndim=2)
    if X0.shape[1] != d or X0.shape[0] < 2:
        raise InputError(f"initial tokens must have shape (n, {d}) with n >= 2, got {X0.shape}")
    return X0


def rescaled_velocity(model: RdModel, t: float, Z: np.ndarray, state: SinkhornState | None = None,
                      z_scale: float | None = None) -> np.ndarray:
    """dz/dt = (P(t) Z - Z) V^T (rows z_i), P(t) the attention of x = e^{tV} z (see module docstring)."""
    scale = float(np.max(np.linalg.norm(Z, axis=1))) if z_scale is None else z_scale
    att, _ = model.rescaled_attention(t, scale)
    PZ = particle_velocity(att, Z, state=state, sinkhorn_max_iter=SINKHORN_MAX_ITER)
    return (PZ - Z) @ model.V.T


def rescaled_attention_matrix(model: RdModel, t: float, Z: np.ndarray,
                              state: SinkhornState | None = None) -> np.ndarray:
    """P(t) of the tokens x = e^{tV} z (dense; :func:`numerics.gaussian.solutions.attention_matrix`)."""
    att, _ = model.rescaled_attention(t, float(np.max(np.linalg.norm(Z, axis=1))))
    return attention_matrix(att, Z, state=state)


def _check_resources(model: RdModel, n: int, d: int, steps: int, frames: int, keep_P: bool, method: str) -> None:
    """Refuse a run whose memory or work estimate exceeds the limits (:mod:`numerics.common.limits`).

    Memory: the saved frames (Z and X: 2 n d each; P: n^2 each when kept) and about six n x n work arrays of one
    evaluation (logits, weights, Sinkhorn scalings). Work: per field evaluation the logits and the weighted sum
    (about 4 n^2 d) plus the exponentials (n^2); Sinkhorn adds up to :data:`SINKHORN_MAX_ITER` sweeps of 2 n^2
    (the worst case is what the limit must bound); rk4 makes 4 evaluations per step, layer one.
    """
    frame_bytes = 8.0 * (2 * n * d + (n * n if keep_P else 0))
    check_memory(frames * frame_bytes + 6 * 8.0 * n * n, f"the R^d run ({frames} frames of n = {n} tokens"
                 f"{', with P(t)' if keep_P else ''})")
    per_eval = 4.0 * n * n * d + 20.0 * n * n
    if model.attention == "sinkhorn":
        per_eval += 2.0 * n * n * SINKHORN_MAX_ITER
    check_work(steps * (4 if method == "rk4" else 1) * per_eval, f"the R^d run ({steps} steps, n = {n}, d = {d})")


def step_count(t_end: float, dt: float) -> int:
    """The number N = ceil(t_end/dt) of equal fixed steps to ``t_end`` (0 for t_end = 0; a quotient within 1e-9
    of an integer is that integer); a t_end/dt that is not a finite number (1e308/1e-300) is refused."""
    if not np.isfinite(steps_of(t_end, dt)):
        raise InputError(f"t_end/dt = {t_end:g}/{dt:g} steps is not a finite number of steps")
    return max(1, int(np.ceil(t_end / dt - 1e-9))) if t_end > 0 else 0


def simulate_rd(model: RdModel, X0, t_end: float, *, solver: Solver, save: SaveAt = SaveAt(),
                keep_P: bool | None = None, progress: Callable[[float, float], None] | None = None) -> RdRun:
    r"""Integrate :math:`dx_i/dt = V \sum_j P_{ij} x_j` from ``X0`` (:math:`z(0) = x(0)`) to ``t_end`` in the rescaled
    variables.

    ``solver``: ``rk4`` with step ``dt`` (the field is smooth but switches fast once :math:`P` is nearly Boolean;
    RK4 with :math:`dt \le 0.05 / \lVert V\rVert` resolves it, see the note) or ``layer`` (explicit Euler in
    :math:`z`). ``save``: every :math:`k`-th step of the uniform grid
    :math:`h = t_{\text{end}} / \lceil t_{\text{end}} / dt\rceil`, or explicit times, which are hit exactly: the run
    then steps from one save time to the next with equal steps :math:`h_i \le dt` (a requested :math:`t = 4.0` is
    saved at :math:`t = 4.0`, not at the nearest grid point). ``keep_P``: store :math:`P(t)` (default: when
    :math:`n \le 2000`).
    """
    d = model.d
    Z = require_tokens(X0, d).copy()
    n = Z.shape[0]
    t_end = require_real(t_end, "t_end", minimum=0.0)
    if solver.method not in ("rk4", "layer"):
        raise InputError(f"the R^d dynamics supports the fixed-step methods rk4 and layer, got {solver.method}")
    steps = step_count(t_end, solver.dt)
    if save.times is not None:
        wanted = np.asarray(save.times, dtype=float)
        if wanted.ndim != 1 or wanted.size == 0 or np.any(np.diff(wanted) <= 0) or wanted[0] < 0 \
                or wanted[-1] > t_end * (1 + 1e-12):
            raise InputError("save times must be increasing and in [0, t_end]")
        wanted = np.minimum(wanted, t_end)
        knots = np.unique(np.concatenate([[0.0], wanted, [t_end]]))
        pieces = [step_count(b - a, solver.dt) for a, b in zip(knots[:-1], knots[1:])]
        steps = int(sum(pieces))
        frames = wanted.size
    else:
        every = require_int(save.every, "save_every", minimum=1)
        frames = steps // every + 1 + (1 if steps % every else 0)  # the multiples of every and the last step
    if keep_P is None:
        keep_P = n <= MAX_TOKENS_WITH_P
    if keep_P and n > MAX_TOKENS_WITH_P:
        raise InputError(f"P(t) is stored for n <= {MAX_TOKENS_WITH_P} tokens only, got n = {n}")
    _check_resources(model, n, d, steps, frames, keep_P, solver.method)  # before any per-frame structure is built
    # the step grid: (start time, step) of every step, and whether the state after it is saved
    if save.times is not None:
        starts = np.concatenate([a + (b - a) * np.arange(m) / m for a, b, m in zip(knots[:-1], knots[1:], pieces)]) \
            if steps else np.zeros(0)
        hs = np.concatenate([np.full(m, (b - a) / m) for a, b, m in zip(knots[:-1], knots[1:], pieces)]) \
            if steps else np.zeros(0)
        ends = np.cumsum(pieces)  # step index after which knot k + 1 is reached
        saved_knots = set(np.searchsorted(knots, wanted).tolist())
        save_after = {int(ends[k - 1]) for k in saved_knots if k > 0}
        save_first = 0 in saved_knots
        end_times = {int(ends[k]): float(knots[k + 1]) for k in range(len(pieces))}
    else:
        h = t_end / steps if steps else 0.0
        starts, hs = np.arange(steps) * h, np.full(steps, h)
        save_after = set(range(every, steps + 1, every)) | {steps}
        save_first = True
        end_times = {}
    state = SinkhornState(np.zeros(n), np.zeros(n)) if model.attention == "sinkhorn" else None
    # the logit cap is computed from the current tokens at every evaluation (for V with eigenvalues of negative
    # real part some z grow like e^{-Re(mu) t}); capping changes P only at exact float64 ties
    f = lambda t, Y: rescaled_velocity(model, t, Y, state)
    times, Zs, Ps = [], [], []

    def keep(t, Y):
        times.append(t)
        Zs.append(Y.copy())
        if keep_P:
            Ps.append(rescaled_attention_matrix(model, t, Y, state))

    if save_first:
        keep(0.0, Z)
    for k in range(steps):
        t, h = float(starts[k]), float(hs[k])
        k1 = f(t, Z)
        if solver.method == "layer":
            Z = Z + h * k1
        else:
            k2 = f(t + h / 2, Z + (h / 2) * k1)
            k3 = f(t + h / 2, Z + (h / 2) * k2)
            k4 = f(t + h, Z + h * k3)
            Z = Z + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        if not np.all(np.isfinite(Z)):
            raise InputError(f"the rescaled tokens became non-finite at t = {t + h:.6g} (reduce dt)")
        if k + 1 in save_after:
            keep(end_times.get(k + 1, (k + 1) * h if save.times is None else t + h), Z)
        if progress is not None:
            progress(t + h, t_end)
    h = float(hs.max()) if steps else 0.0
    times = np.array(times)
    Zs = np.array(Zs)
    with np.errstate(over="ignore", invalid="ignore"):
        Xs = np.array([Y @ model.propagator(t).T for t, Y in zip(times, Zs)])
    meta = {"model": model.to_meta(), "solver": {"method": solver.method, "dt": h, "steps": steps},
            "n": n, "t_end": t_end}
    if state is not None:
        meta["sinkhorn_iterations"] = state.iterations
    return RdRun(times, Zs, Xs, np.array(Ps) if keep_P else None, meta)
