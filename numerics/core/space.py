"""The state spaces of the integration loop (:mod:`numerics.core.loop`): where the states live and how a step's
result is put back there.

- :data:`SPHERE` (:class:`Sphere`): unit rows, (S^{d-1})^n or a batch (B, n, d); ``retract`` divides each row by
  its length (the renormalisation after a step), ``tangent`` is the exact orthogonal projection onto the tangent
  space of the row's direction.
- :class:`SphereRadius`: the augmented state [theta | r] of the normalisation schemes (:mod:`numerics.core.norms`):
  the directions are renormalised, the radii are checked (a radius outside (0, RADIUS_MAX] stops the run).
- :data:`FLAT` (:class:`Flat`): R^m (angles, flat test problems); ``retract`` is the identity.
- :class:`Retraction`: any callable used as the retraction (the ``project=`` argument of the integrators).

The loop never projects anything itself: a solver's step result goes through ``space.retract`` (fixed steps and
accepted ``dp5`` steps; ``dop853`` retracts its outputs only, see :mod:`numerics.core.solvers`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class Sphere:
    """Products of unit spheres: every row of the last axis has length 1."""

    name = "sphere"

    @staticmethod
    def retract(X: np.ndarray) -> np.ndarray:
        """Rows back to unit length (the renormalisation of every sphere stepper)."""
        return X / np.linalg.norm(X, axis=-1, keepdims=True)

    @staticmethod
    def tangent(X: np.ndarray, V: np.ndarray) -> np.ndarray:
        """V - (<x, v> / |x|^2) x row by row: the exact orthogonal projection onto x^perp (equal to P_x v on the
        sphere; off it, at Runge-Kutta stage points, it keeps every |x_i| constant along the extended flow)."""
        inner = np.sum(X * V, axis=-1, keepdims=True)
        return V - (inner / np.sum(X * X, axis=-1, keepdims=True)) * X


#: radii outside (0, RADIUS_MAX] stop a run with an error (a blow-up, or a collapse to the origin)
RADIUS_MAX = 1e100


def renormalize_directions(Y):
    """Rows of the direction block Y[..., :d] back to unit length (radii untouched; Y is (n, d + 1), or
    (B, n, d + 1) for a batch); a radius outside (0, RADIUS_MAX] or a non-finite state raises :class:`InputError`
    (the radius blew up or collapsed)."""
    from numerics.common.errors import InputError

    theta, r = Y[..., :-1], Y[..., -1]
    bad = ~(np.isfinite(r) & (r > 0.0) & (r <= RADIUS_MAX))
    if np.any(bad) or not np.all(np.isfinite(theta)):
        flat = bad if np.any(bad) else ~np.isfinite(theta).all(axis=-1)
        where = np.unravel_index(int(np.argmax(flat)), flat.shape)
        who = f"token {where[-1]}" if flat.ndim == 1 else f"member {where[0]} token {where[1]}"
        raise InputError(f"radius blow-up: {who} has radius {r[where]:.3g}, outside (0, {RADIUS_MAX:g}] "
                         "(the scheme's radial law drives it there; shorten t_end or change V, beta)")
    out = Y.copy()
    out[..., :-1] = theta / np.linalg.norm(theta, axis=-1, keepdims=True)
    return out


class SphereRadius:
    """The augmented state [theta | r] (last column the radius) of a normalisation scheme."""

    name = "sphere-radius"

    @staticmethod
    def retract(Y: np.ndarray) -> np.ndarray:
        """Directions back to unit length, radii checked (:func:`renormalize_directions`)."""
        return renormalize_directions(Y)


class Flat:
    """A flat state space: nothing to put back."""

    name = "flat"

    @staticmethod
    def retract(X: np.ndarray) -> np.ndarray:
        return X


@dataclass(frozen=True)
class Retraction:
    """A space given by its retraction alone (a caller's ``project`` function)."""

    retract: Callable[[np.ndarray], np.ndarray]
    name: str = "custom"


SPHERE, SPHERE_RADIUS, FLAT = Sphere(), SphereRadius(), Flat()


def space_of(project) -> Sphere | Flat | Retraction:
    """The space of the integrators' ``project`` argument: ``None`` is flat, the sphere's renormalisation is
    :data:`SPHERE`, the normalisation schemes' is :data:`SPHERE_RADIUS`, anything else a :class:`Retraction`."""
    if project is None:
        return FLAT
    if project is Sphere.retract:
        return SPHERE
    if project is renormalize_directions:
        return SPHERE_RADIUS
    return Retraction(project)
