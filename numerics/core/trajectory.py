"""Simulations of self-attention dynamics on the sphere and the trajectory files they produce.

A trajectory file is an ``.npz`` with arrays ``times`` (m,), ``X`` (m, n, d), ``energy`` (m,) and ``meta``, a
JSON string with every parameter, the seed, package versions, the time unit and the energy normalisation.
Normalisation schemes (``Model(norm=...)``, :mod:`numerics.core.norms`) also store ``radius`` (m, n).
Models with heads, an MLP or a depth schedule also store their weight arrays, as ``arch.<key>`` entries
(``arch.heads.Q``, ``arch.schedule.2.mlp.W1``, ...) referenced from ``meta`` (:meth:`Model.to_meta`).
"""
from __future__ import annotations

import json
import math
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import (SPHERE_TOLERANCE, InputError, require_finite_array, require_int, require_points,
                                    require_real)
from numerics.common.limits import check_array, check_work, evaluation_budget, steps_of
from numerics.common.readers import parse_json, read_npy, read_npz
from numerics.core.sampling import uniform_sphere  # noqa: F401 - re-exported (its home before)
from numerics.core.field import ENERGY_ALIASES, ENERGY_DEFINITIONS, energy_normalization_for, interaction_energy
from numerics.core.integrators import ADAPTIVE_METHODS, integrate
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.norms import is_radial, load_radius, radial_run
from numerics.common.provenance import atomic_write, package_versions, to_json
from numerics.core.threads import blas_threads_for, thread_record

#: prefix of the model's weight arrays in a trajectory ``.npz``
ARCH_PREFIX = "arch."


@dataclass
class Trajectory:
    """Saved states of one simulation.

    Attributes
    ----------
    times : (m,) ndarray
        Save times, in the unit named by ``meta["time_unit"]``.
    X : (m, n, d) ndarray
        States; rows of each ``X[k]`` are unit vectors.
    energy : (m,) ndarray
        Interaction energy at each saved time, normalisation in ``meta["energy_normalization"]``.
    meta : dict
        Parameters, seed, versions, time unit, integrator statistics.
    arrays : dict
        Weight arrays of the model (heads, MLP, schedule) referenced from ``meta`` by key.
    radius : (m, n) ndarray or None
        Radii r_i of the tokens x_i = r_i theta_i of a normalisation scheme (``Model(norm=...)`` other than
        post-LN); ``X`` then holds the directions theta_i. None for the sphere flow.
    """

    times: np.ndarray
    X: np.ndarray
    energy: np.ndarray
    meta: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)
    radius: np.ndarray | None = None

    @property
    def model(self) -> Model:
        """The :class:`Model` that produced the trajectory (from ``meta`` and ``arrays``)."""
        return Model.from_meta(self.meta, self.arrays)

    @property
    def final(self) -> np.ndarray:
        return self.X[-1]

    def save(self, path) -> str:
        """Write the ``.npz`` atomically (temporary file, then rename)."""
        meta = to_json(self.meta)

        def writer(tmp):
            with open(tmp, "wb") as fh:
                np.savez(fh, times=self.times, X=self.X, energy=self.energy, meta=np.array(meta),
                         **({} if self.radius is None else {"radius": self.radius}),
                         **{f"{ARCH_PREFIX}{k}": v for k, v in self.arrays.items()})

        try:
            return atomic_write(path, writer, suffix=".npz")
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path) -> "Trajectory":
        """Read a trajectory written by :meth:`save`, validated as strictly as an initial condition.

        Bad files raise :class:`InputError` ("invalid trajectory ..."): missing arrays, wrong shapes or dtypes,
        non-finite values, times that do not increase, states off the unit sphere, metadata of the wrong type.
        """
        data = read_npz(path, "trajectory")
        missing = {"times", "X", "energy", "meta"} - set(data)
        if missing:
            raise InputError(f"invalid trajectory {path}: not an attnflow trajectory "
                             f"(missing {', '.join(sorted(missing))})")
        where = f"trajectory {path}"
        if np.ndim(data["X"]) == 4:  # an ensemble (frames, B, n, d)
            from numerics.core.ensemble import validate_loaded

            times, X, energy = validate_loaded(path, data, where)
        else:
            times, X, energy = _validate_single(data, where)
        meta_raw = data["meta"]
        if meta_raw.dtype.kind not in "US" or meta_raw.shape != ():
            raise InputError(f"invalid {where}: meta must be a JSON string")
        meta = parse_json(str(meta_raw), f"metadata of {where}")
        if not isinstance(meta, dict):
            raise InputError(f"invalid {where}: meta must be a JSON object")
        arrays = {k[len(ARCH_PREFIX):]: v for k, v in data.items() if k.startswith(ARCH_PREFIX)}
        radius = None if "radius" not in data else load_radius(data["radius"], X.shape[:2], where)
        return cls(times=times, X=X, energy=energy, meta=meta, arrays=arrays, radius=radius)


def _validate_single(data: dict, where: str):
    """times (m,), X (m, n, d) and energy (m,) of a single-system trajectory file, validated."""
    times = require_finite_array(data["times"], f"times of {where}", ndim=1)
    X = require_finite_array(data["X"], f"states X of {where}", ndim=3)
    energy = require_finite_array(data["energy"], f"energy of {where}", ndim=1)
    if times.size < 1 or times.shape != (X.shape[0],) or energy.shape != times.shape:
        raise InputError(f"invalid {where}: inconsistent shapes times {times.shape}, X {X.shape}, "
                         f"energy {energy.shape}")
    if np.any(np.diff(times) <= 0):
        raise InputError(f"invalid {where}: times must increase strictly")
    if X.shape[1] < 1 or X.shape[2] < 2:
        raise InputError(f"invalid {where}: states must have n >= 1 rows and d >= 2 columns, got {X.shape}")
    off = np.abs(np.linalg.norm(X, axis=2) - 1.0)
    if off.max() > SPHERE_TOLERANCE:
        k, i = np.unravel_index(int(np.argmax(off)), off.shape)
        raise InputError(f"invalid {where}: frame {k} row {i} is off the unit sphere by {off[k, i]:.3g}")
    return times, X, energy


def load_initial(path, normalize: bool = False) -> np.ndarray:
    """Initial condition from a ``.npy`` file of shape (n, d) with unit rows (see :func:`require_points`)."""
    return require_points(read_npy(path, "initial condition"), f"init file {path}", normalize=normalize)


def load_attention_matrices(path, d: int | None = None) -> dict:
    """Q, K, V from an ``.npz`` file holding any of the arrays ``Q``, ``K``, ``V`` (each d x d; missing = identity).

    Returns a dict with the keys present. Unknown keys, non-square or non-finite arrays raise :class:`InputError`.
    """
    arrays = read_npz(path, "matrices file")
    unknown = set(arrays) - {"Q", "K", "V"}
    if unknown or not arrays:
        raise InputError(f"matrices file {path} must hold arrays named Q, K and/or V, got {sorted(arrays)}")
    out = {}
    for name, M in sorted(arrays.items()):
        M = require_finite_array(M, f"{name} in {path}", ndim=2)
        dim = d if d is not None else M.shape[0]
        if M.shape != (dim, dim):
            raise InputError(f"{name} in {path} must be {dim} x {dim}, got shape {M.shape}")
        out[name] = M
    return out




def _energies(states, beta, kernel, normalization, field_fn=None, progress=None):
    """Energy of each saved state: E_beta (GLPR or GKPR normalisation) or the user kernel's pair energy.

    A field that knows a cheaper form of its energy carries it as ``field_fn.energy(X, normalization)`` (the
    circle's Fourier field: O(n K) from the order parameters instead of the O(n^2) pair sum) and it is used.
    ``progress(done, total)`` is called after each frame (the direct form costs O(n^2) per frame).
    """
    if kernel is not None:
        from numerics.core.kernel_field import kernel_energy

        def one(Xk):
            return kernel_energy(Xk, kernel, beta)
    elif getattr(field_fn, "energy", None) is not None:
        def one(Xk):
            return field_fn.energy(Xk, normalization)
    elif getattr(field_fn, "tile_energy", None) is not None:
        def one(Xk):  # from the field's tiles where it was evaluated at this frame, else the pair sum
            value = field_fn.tile_energy(Xk, normalization)
            return interaction_energy(Xk, beta, normalization=normalization) if value is None else value
    else:
        def one(Xk):
            return interaction_energy(Xk, beta, normalization=normalization)
    out = np.empty(len(states))
    for k, Xk in enumerate(states):
        out[k] = one(Xk)
        if progress is not None:
            progress(k + 1, len(states))
    return out


def energy_method(field_fn, kernel) -> str:
    """How :func:`_energies` computes the energy column (recorded in the metadata)."""
    if kernel is not None:
        return "kernel pair sum, O(n^2) per frame"
    if getattr(field_fn, "energy", None) is not None:
        return getattr(field_fn, "energy_method", "order parameters, O(n K) per frame")
    if getattr(field_fn, "request_energy", None) is not None:
        return "tile terms at saved frames (fixed steps), else row sums (rel. error <= 1e-12), else pair sum"
    if getattr(field_fn, "tile_energy", None) is not None:
        return "row sums at evaluated frames (rel. error <= 1e-12), else pair sum"
    return "pair sum, O(n^2) per frame"


def resume(trajectory, t_end: float, *, progress: Callable[[float, float], None] | None = None,
           energy_progress: Callable[[float, float], None] | None = None) -> Trajectory:
    """Continue a saved trajectory (a :class:`Trajectory` or the path of its ``.npz``) up to ``t_end``.

    The model (:meth:`Model.from_meta`), the solver and the backend are read from the trajectory's ``meta``;
    the result holds the old frames followed by the new ones, with ``meta["resumed_from"]`` recording where
    the continuation started. Adaptive runs keep the spacing of the original save times.
    """
    source = None
    if not isinstance(trajectory, Trajectory):
        source = str(trajectory)
        trajectory = Trajectory.load(trajectory)
    if trajectory.X.ndim == 4:
        raise InputError("cannot resume an ensemble trajectory (X of shape (frames, B, n, d)) yet: rerun the batch "
                         "with a longer t_end")
    meta = dict(trajectory.meta)
    missing = {"model", "beta", "method", "time_unit"} - set(meta)
    if missing:
        raise InputError(f"cannot resume: trajectory meta lacks {', '.join(sorted(missing))}")
    from numerics.common.readers import check_metadata
    from numerics.core.meta_schema import TRAJECTORY_META

    check_metadata(meta, TRAJECTORY_META, f"trajectory {source or 'metadata'}")
    t0 = float(trajectory.times[-1])
    t_end = require_real(t_end, "t_end")
    if t_end <= t0:
        raise InputError(f"t_end={t_end:g} must exceed the saved trajectory's last time {t0:g}")
    model = Model.from_meta(meta, trajectory.arrays)
    if model.noise > 0 and not isinstance(meta.get("noise_state"), dict):
        raise InputError("cannot resume this noisy run: its file holds no noise_state (the random stream's state, "
                         "which older files lack); rerun it with a longer t_end and the same seed")
    backend_saved = meta.get("backend", "direct")
    # continue with the scheme the run used: "adaptive" chooses by rtol today, but files written before that
    # choice existed (no "method_used") ran Dormand-Prince 5(4)
    method = meta.get("method_used") or ("dp5" if meta["method"] == "adaptive" else meta["method"])
    solver = Solver(method=method, dt=meta.get("dt"), rtol=float(meta.get("rtol") or 1e-9),
                    atol=float(meta.get("atol") or 1e-12),
                    backend="direct" if backend_saved in ("kernel", "blocks") else backend_saved,
                    seed=int(meta.get("noise_seed") or 0))
    X0 = trajectory.X[-1]
    n, d = X0.shape
    model = model.at_context_length(n)  # beta = gamma log n for beta_scaling="log" (else the same)
    if is_radial(model) and trajectory.radius is None:
        raise InputError(f"cannot resume: the trajectory of norm={model.norm!r} holds no radius array")
    radial = radial_run(model, X0, trajectory.radius)
    field_fn, backend = (radial.field, radial.backend) if radial else model.vector_field(n, d, solver.backend)
    per_eval = evaluation_cost(field_fn, backend, n, d)
    check_simulation_cost(n, d, t_end, solver, SaveAt(every=int(meta.get("save_every", 1))), t0=t0,
                          per_eval=per_eval)
    save_times = None
    if solver.method in ADAPTIVE_METHODS:
        old = trajectory.times
        spacing = float(old[-1] - old[0]) / max(1, old.size - 1) if old.size > 1 else (t_end - t0) / 100
        wanted = (t_end - t0) / spacing  # the saved run's spacing kept: refuse before allocating the frames
        check_array((wanted + 1, n, d), f"resuming with the saved spacing {spacing:.3g} ({wanted:.3g} new frames)")
        frames = max(1, int(round(wanted)))
        save_times = np.linspace(t0, t_end, frames + 1)
    started = _time.perf_counter()
    if model.noise > 0:   # the random stream continues from the saved state (bitwise, with the same step)
        times, states, stats = _integrate_noisy(model, field_fn, X0, t_end, solver,
                                                SaveAt(every=int(meta.get("save_every", 1))), progress, t0=t0,
                                                noise_state=meta["noise_state"])
        meta["noise_state"] = stats.pop("noise_state")
        stats.pop("scheme_text", None)
    else:
        times, states, stats = (radial.integrate if radial else integrate)(
            field_fn, radial.y0 if radial else X0, t_end, solver.method, dt=solver.dt, t0=t0,
            save_every=int(meta.get("save_every", 1)), save_times=save_times, rtol=solver.rtol, atol=solver.atol,
            progress=progress, on_save=getattr(field_fn, "request_energy", None),
            max_evaluations=evaluation_budget(per_eval))
    states, radius = radial.split(states) if radial else (states, None)
    seconds = _time.perf_counter() - started
    norm = meta.get("energy_normalization", energy_normalization_for(model.beta))
    norm = ENERGY_ALIASES.get(norm, norm)
    started = _time.perf_counter()
    energy = _energies(states[1:], model.beta, model.kernel, norm, field_fn, energy_progress)
    energy_seconds = _time.perf_counter() - started
    meta.update({"t_end": t_end, "seconds": float(meta.get("seconds", 0.0)) + seconds, "backend": backend,
                 "timings": {"integrate": seconds, "energy": energy_seconds},
                 "energy_method": energy_method(field_fn, model.kernel),
                 "resumed_from": {"path": source, "t": t0, "frames": int(trajectory.times.size)},
                 "integrator_stats": {"previous": meta.get("integrator_stats"), "resumed": stats},
                 "versions": package_versions()})
    return Trajectory(times=np.concatenate([trajectory.times, times[1:]]),
                      X=np.concatenate([trajectory.X, states[1:]]),
                      energy=np.concatenate([trajectory.energy, energy]), meta=meta,
                      arrays=dict(trajectory.arrays),
                      radius=None if radius is None else np.concatenate([trajectory.radius, radius[1:]]))


_SCHEMES = {"layer": "projected Euler x <- (x + h v)/|x + h v|",
            "rk4": "classical RK4 on the projected field, renormalised each step",
            "dp5": "Dormand-Prince 5(4), renormalised each accepted step",
            "dop853": "Dormand-Prince 8(5,3) with dense output, outputs renormalised"}


def simulate(model, *args, solver: Solver | None = None, save: SaveAt | None = None,
             progress: Callable[[float, float], None] | None = None, provenance: dict | None = None,
             energy_progress: Callable[[float, float], None] | None = None, members=None, **kwargs) -> Trajectory:
    """Integrate the dynamics of ``model`` from ``X0`` up to ``t_end`` and return the saved frames.

    Parameters
    ----------
    model : Model
        The vector field (:class:`numerics.core.model.Model`: sa/usa, beta, Q, K, V, kernel, time unit).
    X0 : (n, d) array_like
        Initial state, rows on S^{d-1} (see :func:`uniform_sphere` for iid uniform starts).
    t_end : float
        Final time (> 0), in the model's time unit (``usa`` rescaled: t' = e^{beta} t).
    solver : Solver, optional
        Integrator, step, tolerances and field backend (default ``Solver("rk4", dt=0.05)``).
    save : SaveAt, optional
        Frames to keep (default every step of a fixed-step method, 101 times for ``adaptive``).
    progress : callable, optional
        ``progress(t, t_end)``, called as the integration advances.
    energy_progress : callable, optional
        ``energy_progress(frames_done, frames)``, called as the energy column is computed (O(n^2) per frame
        with the direct backend, O(n K) with the circle's Fourier backend).
    provenance : dict, optional
        Extra metadata recorded with the run (for example ``{"seed": 0, "init": "uniform"}``).
    members : numerics.core.ensemble.Members, optional
        Per-member beta, Q, K, V, noise and noise seeds of an ensemble. An ensemble is an ``X0`` of shape
        (B, n, d) (``members`` optional); it returns ``X`` of shape (frames, B, n, d) and ``energy`` of shape
        (frames, B) (:func:`numerics.core.ensemble.simulate_ensemble`).

    Returns
    -------
    Trajectory
        ``times``, ``X`` (m, n, d), ``energy`` and ``meta`` (model, solver, backend, versions, timings).

    Notes
    -----
    The energy column is E_beta minus 1/(2 beta) (``glpr``), or the normalised GKPR form above
    |beta| = 600 (recorded in ``meta["energy_normalization"]``), or the user kernel's pair energy. With the
    ``fourier`` backend it comes from the order parameters (:func:`numerics.circle.fourier.circle_energy`).
    ``meta["seconds"]`` is the integration time; ``meta["timings"]`` splits integration and energy.

    The keyword form ``simulate("sa", beta, t_end, n=..., d=..., seed=..., method=..., dt=..., ...)`` of the
    first release is still accepted during the transition; it builds the three objects and calls this
    function (:func:`simulate_keywords`).

    Verified by: core.energy-identity (energy along trajectories), core.integrator-orders.
    """
    if isinstance(model, str):
        return simulate_keywords(model, *args, progress=progress, **kwargs)
    if not isinstance(model, Model):
        raise InputError(f"simulate needs a Model, got {type(model).__name__}")
    X0, t_end = _positional(args, kwargs)
    solver = Solver(dt=0.05) if solver is None else solver
    save = SaveAt() if save is None else save
    if members is not None or np.ndim(X0) == 3:  # an ensemble: B systems in one (B, n, d) array
        from numerics.core.ensemble import simulate_ensemble

        return Trajectory(**simulate_ensemble(model, X0, t_end, solver, save, members, progress, provenance,
                                              energy_progress))
    X0 = require_points(X0, "X0")
    n, d = X0.shape
    scaled, model = model, model.at_context_length(n)  # beta = gamma log n for beta_scaling="log" (else the same)
    model.check_dimension(d)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    radial = radial_run(model, X0)  # None for the sphere flow; else the (theta, r) state of numerics.core.norms
    if radial and solver.backend not in ("auto", "direct"):
        raise InputError(f"norm={model.norm!r} evaluates the attention output with the block field; the "
                         f"{solver.backend} backend is not available for it: use --backend direct (or auto)")
    X0 = radial.X0 if radial else X0
    field_fn, backend = (radial.field, radial.backend) if radial else model.vector_field(n, d, solver.backend)
    per_eval = evaluation_cost(field_fn, backend, n, d)
    check_simulation_cost(n, d, t_end, solver, save, per_eval=per_eval)
    norm = "kernel" if model.kernel is not None else energy_normalization_for(model.beta)
    # the energy of X0 is computed first where it could fail (user kernels, other energy forms), so that a run
    # never integrates for nothing; the direct field's energy (normalisation chosen finite from beta) cannot
    # fail and X0's is read off the first step's row sums afterwards where they meet their bound (else a pair sum)
    deferred = model.kernel is None and getattr(field_fn, "tile_energy", None) is not None
    energy0 = None if deferred else _energies(X0[None], model.beta, model.kernel, norm, field_fn)

    threads = blas_threads_for(per_eval)  # one BLAS thread on a busy machine or for small fields (issue 32)
    started = _time.perf_counter()
    with threads.limit():
        if model.noise > 0:
            times, states, stats = _integrate_noisy(model, field_fn, X0, t_end, solver, save, progress)
        else:
            times, states, stats = (radial.integrate if radial else integrate)(
                field_fn, radial.y0 if radial else X0, t_end, solver.method, dt=solver.dt, save_every=save.every,
                save_times=save.times, rtol=solver.rtol, atol=solver.atol, progress=progress,
                on_save=getattr(field_fn, "request_energy", None), max_evaluations=evaluation_budget(per_eval))
    states, radius = radial.split(states) if radial else (states, None)
    seconds = _time.perf_counter() - started
    started = _time.perf_counter()
    # states[0] is X0: its energy was computed before integrating unless deferred
    if deferred:
        energy = _energies(states, model.beta, model.kernel, norm, field_fn, energy_progress)
    else:
        energy = np.concatenate([energy0, _energies(states[1:], model.beta, model.kernel, norm, field_fn,
                                                    energy_progress)])
    energy_seconds = _time.perf_counter() - started
    adaptive = solver.method in ADAPTIVE_METHODS
    arrays: dict = {}
    meta = {**scaled.to_meta(arrays), "beta": model.beta, "n": int(n), "d": int(d), "t_end": t_end,
            "method": solver.method,
            "dt": solver.dt, "save_every": save.every, "seed": None, "init": "given",
            "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model.kind == "usa"
                                                                   and model.time_unit == "rescaled")
                               else "natural: time = depth"),
            "scheme": stats.pop("scheme_text", radial.scheme_text(solver, stats) if radial
                                else _SCHEMES[stats.get("method_used", solver.method)]),
            "method_used": stats.get("method_used", solver.method),
            "noise_seed": solver.seed if model.noise > 0 else None,
            "noise_state": stats.pop("noise_state", None),
            "rtol": solver.rtol if adaptive else None, "atol": solver.atol if adaptive else None,
            "energy_normalization": norm,
            "energy_definition": ENERGY_DEFINITIONS.get(norm, "E = 1/(2 n^2) sum_ij phi(s_ij) (user kernel phi)"),
            "energy_is_lyapunov": model.is_gradient_flow and model.noise == 0, "backend": backend,
            "backend_details": getattr(field_fn, "details", None),
            "integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
            "threads": thread_record(threads),
            "timings": {"integrate": seconds, "energy": energy_seconds},
            "energy_method": energy_method(field_fn, model.kernel),
            "save_times": None if save.times is None else "explicit"}
    meta.update(provenance or {})
    return Trajectory(times=times, X=states, energy=energy, meta=meta, arrays=arrays, radius=radius)


def evaluation_cost(field_fn, backend: str, n: int, d: int) -> float:
    """Operations of one field evaluation for the work limits: O(n K) for the circle's Fourier field (K
    harmonics), O(n^2 d) for the direct sums and the other backends."""
    if backend == "fourier":
        return float(n) * (getattr(field_fn, "harmonics", 64) + 8)
    if backend == "harmonic":  # O(n L^2) spherical harmonics (numerics.harmonic)
        return float(n) * field_fn.work
    return float(n) * n * (2 * d + 8)


def check_simulation_cost(n: int, d: int, t_end: float, solver: Solver, save: SaveAt, t0: float = 0.0,
                          per_eval: float | None = None) -> None:
    """Refuse, before integrating, a run whose saved frames do not fit in memory or whose field evaluations
    (``per_eval`` operations each: O(n^2 d) with the direct sums by default, plus an O(n^2) energy per saved
    frame) would take absurdly long."""
    if solver.method in ADAPTIVE_METHODS:
        steps = None
        frames = 101 if save.times is None else save.times.size
    else:
        steps = steps_of(t_end, solver.dt, t0)
        if not math.isfinite(steps):
            raise InputError(f"t_end/dt = {t_end - t0:g}/{solver.dt:g} steps is not a finite number of steps")
        frames = (steps // save.every + 2) if save.times is None else save.times.size
    what = f"a simulation with n={n}, d={d}" + (f", {steps:.3g} steps" if steps is not None else "")
    check_array((frames, n, d), what + f" ({frames:.3g} saved frames)")
    check_array((n, d), what, copies=8)  # the state and the Runge-Kutta stages
    per_eval = evaluation_cost(None, "direct", n, d) if per_eval is None else per_eval
    evals = 0.0 if steps is None else steps * {"layer": 1, "rk4": 4}.get(solver.method, 4)
    check_work(evals * per_eval + frames * float(n) * n * 4, what)


def _integrate_noisy(model, field_fn, X0, t_end, solver, save, progress, t0: float = 0.0, noise_state=None):
    """The stochastic integrators of :mod:`numerics.noise.sde` (:func:`noise_scheme`), seeded by ``solver.seed``
    or continuing the saved ``noise_state``."""
    from numerics.core import noise_loader

    sde, scheme = noise_loader.noise_scheme(solver, save)
    seed = solver.seed if noise_state is None else sde.generator_from_state(noise_state)
    times, states, stats = sde.integrate_sde(field_fn, X0, t_end, solver.dt, model.noise, seed=seed, t0=t0,
                                             scheme=scheme, save_every=save.every, progress=progress)
    stats["scheme_text"] = sde.SCHEMES[scheme]
    return times, states, stats


def _positional(args: tuple, kwargs: dict):
    """``(X0, t_end)`` of ``simulate(model, X0, t_end)``, given by position or by name."""
    named = dict(zip(("X0", "t_end"), args))
    clash = set(named) & set(kwargs)
    if len(args) > 2 or clash or set(kwargs) - {"X0", "t_end"}:
        extra = sorted(clash | (set(kwargs) - {"X0", "t_end"})) or ["a third positional argument"]
        raise InputError(f"simulate(model, X0, t_end, solver=..., save=...): unexpected {', '.join(extra)}")
    named.update(kwargs)
    if set(named) != {"X0", "t_end"}:
        raise InputError("simulate(model, X0, t_end, ...) needs X0 and t_end")
    return named["X0"], named["t_end"]


def simulate_keywords(model: str, beta: float, t_end: float, *, n: int | None = None, d: int | None = None,
                      X0=None, seed: int | None = None, method: str = "rk4", dt: float | None = None,
                      save_every: int = 1, save_times=None, Q=None, K=None, V=None, time_unit: str = "natural",
                      rtol: float = 1e-9, atol: float = 1e-12, normalize: bool = False,
                      progress: Callable[[float, float], None] | None = None, backend: str = "auto",
                      kernel=None, noise: float = 0.0, noise_seed: int = 0) -> Trajectory:
    """The keyword form of :func:`simulate` from the first release (kept for the transition).

    It builds ``Model(model, beta, Q, K, V, kernel, time_unit)``, ``Solver(method, dt, rtol, atol, backend)``
    and ``SaveAt(save_every, save_times)``, draws ``X0`` iid uniform from ``seed`` when it is not given
    (``n`` and ``d`` then required; checked against ``X0`` otherwise) and calls :func:`simulate`.
    """
    spec = Model(kind=model, beta=beta, Q=Q, K=K, V=V, kernel=kernel, time_unit=time_unit, noise=noise)
    solver = Solver(method=method, dt=dt, rtol=rtol, atol=atol, backend=backend, seed=noise_seed)
    save = SaveAt(every=save_every, times=save_times)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    X0, init = initial_state(n, d, X0, seed, normalize)
    return simulate(spec, X0, t_end, solver=solver, save=save, progress=progress,
                    provenance={"seed": seed, "init": init})


def initial_state(n: int | None, d: int | None, X0=None, seed=None, normalize: bool = False):
    """``(X0, how)``: the given state (validated; ``n``, ``d`` checked against it) or iid uniform from ``seed``."""
    if X0 is None:
        if n is None or d is None:
            raise InputError("give n and d, or an initial state X0")
        n = require_int(n, "n", minimum=1)
        d = require_int(d, "d", minimum=2)
        return uniform_sphere(n, d, seed), "uniform"
    X0 = require_points(X0, "X0", normalize=normalize)
    if n is not None and require_int(n, "n", minimum=1) != X0.shape[0]:
        raise InputError(f"n={n} does not match the initial state with {X0.shape[0]} rows")
    if d is not None and require_int(d, "d", minimum=2) != X0.shape[1]:
        raise InputError(f"d={d} does not match the initial state with {X0.shape[1]} columns")
    return X0, "given"
