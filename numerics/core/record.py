"""The trajectory record and its file: :class:`Trajectory` (saved frames, energies, metadata) and the ``.npz`` I/O.

A trajectory file is an ``.npz`` with arrays ``times`` (m,), ``X`` (m, n, d), ``energy`` (m,) and ``meta``, a
JSON string with every parameter, the seed, package versions, the time unit and the energy normalisation.
Normalisation schemes (``Model(norm=...)``, :mod:`numerics.core.norms`) also store ``radius`` (m, n).
Models with heads, an MLP or a depth schedule also store their weight arrays, as ``arch.<key>`` entries
(``arch.heads.Q``, ``arch.schedule.2.mlp.W1``, ...) referenced from ``meta`` (:meth:`Model.to_meta`).
An ensemble's file holds ``X`` of shape (m, B, n, d) and ``energy`` (m, B).

This module is the bottom of the driver: the driver (:mod:`numerics.core.simulate`) builds a :class:`Trajectory`,
and :mod:`numerics.core.trajectory` re-exports both (the record lives here so that no import cycle joins them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import SPHERE_TOLERANCE, InputError, require_finite_array, require_points
from numerics.common.provenance import atomic_write, to_json
from numerics.common.readers import parse_json, read_npy, read_npz
from numerics.core.model import Model
from numerics.core.norms import load_radius

#: prefix of the model's weight arrays in a trajectory ``.npz``
ARCH_PREFIX = "arch."


@dataclass
class Trajectory:
    r"""Saved states of one simulation.

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
        Radii :math:`r_i` of the tokens :math:`x_i = r_i \theta_i` of a normalisation scheme (``Model(norm=...)`` other
        than post-LN); ``X`` then holds the directions :math:`\theta_i`. None for the sphere flow. An ensemble's: (m, B,
        n).
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
        radius = None if "radius" not in data else load_radius(data["radius"], X.shape[:-1], where)
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
