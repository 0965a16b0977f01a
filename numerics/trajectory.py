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

from .errors import InputError, require_choice, require_int, require_points, require_real
from .field import MODELS, TIME_UNITS, interaction_energy, make_field
from .integrators import METHODS, integrate_adaptive, integrate_fixed
from .provenance import atomic_write, package_versions

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
        meta = json.dumps(self.meta, sort_keys=True, default=_json_default)

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


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o).__name__)


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


def energy_normalization_for(beta: float) -> str:
    return "glpr" if abs(beta) <= GLPR_ENERGY_MAX_BETA else "gkpr"


def simulate(model: str, beta: float, t_end: float, *, n: int | None = None, d: int | None = None,
             X0=None, seed: int | None = None, method: str = "rk4", dt: float | None = None,
             save_every: int = 1, save_times=None, Q=None, K=None, V=None, time_unit: str = "natural",
             rtol: float = 1e-9, atol: float = 1e-12, normalize: bool = False,
             progress: Callable[[float, float], None] | None = None) -> Trajectory:
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

    Returns
    -------
    Trajectory
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
    field_fn = make_field(d, beta, model, Q, K, V, time_unit=time_unit)
    started = _time.perf_counter()
    stats = {}
    if method == "adaptive":
        rtol = require_real(rtol, "rtol", minimum=0.0, strict_minimum=True)
        atol = require_real(atol, "atol", minimum=0.0, strict_minimum=True)
        if save_times is None:
            save_times = np.linspace(0.0, t_end, 101)
        save_times = np.asarray(save_times, dtype=float)
        if save_times[0] != 0.0 or not np.isclose(save_times[-1], t_end) or np.any(np.diff(save_times) <= 0):
            raise InputError("save_times must increase strictly from 0 to t_end")
        h0 = None if dt is None else require_real(dt, "dt", minimum=0.0, strict_minimum=True)
        times, states, st = integrate_adaptive(field_fn, X0, save_times, rtol=rtol, atol=atol, h0=h0,
                                               progress=progress)
        stats = {"accepted_steps": st.accepted, "rejected_steps": st.rejected, "field_evaluations": st.evaluations}
    else:
        if dt is None:
            raise InputError(f"method {method} needs a step dt")
        dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
        times, states = integrate_fixed(field_fn, X0, t_end, dt, method, save_every, progress=progress)
        steps = max(1, int(np.ceil(t_end / dt - 1e-12)))
        stats = {"steps": steps, "step": t_end / steps}
    seconds = _time.perf_counter() - started
    norm = energy_normalization_for(beta)
    identity = Q is None and K is None and V is None
    energy = np.array([interaction_energy(Xk, beta, normalization=norm) for Xk in states])
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
        "energy_normalization": norm, "energy_is_lyapunov": identity,
        "integrator_stats": stats, "seconds": seconds, "versions": package_versions(),
    }
    return Trajectory(times=times, X=states, energy=energy, meta=meta)
