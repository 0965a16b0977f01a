"""Events that decide an observable: a member of an ensemble stops integrating once its answer can no longer change.

An :class:`Event` names a registered definition and a tolerance, ``Event("one-cluster", tol=1e-3)`` (on the
command line ``--stop-when one-cluster:1e-3``). The integration loop (:mod:`numerics.core.loop`) asks
:meth:`Event.fired` after every accepted step; a member whose event fired leaves the vectorised batch, its state and
time of decision are kept, and its later frames repeat the decided state.

An event is allowed only where a proven statement makes it absorbing: every definition carries its lemma (the
note in ``proofs_notes/``) and the test of the models it holds for; :meth:`Event.check_model` refuses every other
model with one line (never applied silently).

Registered events
-----------------
``one-cluster`` (tol = eps in radians, 0 < eps < pi)
    Fires when every token lies within angle eps/2 of the normalised mean of the tokens. Lemma
    (``proofs_notes/core-events-one-cluster.md``): for the sphere flow dx_i/dt = P_{x_i}(sum_j a_ij x_j) with
    weights a_ij >= 0 (``sa`` and ``usa`` with V = I, any Q, K and beta; several heads with W_h^T V_h = c_h I,
    c_h >= 0; the causal mask, ALiBi and RoPE, which change only the weights; beta = gamma log n), a cap {x : <w, x> >= cos r} with
    r < pi/2 that holds every token keeps holding them for all later times. So all pairwise geodesic distances
    stay <= eps, and the observable "all tokens form one eps-cluster" (``one_cluster`` of the sweeps, with the
    same eps) is 1 at every later time.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError


@dataclass(frozen=True)
class Definition:
    """A registered event: its name, its lemma, the note that proves it, the models it holds for and its test.

    Parameters
    ----------
    name : str
        The name on the command line (``--stop-when NAME:TOL``).
    lemma : str
        One sentence: what makes the event absorbing.
    note : str
        The ``proofs_notes/`` file with the statement and its proof.
    tol_range : (float, float)
        The open interval of accepted tolerances.
    refusal : callable
        ``refusal(model, members) -> str | None``: why the lemma does not hold for the model (None: it holds).
    fired : callable
        ``fired(X, tol) -> (B,) bool`` for states X of shape (B, n, d).
    decides : str
        The observable it decides.
    """

    name: str
    lemma: str
    note: str
    tol_range: tuple[float, float]
    refusal: Callable
    fired: Callable
    decides: str


def cap_radius(X: np.ndarray) -> np.ndarray:
    """The largest angle between a token and the normalised mean of its system: (B,) for X of shape (B, n, d).

    The angle is 2 arcsin(|x_i - w| / 2) (the chord form: accurate for small angles, where arccos <x_i, w> loses
    half the digits). A zero mean (tokens spread around the sphere) gives pi: no cap around it is claimed.
    """
    mean = X.mean(axis=1)
    norm = np.linalg.norm(mean, axis=-1)
    safe = np.where(norm > 0, norm, 1.0)
    w = mean / safe[:, None]
    chord = np.linalg.norm(X - w[:, None, :], axis=-1).max(axis=1)
    radius = 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))
    return np.where(norm > 0, radius, math.pi)


#: a fired cap is this much inside radius tol/2 (relative), so that the rounding of the test cannot let a cap
#: slightly wider than tol/2 through
_INSIDE = 1.0 - 1e-12


def _one_cluster_fired(X: np.ndarray, tol: float) -> np.ndarray:
    # the cap of angular radius tol/2 around the mean direction: pairwise distances <= tol, an invariant cap.
    # Tested as (largest chord to w)^2 <= (2 sin(tol/4))^2, the cap_radius(X) <= tol/2 of every step without
    # its square roots and arcsin (the test runs after every step on every member still moving).
    s = X.sum(axis=1)
    norm = np.sqrt(np.einsum("bd,bd->b", s, s))
    w = s / np.where(norm > 0, norm, 1.0)[:, None]
    D = X - w[:, None, :]
    chord2 = np.einsum("bnd,bnd->bn", D, D).max(axis=1)
    return (norm > 0) & (chord2 <= (2.0 * math.sin(tol / 4.0) * _INSIDE) ** 2)


def head_coefficients(heads) -> list[float] | None:
    """The c_h >= 0 with W_h^T V_h = c_h I for every head h of ``heads`` (a
    :class:`numerics.core.blocks.MultiHead`), or None if some head has no such c_h.

    Head h adds W_h^T V_h a_i^{[h]} with a_i^{[h]} = sum_j A^h_ij x_j, A^h_ij >= 0, so with W_h^T V_h = c_h I
    the heads' sum is sum_j (sum_h c_h A^h_ij) x_j: non-negative weights on the tokens themselves, the lemma's
    field. The product is compared exactly as computed in floating point (V_h = W_h = I, or scaled copies, pass;
    an orthogonal V_h = W_h != I gives I only up to rounding and is refused: the lemma has no slack).
    """
    coeffs = []
    for h in range(heads.H):
        M = heads.W[h].T @ heads.V[h]
        c = float(M[0, 0])
        if not (c >= 0.0 and np.array_equal(M, c * np.eye(M.shape[0]))):
            return None
        coeffs.append(c)
    return coeffs


def _one_cluster_refusal(model, members: dict | None = None) -> str | None:
    """Why the cap lemma does not hold for ``model`` (None: it holds). The lemma needs the sphere flow whose field
    is a non-negative combination of the tokens minus its projection, without noise: ``sa`` or ``usa`` with V = I
    (or heads with W_h^T V_h = c_h I, c_h >= 0, :func:`head_coefficients`); Q, K, beta (any sign, or
    gamma log n), the time unit, the causal mask, ALiBi biases and RoPE rotations of queries and keys (the values
    stay x_j) only change the weights, which stay positive."""
    if model.kind not in ("sa", "usa"):
        return f"model {model.kind}"
    if model.kernel is not None:
        return "a user kernel (its weights may be negative)"
    if model.V is not None and not np.array_equal(model.V, np.eye(model.V.shape[0])):
        return "V != I"
    if model.noise > 0:
        return "noise (a cap is not invariant under diffusion)"
    if getattr(model, "common_noise", 0.0) > 0:
        return "common noise (the lemma is for the deterministic flow)"
    if model.mlp is not None or model.schedule is not None:
        return "an MLP or a depth schedule"
    if model.heads is not None and head_coefficients(model.heads) is None:
        return "heads whose W_h^T V_h is not c_h I with c_h >= 0"
    if model.norm != "post" or model.centering:
        return f"norm={model.norm!r}" + (" with centering" if model.centering else "")
    if members:
        V = members.get("V")
        if V is not None and not np.all(V == np.eye(V.shape[-1])):
            return "per-member V != I"
        noise = members.get("noise")
        if noise is not None and np.any(np.asarray(noise) > 0):
            return "per-member noise"
    return None


#: the registered events, by name
EVENTS: dict[str, Definition] = {
    "one-cluster": Definition(
        name="one-cluster",
        lemma="a cap of angular radius r < pi/2 holding every token is invariant (sa and usa with V = I, or heads "
              "with W_h^T V_h = c_h I, c_h >= 0; any Q, K, beta, beta scaling, causal mask, ALiBi, RoPE; no noise): "
              "once every token lies within tol/2 of their mean direction, all pairwise "
              "distances stay <= tol",
        note="core-events-one-cluster.md", tol_range=(0.0, math.pi), refusal=_one_cluster_refusal,
        fired=_one_cluster_fired, decides="one_cluster (eps = tol)"),
}


@dataclass(frozen=True)
class Event:
    """An event that ends a member's integration once its observable is decided (module docstring).

    Parameters
    ----------
    name : str
        A registered event (:data:`EVENTS`), e.g. ``"one-cluster"``.
    tol : float
        Its tolerance (``one-cluster``: the eps in radians of the decided one-cluster observable, 0 < eps < pi).
    """

    name: str
    tol: float

    def __post_init__(self) -> None:
        definition = EVENTS.get(self.name)
        if definition is None:
            raise InputError(f"unknown event {self.name!r}; events: {', '.join(sorted(EVENTS))}")
        low, high = definition.tol_range
        try:
            tol = float(self.tol)
        except (TypeError, ValueError):
            raise InputError(f"event {self.name}: tolerance must be a number, got {self.tol!r}") from None
        if not (low < tol < high):
            raise InputError(f"event {self.name}: tolerance must be in ({low:g}, {high:.6g}), got {self.tol!r}")
        object.__setattr__(self, "tol", tol)

    @classmethod
    def parse(cls, text: str) -> "Event":
        """``"one-cluster:1e-3"`` -> ``Event("one-cluster", 1e-3)`` (the ``--stop-when`` form)."""
        name, sep, tol = str(text).partition(":")
        if not sep or not tol.strip():
            raise InputError(f"--stop-when takes NAME:TOL (e.g. one-cluster:1e-3), got {text!r}")
        try:
            value = float(tol)
        except ValueError:
            raise InputError(f"event {name}: tolerance must be a number, got {tol!r}") from None
        return cls(name.strip(), value)

    @property
    def definition(self) -> Definition:
        return EVENTS[self.name]

    def check_model(self, model, members: dict | None = None) -> None:
        """Refuse, with one line, a model for which the event's lemma is not proved."""
        why = self.definition.refusal(model, members)
        if why is not None:
            raise InputError(f"event {self.name} is not proved absorbing for {why}: its lemma holds for sa and usa "
                             "with V = I (heads: W_h^T V_h = c_h I, c_h >= 0), no MLP, schedule, norm scheme or noise "
                             "(see proofs_notes/" + self.definition.note + ")")

    def fired(self, X: np.ndarray) -> np.ndarray:
        """(B,) bool: the members of X (B, n, d) whose observable is decided."""
        return np.asarray(self.definition.fired(X, self.tol), dtype=bool)

    def to_meta(self) -> str:
        return f"{self.name}:{self.tol:g}"


def events_summary(meta: dict) -> dict | None:
    """The command line's summary of ``meta["events"]`` (None for a run without an event): the event, how many
    members stopped, the last decision time and the member-steps taken against those of the run without it."""
    record = meta.get("events")
    if not record:
        return None
    times = [t for t in record["times"] if t is not None]
    return {"event": record["event"], "stopped": record["count"], "members": len(record["times"]),
            "last_decision": max(times) if times else None, "member_steps": record["member_steps"],
            "member_steps_without": record["member_steps_without"]}


def event_of(value) -> Event | None:
    """An :class:`Event` from an event, its ``NAME:TOL`` text, or None."""
    if value is None or isinstance(value, Event):
        return value
    if isinstance(value, str):
        return Event.parse(value)
    raise InputError(f"events must be an Event or NAME:TOL text, got {type(value).__name__}")


__all__ = ["EVENTS", "Definition", "Event", "cap_radius", "event_of", "events_summary", "head_coefficients"]
