r"""Gaussian solutions in :math:`\mathbb{R}^d`: moment ODEs, closed forms, particle simulations and their comparison.

Conventions (arXiv 2501.18322, CACP; tokens in :math:`\mathbb{R}^d`, no sphere, no projection, time = depth). The
velocity of a token :math:`x` under a measure :math:`\mu` is

.. math::

    \Gamma[\mu](x) = \frac{\int V y\, w(x, y)\, d\mu(y)}{\int w(x, y)\, d\mu(y)}, \qquad A = K^\top Q,

with ``softmax`` :math:`w = e^{y^\top A x}`, ``l2`` :math:`w = e^{-\lvert Qx - Ky\rvert^2/2}`, ``sinkhorn``: the
conditional expectation of :math:`V y` given :math:`x` under the entropic OT plan between :math:`\mu` and itself
for the kernel :math:`e^{y^\top A x}`. For :math:`\mu = N(\alpha, \Sigma)`, :math:`\Gamma(x) = b + J x` is affine
and (derived in :mod:`theory.gaussian`)

.. math::

    \begin{aligned}
    &\frac{d\alpha}{dt} = b + J \alpha, \qquad \frac{d\Sigma}{dt} = J \Sigma + \Sigma J^\top, \\
    &\text{softmax:} && b = V \alpha, && J = V \Sigma A, \\
    &\text{l2:} && b = V S_t \Sigma^{-1} \alpha, && J = V S_t A, \quad S_t = (\Sigma^{-1} + K^\top K)^{-1}, \\
    &\text{sinkhorn:} && b = V (I - S A) \alpha, && J = V S A, \quad S A \Sigma A^\top S + S = \Sigma.
    \end{aligned}

The particle system is :math:`dx_i/dt = \sum_j P_{ij} V x_j` with :math:`P` the row-stochastic (softmax, L2) or
doubly stochastic (Sinkhorn, rows and columns summing to 1 after scaling by :math:`n`) attention matrix,
self-interaction included.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from scipy.special import lambertw, logsumexp

from numerics.common.limits import check_array, check_work
from numerics.common.errors import (
    InputError,
    require_choice,
    require_finite_array,
    require_int,
    require_real,
    require_square,
)
from numerics.core.field import block_rows

from numerics.gaussian.names import ATTENTIONS  # noqa: E402 - light module for the CLI parser
#: relative asymmetry |C - C^T| / |C| above which a covariance is rejected
SYMMETRY_TOLERANCE = 1e-10
#: the ODE solver stops (blow-up) once tr Sigma exceeds this factor times tr Sigma_0
BLOWUP_FACTOR = 1e8
#: a stop at BLOWUP_FACTOR is a finite-time blow-up when tr Sigma / (d tr Sigma/dt) < POLE_RATIO max(1, t)
POLE_RATIO = 1e-4
#: particle check: |empirical - ODE| must be at most K_STANDARD_ERRORS standard errors for every statistic
K_STANDARD_ERRORS = 4.0


# -- validated inputs -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianAttention:
    """Attention type and matrices (validated). ``A`` is K^T Q; for L2, Q and K are kept as well."""

    attention: str
    d: int
    A: np.ndarray
    V: np.ndarray
    Q: np.ndarray | None = None
    K: np.ndarray | None = None

    def to_dict(self) -> dict:
        out = {"attention": self.attention, "d": self.d, "A": self.A.tolist(), "V": self.V.tolist()}
        if self.attention == "l2":
            out.update(Q=self.Q.tolist(), K=self.K.tolist())
        return out


def gaussian_attention(attention: str, d: int, *, V, A=None, Q=None, K=None) -> GaussianAttention:
    r"""Validate an attention type and its matrices (no defaults for the physical parameters).

    ``softmax`` and ``sinkhorn`` need ``A`` (:math:`d \times d`) and ``V``; ``l2`` needs ``Q``, ``K`` and ``V``
    (:math:`A = K^\top Q` is derived).
    """
    attention = require_choice(attention, "attention", ATTENTIONS)
    d = require_int(d, "d", minimum=1)
    if V is None:
        raise InputError("V is required")
    V = require_square(V, "V", d)
    if attention == "l2":
        if Q is None or K is None:
            raise InputError("l2 attention needs Q and K (A is not used)")
        if A is not None:
            raise InputError("l2 attention takes Q and K, not A")
        Q, K = require_square(Q, "Q", d), require_square(K, "K", d)
        return GaussianAttention(attention, d, K.T @ Q, V, Q, K)
    if A is None:
        raise InputError(f"{attention} attention needs A")
    if Q is not None or K is not None:
        raise InputError(f"{attention} attention takes A = K^T Q, not Q and K")
    return GaussianAttention(attention, d, require_square(A, "A", d), V)


@dataclass(frozen=True)
class GaussianHeads:
    r"""H softmax heads acting together: :math:`\Gamma(x) = \sum_h \Gamma_h(x)`, :math:`\Gamma_h` the one-head softmax
    velocity with :math:`(A_h, V_h)` (:math:`A_h = c K_h^\top Q_h`, :math:`V_h = W_h^\top V_h` of a transformer head).
    For :math:`\mu = N(\alpha, \Sigma)` each :math:`\Gamma_h = V_h \alpha + V_h \Sigma A_h x` is affine, so the sum is
    affine with :math:`b = \sum_h V_h \alpha` and :math:`J = \sum_h V_h \Sigma A_h` (derived in
    :mod:`theory.architectures`, ``multihead_gaussian_derivation``).

    Verified by: architectures.gaussian-heads
    """

    heads: tuple
    attention: str = "softmax-heads"

    @property
    def d(self) -> int:
        return self.heads[0].d

    def to_dict(self) -> dict:
        return {"attention": self.attention, "d": self.d, "heads": [h.to_dict() for h in self.heads]}


def gaussian_heads(As, Vs) -> GaussianHeads:
    r"""Validated softmax heads from sequences of :math:`A_h` and :math:`V_h` (each :math:`d \times d`,
    :math:`H \ge 1`)."""
    As, Vs = list(As), list(Vs)
    if not As or len(As) != len(Vs):
        raise InputError(f"gaussian heads need as many A_h as V_h (at least one), got {len(As)} and {len(Vs)}")
    d = np.asarray(As[0]).shape[0] if np.ndim(As[0]) == 2 else 0
    return GaussianHeads(tuple(gaussian_attention("softmax", d, V=V, A=A) for A, V in zip(As, Vs)))


def require_mean(mean, d: int, name: str = "mean") -> np.ndarray:
    arr = require_finite_array(mean, name, ndim=1)
    if arr.shape != (d,):
        raise InputError(f"{name} must have {d} entries, got shape {arr.shape}")
    return arr


def require_covariance(cov, d: int, name: str = "cov") -> np.ndarray:
    """A symmetric positive-definite d x d matrix (symmetry to SYMMETRY_TOLERANCE relative, PD by Cholesky)."""
    C = require_square(cov, name, d)
    scale = max(float(np.max(np.abs(C))), np.finfo(float).tiny)
    asym = float(np.max(np.abs(C - C.T))) / scale
    if asym > SYMMETRY_TOLERANCE:
        raise InputError(f"{name} is not symmetric (relative asymmetry {asym:.3g}): {C.tolist()}")
    C = (C + C.T) / 2
    try:
        np.linalg.cholesky(C)
    except np.linalg.LinAlgError:
        raise InputError(f"{name} is not positive definite (smallest eigenvalue {np.linalg.eigvalsh(C)[0]:.6g}): "
                         f"{C.tolist()}") from None
    return C


# -- the affine field and the moment ODE -------------------------------------------------------------------------
def _sym(M: np.ndarray) -> np.ndarray:
    return (M + M.T) / 2


def _sqrt_spd(M: np.ndarray) -> np.ndarray:
    w, U = np.linalg.eigh(_sym(M))
    return (U * np.sqrt(np.clip(w, 0.0, None))) @ U.T


def sinkhorn_conditional_covariance(Sigma: np.ndarray, A: np.ndarray) -> np.ndarray:
    r""":math:`S = \operatorname{Cov}(Y \mid X)` under the Gaussian entropic plan:
    :math:`S = \Sigma^{1/2} f(G) \Sigma^{1/2}`, :math:`f(g) = 2/(1+\sqrt{1+4g})`,
    :math:`G = \Sigma^{1/2} A \Sigma A^\top \Sigma^{1/2}`; the unique SPD solution of
    :math:`S A \Sigma A^\top S + S = \Sigma`.

    Source: derived in theory.gaussian.sinkhorn_riccati_derivation (arXiv 2501.18322, Sinkhorn attention).
    Verified by: gaussian.ode-vs-quadrature
    """
    R = _sqrt_spd(Sigma)
    G = _sym(R @ A @ Sigma @ A.T @ R)
    g, U = np.linalg.eigh(G)
    f = 2.0 / (1.0 + np.sqrt(1.0 + 4.0 * np.clip(g, 0.0, None)))
    return _sym(R @ ((U * f) @ U.T) @ R)


def affine_velocity(model: GaussianAttention, alpha: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(b, J) with Gamma[N(alpha, Sigma)](x) = b + J x (see the module docstring).

    Verified by: gaussian.ode-vs-quadrature
    """
    if isinstance(model, GaussianHeads):
        parts = [affine_velocity(h, alpha, Sigma) for h in model.heads]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    V, A = model.V, model.A
    if model.attention == "softmax":
        return V @ alpha, V @ Sigma @ A
    if model.attention == "l2":
        St = np.linalg.inv(np.linalg.inv(Sigma) + model.K.T @ model.K)
        return V @ St @ np.linalg.solve(Sigma, alpha), V @ St @ A
    S = sinkhorn_conditional_covariance(Sigma, A)
    J = V @ S @ A
    return V @ alpha - J @ alpha, J


def moment_rhs(model: GaussianAttention, alpha: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(d\alpha/dt, d\Sigma/dt) = (b + J \alpha, J \Sigma + \Sigma J^\top)`, symmetrised.

    Verified by: gaussian.ode-vs-quadrature (and against theory.gaussian.moment_rhs_function in tests)
    """
    b, J = affine_velocity(model, alpha, Sigma)
    return b + J @ alpha, _sym(J @ Sigma + Sigma @ J.T)


def _pack(alpha, Sigma):
    iu = np.triu_indices(len(alpha))
    return np.concatenate([alpha, Sigma[iu]])


def _unpack(y, d):
    iu = np.triu_indices(d)
    S = np.zeros((d, d))
    S[iu] = y[d:]
    return y[:d], S + np.triu(S, 1).T


@dataclass(frozen=True)
class GaussianODESolution:
    """Solution of the moment ODE at ``times`` (``means`` (T, d), ``covs`` (T, d, d)).

    ``status``: ``"completed"`` (reached t_end), ``"blow-up"`` (tr Sigma exceeded BLOWUP_FACTOR tr Sigma_0 or the
    solver could not continue; ``blowup_time`` is then extrapolated, see :func:`solve_moment_ode`),
    ``"mean-overflow"`` (the mean left float64 by exponential growth while the covariance stayed regular: no
    blow-up) or ``"lost-positive-definiteness"``. ``times`` stop at the last time before blow-up.
    """

    times: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    status: str
    blowup_time: float | None
    stop_time: float
    min_eigenvalue: float
    meta: dict = field(default_factory=dict)

    @property
    def final_mean(self) -> np.ndarray:
        return self.means[-1]

    @property
    def final_cov(self) -> np.ndarray:
        return self.covs[-1]


def solve_moment_ode(model: GaussianAttention, mean, cov, t_end: float, *, save_times: Sequence[float] | None = None,
                     rtol: float = 1e-10, atol: float = 1e-12, blowup_factor: float = BLOWUP_FACTOR
                     ) -> GaussianODESolution:
    r"""Integrate the Gaussian moment ODE from N(``mean``, ``cov``) to ``t_end`` (time = depth, CACP units).

    The state is (:math:`\alpha`, upper triangle of :math:`\Sigma`), so :math:`\Sigma` is symmetric by construction.
    Integrator: SciPy DOP853 with ``rtol``/``atol``. Monitoring: the smallest eigenvalue of :math:`\Sigma` at every
    right-hand-side call (a terminal event when it reaches 0) and :math:`\operatorname{tr} \Sigma` (a terminal event
    when it grows by ``blowup_factor``). At such a stop :math:`t_s` the remaining time to a simple pole
    :math:`\operatorname{tr} \Sigma \sim c / (t^* - t)` is
    :math:`\tau = \operatorname{tr} \Sigma / (d \operatorname{tr} \Sigma/dt)`; if
    :math:`\tau <` ``POLE_RATIO`` :math:`\max(1, t_s)` the solution blows up (the generic Riccati blow-up, exact for
    softmax with :math:`V = I`) and :math:`t^* = t_s + \tau` is reported; otherwise (e.g. exponential growth,
    :math:`\tau = 1/\text{rate}`) the integration continues. The solution keeps the saved states up to :math:`t_s`.

    Verified by: gaussian.softmax-closed-form, gaussian.ode-vs-particles
    """
    d = model.d
    alpha0 = require_mean(mean, d)
    Sigma0 = require_covariance(cov, d)
    t_end = require_real(t_end, "t_end", minimum=0.0)
    if save_times is None:
        save_times = np.linspace(0.0, t_end, 101) if t_end > 0 else np.array([0.0])
    save_times = np.asarray(save_times, dtype=float)
    with np.errstate(over="raise", invalid="raise"):
        try:
            da0, dS0 = moment_rhs(model, alpha0, Sigma0)
            ok = bool(np.all(np.isfinite(da0)) and np.all(np.isfinite(dS0)))
        except FloatingPointError:
            ok = False
    if not ok:
        raise InputError(f"the moment equations overflow float64 at the initial state (|mean| = "
                         f"{float(np.abs(alpha0).max()):.3g}, |Sigma| = {float(np.abs(Sigma0).max()):.3g}): rescale "
                         f"the input")
    tr_ref = [float(np.trace(Sigma0))]
    min_eig = [float(np.linalg.eigvalsh(Sigma0)[0])]

    def rhs(_t, y):
        a, S = _unpack(y, d)
        da, dS = moment_rhs(model, a, S)
        return _pack(da, dS)

    def blowup(_t, y):
        return math.log(max(float(np.trace(_unpack(y, d)[1])), 1e-300)) - math.log(blowup_factor * tr_ref[0])

    def lost_pd(_t, y):
        lam = float(np.linalg.eigvalsh(_unpack(y, d)[1])[0])
        min_eig[0] = min(min_eig[0], lam)
        return lam

    blowup.terminal = lost_pd.terminal = True
    blowup.direction, lost_pd.direction = 1, -1
    meta = {"method": "DOP853", "rtol": rtol, "atol": atol, "blowup_factor": blowup_factor,
            "pole_ratio": POLE_RATIO}
    if t_end == 0:
        return GaussianODESolution(np.array([0.0]), alpha0[None], Sigma0[None], "completed", None, 0.0, min_eig[0],
                                   meta)
    ts, ys, t0, y0, nfev = [], [], 0.0, _pack(alpha0, Sigma0), 0
    status, t_star, stop = "completed", None, t_end
    while True:
        # each segment stops when tr Sigma grows by blowup_factor; a segment ending like a pole is a blow-up,
        # one ending with a bounded growth rate (e.g. exponential growth) is continued from where it stopped
        seg_times = save_times[(save_times >= t0) & (save_times <= t_end)]
        if ts and seg_times.size and seg_times[0] == ts[-1]:
            seg_times = seg_times[1:]
        with np.errstate(over="ignore", invalid="ignore"):
            sol = solve_ivp(rhs, (t0, t_end), y0, method="DOP853", t_eval=seg_times, rtol=rtol, atol=atol,
                            events=(blowup, lost_pd))
        nfev += int(sol.nfev)
        if len(sol.t):  # (SciPy returns a plain list for y when no requested time falls in the segment)
            ts += list(sol.t)
            ys += list(np.asarray(sol.y).T)
        if sol.status == 0:
            stop = t_end
            break
        if sol.status == 1 and sol.t_events[1].size:
            status, stop = "lost-positive-definiteness", float(sol.t_events[1][0])
            break
        if sol.status == 1:
            stop, y_last = float(sol.t_events[0][0]), sol.y_events[0][0]
        else:  # the solver could not continue (step size underflow): treat as a blow-up at its last time
            stop, y_last = (float(sol.t[-1]), np.asarray(sol.y)[:, -1]) if len(sol.t) else (t0, y0)
        a, S = _unpack(y_last, d)
        # d Sigma/dt does not involve the mean (softmax, L2 and Sinkhorn alike), so the blow-up test and time
        # come from the covariance equation alone
        with np.errstate(over="ignore", invalid="ignore"):
            trS, dtr = float(np.trace(S)), float(np.trace(moment_rhs(model, np.zeros(d), S)[1]))
        remaining = trS / dtr if dtr > 0 else math.inf
        if sol.status == -1 and np.all(np.isfinite(S)) and not remaining < POLE_RATIO * max(1.0, stop) \
                and not np.all(np.abs(a) < 1e300):
            # the mean left float64 while the covariance is regular: follow Sigma alone (mean set to 0, which
            # d Sigma/dt does not see) to find whether and when it blows up
            status = "mean-overflow"
            meta["message"] = f"the mean overflows float64 near t = {stop:.6g}"
            rest = solve_moment_ode(model, np.zeros(d), S, t_end - stop, save_times=[0.0, t_end - stop],
                                    rtol=rtol, atol=atol, blowup_factor=blowup_factor)
            if rest.status == "blow-up":
                status, t_star = "blow-up", stop + rest.blowup_time
                meta["message"] += f"; the covariance equation alone blows up at t* = {t_star:.10g}"
            break
        if sol.status == -1 or remaining < POLE_RATIO * max(1.0, stop):
            status, t_star = "blow-up", stop + (remaining if math.isfinite(remaining) else 0.0)
            meta["message"] = str(sol.message)
            break
        t0, y0 = stop, y_last
        tr_ref[0] = trS
    meta["nfev"] = nfev
    if not ts:
        ts, ys = [0.0], [_pack(alpha0, Sigma0)]
    means = np.array([_unpack(y, d)[0] for y in ys])
    covs = np.array([_unpack(y, d)[1] for y in ys])
    return GaussianODESolution(np.asarray(ts), means, covs, status, t_star, stop, min_eig[0], meta)


def moment_flow(model: GaussianAttention, mean, cov, t: float, rtol: float = 1e-11) -> tuple[np.ndarray, np.ndarray]:
    """(alpha(t), Sigma(t)) of the moment ODE; raises InputError if the solution blows up before t."""
    sol = solve_moment_ode(model, mean, cov, t, save_times=[0.0, t], rtol=rtol, atol=1e-13)
    if sol.status != "completed":
        raise InputError(f"the moment ODE stops ({sol.status}) at t = {sol.stop_time:.6g} < {t:.6g}")
    return sol.final_mean, sol.final_cov


# -- closed forms -------------------------------------------------------------------------------------------------
def softmax_identity_value_closed_form(mean0, cov0, A, t: float) -> tuple[np.ndarray | None, np.ndarray]:
    r"""Softmax with :math:`V = I`: :math:`\Sigma(t) = (\Sigma_0^{-1} - 2 t S_A)^{-1}`, :math:`S_A = (A + A^\top)/2`;
    when :math:`A` is symmetric also

    .. math::

        \alpha(t) = e^t \Sigma_0^{1/2} (I - 2 t H)^{-1/2} \Sigma_0^{-1/2} \alpha_0, \qquad
        H = \Sigma_0^{1/2} S_A \Sigma_0^{1/2}

    (:math:`= e^t (I - 2 t \Sigma_0 A)^{-1/2} \alpha_0`). Returns (:math:`\alpha` or None if :math:`A` is not symmetric,
    :math:`\Sigma`). Valid for :math:`t` < blow-up time. Derived in theory.gaussian.softmax_closed_form_derivation.
    Verified by: gaussian.softmax-closed-form
    """
    SA = _sym(np.asarray(A, dtype=float))
    Sigma = _sym(np.linalg.inv(np.linalg.inv(cov0) - 2 * t * SA))
    if np.max(np.abs(A - np.asarray(A).T)) > 1e-12 * max(1.0, np.max(np.abs(A))):
        return None, Sigma
    R = _sqrt_spd(cov0)
    w, U = np.linalg.eigh(_sym(R @ SA @ R))
    if np.any(1 - 2 * t * w <= 0):
        raise InputError(f"t = {t} is at or beyond the blow-up time")
    root = (U * (1 - 2 * t * w) ** -0.5) @ U.T
    return math.exp(t) * R @ root @ np.linalg.solve(R, np.asarray(mean0, dtype=float)), Sigma


def softmax_blowup_time(cov0, A, V=None) -> float | None:
    r"""Softmax attention with :math:`V = I`:
    :math:`t^* = 1 / (2 \lambda_{\max}(\Sigma_0^{1/2} S_A \Sigma_0^{1/2}))`, None if :math:`\lambda_{\max} \le 0`
    (no blow-up). For :math:`V \ne I` there is no closed form: use :func:`solve_moment_ode`.

    Derived in theory.gaussian.softmax_blowup_derivation. Verified by: gaussian.softmax-closed-form
    """
    d = np.asarray(cov0).shape[0]
    if V is not None and not np.allclose(V, np.eye(d), rtol=0, atol=0):
        raise InputError("the closed-form blow-up time holds for V = I only")
    R = _sqrt_spd(cov0)
    lam = float(np.linalg.eigvalsh(_sym(R @ _sym(np.asarray(A, dtype=float)) @ R))[-1])
    return 1.0 / (2.0 * lam) if lam > 0 else None


def softmax_low_rank_limit(cov0, A, tol: float = 1e-10) -> np.ndarray:
    r"""Softmax, :math:`V = I`, :math:`S_A` negative semi-definite:
    :math:`\lim_{t\to\infty} \Sigma(t) = N (N^\top \Sigma_0^{-1} N)^{-1} N^\top` with :math:`N` an orthonormal basis of
    :math:`\ker S_A` (zero if :math:`S_A` is negative definite): rank :math:`= \dim \ker S_A`.

    Derived in theory.gaussian.softmax_low_rank_limit_derivation. Verified by: gaussian.softmax-closed-form
    """
    SA = _sym(np.asarray(A, dtype=float))
    w, U = np.linalg.eigh(SA)
    scale = max(1.0, float(np.max(np.abs(w))))
    if w[-1] > tol * scale:
        raise InputError(f"the symmetric part of A has a positive eigenvalue {w[-1]:.6g}: Sigma(t) blows up")
    N = U[:, np.abs(w) <= tol * scale]
    if N.shape[1] == 0:
        return np.zeros_like(SA)
    return _sym(N @ np.linalg.inv(N.T @ np.linalg.solve(cov0, N)) @ N.T)


def scalar_closed_form(attention: str, alpha0: float, sigma0: float, t: float, *, v: float, a: float | None = None,
                       q: float | None = None, k: float | None = None) -> tuple[float, float]:
    """(alpha(t), sigma(t)) for d = 1 in closed form (theory.gaussian scalar derivations).

    softmax: sigma = sigma0/(1 - 2 v a sigma0 t), alpha = alpha0 e^{v t} (1 - 2 v a sigma0 t)^{-1/2};
    l2 (q k != 0): sigma = 1/(k^2 W(e^{-C/k^2}/k^2)), C = k^2 ln sigma0 - 1/sigma0 + 2 v k q t, alpha =
    alpha0 sqrt(sigma/sigma0) exp((1/sigma0 - 1/sigma)/(2 k q));
    sinkhorn (a != 0): theta - coth(theta/2) = theta0 - coth(theta0/2) + 2 v sign(a) t with sinh theta = 2|a| sigma,
    solved by bracketing; alpha = alpha0 e^{v t}.
    """
    if attention == "softmax":
        D = 1 - 2 * v * a * sigma0 * t
        if D <= 0:
            raise InputError(f"t = {t} is at or beyond the blow-up time {1 / (2 * v * a * sigma0):.6g}")
        return alpha0 * math.exp(v * t) / math.sqrt(D), sigma0 / D
    if attention == "l2":
        C = k * k * math.log(sigma0) - 1 / sigma0 + 2 * v * k * q * t
        # W(e^{-C/k^2}/k^2) computed as W(exp(log z)) with log z kept finite
        logz = -C / (k * k) - 2 * math.log(abs(k))
        w = float(np.real(lambertw(math.exp(logz)))) if logz < 700 else _lambertw_log(logz)
        sigma = 1 / (k * k * w)
        return alpha0 * math.sqrt(sigma / sigma0) * math.exp((1 / sigma0 - 1 / sigma) / (2 * k * q)), sigma
    if attention == "sinkhorn":
        F = lambda th: th - 1 / math.tanh(th / 2)
        target = F(math.asinh(2 * abs(a) * sigma0)) + 2 * v * math.copysign(1.0, a) * t
        lo, hi = 1e-300, 1.0
        while F(hi) < target:
            hi *= 2
        theta = brentq(lambda th: F(th) - target, max(lo, 1e-12) if F(1e-12) < target else lo, hi, xtol=1e-15,
                       rtol=4 * np.finfo(float).eps)
        return alpha0 * math.exp(v * t), math.sinh(theta) / (2 * abs(a))
    raise InputError(f"attention must be one of {ATTENTIONS}, got {attention!r}")


def _lambertw_log(logz: float) -> float:
    """W(e^L) for large L by Newton on w + log w = L."""
    w = logz - math.log(logz)
    for _ in range(50):
        w_new = w - (w + math.log(w) - logz) / (1 + 1 / w)
        if abs(w_new - w) < 1e-15 * w:
            return w_new
        w = w_new
    return w


# -- particles ------------------------------------------------------------------------------------------------------
@dataclass
class SinkhornState:
    """Log-domain Sinkhorn potentials (f rows, g columns), kept between calls for warm starts."""

    f: np.ndarray
    g: np.ndarray
    iterations: int = 0
    last_error: float = float("nan")


def _logits(model: GaussianAttention, X: np.ndarray, rows: slice) -> np.ndarray:
    """Attention logits of the query rows against all keys; row-constant terms dropped (they cancel)."""
    if model.attention == "l2":
        q = X[rows] @ model.Q.T
        keys = X @ model.K.T
        return q @ keys.T - 0.5 * np.sum(keys * keys, axis=1)[None, :]
    return (X[rows] @ model.A.T) @ X.T  # y_j^T A x_i


def particle_velocity(model: GaussianAttention, X: np.ndarray, *, causal: bool = False, block: int | None = None,
                      sinkhorn_tol: float = 1e-9, sinkhorn_max_iter: int = 2000,
                      state: SinkhornState | None = None) -> np.ndarray:
    r"""Velocities :math:`dx_i/dt = \sum_j P_{ij} V x_j` of :math:`n` tokens in :math:`\mathbb{R}^d`
    (self-interaction included).

    softmax/l2: :math:`P_{ij} = w(x_i, x_j) / \sum_k w(x_i, x_k)` (logsumexp-stabilised). ``causal`` (softmax only, a
    documented extension with no Gaussian closure claimed): token :math:`i` attends to :math:`j \le i`.
    sinkhorn: :math:`\pi_{ij} = e^{f_i + g_j + x_j^\top A x_i}` with log-domain potentials :math:`(f, g)` such that
    every row and column of :math:`\pi` sums to :math:`1/n`, and :math:`P = n \pi`; iterated until the largest potential
    update :math:`\max_i \lvert f_i^{\text{new}} - f_i\rvert` (the log of the worst row-marginal ratio) is below
    ``sinkhorn_tol``; :math:`P` is row-normalised exactly, its columns to that tolerance. ``state`` carries potentials
    between calls (warm start) and records iterations.
    Blocked by rows: memory :math:`O(\mathrm{block}\, n)`. Verified by: gaussian.ode-vs-particles
    """
    if isinstance(model, GaussianHeads):
        return sum(particle_velocity(h, X, causal=causal, block=block) for h in model.heads)
    n, d = X.shape
    block = block or block_rows(n)
    VX = X @ model.V.T
    VX1 = np.hstack([VX, np.ones((n, 1))])
    if model.attention != "sinkhorn":
        if causal and model.attention != "softmax":
            raise InputError("causal masking is implemented for softmax attention only")
        out = np.empty_like(X)
        for start in range(0, n, block):
            rows = slice(start, min(n, start + block))
            L = _logits(model, X, rows)
            if causal:
                idx = np.arange(rows.start, rows.stop)[:, None]
                L = np.where(np.arange(n)[None, :] <= idx, L, -np.inf)
            L -= L.max(axis=1, keepdims=True)
            np.exp(L, out=L)
            NZ = L @ VX1  # numerator sum_j w_ij V x_j and normaliser sum_j w_ij in one product
            out[rows] = NZ[:, :d] / NZ[:, d:]
        return out
    if causal:
        raise InputError("causal masking is implemented for softmax attention only")
    if state is None:
        state = SinkhornState(np.zeros(n), np.zeros(n))
    log_n = math.log(n)
    out = np.empty_like(X)
    for _ in range(sinkhorn_max_iter):
        f_new = np.empty(n)
        col = np.zeros(n)  # sum_i exp(L_ij + g_j - m_i) / (n s_i), see below
        for start in range(0, n, block):
            rows = slice(start, min(n, start + block))
            Z = _logits(model, X, rows)
            Z += state.g[None, :]
            m = Z.max(axis=1)
            Z -= m[:, None]
            np.exp(Z, out=Z)  # entries in (0, 1], the row maximum is 1
            NZ = Z @ VX1
            s = NZ[:, d]
            f_new[rows] = -log_n - m - np.log(s)
            out[rows] = NZ[:, :d] / s[:, None]
            # exp(L_ij + f_new_i) = Z_ij exp(-g_j) / (n s_i): the column pass reuses the same exponentials
            col += Z.T @ (1.0 / (n * s))
        if np.min(col) < 1e-250:
            raise InputError("Sinkhorn column sums underflow: the attention is too concentrated for float64 "
                             "(reduce A or the spread of the tokens)")
        error = float(np.max(np.abs(f_new - state.f)))
        state.f, state.g = f_new, state.g - log_n - np.log(col)
        state.iterations += 1
        state.last_error = error
        if error < sinkhorn_tol:
            return out
    raise InputError(f"Sinkhorn did not reach tolerance {sinkhorn_tol:g} in {sinkhorn_max_iter} iterations "
                     f"(last update {state.last_error:.3g})")


def attention_matrix(model: GaussianAttention, X: np.ndarray, *, state: SinkhornState | None = None,
                     sinkhorn_tol: float = 1e-9) -> np.ndarray:
    r"""The dense (n, n) attention matrix :math:`P` of :func:`particle_velocity` (same logits, same normalisation).

    softmax/l2: :math:`P_{ij} = e^{L_{ij} - \max_k L_{ik}} / \sum_k e^{L_{ik} - \max_k L_{ik}}` (row-stochastic).
    sinkhorn: :math:`P_{ij} = n e^{f_i + g_j + L_{ij}}` with the potentials of ``state`` (converged first by one call
    of :func:`particle_velocity`, which also warm-starts from ``state``), rows renormalised exactly.
    Memory :math:`O(n^2)`: meant for :math:`n` up to a few thousand (the :math:`\mathbb{R}^d` area stores :math:`P(t)`
    for :math:`n \le 2000`).
    """
    n = X.shape[0]
    L = _logits(model, X, slice(0, n))
    if model.attention == "sinkhorn":
        if state is None:
            state = SinkhornState(np.zeros(n), np.zeros(n))
        particle_velocity(model, X, sinkhorn_tol=sinkhorn_tol, state=state)
        L += state.g[None, :]
    L -= L.max(axis=1, keepdims=True)
    np.exp(L, out=L)
    L /= L.sum(axis=1, keepdims=True)
    return L


@dataclass(frozen=True)
class ParticleRun:
    """Particle simulation: initial and final tokens, empirical moments at ``times``."""

    times: np.ndarray
    X0: np.ndarray
    X: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    meta: dict


def empirical_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample mean and the (1/n) sample covariance (the covariance of the empirical measure)."""
    m = X.mean(axis=0)
    C = X - m
    return m, C.T @ C / len(X)


PARTICLE_METHODS = ("rk4", "layer")


def simulate_particles(model: GaussianAttention, mean, cov, t_end: float, *, n: int, steps: int, seed: int,
                       method: str = "rk4", causal: bool = False, sinkhorn_tol: float = 1e-9,
                       block: int | None = None, progress: Callable[[float, float], None] | None = None
                       ) -> ParticleRun:
    r"""n tokens drawn from N(``mean``, ``cov``) (``numpy.random.default_rng(seed)``), moved to ``t_end`` in ``steps``
    equal steps of the particle field of :func:`particle_velocity` (no renormalisation: tokens live in
    :math:`\mathbb{R}^d`).

    ``method``: ``rk4`` (classical Runge-Kutta, approximates the ODE) or ``layer``
    (:math:`x \leftarrow x + h \Gamma(x)`, one residual attention layer per step; its Gaussian closure is
    :func:`layer_gaussian_map`, exact for any :math:`h`).
    Verified by: gaussian.ode-vs-particles
    """
    method = require_choice(method, "method", PARTICLE_METHODS)
    d = model.d
    mean, cov = require_mean(mean, d), require_covariance(cov, d)
    n = require_int(n, "n", minimum=2)
    steps = require_int(steps, "steps", minimum=1)
    # the particles, the Runge-Kutta stages and one row block of weights; O(n^2 d) work per field evaluation
    check_array((n, model.d), f"a particle system of n={n} tokens in R^{model.d}", copies=12)
    check_work(4.0 * steps * float(n) * n * (2 * model.d + 8), f"a particle system of n={n} with {steps} steps")
    t_end = require_real(t_end, "t_end", minimum=0.0)
    rng = np.random.default_rng(require_int(seed, "seed", minimum=0))
    X0 = mean + rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T
    state = SinkhornState(np.zeros(n), np.zeros(n)) if model.attention == "sinkhorn" else None
    field_ = lambda Y: particle_velocity(model, Y, causal=causal, block=block, sinkhorn_tol=sinkhorn_tol,
                                         state=state)
    h = t_end / steps
    X = X0.copy()
    m, C = empirical_moments(X)
    times, means, covs = [0.0], [m], [C]
    for i in range(steps):
        k1 = field_(X)
        if method == "layer":
            X = X + h * k1
        else:
            k2 = field_(X + 0.5 * h * k1)
            k3 = field_(X + 0.5 * h * k2)
            k4 = field_(X + h * k3)
            X = X + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        m, C = empirical_moments(X)
        times.append((i + 1) * h)
        means.append(m)
        covs.append(C)
        if progress is not None:
            progress((i + 1) * h, t_end)
    meta = {"n": n, "steps": steps, "seed": seed, "integrator": method, "causal": causal, "t_end": t_end}
    if state is not None:
        meta.update(sinkhorn_tol=sinkhorn_tol, sinkhorn_iterations=state.iterations)
    return ParticleRun(np.array(times), X0, X, np.array(means), np.array(covs), meta)


# -- comparison ---------------------------------------------------------------------------------------------------
def _sampling_covariance(mean: np.ndarray, cov: np.ndarray, n: int) -> np.ndarray:
    """Covariance of (sample mean, upper triangle of sample covariance) for n iid N(mean, cov) draws (leading
    order): Cov(m_i, m_j) = S_ij/n, Cov(C_ij, C_kl) = (S_ik S_jl + S_il S_jk)/n, mean and covariance independent."""
    d = len(mean)
    iu = list(zip(*np.triu_indices(d)))
    p = d + len(iu)
    out = np.zeros((p, p))
    out[:d, :d] = cov / n
    for a, (i, j) in enumerate(iu):
        for b, (k, l) in enumerate(iu):
            out[d + a, d + b] = (cov[i, k] * cov[j, l] + cov[i, l] * cov[j, k]) / n
    return out


def layer_gaussian_map(model: GaussianAttention, mean, cov, h: float, steps: int = 1
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact Gaussian closure of ``steps`` residual layers :math:`x \leftarrow x + h \Gamma(x)`: with
    :math:`\Gamma = b + J x` affine, the pushforward of :math:`N(\alpha, \Sigma)` is
    :math:`N(\alpha + h (b + J \alpha), (I + h J) \Sigma (I + h J)^\top)` (the Euler step of the moment ODE plus the
    :math:`h^2 J \Sigma J^\top` term). Verified by: gaussian.ode-vs-particles
    """
    alpha, Sigma = np.asarray(mean, float), np.asarray(cov, float)
    I = np.eye(model.d)
    for _ in range(steps):
        b, J = affine_velocity(model, alpha, Sigma)
        alpha, Sigma = alpha + h * (b + J @ alpha), _sym((I + h * J) @ Sigma @ (I + h * J).T)
    return alpha, Sigma


def _predictor(model: GaussianAttention, meta: dict) -> Callable:
    t, steps = meta["t_end"], meta["steps"]
    if meta["integrator"] == "layer":
        return lambda a, S: layer_gaussian_map(model, a, S, t / steps, steps)
    return lambda a, S: moment_flow(model, a, S, t)


def moment_map_jacobian(predict: Callable, mean, cov, rel_step: float = 1e-5) -> np.ndarray:
    """d(alpha_t, vech Sigma_t) / d(alpha_0, vech Sigma_0) of ``predict(alpha_0, Sigma_0)`` by central differences
    (step ``rel_step`` times the parameter scale; truncation error O(step^2) relative)."""
    d = len(mean)
    theta0 = _pack(np.asarray(mean, float), np.asarray(cov, float))
    scale = max(1.0, float(np.max(np.abs(theta0))))
    cols = []
    for i in range(theta0.size):
        e = np.zeros_like(theta0)
        e[i] = rel_step * scale
        plus = _pack(*predict(*_unpack(theta0 + e, d)))
        minus = _pack(*predict(*_unpack(theta0 - e, d)))
        cols.append((plus - minus) / (2 * e[i]))
    return np.array(cols).T


def compare_particles_to_ode(model: GaussianAttention, run: ParticleRun, mean0, cov0) -> dict:
    r"""Empirical moments at the end of ``run`` vs the Gaussian prediction from the population (``mean0``, ``cov0``), in
    standard errors. The prediction is the moment ODE at ``t_end`` for ``rk4`` runs (RK4 error reported separately by
    the caller if needed) and the exact Gaussian closure :func:`layer_gaussian_map` for ``layer`` runs; the ODE value at
    ``t_end`` is always included (``ode_mean``, ``ode_cov``).

    Standard error: the sampling distribution of the initial empirical moments of :math:`n` iid N(``mean0``, ``cov0``)
    draws (see ``_sampling_covariance``) propagated to :math:`t` by the linearised prediction map (delta method):
    :math:`\operatorname{Cov}_t = \Phi \operatorname{Cov}_0 \Phi^\top`, :math:`\Phi` = :func:`moment_map_jacobian`. This
    neglects the :math:`O(t/\sqrt{n})` fluctuation of the interaction itself (the empirical field differs from the
    Gaussian one), small for short :math:`t`.
    ``max_deviation_in_standard_errors`` is compared with ``K_STANDARD_ERRORS`` = 4 by the checks (5 statistics at
    :math:`d = 2`: the chance that a correct model exceeds 4 is about :math:`3 \times 10^{-4}`).
    ``motion_in_standard_errors`` is how far the predicted moments moved from their initial values, in the same units:
    the check is informative when it is well above 4.
    """
    n = run.meta["n"]
    mean0, cov0 = np.asarray(mean0, float), np.asarray(cov0, float)
    predict = _predictor(model, run.meta)
    alpha_t, Sigma_t = predict(mean0, cov0)
    ode_alpha, ode_Sigma = moment_flow(model, mean0, cov0, run.meta["t_end"])
    Phi = moment_map_jacobian(predict, mean0, cov0)
    se = np.sqrt(np.diag(Phi @ _sampling_covariance(mean0, cov0, n) @ Phi.T))
    pred = _pack(alpha_t, Sigma_t)
    z = (_pack(run.means[-1], run.covs[-1]) - pred) / se
    return {"n": n, "t": run.meta["t_end"], "integrator": run.meta["integrator"], "mean": run.means[-1],
            "cov": run.covs[-1], "predicted_mean": alpha_t, "predicted_cov": Sigma_t, "ode_mean": ode_alpha,
            "ode_cov": ode_Sigma, "standard_errors": se, "deviations_in_standard_errors": z,
            "max_deviation_in_standard_errors": float(np.max(np.abs(z))),
            "motion_in_standard_errors": float(np.max(np.abs((pred - _pack(mean0, cov0)) / se))),
            "k": K_STANDARD_ERRORS,
            "standard_error_method": "Gaussian sampling distribution of the initial moments propagated by the "
                                     "linearised moment map (delta method)"}


def velocity_by_quadrature(model: GaussianAttention, alpha: np.ndarray, Sigma: np.ndarray, nodes: int = 40
                           ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(d\alpha/dt, d\Sigma/dt)` from the definition of :math:`\Gamma` by tensor Gauss-Hermite quadrature,
    independent of the Gaussian closure: :math:`d\alpha/dt = \mathbb{E}[\Gamma(X)]`,
    :math:`d\Sigma/dt = \mathbb{E}[\Gamma(X)(X - \alpha)^\top]` + transpose (valid for any field), with
    :math:`\Gamma(x)` itself a quadrature over :math:`y` (softmax, l2) or the velocity of the discrete Sinkhorn plan on
    the weighted quadrature nodes (log domain, tolerance :math:`10^{-13}`). :math:`d \le 3`.

    Several heads (:class:`GaussianHeads`): the quadrature of each head's velocity, summed (the definition of
    the multi-head velocity, not its Gaussian closure).

    Verified by: gaussian.ode-vs-quadrature (it is the independent side of that check)
    """
    if isinstance(model, GaussianHeads):
        parts = [velocity_by_quadrature(h, alpha, Sigma, nodes) for h in model.heads]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    d = model.d
    x1, w1 = np.polynomial.hermite_e.hermegauss(nodes)  # weight e^{-x^2/2}
    w1 = w1 / w1.sum()
    grids = np.meshgrid(*([x1] * d), indexing="ij")
    Z = np.stack([g.ravel() for g in grids], axis=1)
    W = np.prod(np.meshgrid(*([w1] * d), indexing="ij"), axis=0).ravel()
    keep = W > 1e-300
    Z, W = Z[keep], W[keep]
    X = alpha + Z @ np.linalg.cholesky(Sigma).T  # nodes of N(alpha, Sigma)
    logW = np.log(W)
    if model.attention == "sinkhorn":
        L = (X @ model.A.T) @ X.T
        f, g = np.zeros(len(X)), np.zeros(len(X))
        for _ in range(20000):
            f_new = -logsumexp(L + (g + logW)[None, :], axis=1)
            g = -logsumexp(L + (f_new + logW)[:, None], axis=0)
            converged = np.max(np.abs(f_new - f)) < 1e-13
            f = f_new
            if converged:
                break
        else:
            raise InputError("quadrature Sinkhorn did not converge to 1e-13 in 20000 iterations")
        logits = L + (g + logW)[None, :]
    else:
        logits = _logits(model, X, slice(None)) + logW[None, :]
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    Gam = P @ (X @ model.V.T)
    dalpha = W @ Gam
    M = (Gam * W[:, None]).T @ (X - alpha)
    return dalpha, M + M.T
