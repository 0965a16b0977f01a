r"""Riemannian Newton for :math:`\operatorname{grad} E = 0` on :math:`(\mathbb{S}^{d-1})^n`, and a multi-start search for distinct critical points.

Newton step (Absil, Mahony, Sepulchre 2008, ch. 6): in the tangent basis :math:`U` of
:mod:`numerics.critical.hessian`, solve :math:`\operatorname{Hess} E(X)[\xi] = -\operatorname{grad} E(X)` on the
orthogonal complement of the tangent space of the rotation orbit (where the Hessian is singular at critical points;
least squares, minimum norm, for other degeneracies), then retract
:math:`x_i \leftarrow (x_i + U_i \xi_i) / \lVert x_i + U_i \xi_i\rVert`. Newton seeks critical points of every
index (saddles included), which is what a landscape census needs. A trust region caps the step (largest
per-particle displacement :math:`\le` ``radius``); the radius halves when the
residual grows and is restored after a successful step. Near a nondegenerate (modulo rotations) critical
point the residual then decreases quadratically.

Search: Newton from ``starts`` iid uniform configurations; converged points are deduplicated up to rotations
and permutations by the sorted spectrum of the Gram matrix :math:`XX^\top` (invariant under both) together with the
energy, and each class is reported with its classification (:func:`numerics.critical.critical_point_report`).

Verified by: critical.strict-saddles-d3.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from theory.kernels import PairKernel

from numerics.common.limits import check_work
from numerics.critical.report import check_hessian_cost, CriticalPointReport, critical_point_report, orbit_tangent_basis, orthogonal_complement
from numerics.common.errors import require_int, require_points, require_real
from numerics.critical.hessian import pair_weights, relative_residual, riemannian_gradient, riemannian_hessian_tangent, tangent_basis
from numerics.core.trajectory import uniform_sphere

#: residual at which Newton stops (near float64 round-off for the relative residual)
NEWTON_TOLERANCE = 1e-13
#: Gram-spectrum distance (per particle) below which two critical points are the same up to rotation and
#: permutation: Newton polishes to ~1e-13, so distinct classes differ by far more, equal ones by far less
DEDUP_TOLERANCE = 1e-6


@dataclass
class NewtonResult:
    """Outcome of :func:`riemannian_newton`: final point, convergence flag and the residual history."""

    X: np.ndarray
    converged: bool
    iterations: int
    residuals: list = field(default_factory=list)


def _tangent_gradient(X, beta, kernel, U):
    _, W1, _ = pair_weights(X, beta, kernel)
    g = W1 @ X / X.shape[0] ** 2
    return np.einsum("ida,id->ia", U, g).reshape(-1)


def _retract(X, U, xi):
    Y = X + np.einsum("ida,ia->id", U, xi.reshape(X.shape[0], -1))
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def riemannian_newton(X0, beta, kernel: PairKernel | None = None, *, tol: float = NEWTON_TOLERANCE,
                      max_iter: int = 60, radius: float = 0.5) -> NewtonResult:
    r"""Riemannian Newton iteration with a trust region for :math:`\operatorname{grad} E = 0` from X0 (module docstring).

    Parameters
    ----------
    X0 : (n, d) array_like
        Start (unit rows).
    beta : float
        Inverse temperature.
    kernel : PairKernel, optional
        Pair kernel (default :math:`\phi_\beta`).
    tol : float
        Stop when :func:`numerics.critical.hessian.relative_residual` is at most ``tol``.
    max_iter : int
        Iteration cap.
    radius : float
        Largest displacement of one particle per step (trust region, in the ambient norm).

    Returns
    -------
    NewtonResult
        ``residuals[k]`` is the relative residual after k steps.

    Verified by: critical.strict-saddles-d3 (and tests of quadratic convergence).
    """
    beta = require_real(beta, "beta")
    X = require_points(X0, "X0").copy()
    tol = require_real(tol, "tol", minimum=0.0)
    max_iter = require_int(max_iter, "max_iter", minimum=0)
    radius = require_real(radius, "radius", minimum=0.0, strict_minimum=True)
    res = relative_residual(X, beta, kernel)
    history = [res]
    trust = radius
    for it in range(1, max_iter + 1):
        if res <= tol:
            return NewtonResult(X, True, it - 1, history)
        U = tangent_basis(X)
        H = riemannian_hessian_tangent(X, beta, kernel, U)
        g = _tangent_gradient(X, beta, kernel, U)
        # Newton on the quotient by rotations: <grad E, Omega X> = 0 for every generator (invariance), and the
        # orbit directions would otherwise receive spurious O(1) steps from eigenvalues that are O(residual).
        C = orthogonal_complement(orbit_tangent_basis(X, U), H.shape[0])
        xi = C @ np.linalg.lstsq(C.T @ H @ C, -(C.T @ g), rcond=1e-12)[0]
        while True:
            step = np.linalg.norm(xi.reshape(X.shape[0], -1), axis=1).max()
            scaled = xi * min(1.0, trust / step) if step > 0 else xi
            Y = _retract(X, U, scaled)
            new = relative_residual(Y, beta, kernel)
            if new < res or trust < 1e-8:
                break
            trust *= 0.5
        X, res = Y, new
        trust = radius if step <= trust else min(radius, 2 * trust)
        history.append(res)
    return NewtonResult(X, res <= tol, max_iter, history)


def gram_signature(X) -> np.ndarray:
    r"""Sorted eigenvalues of the Gram matrix :math:`XX^\top`: invariant under rotations and permutations of X."""
    X = np.asarray(X, dtype=float)
    return np.sort(np.linalg.eigvalsh(X @ X.T))


@dataclass
class FoundCriticalPoint:
    """One class of critical points found by :func:`find_critical_points` (up to rotation and permutation)."""

    X: np.ndarray
    report: CriticalPointReport
    hits: int

    def to_dict(self) -> dict:
        r = self.report
        return {"energy": r.energy, "cluster_sizes": r.cluster_sizes, "classification": r.classification,
                "reason": r.reason, "counts": r.counts, "symmetry_zero_modes": r.symmetry_zero_modes,
                "residual": r.residual, "unstable_rate": r.unstable_rate, "hits": self.hits,
                "max_eigenvalue": float(r.eigenvalues.max())}


def ascent_warmup(X, beta, kernel: PairKernel | None, steps: int, step: float = 0.1) -> np.ndarray:
    """``steps`` steps of normalised Riemannian gradient ascent x_i <- normalise(x_i + h g_i / max_j |g_j|).

    Moves a random start towards the states the ascent dynamics visit (clusters, metastable saddles), which
    plain Newton from uniform starts rarely finds (it favours high-index saddles near the start).
    """
    for _ in range(steps):
        g = riemannian_gradient(X, beta, kernel)
        top = np.linalg.norm(g, axis=1).max()
        if top == 0:
            break
        X = X + step * g / top
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def find_critical_points(n: int, d: int, beta: float, *, starts: int, seed: int, model: str = "usa",
                         kernel: PairKernel | None = None, max_iter: int = 60, warmup: int = 0, progress=None
                         ) -> tuple[list[FoundCriticalPoint], dict]:
    """Newton from ``starts`` uniform random starts; distinct converged critical points with their reports.

    With ``warmup`` > 0, each start first takes a random number (uniform in 0..warmup) of normalised ascent
    steps (:func:`ascent_warmup`), so that the census also covers the low-index saddles (cluster states) the
    dynamics pass by. Returns ``(points, stats)``: points sorted by energy (descending), stats with the numbers
    of starts, converged runs and distinct classes. Randomness only through ``seed``.

    Verified by: critical.strict-saddles-d3.
    """
    n, d = require_int(n, "n", minimum=1), require_int(d, "d", minimum=2)
    starts = require_int(starts, "starts", minimum=1)
    warmup = require_int(warmup, "warmup", minimum=0)
    what = f"a search with {starts} starts (n={n}, d={d}, up to {max_iter} Newton steps and {warmup} warm-up steps each)"
    check_hessian_cost(n, d, times=float(starts) * max_iter, what=what)
    # per Newton step and per warm-up step, Python overhead dominates small n: ~1e6 and ~5e5 operation-equivalents
    check_work(float(starts) * (max_iter * 1e6 + warmup * (n * n * (2 * d + 8) + 5e5)), what)
    rng = np.random.default_rng(require_int(seed, "seed", minimum=0))
    found: list[FoundCriticalPoint] = []
    signatures: list[np.ndarray] = []
    converged = 0
    for k in range(starts):
        X0 = uniform_sphere(n, d, rng)
        if warmup:
            X0 = ascent_warmup(X0, beta, kernel, int(rng.integers(0, warmup + 1)))
        result = riemannian_newton(X0, beta, kernel, max_iter=max_iter)
        if progress is not None:
            progress(k + 1, starts)
        if not result.converged:
            continue
        converged += 1
        sig = gram_signature(result.X)
        match = next((i for i, other in enumerate(signatures)
                      if np.max(np.abs(other - sig)) <= DEDUP_TOLERANCE * n), None)
        if match is not None:
            found[match].hits += 1
            continue
        signatures.append(sig)
        found.append(FoundCriticalPoint(result.X, critical_point_report(result.X, beta, model, kernel), 1))
    found.sort(key=lambda f: -f.report.energy)
    return found, {"starts": starts, "converged": converged, "distinct": len(found)}


__all__ = [
    "FoundCriticalPoint",
    "NewtonResult",
    "ascent_warmup",
    "find_critical_points",
    "gram_signature",
    "riemannian_newton",
]
