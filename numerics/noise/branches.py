"""Zonal stationary branches of any degree, for any kernel: continuation, the refined fold, the free energy.

A :class:`ZonalProblem` is the self-consistency equation of :mod:`numerics.noise.stationary`,

    m_l = E_u[P_l e^phi] / E_u[e^phi],    phi = sum_l g_l N_l m_l P_l / D,

for given couplings g_0..g_L (the Funk-Hecke eigenvalues of the interaction w.r.t. the uniform probability
measure: usa's g_l = rho_0 a_l(beta)/beta, or the Doi-Onsager kernel's Fourier coefficients), restricted to a
set of ``active`` degrees (the others are held at 0: an invariant subspace). The branches of higher modes live
in such subspaces:

- on the circle, k-fold states rho(theta) = f(k theta) are the problem with the couplings g'_j = g_{jk}
  (the uniform measure is invariant under theta -> k theta; :meth:`ZonalProblem.decimated`);
- on S^{d-1} (d >= 3), states even under x -> -x are the even degrees (degree 2 lives there); odd degrees
  l >= 3 need every degree.

Along a branch parametrised by its amplitude s = m_mode (natural continuation, Newton on the other active
moments and D), the free energy difference to the uniform state at a stationary point is (theory.noise_global)

    Delta F = (1/2) sum_l g_l N_l m_l^2 - D log Z.

:func:`refine_fold` maximises D(s) near the grid fold (Brent in s), :func:`equal_free_energy` finds the D at
which Delta F = 0 on the branch away from s = 0 (Brent's root finder in s): the first-order noise of the branch.

Verified by: noise.global-first-order, noise.global-higher-modes, noise.global-doi-onsager.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq, fsolve, minimize_scalar

from numerics.common.errors import InputError, require_int
from numerics.noise.zonal import ZonalBasis, harmonic_dimension

#: Newton's residual max |m - G(m)| accepted on a branch point
NEWTON_RESIDUAL = 1e-11
#: the last retained term of phi, |g_L N_L m_L| / D, above which the truncation is considered too coarse
TAIL_LIMIT = 1e-8
#: a density seen by fewer quadrature nodes than this (:meth:`ZonalProblem.nodes_resolving`) is not resolved
MIN_NODES = 16


@lru_cache(maxsize=64)
def harmonic_dimensions(d: int, L: int) -> np.ndarray:
    """N_1..N_L (2 on the circle)."""
    return np.array([harmonic_dimension(d, l) for l in range(1, L + 1)], dtype=float)


@dataclass(frozen=True)
class ZonalProblem:
    """Stationary zonal densities for couplings ``g`` (g_0..g_L; g_0 unused), with the moments outside
    ``active`` (degrees in 1..L) held at zero. ``label`` says which class of states this is."""

    d: int
    g: np.ndarray
    active: tuple
    basis: ZonalBasis
    label: str = "all degrees"

    @classmethod
    def build(cls, d: int, g, active=None, label: str = "all degrees", nodes: int | None = None) -> "ZonalProblem":
        g = np.asarray(g, dtype=float)
        L = g.size - 1
        require_int(L, "L", minimum=2)
        active = tuple(range(1, L + 1)) if active is None else tuple(sorted(int(a) for a in active))
        if not active or active[0] < 1 or active[-1] > L:
            raise InputError(f"active degrees must lie in 1..{L}, got {active}")
        return cls(d, g, active, ZonalBasis.build(d, L, nodes=4 * L + 8 if nodes is None else nodes), label)

    @property
    def L(self) -> int:
        return self.g.size - 1

    @property
    def index(self) -> np.ndarray:
        """Positions (0-based, into m_1..m_L) of the active degrees."""
        return np.array(self.active) - 1

    def phi(self, D: float, m: np.ndarray) -> np.ndarray:
        """phi at the quadrature nodes."""
        return self.basis.P[:, 1:] @ (self.g[1:] * harmonic_dimensions(self.d, self.L) * m) / D

    def map(self, D: float, m: np.ndarray) -> np.ndarray:
        """G(m) = E_u[P_l e^phi]/E_u[e^phi], l = 1..L."""
        phi = self.phi(D, m)
        e = np.exp(phi - phi.max())
        return (self.basis.w * e) @ self.basis.P[:, 1:] / float(self.basis.w @ e)

    def derivatives(self, D: float, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(G, dG/dm, dG/dD): dG_i/dm_j = Cov_rho(P_i, P_j) g_j N_j / D and dG_i/dD = -sum_j Cov(P_i, P_j)
        g_j N_j m_j / D^2 (rho = e^phi/Z; every degree 1..L)."""
        phi = self.phi(D, m)
        e = self.basis.w * np.exp(phi - phi.max())
        u = e / e.sum()
        P = self.basis.P[:, 1:]
        G = u @ P
        C = (P * u[:, None]).T @ P - np.outer(G, G)
        gN = self.g[1:] * harmonic_dimensions(self.d, self.L)
        return G, C * (gN / D)[None, :], -C @ (gN * m) / D ** 2

    def tail(self, D: float, m: np.ndarray) -> float:
        """|g_L N_L m_L| / D at the highest active degree: the size of the last retained term of phi."""
        top = self.active[-1]
        return abs(self.g[top] * harmonic_dimension(self.d, top) * m[top - 1]) / D

    def nodes_resolving(self, D: float, m: np.ndarray) -> int:
        """How many quadrature nodes see the density above 1% of its maximum (a density concentrated on a
        few nodes is below the quadrature's resolution, whatever its truncation tail)."""
        phi = self.phi(D, m)
        return int(np.count_nonzero(phi >= phi.max() + math.log(0.01)))

    def free_energy(self, D: float, m: np.ndarray) -> float:
        """Delta F = (1/2) sum g_l N_l m_l^2 - D log Z at a stationary point (closed form)."""
        phi = self.phi(D, m)
        top = phi.max()
        logZ = math.log(float(self.basis.w @ np.exp(phi - top))) + top
        return 0.5 * float(np.sum(self.g[1:] * harmonic_dimensions(self.d, self.L) * m * m)) - D * logZ

    def embed(self, values: np.ndarray) -> np.ndarray:
        """The full m_1..m_L with ``values`` at the active degrees."""
        m = np.zeros(self.L)
        m[self.index] = values
        return m

    def decimated(self, k: int, L: int | None = None) -> "ZonalProblem":
        """Circle only: the k-fold states, couplings g'_j = g_{jk}, j = 0..L (default: as many as ``g`` has)."""
        if self.d != 2:
            raise InputError("decimation (k-fold states) is the circle's reduction; on S^{d-1} use a parity class")
        L = self.L // k if L is None else L
        return ZonalProblem.build(2, self.g[: L * k + 1: k], label=f"{k}-fold states (couplings g_(jk))")


@dataclass(frozen=True)
class BranchPoint:
    D: float
    moments: np.ndarray
    residual: float


def solve_at_amplitude(problem: ZonalProblem, mode: int, s: float, guess_m: np.ndarray,
                       guess_D: float) -> BranchPoint | None:
    """The stationary state with m_mode = s: Newton (scipy fsolve) on the other active moments and D, the
    residual scaled by 1/|s| (O(1) near the bifurcation; D is determined by the O(s) part of the equations,
    so the accepted residual is :data:`NEWTON_RESIDUAL` min(1, |s|)). None if Newton fails or D <= 0."""
    others = [i for i in problem.index if i != mode - 1]

    def full(z):
        m = np.zeros(problem.L)
        m[mode - 1] = s
        m[others] = z[:-1]
        return m

    def eqs(z):
        m = full(z)
        return (m - problem.map(z[-1], m))[problem.index] / abs(s)

    def jac(z):
        _, dm, dD = problem.derivatives(z[-1], full(z))
        J = np.zeros((len(problem.index), len(others) + 1))
        rows = problem.index
        J[:, :-1] = np.eye(problem.L)[np.ix_(rows, others)] - dm[np.ix_(rows, others)]
        J[:, -1] = -dD[rows]
        return J / abs(s)

    guess = np.concatenate([np.asarray(guess_m, float)[others], [guess_D]])
    with np.errstate(all="ignore"):        # a failed solve shows in the residual and the finiteness checks
        z, _, ier, _ = fsolve(eqs, guess, fprime=jac, full_output=True, xtol=1e-13)
        resid = float(np.max(np.abs(eqs(z)))) * abs(s)
    if not resid <= NEWTON_RESIDUAL * min(1.0, abs(s)) or not z[-1] > 0 or not np.all(np.isfinite(z)):
        return None
    return BranchPoint(float(z[-1]), full(z), resid)


def solve_at_noise(problem: ZonalProblem, D: float, guess_m: np.ndarray) -> BranchPoint | None:
    """The stationary state at noise D near ``guess_m`` (Newton on the active moments); None if it fails."""
    idx = problem.index

    def eqs(v):
        m = problem.embed(v)
        return (m - problem.map(D, m))[idx]

    def jac(v):
        dm = problem.derivatives(D, problem.embed(v))[1]
        return np.eye(len(idx)) - dm[np.ix_(idx, idx)]

    v = fsolve(eqs, np.asarray(guess_m, float)[idx], fprime=jac, xtol=1e-13)
    resid = float(np.max(np.abs(eqs(v))))
    return BranchPoint(D, problem.embed(v), resid) if resid <= NEWTON_RESIDUAL else None


@dataclass(frozen=True)
class ModeBranch:
    """One side of the branch of ``mode``, in the order it was traced (from the uniform state outwards):
    amplitudes s = m_mode (signed), D, moments, Newton residuals, truncation tails, Delta F, and why the
    continuation stopped."""

    problem: ZonalProblem
    mode: int
    s: np.ndarray
    D: np.ndarray
    moments: np.ndarray
    residual: np.ndarray
    tail: np.ndarray
    free_energy: np.ndarray
    stopped: str

    @property
    def stable_guess(self) -> np.ndarray:
        """Stable within the class: the first piece is stable iff D decreases as the branch leaves the uniform
        state (supercritical), and the stability flips at every fold in D (where the second variation of F
        restricted to the class changes sign); turning points of s alone do not change it."""
        n = self.D.size
        if n < 2:
            return np.zeros(n, bool)
        dD = np.diff(self.D)
        stable = dD[0] < 0
        out = [stable]
        for k in range(1, n):
            if k < n - 1 and np.sign(dD[k]) != np.sign(dD[k - 1]) and dD[k] != 0:
                stable = not stable
            out.append(stable)
        return np.array(out)


def amplitudes(s_min: float, s_max: float, points: int) -> np.ndarray:
    """A third of the points geometric from s_min to 0.05, the rest linear to s_max (the grid of
    :func:`numerics.noise.stationary.stationary_branch`); geometric throughout if s_max <= 0.05; beyond 0.95
    a quarter of the points approach s_max geometrically in 1 - s (concentrated states at large beta)."""
    if s_max <= 0.05:
        return np.geomspace(s_min, s_max, points)
    if s_max <= 0.95:
        return np.concatenate([np.geomspace(s_min, 0.05, points // 3, endpoint=False),
                               np.linspace(0.05, s_max, points - points // 3)])
    near = points // 4
    return np.concatenate([np.geomspace(s_min, 0.05, points // 3, endpoint=False),
                           np.linspace(0.05, 0.95, points - points // 3 - near, endpoint=False),
                           1 - np.geomspace(0.05, 1 - s_max, near)])


def _branch_of(problem: ZonalProblem, mode: int, pts: list, stopped: str) -> ModeBranch:
    D = np.array([p.D for p in pts])
    M = np.array([p.moments for p in pts]).reshape(len(pts), problem.L)
    F = np.array([problem.free_energy(p.D, p.moments) for p in pts])
    tails = np.array([problem.tail(p.D, p.moments) for p in pts])
    return ModeBranch(problem, mode, M[:, mode - 1].copy(), D, M, np.array([p.residual for p in pts]), tails, F,
                      stopped)


def continue_in_amplitude(problem: ZonalProblem, mode: int, s_values, D_start: float, m_start=None) -> ModeBranch:
    """Natural continuation in s = m_mode over the given amplitudes (a short window around a point whose
    moments ``m_start`` and D_start are known: the local refinements of :mod:`numerics.noise.transitions`).
    Stops at the first Newton failure or truncation beyond :data:`TAIL_LIMIT`."""
    if mode not in problem.active:
        raise InputError(f"mode {mode} is not an active degree of this problem ({problem.label})")
    m_guess = np.zeros(problem.L)
    if m_start is not None:
        n = min(len(m_start), problem.L)
        m_guess[:n] = np.asarray(m_start, float)[:n]
    D_guess, pts, stopped = float(D_start), [], "s_max"
    for s in np.asarray(s_values, float):
        m_try = m_guess.copy()
        m_try[mode - 1] = s
        p = solve_at_amplitude(problem, mode, s, m_try, D_guess)
        if p is None or problem.tail(p.D, p.moments) > TAIL_LIMIT:
            stopped = f"newton failed or truncated at s = {s:.4g}"
            break
        pts.append(p)
        m_guess, D_guess = p.moments, p.D
    return _branch_of(problem, mode, pts, stopped)


#: arclength steps of :func:`trace_branch`: first step (in the scaled variables), growth, bounds
ARC_FIRST, ARC_GROWTH, ARC_MIN, ARC_MAX = 2e-4, 1.5, 1e-9, 0.1


def trace_branch(problem: ZonalProblem, mode: int, s_end: float, D_start: float, *, s_first: float = 1e-3,
                 max_steps: int = 400, progress=None) -> ModeBranch:
    """Pseudo-arclength continuation of the branch of ``mode`` from the uniform state to the amplitude s_end.

    The first two points are solved at s = s_first and 1.25 s_first (Newton on the other moments and D from
    D_start, Landau's estimate). Then each step
    predicts along the secant of the last two points and corrects with Newton on (m - G(m, D) = 0,
    <t, x - x_pred> = 0) (scipy fsolve with the analytic Jacobian); x = (active moments, log D), so that D
    growing by orders of magnitude along the branch (large beta) costs few steps. Steps grow by 1.5 after a success and are
    halved after a failure. This follows the branch through turning points of s = m_mode, where continuation
    in s breaks down (large beta and d). Stops when |s| reaches |s_end|, s changes sign (back at the uniform
    state), the truncation tail exceeds :data:`TAIL_LIMIT` or the density concentrates below the quadrature's
    resolution (:data:`MIN_NODES`), the step falls below ARC_MIN or after
    ``max_steps`` (said in ``stopped``).
    """
    if mode not in problem.active:
        raise InputError(f"mode {mode} is not an active degree of this problem ({problem.label})")
    idx = problem.index
    pts = []
    m_guess = np.zeros(problem.L)
    for s in (s_first, 1.25 * s_first):
        m_guess[mode - 1] = s
        p = solve_at_amplitude(problem, mode, s, m_guess, D_start if not pts else pts[-1].D)
        if p is None:
            return _branch_of(problem, mode, pts, f"newton failed at s = {s:.4g}")
        pts.append(p)
        m_guess = p.moments.copy()

    def vec(p):
        return np.concatenate([p.moments[idx], [math.log(p.D)]])

    h, stopped, sign = ARC_FIRST, "max_steps", math.copysign(1.0, s_first)
    for step in range(max_steps):
        x0, x1 = vec(pts[-2]), vec(pts[-1])
        t = (x1 - x0) / np.linalg.norm(x1 - x0)
        pred = x1 + h * t

        def eqs(x):
            m = problem.embed(x[:-1])
            return np.concatenate([(m - problem.map(math.exp(x[-1]), m))[idx], [t @ (x - pred)]])

        def jac(x):
            m = problem.embed(x[:-1])
            Dv = math.exp(x[-1])
            _, dm, dD = problem.derivatives(Dv, m)
            J = np.zeros((idx.size + 1, idx.size + 1))
            J[:-1, :-1] = np.eye(idx.size) - dm[np.ix_(idx, idx)]
            J[:-1, -1] = -dD[idx] * Dv
            J[-1] = t
            return J

        with np.errstate(all="ignore"):
            x, _, ier, _ = fsolve(eqs, pred, fprime=jac, full_output=True, xtol=1e-13)
            m = problem.embed(x[:-1])
            resid = float(np.max(np.abs(eqs(x)[:-1])))
        s_new = m[mode - 1]
        ok = (resid <= NEWTON_RESIDUAL * min(1.0, abs(s_new)) and np.all(np.isfinite(x))
              and np.linalg.norm(x - x1) < 3 * h)
        if not ok:
            h /= 2
            if h < ARC_MIN:
                stopped = f"step below {ARC_MIN:g} at s = {pts[-1].moments[mode - 1]:.4g}"
                break
            continue
        if math.copysign(1.0, s_new) != sign:
            stopped = "s changed sign (the branch meets states of another class)"
            break
        p = BranchPoint(math.exp(float(x[-1])), m, resid)
        tail = problem.tail(p.D, p.moments)
        if tail > TAIL_LIMIT:
            stopped = f"truncation: last term of phi {tail:.2g} at s = {s_new:.4g}"
            break
        if problem.nodes_resolving(p.D, p.moments) < MIN_NODES:
            stopped = f"quadrature: fewer than {MIN_NODES} nodes see the density at s = {s_new:.4g}"
            break
        pts.append(p)
        if progress is not None:
            progress(min(abs(s_new), abs(s_end)), abs(s_end))
        if abs(s_new) >= abs(s_end):
            stopped = "s_max"
            break
        h = min(ARC_MAX, h * ARC_GROWTH)
    return _branch_of(problem, mode, pts, stopped)


def _solve_between(branch: ModeBranch, i: int, j: int, s: float) -> BranchPoint:
    """The state at amplitude s on the segment between points i and j (guess: linear interpolation)."""
    a, b = branch.s[i], branch.s[j]
    w = (s - a) / (b - a)
    m = branch.moments[i] + w * (branch.moments[j] - branch.moments[i])
    Dg = branch.D[i] + w * (branch.D[j] - branch.D[i])
    p = solve_at_amplitude(branch.problem, branch.mode, s, m, Dg)
    if p is None:
        raise InputError(f"Newton failed at s = {s:.6g} while refining the branch of mode {branch.mode}")
    return p


@dataclass(frozen=True)
class RefinedPoint:
    """A point of a branch located to solver precision: D, the amplitude s, the moments, Newton's residual
    max |m - G(m)| there."""

    D: float
    s: float
    moments: np.ndarray
    residual: float = 0.0


def refine_fold(branch: ModeBranch) -> RefinedPoint | None:
    """The fold: the interior maximum of D along the branch (None if D is largest at the first or last point,
    or if s is not monotone around it), by bounded Brent minimisation of -D(s) between the grid neighbours,
    s the local parameter. Near the maximum D(s) is flat, so an s located to ~1e-10 gives D to round-off."""
    if branch.D.size < 3:
        return None
    i = int(np.argmax(branch.D))
    if i == 0 or i == branch.D.size - 1:
        return None
    a, b, c = branch.s[i - 1], branch.s[i], branch.s[i + 1]
    if not (a < b < c or a > b > c):
        return None

    def D_of(s):
        j = i - 1 if (s - b) * (a - b) > 0 else i + 1
        return _solve_between(branch, i, j, s).D

    lo, hi = min(a, c), max(a, c)
    res = minimize_scalar(lambda s: -D_of(s), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-10 * max(abs(lo), abs(hi))})
    s = float(res.x)
    j = i - 1 if (s - b) * (a - b) > 0 else i + 1
    p = _solve_between(branch, i, j, s)
    if p.D >= branch.D[i]:
        return RefinedPoint(p.D, s, p.moments, p.residual)
    return RefinedPoint(float(branch.D[i]), float(b), branch.moments[i], float(branch.residual[i]))


#: |Delta F| below this fraction of its two cancelling terms ((1/2) sum g N m^2 and D log Z) is round-off
FREE_ENERGY_FLOOR = 1e-11


def equal_free_energy(branch: ModeBranch, skip: int = 3) -> list[RefinedPoint]:
    """Points where Delta F changes sign along the branch (beyond the first ``skip`` points, where the branch
    leaves the uniform state with Delta F -> 0), each located by Brent's root finder in s on the segment
    where the sign changes. Only points whose |Delta F| exceeds :data:`FREE_ENERGY_FLOOR` times the size of
    its cancelling terms count (near the bifurcation and near beta* the difference is below round-off)."""
    problem = branch.problem
    gN = problem.g[1:] * harmonic_dimensions(problem.d, problem.L)
    scale = 0.5 * np.sum(gN * branch.moments ** 2, axis=1) if branch.D.size else np.zeros(0)
    reliable = [i for i in range(skip, branch.D.size) if abs(branch.free_energy[i]) > FREE_ENERGY_FLOOR * scale[i]]
    out = []
    for i, j in zip(reliable, reliable[1:]):
        if np.sign(branch.free_energy[i]) == np.sign(branch.free_energy[j]) or branch.s[i] == branch.s[j]:
            continue
        try:
            s = brentq(lambda x: problem.free_energy(*_state(branch, i, j, x)), branch.s[i], branch.s[j],
                       xtol=1e-15, rtol=1e-15)
            p = _solve_between(branch, i, j, s)
        except (ValueError, InputError):      # re-solved end points disagree with the grid: no clean root
            continue
        out.append(RefinedPoint(p.D, s, p.moments, p.residual))
    return out


def _state(branch: ModeBranch, i: int, j: int, s: float) -> tuple[float, np.ndarray]:
    p = _solve_between(branch, i, j, s)
    return p.D, p.moments
