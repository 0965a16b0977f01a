r"""Builders for the structured configurations of the critical-point analysis, with cluster masses.

Every builder returns an (n, d) float64 array of unit rows. A "mass" is the number of particles placed at one
vertex (clusters of coincident particles, as in GKPR's k-group states). Families (names used by the CLI):

- ``sync``: all :math:`n` particles at :math:`e_1` (the synchronised state);
- ``clusters``: :math:`k` clusters at angles :math:`2\pi c / k` on the great circle of the :math:`(e_1, e_2)` plane;
- ``polygon``: the regular :math:`n`-gon (``clusters`` with :math:`k = n`, masses 1);
- ``antipodal``: two clusters at :math:`+e_1` and :math:`-e_1` (``clusters`` with :math:`k = 2`);
- ``simplex``: the :math:`d+1` vertices of the regular simplex (:math:`\langle x_a, x_b\rangle = -1/d`);
- ``orthoplex``: the :math:`2d` vertices :math:`\pm e_a` of the cross-polytope;
- ``file``: an (n, d) ``.npy`` file (:func:`numerics.core.trajectory.load_initial`).

Impossible requests (:math:`k` not dividing :math:`n` without masses, simplex with :math:`n \ne d+1`, masses not summing
to :math:`n`) raise :class:`numerics.common.errors.InputError`. Source for the families: GLPR arXiv 2312.10794, CRMB
arXiv 2405.18273, PRY arXiv 2507.22857. Verified by: critical.circle-polygons.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from numerics.common.limits import check_array
from numerics.common.errors import InputError, require_choice, require_int
from numerics.core.trajectory import load_initial

from numerics.critical.names import CONFIGS  # noqa: E402 - light module for the CLI parser


def _masses(masses: Sequence[int] | None, k: int | None, n: int | None, what: str) -> list[int]:
    """Resolve (masses, k, n) to a list of k positive cluster sizes summing to n."""
    if masses is not None:
        masses = [require_int(m, "mass", minimum=1) for m in masses]
        if k is not None and k != len(masses):
            raise InputError(f"{what}: --k {k} does not match {len(masses)} masses {masses}")
        if n is not None and n != sum(masses):
            raise InputError(f"{what}: masses {masses} sum to {sum(masses)}, not n = {n}")
        return masses
    if k is None or n is None:
        raise InputError(f"{what}: give n and k, or masses")
    if n % k:
        raise InputError(f"{what}: k = {k} does not divide n = {n} (give --masses for unequal clusters)")
    return [n // k] * k


def _repeat(vertices: np.ndarray, masses: list[int]) -> np.ndarray:
    return np.repeat(vertices, masses, axis=0)


def circle_clusters(d: int, *, k: int | None = None, n: int | None = None,
                    masses: Sequence[int] | None = None) -> np.ndarray:
    r"""Clusters of sizes ``masses`` (or :math:`k` equal clusters of :math:`n/k`) at angles :math:`2\pi c/k` on the
    :math:`(e_1, e_2)` circle."""
    d = require_int(d, "d", minimum=2)
    k = None if k is None else require_int(k, "k", minimum=1)
    n = None if n is None else require_int(n, "n", minimum=1)
    m = _masses(masses, k, n, "clusters")
    theta = 2 * np.pi * np.arange(len(m)) / len(m)
    V = np.zeros((len(m), d))
    V[:, 0], V[:, 1] = np.cos(theta), np.sin(theta)
    return _repeat(V, m)


def regular_polygon(n: int, d: int) -> np.ndarray:
    """The regular :math:`n`-gon on the :math:`(e_1, e_2)` great circle."""
    n = require_int(n, "n", minimum=1)
    return circle_clusters(d, k=n, n=n)


def synchronized(n: int, d: int) -> np.ndarray:
    """All :math:`n` particles at :math:`e_1`."""
    n, d = require_int(n, "n", minimum=1), require_int(d, "d", minimum=2)
    X = np.zeros((n, d))
    X[:, 0] = 1.0
    return X


def simplex_vertices(d: int) -> np.ndarray:
    """The d+1 unit vertices of the regular simplex in R^d, <x_a, x_b> = -1/d (a != b)."""
    d = require_int(d, "d", minimum=1)
    E = np.eye(d + 1) - 1.0 / (d + 1)                 # centred basis vectors of R^{d+1}, in the plane sum = 0
    basis, _ = np.linalg.qr(np.vstack([np.ones(d + 1), np.eye(d + 1)[:d]]).T)
    V = E @ basis[:, 1:]                              # coordinates in an orthonormal basis of 1^perp
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def simplex(d: int, *, n: int | None = None, masses: Sequence[int] | None = None) -> np.ndarray:
    """The regular simplex (n = d+1), or clusters of sizes ``masses`` (d+1 of them) at its vertices."""
    d = require_int(d, "d", minimum=2)
    if masses is None:
        if n is not None and n != d + 1:
            raise InputError(f"simplex: needs n = d + 1 = {d + 1} particles, got n = {n} (or give d+1 masses)")
        masses = [1] * (d + 1)
    m = _masses(masses, d + 1, n, "simplex")
    return _repeat(simplex_vertices(d), m)


def orthoplex(d: int, *, n: int | None = None, masses: Sequence[int] | None = None) -> np.ndarray:
    r"""The cross-polytope :math:`\pm e_a` (:math:`n = 2d`, ordered :math:`e_1, -e_1, e_2, -e_2, \dots`), or clusters
    of sizes ``masses``."""
    d = require_int(d, "d", minimum=2)
    if masses is None:
        if n is not None and n != 2 * d:
            raise InputError(f"orthoplex: needs n = 2d = {2 * d} particles, got n = {n} (or give 2d masses)")
        masses = [1] * (2 * d)
    m = _masses(masses, 2 * d, n, "orthoplex")
    V = np.zeros((2 * d, d))
    V[0::2] = np.eye(d)
    V[1::2] = -np.eye(d)
    return _repeat(V, m)


def build_configuration(config: str, *, n: int | None = None, d: int | None = None, k: int | None = None,
                        masses: Sequence[int] | None = None, file=None, normalize: bool = False) -> np.ndarray:
    """Dispatch on the family name (see the module docstring); validates every combination."""
    config = require_choice(config, "config", CONFIGS)
    if n is not None and d is not None:
        check_array((require_int(n, "n", minimum=1), require_int(d, "d", minimum=2)), f"a configuration of n={n} "
                    f"points in R^{d}", copies=4)
    if config == "file":
        if file is None:
            raise InputError("config 'file' needs --file X.npy")
        X = load_initial(file, normalize=normalize)
        if n is not None and X.shape[0] != n:
            raise InputError(f"{file} holds n = {X.shape[0]} particles, not --n {n}")
        if d is not None and X.shape[1] != d:
            raise InputError(f"{file} has d = {X.shape[1]}, not --d {d}")
        return X
    if d is None:
        raise InputError(f"config '{config}' needs --d")
    if config == "sync":
        if n is None:
            raise InputError("config 'sync' needs --n")
        return synchronized(n, d)
    if config == "polygon":
        if n is None:
            raise InputError("config 'polygon' needs --n")
        return regular_polygon(n, d)
    if config == "antipodal":
        if k is not None and k != 2:
            raise InputError(f"config 'antipodal' has k = 2 clusters, got --k {k}")
        return circle_clusters(d, k=2, n=n, masses=masses)
    if config == "clusters":
        return circle_clusters(d, k=k, n=n, masses=masses)
    if config == "simplex":
        return simplex(d, n=n, masses=masses)
    return orthoplex(d, n=n, masses=masses)


__all__ = [
    "CONFIGS",
    "build_configuration",
    "circle_clusters",
    "orthoplex",
    "regular_polygon",
    "simplex",
    "simplex_vertices",
    "synchronized",
]
