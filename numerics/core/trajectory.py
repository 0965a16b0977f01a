"""Simulations of self-attention dynamics on the sphere and the trajectory files they produce.

A trajectory file is an ``.npz`` with arrays ``times`` (m,), ``X`` (m, n, d), ``energy`` (m,) and ``meta``, a
JSON string with every parameter, the seed, package versions, the time unit and the energy normalisation.
"""
from __future__ import annotations

import json
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_points, require_real
from numerics.core.field import interaction_energy
from numerics.core.integrators import integrate
from numerics.core.model import Model, SaveAt, Solver
from numerics.common.provenance import atomic_write, package_versions, to_json

#: above this |beta| the GLPR energy overflows float64; trajectories then record the GKPR normalisation
GLPR_ENERGY_MAX_BETA = 600.0


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
    """

    times: np.ndarray
    X: np.ndarray
    energy: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def final(self) -> np.ndarray:
        return self.X[-1]

    def save(self, path) -> str:
        """Write the ``.npz`` atomically (temporary file, then rename)."""
        meta = to_json(self.meta)

        def writer(tmp):
            with open(tmp, "wb") as fh:
                np.savez(fh, times=self.times, X=self.X, energy=self.energy, meta=np.array(meta))

        try:
            return atomic_write(path, writer, suffix=".npz")
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path) -> "Trajectory":
        """Read a trajectory written by :meth:`save`; bad files raise :class:`InputError`."""
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = {"times", "X", "energy", "meta"} - set(data.files)
                if missing:
                    raise InputError(f"{path} is not an attnflow trajectory (missing {', '.join(sorted(missing))})")
                times, X, energy = data["times"], data["X"], data["energy"]
                meta = json.loads(str(data["meta"]))
        except (OSError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"cannot read trajectory {path}: {exc}") from None
        if X.ndim != 3 or times.shape != (X.shape[0],) or energy.shape != times.shape:
            raise InputError(f"{path}: inconsistent shapes times {times.shape}, X {X.shape}, energy {energy.shape}")
        return cls(times=times, X=X, energy=energy, meta=meta)


def uniform_sphere(n: int, d: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """n iid uniform points of S^{d-1} (normalised standard Gaussians) from a seed or Generator."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    G = rng.standard_normal((n, d))
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    while np.any(norms == 0):  # probability zero, but never divide by zero
        bad = (norms == 0)[:, 0]
        G[bad] = rng.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G / norms


def load_initial(path, normalize: bool = False) -> np.ndarray:
    """Initial condition from a ``.npy`` file of shape (n, d) with unit rows (see :func:`require_points`)."""
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read initial condition {path}: {exc}") from None
    return require_points(arr, f"init file {path}", normalize=normalize)


def load_attention_matrices(path, d: int | None = None) -> dict:
    """Q, K, V from an ``.npz`` file holding any of the arrays ``Q``, ``K``, ``V`` (each d x d; missing = identity).

    Returns a dict with the keys present. Unknown keys, non-square or non-finite arrays raise :class:`InputError`.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read matrices {path}: {exc}") from None
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


def energy_normalization_for(beta: float) -> str:
    return "glpr" if abs(beta) <= GLPR_ENERGY_MAX_BETA else "gkpr"


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
        return "order parameters, O(n K) per frame"
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
    meta = dict(trajectory.meta)
    missing = {"model", "beta", "method", "time_unit"} - set(meta)
    if missing:
        raise InputError(f"cannot resume: trajectory meta lacks {', '.join(sorted(missing))}")
    t0 = float(trajectory.times[-1])
    t_end = require_real(t_end, "t_end")
    if t_end <= t0:
        raise InputError(f"t_end={t_end:g} must exceed the saved trajectory's last time {t0:g}")
    model = Model.from_meta(meta)
    backend_saved = meta.get("backend", "direct")
    solver = Solver(method=meta["method"], dt=meta.get("dt"), rtol=float(meta.get("rtol") or 1e-9),
                    atol=float(meta.get("atol") or 1e-12),
                    backend="direct" if backend_saved == "kernel" else backend_saved)
    X0 = trajectory.X[-1]
    n, d = X0.shape
    field_fn, backend = model.vector_field(n, d, solver.backend)
    save_times = None
    if solver.method == "adaptive":
        old = trajectory.times
        spacing = float(old[-1] - old[0]) / max(1, old.size - 1) if old.size > 1 else (t_end - t0) / 100
        frames = max(1, int(round((t_end - t0) / spacing)))
        save_times = np.linspace(t0, t_end, frames + 1)
    started = _time.perf_counter()
    times, states, stats = integrate(field_fn, X0, t_end, solver.method, dt=solver.dt, t0=t0,
                                     save_every=int(meta.get("save_every", 1)), save_times=save_times,
                                     rtol=solver.rtol, atol=solver.atol, progress=progress)
    seconds = _time.perf_counter() - started
    norm = meta.get("energy_normalization", energy_normalization_for(model.beta))
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
                      energy=np.concatenate([trajectory.energy, energy]), meta=meta)


_SCHEMES = {"layer": "projected Euler x <- (x + h v)/|x + h v|",
            "rk4": "classical RK4 on the projected field, renormalised each step",
            "adaptive": "Dormand-Prince 5(4), renormalised each accepted step"}


def simulate(model, *args, solver: Solver | None = None, save: SaveAt | None = None,
             progress: Callable[[float, float], None] | None = None, provenance: dict | None = None,
             energy_progress: Callable[[float, float], None] | None = None, **kwargs) -> Trajectory:
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
    X0 = require_points(X0, "X0")
    n, d = X0.shape
    model.check_dimension(d)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    field_fn, backend = model.vector_field(n, d, solver.backend)
    started = _time.perf_counter()
    times, states, stats = integrate(field_fn, X0, t_end, solver.method, dt=solver.dt, save_every=save.every,
                                     save_times=save.times, rtol=solver.rtol, atol=solver.atol,
                                     progress=progress)
    seconds = _time.perf_counter() - started
    norm = "kernel" if model.kernel is not None else energy_normalization_for(model.beta)
    started = _time.perf_counter()
    energy = _energies(states, model.beta, model.kernel, norm, field_fn, energy_progress)
    energy_seconds = _time.perf_counter() - started
    adaptive = solver.method == "adaptive"
    meta = {**model.to_meta(), "n": int(n), "d": int(d), "t_end": t_end, "method": solver.method,
            "dt": solver.dt, "save_every": save.every, "seed": None, "init": "given",
            "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model.kind == "usa"
                                                                   and model.time_unit == "rescaled")
                               else "natural: time = depth"),
            "scheme": _SCHEMES[solver.method],
            "rtol": solver.rtol if adaptive else None, "atol": solver.atol if adaptive else None,
            "energy_normalization": norm, "energy_is_lyapunov": model.is_gradient_flow, "backend": backend,
            "integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
            "timings": {"integrate": seconds, "energy": energy_seconds},
            "energy_method": energy_method(field_fn, model.kernel),
            "save_times": None if save.times is None else "explicit"}
    meta.update(provenance or {})
    return Trajectory(times=times, X=states, energy=energy, meta=meta)


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
                      kernel=None) -> Trajectory:
    """The keyword form of :func:`simulate` from the first release (kept for the transition).

    It builds ``Model(model, beta, Q, K, V, kernel, time_unit)``, ``Solver(method, dt, rtol, atol, backend)``
    and ``SaveAt(save_every, save_times)``, draws ``X0`` iid uniform from ``seed`` when it is not given
    (``n`` and ``d`` then required; checked against ``X0`` otherwise) and calls :func:`simulate`.
    """
    spec = Model(kind=model, beta=beta, Q=Q, K=K, V=V, kernel=kernel, time_unit=time_unit)
    solver = Solver(method=method, dt=dt, rtol=rtol, atol=atol, backend=backend)
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
