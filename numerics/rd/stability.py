r"""Mean-field well-posedness bounds of CACP (arXiv 2501.18322) measured on particle systems.

- Support radius:
  :math:`\lvert dx_i/dt\rvert = \lvert V \sum_j P_{ij} x_j\rvert \le \lVert V\rVert_2 \max_j \lvert x_j\rvert`, hence
  :math:`R(t) \le \exp\bigl(\int_0^t \lVert V\rVert_2\bigr) R_0`.
- Wasserstein stability (softmax attention): along the coupling of the optimal initial plan, with
  :math:`\Gamma[\mu](x) = V \mathbb{E}_\mu^x[y]` and both supports in the ball of radius
  :math:`R(t) = e^{t \lVert V\rVert} R_0`,

  .. math::

      \begin{aligned}
      \lvert\Gamma[\mu](x) - \Gamma[\mu](y)\rvert &\le \lVert V\rVert a R^2 \lvert x - y\rvert
        && (\operatorname{Cov}_x(y) A,\ \lvert\operatorname{Cov}\rvert \le R^2), \\
      \lvert\Gamma[\mu](x) - \Gamma[\nu](x)\rvert &\le \lVert V\rVert e^{2 a R^2} (1 + 2 a R^2) W_1(\mu, \nu)
        && (\text{ratio of two integrals}),
      \end{aligned}

  with :math:`a = \lVert A\rVert_2`, and Gronwall gives
  :math:`W_p(\mu_t, \nu_t) \le C(t) W_p(\mu_0, \nu_0)`,

  .. math::

      \log C(t) = \int_0^t \lVert V\rVert \bigl(a R(s)^2 + e^{2 a R(s)^2} (1 + 2 a R(s)^2)\bigr)\, ds

  (derivation: ``proofs_notes/rd-well-posedness.md``; the structure of the CACP proof, constants ours).
- :math:`W_p` between two empirical measures with :math:`n` equal weights: exact optimal transport with POT
  (``ot.emd2``), cross-checked by the assignment problem (``scipy.optimize.linear_sum_assignment``; a Birkhoff
  vertex is optimal).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import quad
from scipy.optimize import linear_sum_assignment, minimize

from numerics.common.errors import InputError, require_int, require_real
from numerics.core.model import SaveAt, Solver
from numerics.common.limits import check_array, check_work
from numerics.rd.dynamics import simulate_rd, step_count
from numerics.rd.model import RdModel

from numerics.rd.names import OT_BACKENDS  # noqa: E402 - shared with the CLI parser


def radius(X: np.ndarray) -> np.ndarray:
    """R = max_i |x_i| for each frame of X (m, n, d) (inf where X overflowed)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.max(np.linalg.norm(X, axis=-1), axis=-1)


def log_radius(model: RdModel, times: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """log R(t) = lambda t + log max_i |E(t) z_i| with E(t) = e^{t(V - lambda I)}: finite when x = e^{tV} z overflows."""
    return np.array([model.growth_rate * t + np.log(np.max(np.linalg.norm(Y @ model.shifted_propagator(t).T, axis=1)))
                     for t, Y in zip(times, Z)])


def radius_bound(model: RdModel, times: np.ndarray, R0: float) -> np.ndarray:
    """exp(t ||V||_2) R_0 (constant V)."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(times, float) * np.linalg.norm(model.V, 2)) * R0


def check_transport_cost(n: int, m: int, d: int, count: int = 1) -> None:
    """Refuse ``count`` exact transports between n and m atoms in R^d beyond the limits: the cost matrix goes
    through an (n, m, d) difference array, and the network simplex costs about (n + m)^3 operations."""
    check_array((n, m, d), f"the optimal transport between {n} and {m} atoms", copies=2)
    check_work(count * float(n + m) ** 3, f"{count} optimal transport(s) between {n} and {m} atoms")


def wasserstein(X: np.ndarray, Y: np.ndarray, p: float = 2.0, backend: str = "pot") -> float:
    r""":math:`W_p` between the empirical measures :math:`\frac{1}{n} \sum \delta_{x_i}` and
    :math:`\frac{1}{m} \sum \delta_{y_j}`, exactly.

    ``pot``: ``ot.emd2`` (network simplex) with cost :math:`\lvert x - y\rvert^p`; ``assignment``: equal sizes only, the
    optimal permutation (an optimal plan between uniform measures of equal size is a permutation, Birkhoff).
    """
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    p = require_real(p, "p", minimum=1.0)
    check_transport_cost(len(X), len(Y), X.shape[-1])
    M = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=-1) ** p
    if backend == "pot":
        import ot

        a, b = np.full(len(X), 1.0 / len(X)), np.full(len(Y), 1.0 / len(Y))
        cost = float(ot.emd2(a, b, M, numItermax=10_000_000))
    elif backend == "assignment":
        if len(X) != len(Y):
            raise InputError("the assignment backend needs two measures with the same number of atoms")
        r, c = linear_sum_assignment(M)
        cost = float(M[r, c].mean())
    else:
        raise InputError(f"backend must be one of {OT_BACKENDS}, got {backend!r}")
    return max(cost, 0.0) ** (1.0 / p)


def log_stability_constant(model: RdModel, t: float, R0: float) -> float:
    r""":math:`\log C(t)` of the coupling proof (module docstring); softmax attention only."""
    if model.attention != "softmax":
        raise InputError("the Wasserstein constant is derived for softmax attention only")
    v = float(np.linalg.norm(model.V, 2))
    a = float(np.linalg.norm(model.A, 2))

    def rate(s):
        q = a * (np.exp(s * v) * R0) ** 2
        return v * (q + np.exp(2 * q) * (1 + 2 * q))

    val, _ = quad(rate, 0.0, float(t), limit=200)
    return float(val)


def stability_ratios(model: RdModel, X0, Y0, t_end: float, *, dt: float, p: float = 2.0,
                     every: int = 1, backend: str = "pot") -> dict:
    r"""Run both particle systems; :math:`W_p(t) / W_p(0)` against :math:`C(t)`, the radius against its bound."""
    solver = Solver("rk4", dt=dt)
    X0, Y0 = np.asarray(X0, float), np.asarray(Y0, float)
    frames = step_count(t_end, dt) // max(int(every), 1) + 2 if t_end > 0 else 1
    check_transport_cost(len(X0), len(Y0), X0.shape[-1], count=frames + 1)  # W_p(0) and each frame, before the runs
    rx = simulate_rd(model, X0, t_end, solver=solver, save=SaveAt(every=every), keep_P=False)
    ry = simulate_rd(model, Y0, t_end, solver=solver, save=SaveAt(every=every), keep_P=False)
    w0 = wasserstein(X0, Y0, p, backend)
    if w0 == 0.0:
        raise InputError("the two initial measures coincide (W_p = 0): nothing to compare")
    ratios = np.array([wasserstein(a, b, p, backend) / w0 for a, b in zip(rx.X, ry.X)])
    R0 = max(float(np.max(np.linalg.norm(X0, axis=1))), float(np.max(np.linalg.norm(Y0, axis=1))))
    logC = np.array([log_stability_constant(model, t, R0) for t in rx.times])
    R = np.maximum(radius(rx.X), radius(ry.X))
    return {"times": rx.times, "ratio": ratios, "log_constant": logC, "W0": w0, "R0": R0,
            "radius": R, "radius_bound": radius_bound(model, rx.times, R0), "p": p, "backend": backend}


def check_search_cost(n: int, d: int, t_end: float, dt: float, starts: int, max_evals: int) -> None:
    """Refuse (:class:`InputError`) a search whose size is absurd before any of it runs.

    Nelder-Mead keeps a simplex of m + 1 points in m = 2 n d dimensions (memory), and each of the
    ``starts * max_evals`` evaluations is two RK4 runs of ``steps_of(t_end, dt)`` steps of O(n^2 d) plus an
    O(n^3) assignment (work).
    """
    from numerics.common.limits import CALL_OVERHEAD, check_memory, check_work, steps_of

    m = 2.0 * n * d
    what = f"the adversarial search ({starts} starts x {max_evals} evaluations, n = {n}, d = {d})"
    check_memory(8.0 * (m + 1) * (m + 2), what)
    per_run = float(steps_of(t_end, dt)) * 4 * ((2 * d + 3) * float(n) ** 2 + CALL_OVERHEAD)
    check_work(float(starts) * float(max_evals) * (2 * per_run + float(n) ** 3 + CALL_OVERHEAD), what)


def adversarial_search(model: RdModel, n: int, t_end: float, *, R0: float, eps: float = 1e-3, dt: float = 0.05,
                       p: float = 2.0, starts: int = 3, max_evals: int = 120, seed: int = 0) -> dict:
    r"""Search initial measures that maximise :math:`W_p(t_{\text{end}}) / W_p(0)` (Nelder-Mead from ``starts`` random
    starts).

    The parameters are :math:`n` tokens (mapped into the ball of radius :math:`R_0` by
    :math:`y \mapsto R_0 y / \max(R_0, \max\lvert y\rvert)`) and a perturbation direction (the first start: a common
    translation); :math:`\nu_0 = \mu_0 + \varepsilon\, \mathrm{direction} / \lvert\mathrm{direction}\rvert_{\max}`.
    Returns the best ratio, the configuration and the constant :math:`C(t_{\text{end}})` of the proof.
    """
    n = require_int(n, "n", minimum=2)
    d = model.d
    starts = require_int(starts, "starts", minimum=1)
    max_evals = require_int(max_evals, "max_evals", minimum=1)
    check_search_cost(n, d, t_end, dt, starts, max_evals)
    rng = np.random.default_rng(require_int(seed, "seed", minimum=0))
    solver = Solver("rk4", dt=dt)

    def split(theta):
        Y = theta[: n * d].reshape(n, d)
        Y = Y * (R0 / max(R0, float(np.max(np.linalg.norm(Y, axis=1)))))
        D = theta[n * d:].reshape(n, d)
        D = D / max(float(np.max(np.abs(D))), 1e-12)
        return Y, Y + eps * D

    def negative_log_ratio(theta):
        X0, Y0 = split(theta)
        rx = simulate_rd(model, X0, t_end, solver=solver, keep_P=False)
        ry = simulate_rd(model, Y0, t_end, solver=solver, keep_P=False)
        w0 = wasserstein(X0, Y0, p, "assignment")
        return -np.log(wasserstein(rx.X[-1], ry.X[-1], p, "assignment") / w0)

    best = None
    for k in range(starts):
        # the first start perturbs by a common translation (all tokens shifted alike), which already grows like
        # e^{tV}; the others are random directions
        direction = np.ones(n * d) if k == 0 else rng.standard_normal(n * d)
        theta0 = np.concatenate([rng.uniform(-R0, R0, n * d) / np.sqrt(d), direction])
        res = minimize(negative_log_ratio, theta0, method="Nelder-Mead",
                       options={"maxfev": max_evals, "xatol": 1e-6, "fatol": 1e-9})
        if best is None or res.fun < best.fun:
            best = res
    X0, Y0 = split(best.x)
    return {"ratio": float(np.exp(-best.fun)), "X0": X0, "Y0": Y0, "evaluations": int(best.nfev),
            "log_constant": log_stability_constant(model, t_end, R0 + eps), "R0": R0, "eps": eps, "p": p}
