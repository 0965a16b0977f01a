r"""The members of an ensemble: what differs between them (:class:`Members`), its validation
(:func:`resolve_members`), their random streams (:class:`MemberStreams`) and the view of one member as a single
run (:func:`member`).

An ensemble is an ``X0`` of shape (B, n, d) given to :func:`numerics.core.simulate.simulate` (with ``members``
optional). What may differ between members: :math:`\beta`, Q, K, V, the noise level D and the noise seeds, each given
per member (a leading axis of length B) or shared (``None``: the model's value, the solver's seed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.common.errors import SPHERE_TOLERANCE, InputError, require_finite_array, require_int
from numerics.common.limits import check_array
from numerics.core.norms import is_radial


@dataclass(frozen=True, eq=False)
class Members:
    r"""What differs between the members of an ensemble; ``None`` means shared (the model's value).

    Parameters
    ----------
    beta : (B,) array_like, optional
        Inverse temperature of each member.
    Q, K, V : (B, d, d) array_like, optional
        Attention matrices of each member (one head, no heads/MLP/schedule).
    noise : (B,) array_like, optional
        Noise level :math:`D_b \ge 0` of each member (all zero or all positive).
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
    if noise is not None and np.any(noise > 0) and is_radial(model):  # the single run's check_norm line
        raise InputError("normalisation schemes are deterministic here: noise > 0 is not supported")
    if any(m is not None for m in mats.values()):
        if is_radial(model):  # the scheme's field reads the model's one head (Model.block_heads)
            raise InputError(f"per-member Q, K, V are not supported with norm={model.norm!r}: give Q, K, V in the "
                             "model (shared by the members)")
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


class MemberStreams:
    """One ``numpy.random.Generator`` per member; ``standard_normal((B, n, d))`` stacks each member's own
    ``standard_normal((n, d))``, so member b's increments are those of a single run seeded with seeds[b]."""

    def __init__(self, seeds):
        self.generators = [np.random.default_rng(int(s)) for s in seeds]

    def standard_normal(self, shape) -> np.ndarray:
        if shape[0] != len(self.generators):
            raise InputError(f"noise for {shape[0]} members from {len(self.generators)} streams")
        return np.stack([g.standard_normal(shape[1:]) for g in self.generators])

    @classmethod
    def from_states(cls, states) -> "MemberStreams":
        """The streams continued from the saved states of :meth:`states` (resuming a noisy ensemble)."""
        from numerics.core.plugins import load_plugin

        sde = load_plugin("numerics.noise.sde")
        streams = cls([])
        streams.generators = [sde.generator_from_state(s) for s in states]
        return streams

    def states(self) -> list:
        """The state of each member's generator (JSON-ready; :meth:`from_states` continues from them)."""
        from numerics.core.plugins import load_plugin

        sde = load_plugin("numerics.noise.sde")
        return [sde.generator_state(g) for g in self.generators]


def member(traj, b: int):
    r"""Member ``b`` of an ensemble trajectory as the trajectory of a single run (its :math:`\beta`, noise, matrices and
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
    if isinstance(meta.get("noise_state"), list):  # its random stream: the member resumes as a single run
        meta["noise_state"] = meta["noise_state"][b]
    if isinstance(meta.get("seed"), list):
        meta["seed"] = meta["seed"][b]
    if isinstance(meta.get("energy_normalization"), list):
        meta["energy_normalization"] = meta["energy_normalization"][b]
    for name in batch.get("matrices") or ():
        meta[name] = np.asarray(traj.arrays[f"members.{name}"][b]).tolist()
    arrays = {k: v for k, v in traj.arrays.items() if not k.startswith("members.")}
    radius = getattr(traj, "radius", None)  # a normalisation scheme's radii (frames, B, n)
    return type(traj)(times=traj.times, X=traj.X[:, b], energy=traj.energy[:, b], meta=meta, arrays=arrays,
                      **({} if radius is None else {"radius": radius[:, b]}))


__all__ = ["Members", "MemberStreams", "member", "require_batch", "resolve_members"]
