"""Step-size controllers of the integration loop (:mod:`numerics.core.loop`).

- :class:`Fixed`: N = ceil((b - a) / dt) equal steps h <= dt on [t0, t_end], or on every interval between two
  save times (the steps then land on each of them).
- :class:`Adaptive`: the one error-per-step controller of ``dp5``, ``dop853`` and per-member ``dp5``:
  err = ``norm``(estimate / (atol + rtol max(|x|, |x_new|))); accept when err <= 1; the next step is
  h fac with fac = min(fac_max, safety err^(-1/order)) (fac_max when err = 0; after a rejection at most 1 when
  ``cap_after_reject``) and, after a rejection, h max(fac_min, safety err^(-1/order)). A step shortened to land
  on a save time or a breakpoint does not shrink the step that follows. The initial step is :meth:`Adaptive.hinit`.

The arithmetic is in Python floats, one error norm at a time (per member for ``per_member``): vectorising
``err ** (-1/order)`` into NumPy would change the last bits of the steps.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError


def rms(Z: np.ndarray) -> float:
    """Root mean square of the entries (the error norm of Hairer's DOP853 code and SciPy); for an ensemble
    (B, n, d) the largest member's, so that the step shared by the members meets every member's tolerance."""
    if Z.ndim == 3:
        return float(np.sqrt(np.max(np.mean(Z * Z, axis=(1, 2)))))
    return float(np.sqrt(np.mean(Z * Z)))


def max_norm(Z: np.ndarray) -> float:
    """The largest absolute entry (``dp5``'s norm; over a (B, n, d) ensemble the worst member's)."""
    return float(np.max(np.abs(Z))) if Z.size else 0.0


NORMS = {"max": max_norm, "rms": rms}


@dataclass(frozen=True)
class Fixed:
    """Fixed steps h <= ``dt``; a frame every ``save_every`` steps, or exactly at ``save_times`` (then every
    interval between two save times gets its own ceil(length / dt) equal steps)."""

    dt: float
    save_every: int = 1
    save_times: object = None


@dataclass(frozen=True)
class Adaptive:
    """Error-per-step control (module docstring).

    Parameters
    ----------
    rtol, atol : float
        Tolerances.
    norm : {"max", "rms"} or callable
        The norm of the scaled error estimate (a callable ``norm(Z) -> float``).
    per_member : bool
        One step size and accept/reject per member of a (B, n, d) ensemble (``dp5`` only).
    safety, fac_min, fac_max : float
        Step factors (``dp5``: 0.9, 0.2, 5; ``dop853``: 0.9, 0.2, 10 as in Hairer's codes).
    order : int
        err^(-1/order) sets the factor (5 for ``dp5``, 8 for ``dop853``).
    cap_after_reject : bool
        After a rejected step the next accepted one does not grow the step (``dop853``).
    hinit_order : int or None
        Initial step: None for 0.01 |x| / |f| in the controller's norm (no evaluation), else Hairer's ``hinit``
        with an estimate of the second derivative (one more evaluation; exponent 1/(hinit_order + 1)).
    h0 : float or None
        A given initial step (no ``hinit``).
    max_steps : int
        Attempted steps (per member) after which the run stops with an error.
    """

    rtol: float = 1e-9
    atol: float = 1e-12
    norm: object = "max"
    per_member: bool = False
    safety: float = 0.9
    fac_min: float = 0.2
    fac_max: float = 5.0
    order: int = 5
    cap_after_reject: bool = False
    hinit_order: int | None = None
    h0: float | None = None
    max_steps: int = 10_000_000

    @property
    def measure(self) -> Callable[[np.ndarray], float]:
        return NORMS[self.norm] if isinstance(self.norm, str) else self.norm

    def scale(self, X: np.ndarray, X_new: np.ndarray) -> np.ndarray:
        """atol + rtol max(|x|, |x_new|), entry by entry."""
        return self.atol + self.rtol * np.maximum(np.abs(X), np.abs(X_new))

    def error(self, estimate: np.ndarray, scale: np.ndarray):
        """The norm of ``estimate / scale``; per member (a NumPy vector) for ``per_member``."""
        if self.per_member:
            if self.norm != "max":
                raise InputError("per-member steps use the max norm")
            return (np.abs(estimate) / scale).max(axis=tuple(range(1, estimate.ndim))) if estimate[0].size \
                else np.zeros(estimate.shape[0])
        if self.norm == "max":  # |e| / scale: the bits of the dp5 code this replaced
            return float(np.max(np.abs(estimate) / scale)) if estimate.size else 0.0
        return self.measure(estimate / scale) if estimate.size else 0.0

    def accept(self, err: float, h_try: float, h: float, landed: bool, rejected_last: bool = False) -> float:
        """The step after an accepted step of size ``h_try`` (``h``: the step that was proposed; ``landed``: the
        step was shortened to end on a save time or breakpoint)."""
        fac = self.fac_max if err == 0 else min(self.fac_max, self.safety * err ** (-1 / self.order))
        if self.cap_after_reject and rejected_last:
            fac = min(1.0, fac)
        if not landed or h_try >= h:
            return h_try * fac
        return h

    def reject(self, err: float, h_try: float, t: float, what: str) -> float:
        """The step after a rejected step of size ``h_try``; stops with ``what`` when it underflows at t."""
        h = h_try * max(self.fac_min, self.safety * err ** (-1 / self.order))
        if h < 1e-14 * max(1.0, abs(t)):
            raise InputError(what)
        return h

    def hinit(self, f, X: np.ndarray, fX: np.ndarray, t: float) -> tuple[float, int]:
        """``(h, evaluations)``: the initial step (class docstring) and the field evaluations it used."""
        if self.h0 is not None:
            return self.h0, 0
        scale = self.atol + self.rtol * np.abs(X)
        if self.norm == "max":  # |x| / scale: the bits of the dp5 code this replaced
            d0, d1 = float(np.max(np.abs(X) / scale)), float(np.max(np.abs(fX) / scale))
        else:
            d0, d1 = self.measure(X / scale), self.measure(fX / scale)
        if self.hinit_order is None:
            return (1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1), 0
        # Hairer's hinit (Solving ODEs I, section II.4): an Euler step estimates the second derivative d2
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        f1 = f(X + h0 * fX, t + h0)
        d2 = self.measure((f1 - fX) / scale) / h0
        h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** (1.0 / (self.hinit_order + 1))
        return min(100.0 * h0, h1), 1


#: DOP853's control (Hairer's code): the RMS norm, fac_max 10, no growth right after a rejection, hinit
#: (the defaults of :class:`Adaptive` are dp5's)
DOP853_CONTROL = dict(norm="rms", safety=0.9, fac_min=0.2, fac_max=10.0, order=8, cap_after_reject=True,
                      hinit_order=7)
