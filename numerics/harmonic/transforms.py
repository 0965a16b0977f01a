r"""Real spherical harmonics on :math:`\mathbb{S}^2` at arbitrary points: moments (analysis) and evaluation (synthesis).

Convention (the one of :mod:`numerics.noise.sphere`, which uses these recursions; pinned against
``scipy.special.sph_harm_y`` in tests/numerics/test_harmonic_transforms.py):

.. math::

    \begin{aligned}
    Y_{lm}(x) &= \Lambda_l^{\lvert m\rvert}(\cos\theta) \cdot
      \begin{cases} 1 & (m = 0), \\ \sqrt{2} \cos(m\phi) & (m > 0), \\
        \sqrt{2} \sin(\lvert m\rvert\phi) & (m < 0), \end{cases} \\
    \Lambda_l^m &= \sqrt{\frac{(2l+1)(l-m)!}{(l+m)!}}\, P_l^m, \qquad
      P_l^m \text{ without the Condon-Shortley phase } (-1)^m,
    \end{aligned}

orthonormal in :math:`L^2` of the uniform *probability* measure :math:`\mu` of :math:`\mathbb{S}^2`
(:math:`\mathbb{E}_\mu[Y_{lm} Y_{l'm'}] = \delta`, :math:`Y_{00} = 1`). :math:`\theta` is the polar angle from
:math:`e_3`, :math:`x = (\sin\theta \cos\phi, \sin\theta \sin\phi, \cos\theta)`.

No angles are formed: with :math:`z = x_3` and :math:`w = x_1 + i x_2 = \sin(\theta) e^{i\phi}`,

.. math::

    Y_{lm}(x) = Q_l^m(z) \sqrt{2} \operatorname{Re}(w^m), \qquad Y_{l,-m}(x) = Q_l^m(z) \sqrt{2} \operatorname{Im}(w^m),
    \qquad Y_{l0} = Q_l^0(z),

where :math:`Q_l^m = \Lambda_l^m / \sin^m(\theta)` is a polynomial in :math:`z` of degree :math:`l - m` (so
:math:`r^l Y_{lm}` is the solid harmonic). :math:`Q` follows the stable, fully normalised three-term recursion (the
one of :math:`\Lambda_l^m` with the factor :math:`\sin^m` taken out):

.. math::

    \begin{aligned}
    Q_m^m &= \prod_{k=1}^m \sqrt{\frac{2k+1}{2k}}, \qquad Q_{m+1}^m = \sqrt{2m+3}\, z Q_m^m, \\
    Q_l^m &= a_{lm} (z Q_{l-1}^m - b_{lm} Q_{l-2}^m), \qquad a_{lm} = \sqrt{\frac{4l^2-1}{l^2-m^2}}, \qquad
      b_{lm} = \sqrt{\frac{(l-1)^2-m^2}{4(l-1)^2-1}}.
    \end{aligned}

Coefficients of a set of :math:`k` functions are stored as an array ``C`` of shape ``(k, 2, L+1, L+1)``:
``C[c, 0, l, m]`` is the coefficient of :math:`Y_{lm}` (:math:`m \ge 0`) and ``C[c, 1, l, m]`` that of
:math:`Y_{l,-m}` (:math:`m \ge 1`); entries with :math:`m > l` (and the sin part of :math:`m = 0`) are zero.
:func:`to_noise_pair` / :func:`from_noise_pair` convert to the (cos, sin) pair of
:class:`numerics.noise.sphere.SphereGrid`.

Engines
-------
``numpy`` (reference; exact to rounding): per block of points the table :math:`Q_l^m(z_j)` for every :math:`l, m`
is built by the recursion, vectorised over the orders :math:`m` (one NumPy call per degree), and contracted per
order :math:`m` with one matrix product against the longitude factors :math:`\operatorname{Re}/\operatorname{Im}(w^m)`
times the weights. Cost about :math:`2.5 (L+1)^2` flops per point and weight function, memory one table of
:math:`(L+1)^2` per point of a block (:data:`TABLE_BYTES`).

``ducc0`` (optional extra ``harmonic``): ``ducc0.sht.experimental.adjoint_synthesis_general`` and
``synthesis_general`` (spherical harmonic transforms at arbitrary points through a non-uniform FFT; M. Reinecke's
ducc0). Their accuracy is ``epsilon`` (an L2-relative target, not a pointwise guarantee; :data:`DUCC0_EPSILON`):
about 10x faster than ``numpy`` at :math:`n = 10^6` and nearly independent of :math:`L` up to :math:`L \sim 100`
(benchmarks/bench_harmonic.py).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int

ENGINES = ("numpy", "ducc0")
#: bytes of the Q_l^m table of one block of points (numpy engine): large enough that each NumPy call of the
#: recursion works on thousands of numbers, small enough to stay near the caches (measured: 8 MB to 32 MB equal)
TABLE_BYTES = 16 * 2**20
#: accuracy requested from ducc0's non-uniform transforms (its documented floor for float64 is 2e-13)
DUCC0_EPSILON = 3e-13
SQRT2 = math.sqrt(2.0)


@lru_cache(maxsize=64)
def recursion_constants(L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, q): a[l, m], b[l, m] of the three-term recursion (zero where unused: m > l - 2) and the diagonal
    q[m] = Q_m^m = prod_{k<=m} sqrt((2k+1)/(2k)). Read-only arrays (cached per L)."""
    a = np.zeros((L + 1, L + 1))
    b = np.zeros((L + 1, L + 1))
    for l in range(2, L + 1):
        m = np.arange(l - 1, dtype=float)
        a[l, :l - 1] = np.sqrt((4.0 * l * l - 1.0) / (l * l - m * m))
        b[l, :l - 1] = np.sqrt(((l - 1.0) ** 2 - m * m) / (4.0 * (l - 1.0) ** 2 - 1.0))
    q = np.ones(L + 1)
    for m in range(1, L + 1):
        q[m] = q[m - 1] * math.sqrt((2 * m + 1) / (2 * m))
    for arr in (a, b, q):
        arr.flags.writeable = False
    return a, b, q


def scaled_legendre_table(z: np.ndarray, L: int, out: np.ndarray | None = None) -> np.ndarray:
    """Q_l^m(z_j) = Lam_l^m(z_j) / (1 - z_j^2)^{m/2} in an array T[l, m, j] of shape (L+1, L+1, len(z)).

    Entries with m > l are left as they are (unused). One NumPy pass per degree l over all orders m < l - 1
    (the recursion of the module docstring); finite at the poles (Q is a polynomial).
    """
    a, b, q = recursion_constants(L)
    z = np.asarray(z, dtype=float)
    T = np.empty((L + 1, L + 1, z.size)) if out is None else out
    idx = np.arange(L + 1)
    T[idx, idx, :] = q[:, None]
    if L >= 1:
        T[idx[1:], idx[:-1], :] = (np.sqrt(2.0 * idx[:-1] + 3.0) * q[:-1])[:, None] * z[None, :]
    for l in range(2, L + 1):
        k = l - 1
        row = T[l, :k]
        np.multiply(T[l - 1, :k], z, out=row)
        row -= b[l, :k, None] * T[l - 2, :k]
        row *= a[l, :k, None]
    return T


def block_points(L: int) -> int:
    """Points per block of the numpy engine: a table of about :data:`TABLE_BYTES` (at least 64 points)."""
    return max(64, TABLE_BYTES // (8 * (L + 1) ** 2))


def _unit_parts(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z = x_3 and w = x_1 + i x_2 of the rows of X (taken as unit vectors)."""
    return X[:, 2], X[:, 0] + 1j * X[:, 1]


def point_moments(X: np.ndarray, weights: np.ndarray, L: int, *, engine: str = "numpy",
                  epsilon: float = DUCC0_EPSILON) -> np.ndarray:
    r"""Moments :math:`\sum_j` ``weights[j, c]`` :math:`Y_{lm}(x_j)` for :math:`l \le L`, as coefficients ``C``
    ``(k, 2, L+1, L+1)`` (not divided by :math:`n`).

    Parameters
    ----------
    X : (n, 3) ndarray
        Unit vectors (the caller normalises).
    weights : (n, k) ndarray
        One column per weighted moment (for the attention field: 1, x_1, x_2, x_3).
    L : int
        Largest degree.
    engine : {"numpy", "ducc0"}
        See the module docstring.
    """
    L = require_int(L, "L", minimum=0)
    engine = require_choice(engine, "engine", ENGINES)
    weights = np.asarray(weights, dtype=float)
    if engine == "ducc0":
        return _ducc0_moments(X, weights, L, epsilon)
    n, k = weights.shape
    out = np.zeros((k, 2, L + 1, L + 1))
    B = min(block_points(L), max(n, 1))
    buf = np.empty((L + 1, L + 1, B))
    G = np.empty((B, 2 * k))
    for start in range(0, n, B):
        stop = min(n, start + B)
        m_pts = stop - start
        z, w = _unit_parts(X[start:stop])
        T = scaled_legendre_table(z, L, out=buf[:, :, :m_pts] if m_pts == B else None)
        W = weights[start:stop]
        Gb = G[:m_pts]
        p = np.ones(m_pts, dtype=complex)
        for m in range(L + 1):
            np.multiply(p.real[:, None], W, out=Gb[:, :k])
            np.multiply(p.imag[:, None], W, out=Gb[:, k:])
            R = T[m:, m, :] @ Gb  # (L+1-m, 2k)
            out[:, 0, m:, m] += R[:, :k].T
            out[:, 1, m:, m] += R[:, k:].T
            p *= w
    out[:, :, :, 1:] *= SQRT2
    out[:, 1, :, 0] = 0.0
    return out


def point_synthesis(C: np.ndarray, X: np.ndarray, *, engine: str = "numpy",
                    epsilon: float = DUCC0_EPSILON) -> np.ndarray:
    r"""Values :math:`\sum_{lm}` ``C[c, ., l, m]`` :math:`Y_{lm}(x_i)` at the rows of ``X``: an ``(n, k)`` array.

    Parameters
    ----------
    C : (k, 2, L+1, L+1) ndarray
        Coefficients (module docstring layout).
    X : (n, 3) ndarray
        Unit vectors.
    engine : {"numpy", "ducc0"}
    """
    engine = require_choice(engine, "engine", ENGINES)
    C = np.asarray(C, dtype=float)
    if C.ndim != 4 or C.shape[1] != 2 or C.shape[2] != C.shape[3]:
        raise InputError(f"coefficients must have shape (k, 2, L+1, L+1), got {C.shape}")
    k, L = C.shape[0], C.shape[2] - 1
    if engine == "ducc0":
        return _ducc0_synthesis(C, X, epsilon)
    n = X.shape[0]
    scaled = C.copy()
    scaled[:, :, :, 1:] *= SQRT2
    # per order m: the (L+1-m, 2k) matrix [cos part | sin part] that multiplies the table column Q_{m..L}^m
    per_order = [np.concatenate([scaled[:, 0, m:, m].T, scaled[:, 1, m:, m].T], axis=1) for m in range(L + 1)]
    out = np.empty((n, k))
    B = min(block_points(L), max(n, 1))
    buf = np.empty((L + 1, L + 1, B))
    for start in range(0, n, B):
        stop = min(n, start + B)
        m_pts = stop - start
        z, w = _unit_parts(X[start:stop])
        T = scaled_legendre_table(z, L, out=buf[:, :, :m_pts] if m_pts == B else None)
        acc = np.zeros((m_pts, k))
        p = np.ones(m_pts, dtype=complex)
        for m in range(L + 1):
            A = T[m:, m, :].T @ per_order[m]  # (m_pts, 2k)
            acc += p.real[:, None] * A[:, :k]
            acc += p.imag[:, None] * A[:, k:]
            p *= w
        out[start:stop] = acc
    return out


# -- ducc0 engine ------------------------------------------------------------------------------------------------
def ducc0_available() -> bool:
    """True when ``ducc0`` (extra ``harmonic``) can be imported."""
    try:
        import ducc0  # noqa: F401
    except ImportError:
        return False
    return True


def _ducc0():
    try:
        import ducc0.sht.experimental as sht
    except ImportError:
        raise InputError("the ducc0 engine needs ducc0 (pip install 'attnflow[harmonic]'); use engine='numpy'") from None
    return sht


def _locations(X: np.ndarray) -> np.ndarray:
    """(colatitude, longitude) of unit vectors, the colatitude from atan2 (accurate near the poles)."""
    rho = np.hypot(X[:, 0], X[:, 1])
    return np.ascontiguousarray(np.c_[np.arctan2(rho, X[:, 2]), np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)])


@lru_cache(maxsize=32)
def _healpy_index(L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(l, m, sign) of each entry of a healpy-ordered a_lm vector (m-major), sign = sqrt(4 pi) (-1)^m."""
    ms = np.concatenate([np.full(L + 1 - m, m) for m in range(L + 1)])
    ls = np.concatenate([np.arange(m, L + 1) for m in range(L + 1)])
    return ls, ms, math.sqrt(4 * math.pi) * (-1.0) ** ms


def _ducc0_moments(X, weights, L, epsilon):
    sht = _ducc0()
    ls, ms, sign = _healpy_index(L)
    loc = _locations(X)
    # spin 0 takes one map per call
    alm = np.stack([sht.adjoint_synthesis_general(map=np.ascontiguousarray(col)[None], spin=0, lmax=L, loc=loc,
                                                  epsilon=epsilon, nthreads=1)[0] for col in weights.T])
    # alm = sum_j w_j conj(Y^hp_lm(x_j)); Y_lm (ours, m > 0) = sqrt(4 pi)(-1)^m sqrt2 Re Y^hp_lm, Y_l,-m = ... Im
    k = weights.shape[1]
    out = np.zeros((k, 2, L + 1, L + 1))
    factor = sign * np.where(ms > 0, SQRT2, 1.0)
    out[:, 0, ls, ms] = factor * alm.real
    out[:, 1, ls, ms] = -factor * alm.imag
    out[:, 1, :, 0] = 0.0
    return out


def _ducc0_synthesis(C, X, epsilon):
    sht = _ducc0()
    L = C.shape[2] - 1
    ls, ms, sign = _healpy_index(L)
    # sum_m (a cos + b sin) terms = 2 Re(alm Y^hp) with alm = sqrt(4 pi)(-1)^m (a - i b)/sqrt2 (m > 0)
    factor = sign * np.where(ms > 0, 1.0 / SQRT2, 1.0)
    alm = np.ascontiguousarray(factor * (C[:, 0, ls, ms] - 1j * C[:, 1, ls, ms]))
    loc = _locations(X)
    out = np.empty((X.shape[0], alm.shape[0]))
    for c in range(alm.shape[0]):
        out[:, c] = sht.synthesis_general(alm=alm[c:c + 1], spin=0, lmax=L, loc=loc, epsilon=epsilon, nthreads=1)[0]
    return out


# -- conversions -------------------------------------------------------------------------------------------------
def to_noise_pair(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) arrays [l, m] of :class:`numerics.noise.sphere.SphereGrid` for one function (C of shape
    (2, L+1, L+1) or (1, 2, L+1, L+1))."""
    C = np.asarray(C, dtype=float)
    if C.ndim == 4:
        C = C[0]
    return C[0].copy(), C[1].copy()


def from_noise_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The (1, 2, L+1, L+1) coefficient array of the (cos, sin) pair of :mod:`numerics.noise.sphere`."""
    return np.stack([np.asarray(a, float), np.asarray(b, float)])[None]
