"""Ensembles: B systems integrated together, X0 of shape (B, n, d), one vectorised field evaluation per stage.

``simulate(model, X0, t_end, solver=..., save=..., members=Members(...))`` with a 3-D ``X0`` (or with
``members``) comes here (:func:`simulate_ensemble`). What may differ between members is in :class:`Members`:
beta, Q, K, V, the noise level D and the noise seeds, each given per member (a leading axis of length B) or
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
  for the member's beta.

Members reproduce single runs bit for bit (fixed steps, with and without noise) except where the single
run's field also summed energy terms at saved frames (``RowSumMemo``; d >= about 8 from random starts),
where they agree to rounding; adaptive members agree within the tolerance; energies agree to rounding.
Features that cannot be batched (the normalisation schemes, the Fourier and harmonic backends, positions with a
depth schedule, model fields added later; the Numba backend with an MLP, schedule, mask, positions or a user
kernel) are refused with one line. User kernels, ALiBi, RoPE, position labels and beta = gamma log n run for a
batch through the same attention pipeline as for one system.
"""
from __future__ import annotations

import dataclasses
import time as _time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import exprel

from numerics.common.errors import SPHERE_TOLERANCE, InputError, require_finite_array, require_int
from numerics.common.limits import check_array, check_work, evaluation_budget, steps_of
from numerics.common.provenance import package_versions
from numerics.core.field import ENERGY_DEFINITIONS, EXPREL_MAX_BETA, energy_normalization_for
from numerics.core.integrators import ADAPTIVE_METHODS, integrate

#: Model fields an ensemble knows how to batch; any other field with a non-default value is refused
BATCHABLE_MODEL_FIELDS = ("kind", "beta", "Q", "K", "V", "time_unit", "noise", "heads", "mlp", "schedule",
                          "causal", "kernel", "alibi", "rope", "positions", "beta_scaling", "gamma")
#: largest number of pair terms formed at once by :func:`ensemble_energies` (2^22 doubles = 32 MiB)
ENERGY_BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True, eq=False)
class Members:
    """What differs between the members of an ensemble; ``None`` means shared (the model's value).

    Parameters
    ----------
    beta : (B,) array_like, optional
        Inverse temperature of each member.
    Q, K, V : (B, d, d) array_like, optional
        Attention matrices of each member (one head, no heads/MLP/schedule).
    noise : (B,) array_like, optional
        Noise level D_b >= 0 of each member (all zero or all positive).
    seeds : (B,) sequence of int, optional
        Noise seeds: member b's increments come from ``numpy.random.default_rng(seeds[b])`` (default: the
        solver's seed plus b).
    """

    beta: Any = None
    Q: Any = None
    K: Any = None
    V: Any = None
    noise: Any = None
    seeds: Any = None

    def size(self) -> int | None:
        """B as given by the per-member values (``None`` if every value is shared)."""
        sizes = {np.shape(v)[0] for v in (self.beta, self.Q, self.K, self.V, self.noise, self.seeds)
                 if v is not None and np.ndim(v) > 0}
        return sizes.pop() if len(sizes) == 1 else (None if not sizes else -1)


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
    if model.schedule is not None and model.has_positions:
        raise InputError("batches (X0 of shape (B, n, d)) do not support positions (alibi, rope) with a depth "
                         "schedule yet; run the members one by one")


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def require_batch(X0, name: str = "X0") -> np.ndarray:
    """Validate a (B, n, d) array of B configurations on S^{d-1} (its size checked from its shape first: the
    validation copies it, and the integration keeps several arrays of that size)."""
    shape = np.shape(X0)
    if len(shape) == 3:
        check_array(shape, f"a batch of B={shape[0]} systems with n={shape[1]}, d={shape[2]}", copies=20)
    X = require_finite_array(X0, name, ndim=3)
    B, n, d = X.shape
    if B < 1 or n < 1 or d < 2:
        raise InputError(f"{name} must have shape (B, n, d) with B >= 1, n >= 1, d >= 2, got {X.shape}")
    err = np.abs(np.linalg.norm(X, axis=2) - 1.0)
    if err.max() > SPHERE_TOLERANCE:
        b, i = np.unravel_index(int(np.argmax(err)), err.shape)
        raise InputError(f"{name} member {b} row {i} is off the unit sphere by {err[b, i]:.3g} > "
                         f"{SPHERE_TOLERANCE:g}")
    return X


def _per_member(value, B: int, name: str, shape: tuple = ()) -> np.ndarray | None:
    if value is None:
        return None
    arr = require_finite_array(value, name, ndim=1 + len(shape))
    if arr.shape[0] != B:
        raise InputError(f"{name} has {arr.shape[0]} values for a batch of {B} members")
    if arr.shape[1:] != shape:
        raise InputError(f"{name} must have shape {(B,) + shape}, got {arr.shape}")
    return arr


def resolve_members(model, members: Members | None, B: int, d: int, seed: int) -> dict:
    """Validated per-member values: ``beta`` (B,), ``M``/``V`` (None, (d, d) or (B, d, d)), ``noise`` (B,) and
    ``seeds`` (B,) (a one-line :class:`InputError` for a wrong length, shape or value)."""
    members = members if members is not None else Members()
    if not isinstance(members, Members):
        raise InputError(f"members must be a numerics.core.ensemble.Members, got {type(members).__name__}")
    beta = _per_member(members.beta, B, "beta (per member)")
    noise = _per_member(members.noise, B, "noise (per member)")
    if noise is not None and np.any(noise < 0):
        raise InputError(f"noise (per member) must be >= 0, got {float(noise.min()):g}")
    if noise is not None and np.any(noise > 0) and np.any(noise == 0):
        raise InputError("noise (per member) must be all zero or all positive (a noiseless member runs "
                         "another integrator); split the batch")
    mats = {name: _per_member(getattr(members, name), B, f"{name} (per member)", (d, d)) for name in "QKV"}
    if beta is not None and model.beta_scaling != "fixed":
        raise InputError("per-member beta needs a fixed beta (the model sets beta = gamma log n)")
    if any(m is not None for m in mats.values()):
        if model.has_architecture or model.kernel is not None:
            raise InputError("per-member Q, K, V need a one-head model (no heads, MLP, schedule, mask, positions "
                             "or user kernel)")
        if model.Q is not None or model.K is not None or model.V is not None:
            raise InputError("give Q, K, V either in the model (shared) or per member, not both")
    if members.seeds is None:
        seeds = [seed + b for b in range(B)]
    else:
        if np.ndim(members.seeds) != 1 or len(members.seeds) != B:
            raise InputError(f"seeds (per member) must be a list of {B} integers, got {np.shape(members.seeds)}")
        seeds = [require_int(s, "seed (per member)", minimum=0) for s in members.seeds]
    Q = mats["Q"] if mats["Q"] is not None else model.Q
    K = mats["K"] if mats["K"] is not None else model.K
    M = None
    if Q is not None or K is not None:
        eye = np.eye(d)
        M = np.swapaxes(eye if Q is None else Q, -1, -2) @ (eye if K is None else K)
    V = mats["V"] if mats["V"] is not None else model.V
    return {"beta": beta, "M": M, "V": V, "noise": noise, "seeds": seeds, "matrices": mats}


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
        return BatchScheduledField(beta, model.kind, model.schedule, model.causal), "blocks"
    attention = Attention.from_model(model, n, d, members=members, engine=engine)
    name = ("numba" if ENGINES[engine].compiled else "kernel" if model.kernel is not None else
            "blocks" if model.has_architecture else "direct")
    return attention.batched(), name


def check_ensemble_cost(B: int, n: int, d: int, t_end: float, solver, save) -> float:
    """Refuse, before any work, an ensemble whose frames or stages do not fit in memory or whose work exceeds
    the limit (:mod:`numerics.common.limits`); returns the operations of one batched field evaluation."""
    what = f"a batch of B={B} systems with n={n}, d={d}"
    per_eval = float(B) * n * n * (2 * d + 8)
    if solver.method in ADAPTIVE_METHODS:
        steps, frames = None, 101 if save.times is None else save.times.size
    else:
        steps = steps_of(t_end, solver.dt)
        if not np.isfinite(steps):
            raise InputError(f"t_end/dt = {t_end:g}/{solver.dt:g} steps is not a finite number of steps")
        frames = (steps // save.every + 2) if save.times is None else save.times.size
    check_array((frames, B, n, d), what + f" ({frames:.3g} saved frames)")
    check_array((B, n, d), what, copies=20)  # the state, the stages of dop853 and the tiles' operands
    evals = 0.0 if steps is None else steps * {"layer": 1, "rk4": 4}.get(solver.method, 4)
    check_work(evals * per_eval + frames * float(B) * n * n * 4, what)
    return per_eval


class MemberStreams:
    """One ``numpy.random.Generator`` per member; ``standard_normal((B, n, d))`` stacks each member's own
    ``standard_normal((n, d))``, so member b's increments are those of a single run seeded with seeds[b]."""

    def __init__(self, seeds):
        self.generators = [np.random.default_rng(int(s)) for s in seeds]

    def standard_normal(self, shape) -> np.ndarray:
        if shape[0] != len(self.generators):
            raise InputError(f"noise for {shape[0]} members from {len(self.generators)} streams")
        return np.stack([g.standard_normal(shape[1:]) for g in self.generators])


def _integrate_noisy(model, field_fn, X0, t_end, solver, save, noise, seeds, progress):
    from numerics.core import noise_loader

    sde, scheme = noise_loader.noise_scheme(solver, save)
    D = model.noise if noise is None else noise.reshape(-1, 1, 1)
    steppers = sde.noisy_steppers(D, MemberStreams(seeds), scheme)
    times, states, stats = integrate(field_fn, X0, t_end, scheme, dt=solver.dt, save_every=save.every,
                                     progress=progress, steppers=steppers)
    weak, strong = sde.SDE_METHODS[scheme]
    stats.update({"scheme": scheme, "weak_order": weak, "strong_order": strong})
    return times, states, stats, sde.SCHEMES[scheme]


_SCHEMES = {"layer": "projected Euler x <- (x + h v)/|x + h v|, member by member",
            "rk4": "classical RK4 on the projected field, renormalised each step, member by member",
            "dp5": "Dormand-Prince 5(4) with one step shared by all members (max norm over the members)",
            "dop853": "Dormand-Prince 8(5,3) with one step shared by all members (largest member RMS norm)",
            "dp5 per-member": "Dormand-Prince 5(4) with each member's own step and accept/reject (its single run's)"}


def _integrate_per_member(field_fn, X0, t_end, solver, save, per_eval, progress):
    """:func:`numerics.core.member_adaptive.integrate_per_member` with the options of :func:`integrate`."""
    from numerics.core.integrators import adaptive_scheme, output_times
    from numerics.core.member_adaptive import integrate_per_member

    used = adaptive_scheme(solver.rtol) if solver.method == "adaptive" else solver.method
    if used != "dp5":
        raise InputError(f"per-member adaptive steps run dp5 only (method {solver.method} uses {used} here); "
                         "use --method dp5, or --step shared")
    return integrate_per_member(field_fn, X0, output_times(save.times, t_end), rtol=solver.rtol, atol=solver.atol,
                                h0=solver.dt, progress=progress, max_evaluations=evaluation_budget(per_eval))


def simulate_ensemble(model, X0, t_end: float, solver, save, members: Members | None = None, progress=None,
                      provenance: dict | None = None, energy_progress=None) -> dict:
    """Integrate B systems at once (see the module docstring); ``X0`` of shape (B, n, d).

    Returns the fields of a :class:`numerics.core.trajectory.Trajectory` (``simulate`` builds it): ``X`` of shape
    (frames, B, n, d), ``energy`` of shape (frames, B) and ``meta["batch"]`` (B, the per-member values);
    :func:`member` extracts one member as the trajectory of a single run.
    """
    from numerics.common.errors import require_real
    from numerics.core.threads import blas_threads_for, thread_record

    X0 = require_batch(X0)
    B, n, d = X0.shape
    model.check_dimension(d)
    check_batchable(model, solver.backend)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    values = resolve_members(model, members, B, d, solver.seed)
    scaled, model = model, model.at_context_length(n)  # beta = gamma log n for beta_scaling="log" (else the same)
    per_eval = check_ensemble_cost(B, n, d, t_end, solver, save)
    field_fn, backend = batch_vector_field(model, values, d, B, solver.backend, n)
    betas = np.full(B, model.beta) if values["beta"] is None else values["beta"]
    noise = values["noise"]
    noisy = (model.noise > 0) if noise is None else bool(np.any(noise > 0))
    if noise is not None and model.noise > 0:
        raise InputError("give the noise either in the model (shared) or per member, not both")
    threads = blas_threads_for(per_eval / max(B, 1) * B, rows=n * B)
    started = _time.perf_counter()
    with threads.limit():
        if noisy:
            times, states, stats, scheme_text = _integrate_noisy(model, field_fn, X0, t_end, solver, save, noise,
                                                                 values["seeds"], progress)
        elif solver.step == "per-member" and solver.method in ADAPTIVE_METHODS:
            times, states, stats = _integrate_per_member(field_fn, X0, t_end, solver, save, per_eval, progress)
            scheme_text = _SCHEMES["dp5 per-member"]
        else:
            times, states, stats = integrate(field_fn, X0, t_end, solver.method, dt=solver.dt,
                                             save_every=save.every, save_times=save.times, rtol=solver.rtol,
                                             atol=solver.atol, progress=progress,
                                             max_evaluations=evaluation_budget(per_eval))
            scheme_text = _SCHEMES[stats.get("method_used", solver.method)]
        seconds = _time.perf_counter() - started
        started = _time.perf_counter()
        if model.kernel is None:
            norms = [energy_normalization_for(float(b)) for b in betas]
            energy = ensemble_energies(states, betas, norms, progress=energy_progress)
        else:  # the user kernel's pair energy of each member and frame, as its single run computes it
            norms = ["kernel"] * B
            energy = _kernel_energies(states, betas, model.kernel, energy_progress)
    energy_seconds = _time.perf_counter() - started
    arrays: dict = {}
    for name, M in values["matrices"].items():
        if M is not None:
            arrays[f"members.{name}"] = M
    adaptive = solver.method in ADAPTIVE_METHODS
    norm = norms[0] if len(set(norms)) == 1 else norms
    meta = {**scaled.to_meta(arrays), "beta": model.beta, "n": int(n), "d": int(d), "t_end": t_end,
            "method": solver.method, "dt": solver.dt, "save_every": save.every, "seed": None, "init": "given",
            "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model.kind == "usa" and model.time_unit == "rescaled")
                               else "natural: time = depth"),
            "scheme": scheme_text, "method_used": stats.get("method_used", solver.method),
            "noise_seed": values["seeds"] if noisy else None, "noise_state": None,
            "rtol": solver.rtol if adaptive else None, "atol": solver.atol if adaptive else None,
            "energy_normalization": norm,
            "energy_definition": {k: ENERGY_DEFINITIONS.get(k, KERNEL_ENERGY_DEFINITION) for k in sorted(set(norms))},
            "energy_is_lyapunov": model.is_gradient_flow and not noisy and values["M"] is None
                                  and values["V"] is None,
            "backend": backend, "integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
            "threads": thread_record(threads), "timings": {"integrate": seconds, "energy": energy_seconds},
            "energy_method": "pair sums of every member and frame (batched), O(B n^2) per frame",
            "save_times": None if save.times is None else "explicit",
            "batch": {"B": int(B), "beta": None if values["beta"] is None else betas.tolist(),
                      "noise": None if noise is None else noise.tolist(),
                      "matrices": sorted(k for k, v in values["matrices"].items() if v is not None),
                      "step": ("fixed" if not adaptive else "per member (each its own step, as its single run)"
                               if solver.step == "per-member" else "shared by the members (worst member's error)")}}
    meta.update(provenance or {})
    return {"times": times, "X": states, "energy": energy, "meta": meta, "arrays": arrays}


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


def member(traj, b: int):
    """Member ``b`` of an ensemble trajectory as the trajectory of a single run (its beta, noise, matrices and
    seeds in ``meta``; the same class as ``traj``)."""
    batch = traj.meta.get("batch")
    if not isinstance(batch, dict) or traj.X.ndim != 4:
        raise InputError("not an ensemble trajectory (X must have shape (frames, B, n, d))")
    B = traj.X.shape[1]
    b = require_int(b, "member", minimum=0, maximum=B - 1)
    meta = {k: v for k, v in traj.meta.items() if k != "batch"}
    meta["member"] = {"index": b, "of": B}
    if batch.get("beta") is not None:
        meta["beta"] = batch["beta"][b]
    if batch.get("noise") is not None:
        meta["noise"] = batch["noise"][b]
    if isinstance(meta.get("noise_seed"), list):
        meta["noise_seed"] = meta["noise_seed"][b]
    if isinstance(meta.get("seed"), list):
        meta["seed"] = meta["seed"][b]
    if isinstance(meta.get("energy_normalization"), list):
        meta["energy_normalization"] = meta["energy_normalization"][b]
    for name in batch.get("matrices") or ():
        meta[name] = np.asarray(traj.arrays[f"members.{name}"][b]).tolist()
    arrays = {k: v for k, v in traj.arrays.items() if not k.startswith("members.")}
    return type(traj)(times=traj.times, X=traj.X[:, b], energy=traj.energy[:, b], meta=meta, arrays=arrays)


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


__all__ = ["Members", "MemberStreams", "check_batchable", "ensemble_energies", "member", "require_batch",
           "simulate_ensemble"]
