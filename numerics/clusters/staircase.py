r"""The metastable energy staircase: plateaus of the normalised energy and their predicted heights.

The normalised energy (GKPR, arXiv 2410.06833) is
:math:`E(X) = \frac{1}{n^2} \sum_{i,j} e^{\beta(\langle x_i, x_j\rangle - 1)} \in (0, 1]`
(:func:`numerics.core.field.interaction_energy` with ``normalization="gkpr"``). When X consists of :math:`k`
tight clusters with :math:`m_c` particles each,

.. math::

    E = \sum_c (m_c/n)^2 + \frac{1}{n^2} \sum_{c \ne c'} m_c m_{c'} e^{\beta(\langle y_c, y_{c'}\rangle - 1)}
        + O(\mathrm{diam}^2 \beta):

at large :math:`\beta` and well-separated clusters the cross term is exponentially small, so :math:`E` sits on
the plateau :math:`\sum_c (m_c/n)^2` until the next merger, when it jumps by :math:`2 m_a m_b / n^2`. On a
logarithmic time axis the energy is a staircase.

Plateau detection (:func:`detect_plateaus`): maximal runs of consecutive frames with :math:`t > 0` over which
:math:`E` varies by at most ``tol`` and which last at least a factor ``min_ratio`` in time (a fixed width on the
logarithmic axis).

Verified by: clusters.staircase.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.clusters.detection import find_clusters
from numerics.common.errors import InputError, require_finite_array, require_real
from numerics.core.field import interaction_energy


@dataclass(frozen=True)
class Plateau:
    r"""One step of the staircase.

    ``start``/``end``: first and last frame times; ``height``: median normalised energy over the plateau;
    ``sizes``: cluster sizes at the plateau's middle frame; ``predicted``: :math:`\sum_c (m_c/n)^2`;
    ``reduced_energy``: the energy of the clusters collapsed to their centres (:math:`\sum_c (m_c/n)^2` plus the cross
    terms), the exact limit of the height when the clusters have zero diameter.
    """

    start: float
    end: float
    height: float
    sizes: tuple[float, ...]
    predicted: float
    reduced_energy: float

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "height": self.height, "sizes": list(self.sizes),
                "count": len(self.sizes), "predicted": self.predicted, "reduced_energy": self.reduced_energy}


def normalized_energies(X, beta: float) -> np.ndarray:
    r""":math:`\frac{1}{n^2} \sum_{i,j} e^{\beta(\langle x_i, x_j\rangle - 1)}` for every frame of X ``(m, n, d)``."""
    X = require_finite_array(X, "X", ndim=3)
    return np.array([interaction_energy(Xk, beta, normalization="gkpr") for Xk in X])


def detect_plateaus(times, energy, *, tol: float = 1e-3, min_ratio: float = 3.0) -> list[tuple[int, int]]:
    r"""Index ranges [i, j] (inclusive) of the plateaus of ``energy`` against ``times`` (only t > 0 is used).

    A plateau is a maximal run of consecutive frames with :math:`\max - \min` of the energy :math:`\le` ``tol`` and
    :math:`t_j / t_i \ge` ``min_ratio``. Runs are grown greedily from the left.
    """
    times = require_finite_array(times, "times", ndim=1)
    energy = require_finite_array(energy, "energy", ndim=1)
    if times.shape != energy.shape:
        raise InputError(f"times {times.shape} and energy {energy.shape} differ in shape")
    tol = require_real(tol, "tol", minimum=0.0)
    min_ratio = require_real(min_ratio, "min_ratio", minimum=1.0)
    out = []
    i = int(np.searchsorted(times, 0.0, side="right"))
    m = len(times)
    while i < m:
        j, lo, hi = i, energy[i], energy[i]
        while j + 1 < m and max(hi, energy[j + 1]) - min(lo, energy[j + 1]) <= tol:
            j += 1
            lo, hi = min(lo, energy[j]), max(hi, energy[j])
        if j > i and times[j] / times[i] >= min_ratio:
            out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


def energy_staircase(times, X, beta: float, eps: float, *, energy=None, tol: float = 1e-3,
                     min_ratio: float = 3.0) -> list[Plateau]:
    r"""Plateaus of the normalised energy of a trajectory with their heights beside :math:`\sum_c (m_c/n)^2`.

    Parameters
    ----------
    times : (m,) array_like
    X : (m, n, d) array_like
    beta : float
        Inverse temperature (>= 0) of the normalised energy.
    eps : float
        Cluster threshold for the masses :math:`m_c` (see :func:`numerics.clusters.find_clusters`).
    energy : (m,) array_like, optional
        Precomputed normalised energies (default: computed from X).
    tol, min_ratio
        See :func:`detect_plateaus`.

    Notes
    -----
    Source: GKPR (arXiv 2410.06833), energy staircase. Verified by: clusters.staircase.
    """
    X = require_finite_array(X, "X", ndim=3)
    beta = require_real(beta, "beta", minimum=0.0)
    E = normalized_energies(X, beta) if energy is None else require_finite_array(energy, "energy", ndim=1)
    times = require_finite_array(times, "times", ndim=1)
    n = X.shape[1]
    plateaus = []
    for i, j in detect_plateaus(times, E, tol=tol, min_ratio=min_ratio):
        mid = (i + j) // 2
        cl = find_clusters(X[mid], eps, normalize=True)
        masses = cl.sizes / n
        G = np.clip(cl.centres @ cl.centres.T, -1.0, 1.0)
        reduced = float(masses @ np.exp(beta * (G - 1.0)) @ masses)
        plateaus.append(Plateau(start=float(times[i]), end=float(times[j]), height=float(np.median(E[i:j + 1])),
                                sizes=tuple(float(s) for s in sorted(cl.sizes, reverse=True)),
                                predicted=float(np.sum(masses**2)), reduced_energy=reduced))
    return plateaus


def plateau_deviation(plateaus: list[Plateau]) -> float:
    """Largest |height - sum_c (m_c/n)^2| over the plateaus (nan when there are none)."""
    return max((abs(p.height - p.predicted) for p in plateaus), default=math.nan)
