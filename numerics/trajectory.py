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

from .errors import InputError, require_choice, require_finite_array, require_int, require_points, require_real
from .field import MODELS, TIME_UNITS, interaction_energy, make_field
from .integrators import METHODS, integrate
from .provenance import atomic_write, package_versions, to_json

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


BACKENDS = ("auto", "direct", "fourier")


def _is_identity(M, d: int) -> bool:
    return M is None or (np.shape(M) == (d, d) and np.array_equal(np.asarray(M, dtype=float), np.eye(d)))


def _fourier_module():
    """numerics.fourier (the S^1 Fourier backend) if it is part of this build, else None."""
    import importlib

    name = f"{__package__}.fourier"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a real import error inside the module: do not hide it
        return None


def select_field(model: str, beta: float, d: int, n: int, Q=None, K=None, V=None, *, time_unit: str = "natural",
                 backend: str = "auto", kernel=None):
    """The field callable for a simulation and the name of the backend that provides it.

    ``direct``: :func:`numerics.field.make_field` (blocked O(n^2) sums). ``fourier``: the S^1 Fourier-series
    field of :mod:`numerics.fourier` (d = 2 and Q = K = V = I only; :class:`InputError` if unavailable or not
    applicable). ``auto``: ``fourier`` when it applies and ``numerics.fourier.fourier_is_faster(n, beta)``,
    else ``direct`` (silently).
    """
    backend = require_choice(backend, "backend", BACKENDS)
    if kernel is not None:
        return _kernel_field(kernel, model, beta, Q, K, V, time_unit, backend), "kernel"
    eligible = d == 2 and all(_is_identity(M, d) for M in (Q, K, V))
    if backend == "direct":
        return make_field(d, beta, model, Q, K, V, time_unit=time_unit), "direct"
    fourier = _fourier_module()
    if backend == "fourier":
        if fourier is None:
            raise InputError("fourier backend not available (numerics.fourier is not part of this build); "
                             "use --backend direct")
        if not eligible:
            raise InputError(f"fourier backend needs d = 2 and Q = K = V = I, got d={d}"
                             + ("" if all(_is_identity(M, d) for M in (Q, K, V)) else " with general Q, K, V"))
        return fourier.make_fourier_field(beta, model, time_unit=time_unit), "fourier"
    if fourier is not None and eligible and fourier.fourier_is_faster(n, beta):
        return fourier.make_fourier_field(beta, model, time_unit=time_unit), "fourier"
    return make_field(d, beta, model, Q, K, V, time_unit=time_unit), "direct"


def _kernel_field(kernel, model, beta, Q, K, V, time_unit, backend):
    """The field of a user pair kernel phi (see :mod:`numerics.kernel_field`): Q = K = V = I, natural time."""
    from .kernel_field import make_kernel_field

    if any(M is not None for M in (Q, K, V)):
        raise InputError("a user kernel acts on <x_i, x_j> directly: it cannot be combined with Q, K, V")
    if backend == "fourier":
        raise InputError("the fourier backend is specific to the exponential kernel; use --backend direct")
    if time_unit != "natural":
        raise InputError("the rescaled time unit is defined for the exponential kernel only")
    return make_kernel_field(kernel, beta, model)


def kernel_metadata(kernel) -> dict | None:
    """JSON form of a PairKernel for trajectory metadata (re-parsed by :func:`kernel_from_metadata`)."""
    if kernel is None:
        return None
    import sympy as sp

    return {"expr": sp.sstr(kernel.expr), "name": kernel.name,
            "params": {str(k): float(v) for k, v in kernel.params.items()}}


def kernel_from_metadata(meta: dict | None):
    """The PairKernel recorded by :func:`kernel_metadata`, through the whitelist parser (never eval)."""
    if not meta:
        return None
    from theory.expression_parser import parse_kernel

    try:
        return parse_kernel(str(meta["expr"]), dict(meta.get("params") or {}), name=meta.get("name"))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"trajectory meta holds an unusable kernel: {exc}") from None


def _energies(states, beta, kernel, normalization):
    """Energy of each saved state: E_beta (GLPR or GKPR normalisation) or the user kernel's pair energy."""
    if kernel is not None:
        from .kernel_field import kernel_energy

        return np.array([kernel_energy(Xk, kernel, beta) for Xk in states])
    return np.array([interaction_energy(Xk, beta, normalization=normalization) for Xk in states])


def resume(trajectory, t_end: float, *, progress: Callable[[float, float], None] | None = None) -> Trajectory:
    """Continue a saved trajectory (a :class:`Trajectory` or the path of its ``.npz``) up to ``t_end``.

    Every parameter (model, beta, method, dt, Q, K, V, time unit, tolerances, backend) is read from the
    trajectory's ``meta``; the result holds the old frames followed by the new ones, with
    ``meta["resumed_from"]`` recording where the continuation started. Adaptive runs keep the spacing of the
    original save times.
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
    model, beta, method = meta["model"], float(meta["beta"]), meta["method"]
    X0 = trajectory.X[-1]
    n, d = X0.shape
    Q, K, V = (None if meta.get(k) is None else np.asarray(meta[k], dtype=float) for k in ("Q", "K", "V"))
    kernel = kernel_from_metadata(meta.get("kernel"))
    backend_saved = meta.get("backend", "direct")
    field_fn, backend = select_field(model, beta, d, n, Q, K, V, time_unit=meta["time_unit"],
                                     backend="direct" if backend_saved == "kernel" else backend_saved, kernel=kernel)
    save_times = None
    if method == "adaptive":
        old = trajectory.times
        spacing = float(old[-1] - old[0]) / max(1, old.size - 1) if old.size > 1 else (t_end - t0) / 100
        frames = max(1, int(round((t_end - t0) / spacing)))
        save_times = np.linspace(t0, t_end, frames + 1)
    started = _time.perf_counter()
    times, states, stats = integrate(field_fn, X0, t_end, method, dt=meta.get("dt"), t0=t0,
                                     save_every=int(meta.get("save_every", 1)), save_times=save_times,
                                     rtol=float(meta.get("rtol") or 1e-9), atol=float(meta.get("atol") or 1e-12),
                                     progress=progress)
    seconds = _time.perf_counter() - started
    norm = meta.get("energy_normalization", energy_normalization_for(beta))
    energy = _energies(states[1:], beta, kernel, norm)
    meta.update({"t_end": t_end, "seconds": float(meta.get("seconds", 0.0)) + seconds, "backend": backend,
                 "resumed_from": {"path": source, "t": t0, "frames": int(trajectory.times.size)},
                 "integrator_stats": {"previous": meta.get("integrator_stats"), "resumed": stats},
                 "versions": package_versions()})
    return Trajectory(times=np.concatenate([trajectory.times, times[1:]]),
                      X=np.concatenate([trajectory.X, states[1:]]),
                      energy=np.concatenate([trajectory.energy, energy]), meta=meta)


def simulate(model: str, beta: float, t_end: float, *, n: int | None = None, d: int | None = None,
             X0=None, seed: int | None = None, method: str = "rk4", dt: float | None = None,
             save_every: int = 1, save_times=None, Q=None, K=None, V=None, time_unit: str = "natural",
             rtol: float = 1e-9, atol: float = 1e-12, normalize: bool = False,
             progress: Callable[[float, float], None] | None = None, backend: str = "auto",
             kernel=None) -> Trajectory:
    """Simulate dx_i/dt = v_i(X) (``sa`` or ``usa``, see :func:`numerics.field.attention_field`).

    Parameters
    ----------
    model : {"sa", "usa"}
    beta : float
        Inverse temperature.
    t_end : float
        Final time (> 0), in ``time_unit`` (``usa`` only: ``rescaled`` means t' = e^{beta} t).
    n, d : int
        Number of particles and ambient dimension (needed when ``X0`` is not given; checked against it).
    X0 : (n, d) array_like, optional
        Initial state; default iid uniform on S^{d-1} drawn from ``seed``.
    seed : int, optional
        Seed of the initial condition (``numpy.random.default_rng(seed)``).
    method : {"layer", "rk4", "adaptive"}
        See :mod:`numerics.integrators`.
    dt : float
        Step for ``layer`` and ``rk4`` (required for them); initial step hint for ``adaptive``.
    save_every : int
        Keep every k-th step (fixed-step methods).
    save_times : array_like, optional
        Output times for ``adaptive`` (default: 101 equally spaced times in [0, t_end]).
    Q, K, V : (d, d) array_like, optional
        Attention matrices (identity by default).
    backend : {"auto", "direct", "fourier"}
        How the field is evaluated (see :func:`select_field`); the one used is recorded in ``meta["backend"]``.
    kernel : theory.kernels.PairKernel, optional
        A user pair kernel phi(s) instead of the attention kernel (issue 8): usa is then
        v_i = P_{x_i}((1/n) sum_j phi'(s_ij) x_j) = n grad_i E and sa normalises the weights phi'(s_ij) (which
        must be positive); Q = K = V = I, natural time. The energy column is E = 1/(2n^2) sum phi(s_ij).

    Returns
    -------
    Trajectory

    Notes
    -----
    Verified by: core.energy-identity (energy along trajectories), core.integrator-orders.
    """
    model = require_choice(model, "model", MODELS)
    method = require_choice(method, "method", METHODS)
    time_unit = require_choice(time_unit, "time_unit", TIME_UNITS)
    beta = require_real(beta, "beta")
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    save_every = require_int(save_every, "save_every", minimum=1)
    if X0 is None:
        if n is None or d is None:
            raise InputError("give n and d, or an initial state X0")
        n = require_int(n, "n", minimum=1)
        d = require_int(d, "d", minimum=2)
        X0 = uniform_sphere(n, d, seed)
        init = "uniform"
    else:
        X0 = require_points(X0, "X0", normalize=normalize)
        if n is not None and require_int(n, "n", minimum=1) != X0.shape[0]:
            raise InputError(f"n={n} does not match the initial state with {X0.shape[0]} rows")
        if d is not None and require_int(d, "d", minimum=2) != X0.shape[1]:
            raise InputError(f"d={d} does not match the initial state with {X0.shape[1]} columns")
        n, d = X0.shape
        init = "given"
    field_fn, backend = select_field(model, beta, d, n, Q, K, V, time_unit=time_unit, backend=backend,
                                     kernel=kernel)
    started = _time.perf_counter()
    times, states, stats = integrate(field_fn, X0, t_end, method, dt=dt, save_every=save_every,
                                     save_times=save_times, rtol=rtol, atol=atol, progress=progress)
    seconds = _time.perf_counter() - started
    norm = "kernel" if kernel is not None else energy_normalization_for(beta)
    identity = Q is None and K is None and V is None
    energy = _energies(states, beta, kernel, norm)
    meta = {
        "model": model, "beta": beta, "n": int(n), "d": int(d), "t_end": t_end, "method": method,
        "dt": dt, "save_every": save_every, "seed": seed, "init": init, "time_unit": time_unit,
        "time_unit_note": ("t' = e^beta t (usa rescaled)" if (model == "usa" and time_unit == "rescaled")
                           else "natural: time = depth"),
        "scheme": {"layer": "projected Euler x <- (x + h v)/|x + h v|", "rk4": "classical RK4 on the projected "
                   "field, renormalised each step", "adaptive": "Dormand-Prince 5(4), renormalised each accepted "
                   "step"}[method],
        "rtol": rtol if method == "adaptive" else None, "atol": atol if method == "adaptive" else None,
        "Q": None if Q is None else np.asarray(Q, float).tolist(),
        "K": None if K is None else np.asarray(K, float).tolist(),
        "V": None if V is None else np.asarray(V, float).tolist(),
        "energy_normalization": norm, "energy_is_lyapunov": identity, "backend": backend,
        "kernel": kernel_metadata(kernel),
        "integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
    }
    return Trajectory(times=times, X=states, energy=energy, meta=meta)
