r"""Ensembles: B systems integrated together, X0 of shape (B, n, d), one vectorised field evaluation per stage.

``simulate(model, X0, t_end, solver=..., save=..., members=Members(...))`` with a 3-D ``X0`` (or with
``members``) runs the one driver (:mod:`numerics.core.simulate`) with B members; this module holds what the
driver needs for a batch (which models batch, the batched field, the cost check, the energies, the file
validation). What may differ between members is in :class:`numerics.core.members.Members`:
:math:`\beta`, Q, K, V, the noise level D and the noise seeds, each given per member (a leading axis of length B) or
shared (``None``: the model's value, the solver's seed). Everything else (the model's kind, time unit, heads,
MLP, schedule, mask, n, d, the solver and the saved times) is shared.

What each member gets (``docs/guide/ensembles.md`` has the table and the tests that check it):

- the field of :mod:`numerics.core.attention`, the one pipeline of single runs, on the (B, n, d) state;
- the same integrators (:func:`numerics.core.integrators.integrate`) on the (B, n, d) state: fixed steps
  (``layer``, ``rk4``) act member by member; the adaptive methods take one *shared* step, controlled by the
  worst member (``dp5``: max norm over all members; ``dop853``: the largest member RMS norm), so every member
  meets its tolerance but takes other steps than a single run;
- noise: member b draws its increments from ``numpy.random.default_rng(seed_b)`` exactly as a single run
  with that seed (one (n, d) normal array per step);
- energies per member and frame (:func:`ensemble_energies`), in the normalisation a single run would choose
  for the member's :math:`\beta`.

Members reproduce single runs bit for bit (fixed steps, with and without noise) except where the single run's field also
summed energy terms at saved frames (``RowSumMemo``; :math:`d \ge` about 8 from random starts), where they agree to
rounding; adaptive members agree within the tolerance; energies agree to rounding. Features that cannot be batched (the
Fourier and harmonic backends, model fields added later; the Numba backend with an MLP, schedule, mask, positions or a
user kernel) are refused with one line. User kernels, ALiBi, RoPE, position labels (also with a depth schedule) and
:math:`\beta = \gamma \log n` run for a batch through the same attention pipeline as for one system; the normalisation
schemes run the single run's :math:`(\theta, r)` field (:class:`numerics.core.norms.NormField`) on the state
(B, n, d + 1), their radii (B, n) saved per frame.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from numerics.common.errors import SPHERE_TOLERANCE, InputError, require_finite_array
from numerics.common.limits import check_array, check_work, steps_of
from numerics.core.integrators import ADAPTIVE_METHODS
# what differs between members, and one member's view (their home is numerics.core.members; kept importable here)
from numerics.core.members import Members, MemberStreams, member, require_batch, resolve_members  # noqa: F401

#: Model fields an ensemble knows how to batch; any other field with a non-default value is refused
BATCHABLE_MODEL_FIELDS = ("kind", "beta", "Q", "K", "V", "time_unit", "noise", "heads", "mlp", "schedule",
                          "causal", "kernel", "alibi", "rope", "positions", "beta_scaling", "gamma",
                          "norm", "norm_alpha", "norm_switch", "norm_scale", "radius0", "centering",
                          "common_noise", "common_noise_law", "attention")
#: largest number of pair terms formed at once by :func:`ensemble_energies` (2^22 doubles = 32 MiB)
ENERGY_BLOCK_ENTRIES = 1 << 22


def check_batchable(model, backend: str) -> None:
    """Refuse, with one line, a model or backend that the ensemble path cannot batch."""
    for f in dataclasses.fields(model):
        if f.name in BATCHABLE_MODEL_FIELDS:
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        value = getattr(model, f.name)
        if value is not None and not _same(value, default):
            raise InputError(f"batches (X0 of shape (B, n, d)) do not support Model.{f.name} yet; "
                             "run the members one by one")
    if backend in ("fourier", "harmonic"):
        raise InputError(f"the {backend} backend evaluates one system; batches (X0 of shape (B, n, d)) use "
                         "--backend direct, auto or numba")
    from numerics.core.engines import check_backend

    check_backend(model, backend, batch=True)  # a compiled engine's one-line refusal (the same as one system's)


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def batch_vector_field(model, members: dict, d: int, B: int, backend: str = "direct", n: int | None = None):
    """The batched field of ``model`` with the per-member values of :func:`resolve_members` and its backend name:
    the attention pipeline (:class:`numerics.core.attention.Attention`) on (B, n, d), for ``numba`` the compiled
    engine that :func:`numerics.core.engines.choose` picks (members as vector lanes); a depth schedule through
    :class:`numerics.core.batch_field.BatchScheduledField`. ``n`` (tokens) is needed for position labels and a
    log-scaled beta."""
    from numerics.core.attention import Attention
    from numerics.core.batch_field import BatchScheduledField
    from numerics.core.engines import ENGINES, choose_for_model

    engine = choose_for_model(model, backend, batch=True, members=members)  # (refuses numba with a schedule)
    if model.schedule is not None:
        beta = model.beta if members["beta"] is None else members["beta"]
        return BatchScheduledField(beta, model.kind, model.schedule, model.causal,
                                   positions=model.position_encoding()), "blocks"
    attention = Attention.from_model(model, n, d, members=members, engine=engine)
    name = ("numba" if ENGINES[engine].compiled else "kernel" if model.kernel is not None else
            "blocks" if model.has_architecture else "direct")
    return attention.batched(), name


def check_ensemble_cost(B: int, n: int, d: int, t_end: float, solver, save, t0: float = 0.0) -> float:
    """Refuse, before any work, an ensemble whose frames or stages do not fit in memory or whose work exceeds
    the limit (:mod:`numerics.common.limits`); returns the operations of one batched field evaluation.
    ``t0``: the start of a resumed run (its steps are those of [t0, t_end])."""
    what = f"a batch of B={B} systems with n={n}, d={d}"
    per_eval = float(B) * n * n * (2 * d + 8)
    if solver.method in ADAPTIVE_METHODS:
        steps, frames = None, 101 if save.times is None else save.times.size
    else:
        steps = steps_of(t_end, solver.dt, t0)
        if not np.isfinite(steps):
            raise InputError(f"t_end/dt = {t_end - t0:g}/{solver.dt:g} steps is not a finite number of steps")
        frames = (steps // save.every + 2) if save.times is None else save.times.size
    check_array((frames, B, n, d), what + f" ({frames:.3g} saved frames)")
    check_array((B, n, d), what, copies=20)  # the state, the stages of dop853 and the tiles' operands
    evals = 0.0 if steps is None else steps * {"layer": 1, "rk4": 4}.get(solver.method, 4)
    check_work(evals * per_eval + frames * float(B) * n * n * 4, what)
    return per_eval


#: the energy of a user kernel's run (as a single run records it)
KERNEL_ENERGY_DEFINITION = "E = 1/(2 n^2) sum_ij phi(s_ij) (user kernel phi)"


def _kernel_energies(states: np.ndarray, betas, kernel, progress=None) -> np.ndarray:
    """E = 1/(2 n^2) sum_ij phi(s_ij) of every frame and member (frames, B): the single run's
    :func:`numerics.core.kernel_field.kernel_energy` per member (the kernel compiled once)."""
    from numerics.core.kernel_field import compile_kernel, kernel_energy

    compiled = compile_kernel(kernel)
    frames, B = states.shape[:2]
    out = np.empty((frames, B))
    for k in range(frames):
        for b in range(B):
            out[k, b] = kernel_energy(states[k, b], compiled, float(betas[b]))
        if progress is not None:
            progress(k + 1, frames)
    return out


# -- energies ---------------------------------------------------------------------------------------------------
from numerics.core.energy import batch_energies  # noqa: E402 - the one pair sum
from numerics.core.field import energy_block  # noqa: E402


def ensemble_energies(states: np.ndarray, betas, normalizations, progress=None) -> np.ndarray:
    """Energies (frames, B) of ``states`` (frames, B, n, d), member b in ``normalizations[b]`` at ``betas[b]``.

    The pair sum of a single run (:func:`numerics.core.energy.pair_energies`: upper block triangle, the same
    blocks and summation order) over every member and frame at once, in chunks of members: each member's energy
    equals :func:`numerics.core.field.interaction_energy` of that member alone, bit for bit (a single run may
    read a frame's energy off the field's tiles instead, equal to the pair sum to rounding).
    """
    m, B, n, d = states.shape
    betas = np.asarray(betas, dtype=float)
    flat = np.ascontiguousarray(states, dtype=float).reshape(m * B, n, d)  # frame-major: row k B + b is (k, b)
    return batch_energies(flat, np.tile(betas, m), list(normalizations) * m, block=energy_block(n, d),
                          progress=progress).reshape(m, B)


# -- files ----------------------------------------------------------------------------------------------------
def validate_loaded(path, data: dict, where: str):
    """Arrays of an ensemble trajectory file (X of shape (frames, B, n, d), energy (frames, B)), validated as
    :meth:`numerics.core.trajectory.Trajectory.load` validates a single one."""
    times = require_finite_array(data["times"], f"times of {where}", ndim=1)
    X = require_finite_array(data["X"], f"states X of {where}", ndim=4)
    energy = require_finite_array(data["energy"], f"energy of {where}", ndim=2)
    if times.size < 1 or times.shape != (X.shape[0],) or energy.shape != X.shape[:2]:
        raise InputError(f"invalid {where}: inconsistent shapes times {times.shape}, X {X.shape}, "
                         f"energy {energy.shape}")
    if np.any(np.diff(times) <= 0):
        raise InputError(f"invalid {where}: times must increase strictly")
    if X.shape[1] < 1 or X.shape[2] < 1 or X.shape[3] < 2:
        raise InputError(f"invalid {where}: states must have B >= 1 members, n >= 1 rows, d >= 2 columns, "
                         f"got {X.shape}")
    off = np.abs(np.linalg.norm(X, axis=3) - 1.0)
    if off.max() > SPHERE_TOLERANCE:
        k, b, i = np.unravel_index(int(np.argmax(off)), off.shape)
        raise InputError(f"invalid {where}: frame {k} member {b} row {i} is off the unit sphere by "
                         f"{off[k, b, i]:.3g}")
    return times, X, energy


__all__ = ["Members", "MemberStreams", "check_batchable", "ensemble_energies", "member", "require_batch"]
