r"""The Fokker-Planck equation of noisy self-attention on :math:`\mathbb{S}^2` in real spherical harmonics
(non-zonal densities).

Equation (density :math:`u = \rho / \rho_0` relative to the uniform probability measure :math:`\mu` of
:math:`\mathbb{S}^2`, :math:`\rho_0 = 1/(4 \pi)`):

.. math::

    \begin{aligned}
    \partial_t u &= D \Delta_S u - \operatorname{div}_S(u X[\rho]), \qquad
    X_{\texttt{usa}} = \nabla_S \Phi, \quad X_{\texttt{sa}} = \nabla_S \Phi / (\beta \Phi), \\
    \Phi(x) &= \int W(\langle x, y\rangle) \rho(y)\, d\sigma(y), \qquad W(s) = e^{\beta s} / \beta
    \end{aligned}

(the mean-field limit of :math:`dx_i = v_i\, dt + \sqrt{2D}\, P_{x_i} \circ dB_i`; :mod:`theory.noise`). Basis
and convention (pinned; tests/numerics/test_noise_sphere.py compares it with ``scipy.special.sph_harm_y``):

.. math::

    \begin{aligned}
    Y_{lm}(\theta, \phi) &= \Lambda_l^{|m|}(\cos \theta) \times
    \begin{cases} 1 & (m = 0), \\ \sqrt{2} \cos(m \phi) & (m > 0), \\ \sqrt{2} \sin(|m| \phi) & (m < 0), \end{cases} \\
    \Lambda_l^m &= \sqrt{\frac{(2l+1)(l-m)!}{(l+m)!}}\, P_l^m \qquad \text{(no Condon-Shortley phase)},
    \end{aligned}

orthonormal in :math:`L^2(\mu)`: :math:`E_\mu[Y_{lm} Y_{l'm'}] = \delta_{ll'} \delta_{mm'}`. :math:`\theta` is
the polar angle from :math:`e_3 = (0, 0, 1)`,
:math:`x = (\sin \theta \cos \phi, \sin \theta \sin \phi, \cos \theta)`.
:math:`u = \sum_{l \le L} c_{lm} Y_{lm}`, with :math:`c_{00} = 1` for a probability density.

- Interaction (Funk-Hecke): :math:`\Phi = \sum_{lm} g_l c_{lm} Y_{lm}` with
  :math:`g_l = \rho_0 a_l(\beta)/\beta = \tfrac{1}{2} \int_{-1}^{1} W(t) P_l(t)\, dt`
  (:func:`numerics.noise.zonal.couplings`, :math:`d = 3`): diagonal in the harmonics, :math:`l`-dependent only.
- Laplacian: :math:`\Delta_S Y_{lm} = -l(l+1) Y_{lm}` (diagonal).
- Transport (Galerkin, weak form):
  :math:`(Y_{lm}, -\operatorname{div}(u X))_\mu = E_\mu[\nabla Y_{lm} \cdot u X]`, evaluated pseudo-spectrally:
  :math:`u` and the two components of :math:`X` are synthesised on a Gauss-Legendre (in :math:`\cos \theta`)
  :math:`\times` uniform-longitude grid, the products formed there and projected back with the grid's
  quadrature. The grid has :math:`n_{\text{lat}} \ge (3L+1)/2` and :math:`n_{\text{lon}} \ge 3L+1` points, so
  the ``usa`` integrand (a polynomial of degree :math:`\le 3L` on the sphere) is integrated exactly: the
  semi-discrete system is the exact Galerkin truncation of the PDE (no aliasing), hence equivariant under
  rotations and mass-conserving (:math:`\nabla Y_{00} = 0`). For ``sa`` the division by :math:`\Phi` is not
  polynomial and the grid only resolves it (the residual aliasing is reported by the rotation check).
- Time stepping: exponential time differencing ETDRK4 (Cox-Matthews 2002, J. Comput. Phys. 176; coefficients by
  the contour integrals of Kassam-Trefethen 2005, SIAM J. Sci. Comput. 26) with the diagonal stiff part
  :math:`-D l(l+1)` exact and the transport explicit: fourth order in the step (tests: observed order by step
  halving).

Zonal data (:math:`c_{lm} = 0` for :math:`m \ne 0`) stay zonal, and :math:`c_{l0} = f_l / \sqrt{2l+1}` in terms
of the zonal solver's coefficients :math:`f_l` of :math:`u = \sum f_l P_l(\cos \theta)`
(:mod:`numerics.noise.zonal`).

Verified by: noise.sphere-pde, noise.sphere-pde-steady (claims); tests/numerics/test_noise_sphere.py;
proofs_notes/noise-sphere-pde.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.common.limits import steps_of
from numerics.harmonic.transforms import from_noise_pair, point_moments, point_synthesis, recursion_constants
from numerics.noise.zonal import couplings, linear_phase, log_slope


# -- normalised associated Legendre functions -----------------------------------------------------------------
def legendre_table(L: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lam_l^m(t), d Lam_l^m / d theta and Lam_l^m / sin theta at t = cos theta, each of shape (L+1, len(t), L+1)
    indexed [m, node, l] (zero for l < m).

    Recursion (stable, fully normalised): Lam_0^0 = 1, Lam_m^m = sqrt((2m+1)/(2m)) s Lam_{m-1}^{m-1},
    Lam_{m+1}^m = sqrt(2m+3) t Lam_m^m, Lam_l^m = a (t Lam_{l-1}^m - b Lam_{l-2}^m) with
    a = sqrt((4l^2-1)/(l^2-m^2)), b = sqrt(((l-1)^2-m^2)/(4(l-1)^2-1)); and
    d Lam_l^m/d theta = (l t Lam_l^m - sqrt((l^2-m^2)(2l+1)/(2l-1)) Lam_{l-1}^m) / s. The nodes must avoid
    the poles (s = sin theta > 0), as the Gauss-Legendre nodes do. Lam / s is computed from a table of
    Lam_l^m / s^m, so it is finite for m >= 1 (it is not used for m = 0).
    """
    P, dP, over_s = _legendre(L, t, derivatives=True)
    return P, dP, over_s


def legendre_values(L: int, t: np.ndarray) -> np.ndarray:
    """Lam_l^m(t) alone, shape (L+1, len(t), L+1) indexed [m, node, l]: the first table of
    :func:`legendre_table` (bitwise the same) without building the three others."""
    return _legendre(L, t, derivatives=False)[0]


def _legendre(L: int, t: np.ndarray, derivatives: bool):
    """The recursions of :func:`legendre_table`; with ``derivatives`` False only P is allocated (a quarter of
    the memory: the scaled table Q is kept one order m at a time)."""
    t = np.asarray(t, dtype=float)
    s = np.sqrt(1.0 - t * t)
    if np.any(s <= 0):
        raise InputError("the Legendre table needs nodes off the poles (|t| < 1)")
    P = np.zeros((L + 1, t.size, L + 1))
    # Lam_l^m / s^m: the same recursion without the s^m factor (one (nodes, L+1) slice per m when only P is wanted);
    # its constants are those of the particle transforms (numerics.harmonic.transforms, the same basis)
    Q = np.zeros_like(P) if derivatives else None
    ra, rb, rq = recursion_constants(L)
    for m in range(L + 1):
        Qm = Q[m] if derivatives else np.zeros((t.size, L + 1))
        Qm[:, m] = rq[m]
        if m + 1 <= L:
            Qm[:, m + 1] = math.sqrt(2 * m + 3) * t * rq[m]
        for l in range(m + 2, L + 1):
            Qm[:, l] = ra[l, m] * (t * Qm[:, l - 1] - rb[l, m] * Qm[:, l - 2])
        P[m] = Qm * (s ** m)[:, None]
    if not derivatives:
        return P, None, None
    dP = np.zeros_like(P)
    for m in range(L + 1):
        for l in range(m, L + 1):
            prev = P[m, :, l - 1] if l - 1 >= m else 0.0
            c = math.sqrt((l * l - m * m) * (2 * l + 1) / (2 * l - 1)) if l > m else 0.0
            dP[m, :, l] = (l * t * P[m, :, l] - c * prev) / s
    over_s = np.zeros_like(P)
    for m in range(1, L + 1):
        over_s[m] = Q[m] * (s ** (m - 1))[:, None]
    return P, dP, over_s


@dataclass(frozen=True)
class SphereGrid:
    r"""Gauss-Legendre :math:`\times` uniform-longitude grid and the transforms between coefficients and grid
    values.

    Coefficients are two ``(L+1, L+1)`` arrays indexed ``[l, m]``, ``cos`` (:math:`m \ge 0`) and ``sin``
    (:math:`m \ge 1`; column 0 unused, kept zero): :math:`c_{l,m}` = ``cos[l, m]``, :math:`c_{l,-m}` =
    ``sin[l, m]``.
    """

    L: int
    n_lat: int
    n_lon: int
    t: np.ndarray            # cos theta at the Gauss-Legendre nodes
    w: np.ndarray            # probability weights in t (sum 1)
    phi: np.ndarray          # longitudes 2 pi k / n_lon
    P: np.ndarray            # (L+1, n_lat, L+1) Lam_l^m
    dP: np.ndarray           # d/dtheta
    Ps: np.ndarray           # Lam / sin theta

    @classmethod
    def build(cls, L: int, n_lat: int | None = None, n_lon: int | None = None) -> "SphereGrid":
        L = require_int(L, "L", minimum=1)
        n_lat = (3 * L + 2) // 2 + 1 if n_lat is None else require_int(n_lat, "n_lat", minimum=L + 1)
        n_lon = 3 * L + 2 if n_lon is None else require_int(n_lon, "n_lon", minimum=2 * L + 2)
        t, w = np.polynomial.legendre.leggauss(n_lat)
        P, dP, Ps = legendre_table(L, t)
        return cls(L, n_lat, n_lon, t, w / 2.0, 2 * np.pi * np.arange(n_lon) / n_lon, P, dP, Ps)

    @property
    def points(self) -> np.ndarray:
        """(n_lat, n_lon, 3) grid points."""
        s = np.sqrt(1 - self.t ** 2)
        return np.stack([s[:, None] * np.cos(self.phi)[None, :], s[:, None] * np.sin(self.phi)[None, :],
                         np.broadcast_to(self.t[:, None], (self.n_lat, self.n_lon))], axis=-1)

    # -- transforms --
    def _to_grid(self, table: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """sum_lm of table[m, j, l] (a[l, m] sqrt2 cos m phi + b[l, m] sqrt2 sin m phi) (m = 0: a[l, 0] only)."""
        A = np.einsum("mjl,lm->jm", table, a)
        B = np.einsum("mjl,lm->jm", table, b)
        F = np.zeros((self.n_lat, self.n_lon // 2 + 1), dtype=complex)
        F[:, 0] = A[:, 0] * self.n_lon
        F[:, 1:self.L + 1] = (A[:, 1:] - 1j * B[:, 1:]) * (self.n_lon / math.sqrt(2.0))
        return np.fft.irfft(F, n=self.n_lon, axis=1)

    def synthesis(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Values (n_lat, n_lon) of sum c_lm Y_lm."""
        return self._to_grid(self.P, a, b)

    def gradient(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(d/dtheta, (1/sin theta) d/dphi) of sum c_lm Y_lm on the grid."""
        m = np.arange(self.L + 1)[None, :]
        return self._to_grid(self.dP, a, b), self._to_grid(self.Ps, m * b, -m * a)

    def _fourier(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(1/n_lon) sum_k v sqrt2 cos(m phi_k) and ... sin(m phi_k) for m = 0..L (m = 0: plain mean)."""
        F = np.fft.rfft(values, axis=1)[:, :self.L + 1] / self.n_lon
        cos = math.sqrt(2.0) * F.real
        sin = -math.sqrt(2.0) * F.imag
        cos[:, 0] = F[:, 0].real
        sin[:, 0] = 0.0
        return cos, sin

    def _project(self, table: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = np.einsum("j,mjl,jm->lm", self.w, table, cos)
        b = np.einsum("j,mjl,jm->lm", self.w, table, sin)
        return a, b

    def analysis(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Coefficients E_mu[v Y_lm] by the grid quadrature (exact for band-limited v of degree <= 2 n_lat - 1 - L
        in t and < n_lon - L in phi)."""
        cos, sin = self._fourier(values)
        a, b = self._project(self.P, cos, sin)
        return _clean(a, b)

    def weak_divergence(self, Jt: np.ndarray, Jp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E_mu[grad Y_lm . J] for the tangent field J = Jt e_theta + Jp e_phi given on the grid."""
        ct, st = self._fourier(Jt)
        cp, sp_ = self._fourier(Jp)
        a1, b1 = self._project(self.dP, ct, st)
        m = np.arange(self.L + 1)[None, :]
        # (1/s) d/dphi of sqrt2 cos(m phi) = -m sqrt2 sin(m phi) / s; of sqrt2 sin(m phi) = m sqrt2 cos(m phi) / s
        a2, b2 = self._project(self.Ps, sp_, cp)
        return _clean(a1 - m * a2, b1 + m * b2)

    def evaluate(self, a: np.ndarray, b: np.ndarray, points: np.ndarray) -> np.ndarray:
        """sum c_lm Y_lm at arbitrary unit vectors ``points`` (k, 3) (poles allowed).

        The synthesis at points of the particle backend (:func:`numerics.harmonic.transforms.point_synthesis`,
        numpy engine: blocked tables of Q_l^m = Lam_l^m / sin^m, no angles, so the poles are regular)."""
        points = np.asarray(points, dtype=float)
        return point_synthesis(from_noise_pair(a, b), points, engine="numpy")[:, 0]


def _clean(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zero the unused entries (l < m, and the sin column m = 0)."""
    mask = np.tril(np.ones_like(a, dtype=bool))
    a = np.where(mask, a, 0.0)
    b = np.where(mask, b, 0.0)
    b[:, 0] = 0.0
    return a, b


# -- packing: the state vector is (cos[l, m] for m <= l, then sin[l, m] for 1 <= m <= l) --------------------
def _index(L: int):
    lc, mc = np.tril_indices(L + 1)
    keep = mc >= 1
    return (lc, mc), (lc[keep], mc[keep])


def pack(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    L = a.shape[0] - 1
    (lc, mc), (ls, ms) = _index(L)
    return np.concatenate([a[lc, mc], b[ls, ms]])


def unpack(v: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    (lc, mc), (ls, ms) = _index(L)
    a = np.zeros((L + 1, L + 1))
    b = np.zeros((L + 1, L + 1))
    a[lc, mc] = v[:lc.size]
    b[ls, ms] = v[lc.size:]
    return a, b


def degrees_of(L: int) -> np.ndarray:
    """The degree l of each entry of the packed vector."""
    (lc, _), (ls, _) = _index(L)
    return np.concatenate([lc, ls])


def orders_of(L: int) -> np.ndarray:
    """The signed order m of each entry of the packed vector (negative: the sin harmonics)."""
    (_, mc), (_, ms) = _index(L)
    return np.concatenate([mc, -ms])


# -- the right-hand side -------------------------------------------------------------------------------------
class SphereFokkerPlanck:
    r""":math:`\partial_t u = D \Delta u - \operatorname{div}(u X[\rho])` in the packed coefficients: ``linear``
    (the diagonal :math:`-D l(l+1)`) and :meth:`transport` (the Galerkin projection of
    :math:`-\operatorname{div}(u X)`, evaluated on the grid)."""

    def __init__(self, beta: float, noise: float, L: int, model: str = "usa", n_lat: int | None = None,
                 n_lon: int | None = None):
        self.model = require_choice(model, "model", ("usa", "sa"))
        self.beta = require_real(beta, "beta", minimum=-50.0, maximum=50.0)
        self.noise = require_real(noise, "noise", minimum=0.0)
        if self.model == "sa" and self.beta == 0.0:
            raise InputError("sa at beta = 0 is the same dynamics as usa at beta = 0; use usa")
        self.L = require_int(L, "L", minimum=1, maximum=200)
        self.grid = SphereGrid.build(self.L, n_lat, n_lon)
        self.g = couplings(3, self.beta, self.L)
        self.degree = degrees_of(self.L)
        self.linear = -self.noise * self.degree * (self.degree + 1.0)
        self.evaluations = 0

    def potential(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.g[:, None] * a, self.g[:, None] * b

    def transport(self, v: np.ndarray) -> np.ndarray:
        """E_mu[grad Y_lm . u X] for all (l, m) (packed)."""
        self.evaluations += 1
        a, b = unpack(v, self.L)
        G = self.grid
        u = G.synthesis(a, b)
        pa, pb = self.potential(a, b)
        Xt, Xp = G.gradient(pa, pb)
        if self.model == "sa":
            phi = G.synthesis(pa, pb)
            Xt, Xp = Xt / (self.beta * phi), Xp / (self.beta * phi)
        na, nb = G.weak_divergence(u * Xt, u * Xp)
        return pack(na, nb)

    def __call__(self, _t: float, v: np.ndarray) -> np.ndarray:
        return self.linear * v + self.transport(v)


def etdrk4_coefficients(linear: np.ndarray, h: float, contour_points: int = 32):
    """E = e^{hL}, E2 = e^{hL/2} and the ETDRK4 weights Q, f1, f2, f3 (Kassam-Trefethen contour means, radius 1)."""
    r = np.exp(1j * np.pi * (np.arange(1, contour_points + 1) - 0.5) / contour_points)
    LR = h * linear[:, None] + r[None, :]
    E, E2 = np.exp(h * linear), np.exp(h * linear / 2)
    Q = h * np.real(np.mean((np.exp(LR / 2) - 1) / LR, axis=1))
    f1 = h * np.real(np.mean((-4 - LR + np.exp(LR) * (4 - 3 * LR + LR ** 2)) / LR ** 3, axis=1))
    f2 = h * np.real(np.mean((2 + LR + np.exp(LR) * (-2 + LR)) / LR ** 3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * LR - LR ** 2 + np.exp(LR) * (4 - LR)) / LR ** 3, axis=1))
    return E, E2, Q, f1, f2, f3


@dataclass(frozen=True)
class SphereHistory:
    """Solution of the S^2 Fokker-Planck equation: packed coefficients at the saved times."""

    times: np.ndarray
    coefficients: np.ndarray      # (T, (L+1)^2) packed
    L: int
    meta: dict = field(default_factory=dict)

    def unpacked(self, k: int = -1) -> tuple[np.ndarray, np.ndarray]:
        return unpack(self.coefficients[k], self.L)

    @property
    def mass_drift(self) -> float:
        """max_t |c_00(t) - c_00(0)| (c_00 = mass / (4 pi rho_0))."""
        return float(np.max(np.abs(self.coefficients[:, 0] - self.coefficients[0, 0])))

    @property
    def order_parameter(self) -> np.ndarray:
        """r(t) = |E_rho x| = |(c_{1,1}, c_{1,-1}, c_{1,0})| / sqrt(3) (Y_1m = sqrt3 x_k)."""
        return self.power()[:, 1] / math.sqrt(3.0)

    def power(self) -> np.ndarray:
        """(T, L+1): p_l = sqrt(sum_m c_lm^2), rotation invariant; for a zonal u = sum f_l P_l, p_l = |f_l| / sqrt(2l+1)."""
        deg = degrees_of(self.L)
        out = np.zeros((self.times.size, self.L + 1))
        for l in range(self.L + 1):
            out[:, l] = np.sqrt(np.sum(self.coefficients[:, deg == l] ** 2, axis=1))
        return out

    def mean_vector(self, k: int = -1) -> np.ndarray:
        """E_rho x = (c_{1,1}, c_{1,-1}, c_{1,0}) / sqrt(3)."""
        a, b = self.unpacked(k)
        return np.array([a[1, 1], b[1, 1], a[1, 0]]) / math.sqrt(3.0)


def solve_sphere(beta: float, noise: float, *, L: int = 16, t_end: float, c0: np.ndarray, dt: float = 0.01,
                 model: str = "usa", saves: int = 101, n_lat: int | None = None, n_lon: int | None = None,
                 progress=None) -> SphereHistory:
    r"""Integrate :math:`\partial_t u = D \Delta u - \operatorname{div}(u X[\rho])` on :math:`\mathbb{S}^2` with
    ETDRK4 (fixed step ``h = t_end / ceil(t_end / dt)``).

    Parameters
    ----------
    beta : float
        Inverse temperature, :math:`|\beta| \le 50` (kernel :math:`e^{\beta \langle x, y\rangle}`).
    noise : float
        :math:`D \ge 0`, the diffusion coefficient (generator :math:`D \Delta_S` of each token's Brownian
        motion).
    L : int
        Largest spherical-harmonic degree kept.
    t_end : float
        Final time (> 0), natural time unit.
    c0 : (L+1)^2 array_like
        Packed initial coefficients of :math:`u = \rho / \rho_{\text{uniform}}` with :math:`c_{00} = 1`
        (:func:`initial_coefficients`,
        :func:`zonal_to_packed`, :func:`pack`).
    dt : float
        Largest step; the transport is explicit, so concentrated states need small steps.
    model : {"usa", "sa"}
        ``usa``: :math:`X = \nabla \Phi`; ``sa``: :math:`X = \nabla \Phi / (\beta \Phi)` (:math:`\beta \ne 0`).
    saves : int
        Number of (roughly equally spaced) saved frames, the first and the last included.
    n_lat, n_lon : int, optional
        Grid size (default: the dealiased :math:`\lfloor (3L+2)/2 \rfloor + 1` and :math:`3L+2`).
    progress : callable, optional
        ``progress(t, t_end)``.

    Returns
    -------
    SphereHistory
        Saved times, packed coefficients, and ``meta`` (grid, integrator, steps, transport evaluations).

    Notes
    -----
    The mean-field equation of noisy self-attention (GLPR arXiv 2312.10794; Shalova-Schlichting arXiv 2412.14813);
    the time stepping is ETDRK4 (Cox-Matthews 2002; Kassam-Trefethen 2005). A blow-up (non-finite coefficients,
    step too large) is an :class:`InputError` naming the step. Verified by: noise.sphere-pde,
    noise.sphere-pde-steady (proofs_notes/noise-sphere-pde.md).
    """
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    dt = require_real(dt, "dt", minimum=0.0, strict_minimum=True)
    saves = require_int(saves, "saves", minimum=2)
    L = require_int(L, "L", minimum=1, maximum=200)
    steps = steps_of(t_end, dt)
    check_sphere_cost(L, steps, saves, n_lat, n_lon)
    op = SphereFokkerPlanck(beta, noise, L, model, n_lat, n_lon)
    size = (op.L + 1) ** 2
    v = np.asarray(c0, dtype=float).copy()
    if v.shape != (size,) or not np.all(np.isfinite(v)) or abs(v[0] - 1.0) > 1e-12:
        raise InputError(f"c0 must be finite of length (L+1)^2 = {size} with c_00 = 1 (a probability density)")
    h = t_end / steps
    E, E2, Q, f1, f2, f3 = etdrk4_coefficients(op.linear, h)
    if not all(np.all(np.isfinite(c)) for c in (E, E2, Q, f1, f2, f3)):
        # (h D l(l+1))^3 overflows in the contour means: a huge D, not a large step (lowering dt cannot help much)
        raise InputError(f"noise D = {noise:g} is too large for the ETDRK4 coefficients (h D L(L+1) = "
                         f"{h * float(np.max(-op.linear)):.3g} overflows); use a smaller noise")
    N = op.transport
    save_at = np.unique(np.round(np.linspace(0, steps, saves)).astype(int))
    times, states = [0.0], [v.copy()]
    for k in range(1, steps + 1):
        Nv = N(v)
        a = E2 * v + Q * Nv
        Na = N(a)
        b = E2 * v + Q * Na
        Nb = N(b)
        c = E2 * a + Q * (2 * Nb - Nv)
        Nc = N(c)
        v = E * v + Nv * f1 + 2 * (Na + Nb) * f2 + Nc * f3
        if not np.all(np.isfinite(v)):
            raise InputError(f"the S^2 Fokker-Planck solution blew up at t = {k * h:.4g}; lower dt (now {h:g})")
        if k in save_at:
            times.append(k * h)
            states.append(v.copy())
        if progress is not None:
            progress(k * h, t_end)
    # a caller may pass a coarser grid than the default: say what this run's grid does, not what the default does
    n_lat_used, n_lon_used = op.grid.n_lat, op.grid.n_lon
    if 2 * n_lat_used >= 3 * op.L + 1 and n_lon_used >= 3 * op.L + 1:
        dealiasing = (f"Gauss-Legendre n_lat = {n_lat_used} >= (3L+1)/2, n_lon = {n_lon_used} >= 3L+1: "
                      "usa products exact")
    else:
        dealiasing = (f"grid n_lat = {n_lat_used}, n_lon = {n_lon_used} below (3L+1)/2, 3L+1: the products "
                      "are aliased (not the exact Galerkin truncation)")
    meta = {"beta": beta, "noise": noise, "model": model, "L": op.L, "n_lat": op.grid.n_lat, "n_lon": op.grid.n_lon,
            "integrator": "ETDRK4 (Cox-Matthews; Kassam-Trefethen contour coefficients), order 4",
            "steps": steps, "step": h, "transport_evaluations": op.evaluations,
            "dealiasing": dealiasing}
    return SphereHistory(np.array(times), np.array(states), op.L, meta)


def check_sphere_cost(L: int, steps: float, saves: int, n_lat: int | None = None, n_lon: int | None = None) -> None:
    """Refuse, before allocating, a solve whose tables or saved frames do not fit in memory or whose transport
    evaluations (4 per ETDRK4 step, each about 24 (L+1)^2 n_lat flops for the Legendre sums plus the FFTs and a
    fixed Python overhead of ~1e5 flop-equivalents) would take too long (:mod:`numerics.common.limits`)."""
    from numerics.common.limits import check_array, check_work

    n_lat = (3 * L + 2) // 2 + 1 if n_lat is None else n_lat
    n_lon = 3 * L + 2 if n_lon is None else n_lon
    what = f"the S^2 Fokker-Planck solve with L={L}, {steps:.3g} steps"
    check_array((L + 1, n_lat, L + 1), what + " (Legendre tables)", copies=4)
    check_array((min(saves, steps + 1), (L + 1) ** 2), what + " (saved frames)")
    per_eval = 24.0 * (L + 1) ** 2 * n_lat + 40.0 * n_lat * n_lon * math.log2(max(n_lon, 2)) + 1e5
    check_work(4 * steps * per_eval, what)


def initial_coefficients(L: int, amplitude: float = 1e-4, seed=0, modes: str = "all",
                         degrees=None) -> np.ndarray:
    r""":math:`c_{00} = 1` plus ``amplitude`` times iid standard normal coefficients on the chosen harmonics.

    ``modes``: ``all`` (every :math:`(l, m)`, :math:`l \ge 1`), ``zonal`` (:math:`m = 0` only) or ``nonzonal``
    (:math:`m \ne 0` only);
    ``degrees`` restricts the degrees (default 1..L).
    """
    L = require_int(L, "L", minimum=1)
    modes = require_choice(modes, "modes", ("all", "zonal", "nonzonal"))
    amplitude = require_real(amplitude, "amplitude", minimum=0.0)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    deg, order = degrees_of(L), orders_of(L)
    chosen = deg >= 1
    if degrees is not None:
        chosen &= np.isin(deg, list(degrees))
    if modes == "zonal":
        chosen &= order == 0
    elif modes == "nonzonal":
        chosen &= order != 0
    v = np.zeros(deg.size)
    v[0] = 1.0
    v[chosen] = amplitude * rng.standard_normal(int(chosen.sum()))
    return v


#: axis of the clustered start: tilted off every coordinate axis and grid plane, so the solution is non-zonal in
#: the solver's frame and the rotation-equivariant parts of the solver are all exercised
CLUSTER_AXIS = np.array([0.3, -0.5, 0.8]) / math.sqrt(0.98)


def clustered_coefficients(L: int, kappa: float = 3.0, axis=CLUSTER_AXIS,
                           grid: SphereGrid | None = None) -> np.ndarray:
    """Packed coefficients (c_00 = 1) of the von Mises-Fisher bump u ~ exp(kappa <x, e>), e = axis / |axis|,
    analysed on the grid of degree ``L`` (the degree-L truncation of the bump, renormalised to unit mass).

    The values are formed as exp(kappa <x, e> - kappa) <= 1 so that no kappa overflows; the factor e^{-kappa}
    cancels in the division by c_00 (up to rounding)."""
    L = require_int(L, "L", minimum=1)
    kappa = require_real(kappa, "kappa", minimum=0.0)
    e = np.asarray(axis, dtype=float)
    norm = float(np.linalg.norm(e)) if e.shape == (3,) else 0.0
    if not np.isfinite(norm) or norm == 0.0:
        raise InputError(f"axis must be a finite non-zero 3-vector, got {axis!r}")
    G = SphereGrid.build(L) if grid is None else grid
    a, b = G.analysis(np.exp(kappa * (G.points @ (e / norm)) - kappa))
    return pack(a, b) / a[0, 0]


def empirical_coefficients(X, L: int, engine: str = "numpy") -> np.ndarray:
    """Packed coefficients c_lm = (1/n) sum_j Y_lm(x_j) of the empirical measure of tokens X (n, 3) (c_00 = 1): the
    degree-L projection of u = rho / rho_0 for rho the empirical measure, i.e. the harmonic moments the particle
    backend uses (:func:`numerics.harmonic.transforms.point_moments`). A start for :func:`solve_sphere` from
    particles, and the bridge between the particle field and the PDE's transport (the same transforms)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 3 or X.shape[0] < 1 or not np.all(np.isfinite(X)):
        raise InputError(f"X must be a finite (n, 3) array of points of S^2, got shape {X.shape}")
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = point_moments(U, np.ones((U.shape[0], 1)), require_int(L, "L", minimum=1), engine=engine)[0] / U.shape[0]
    return pack(C[0], C[1])


def zonal_to_packed(f: np.ndarray, L: int) -> np.ndarray:
    """Packed coefficients of the zonal u = sum_l f_l P_l(cos theta): c_l0 = f_l / sqrt(2l+1)."""
    a = np.zeros((L + 1, L + 1))
    f = np.asarray(f, dtype=float)
    ls = np.arange(min(L, f.size - 1) + 1)
    a[ls, 0] = f[ls] / np.sqrt(2 * ls + 1)
    return pack(a, np.zeros_like(a))


def rotate_coefficients(v: np.ndarray, L: int, R: np.ndarray, grid: SphereGrid | None = None) -> np.ndarray:
    """Coefficients of u(R^T x) (the density u rotated by R), by quadrature on the grid (exact: degree <= L)."""
    G = SphereGrid.build(L) if grid is None else grid
    a, b = unpack(v, L)
    pts = G.points.reshape(-1, 3) @ R          # rows R^T x
    vals = G.evaluate(a, b, pts).reshape(G.n_lat, G.n_lon)
    return pack(*G.analysis(vals))


def fitted_rates(history: SphereHistory, threshold: float = 1e-2, slaving: float = 1e4):
    """Least-squares slope of log|c_lm(t)| per packed entry, over its linear frames.

    A frame is linear for entry j if M(t) = max_{l >= 1} |c_lm(t)| < ``threshold`` and |c_j(t)| > ``slaving`` *
    M(t)^2: once a decaying mode is smaller than the quadratic products of the others it is slaved to them and
    its slope no longer measures its own rate. Returns ``(rates, degrees, orders)``; entries with fewer than 5
    linear frames get NaN.
    """
    C = history.coefficients
    M, linear = linear_phase(C, threshold)
    rates = np.full(C.shape[1], np.nan)
    for j in range(1, C.shape[1]):
        y = np.abs(C[:, j])
        # per entry, beyond the shared linear phase: not slaved to the others' products, and non-zero
        idx = np.flatnonzero(linear & (y > slaving * M ** 2) & (y > 0))
        if idx.size >= 5:
            rates[j] = log_slope(history.times[idx], y[idx])
    return rates, degrees_of(history.L), orders_of(history.L)
