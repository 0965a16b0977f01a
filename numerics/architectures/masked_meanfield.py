r"""Masked (causal) mean-field self-attention with a position label: a spectral solver in the label.

Model (the masked mean-field self-attention of arXiv 2501.18322; causal mean-field form of Karagodin, Polyanskiy,
Rigollet, arXiv 2411.04990): a token is a pair :math:`(x, s)`, :math:`x \in \mathbb{S}^{d-1}`, :math:`s \in [0, 1]`
its position, and attends to the positions :math:`\tau \le s` only,

.. math::

    \begin{aligned}
    \frac{dx}{dt} = v[\mu_t](x, s) &= P_x\Bigl(V \int 1\{\tau \le s\}\, e^{\beta\langle Q x, K y\rangle}\, y \,
      d\mu_t(y, \tau) \Big/ Z(x, s)\Bigr), \\
    Z(x, s) &= \int 1\{\tau \le s\}\, e^{\beta\langle Q x, K y\rangle}\, d\mu_t(y, \tau)
      \qquad (\texttt{sa};\ \texttt{usa}: Z = 1),
    \end{aligned}

with :math:`P_x y = y - \langle x, y\rangle x`; labels do not move, so the :math:`s`-marginal of :math:`\mu_t` stays
the uniform measure on :math:`[0, 1]`. The :math:`n`-token causal particle system with labels :math:`j/n` (token
:math:`i` attends to :math:`j \le i`) is this equation on the empirical measure
:math:`\frac{1}{n} \sum_j \delta_{(x_j, j/n)}` (``theory.architectures.causal_meanfield_derivation``).

Initial measures solved here: a mixture of :math:`M` curves, :math:`\mu_0 = \sum_a w_a (X_a(0, s), s)_\# ds`, each
curve a smooth map :math:`s \mapsto X_a(0, s)` in :math:`\mathbb{S}^{d-1}` (tokens initialised by position;
:math:`M = 1`: a deterministic initialisation). The flow keeps this form:
:math:`\mu_t = \sum_a w_a (X_a(t, s), s)_\# ds` with

.. math::

    \frac{d}{dt} X_a(t, s) = P_{X_a}\Bigl(V \sum_b w_b \int_0^s e^{\beta\langle Q X_a(t,s), K X_b(t,\tau)\rangle}
    X_b(t, \tau)\, d\tau \Big/ Z\Bigr),

a system of integro-differential equations of Volterra type in :math:`s`.

Discretisation (method of lines): :math:`X_a(t, \cdot)` is represented by its values at :math:`N` Chebyshev points
of the first kind :math:`s_i = (1 - \cos(\pi (2i + 1) / (2N))) / 2` (interior of :math:`[0, 1]`); the integrals
:math:`\int_0^{s_i} f(\tau)\, d\tau` are replaced by the exact integrals of the degree :math:`N-1` interpolant,
:math:`(S f)_i` with the :math:`N \times N` Chebyshev integration matrix :math:`S` (:func:`integration_matrix`). For
curves analytic in :math:`s` the error decays geometrically in :math:`N` (spectral order); time is integrated with
Dormand-Prince 8(5,3) (``scipy.integrate.solve_ivp``, method DOP853, tolerances ``rtol``/``atol``). The solution is
evaluated at any label by Chebyshev interpolation (:meth:`MaskedSolution.at`).

Finite :math:`n`: the causal particle system with :math:`x_j(0) = X(0, j/n)` is the right-endpoint rule
:math:`\frac{1}{n} \sum_{j \le i} f(j/n)` for :math:`\int_0^{i/n} f`, first order:
:math:`\lvert x_j(t) - X(t, j/n)\rvert = O(1/n)` (claim architectures.masked-meanfield).
Note: proofs_notes/architectures-masked-meanfield.md.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev as C
from scipy.integrate import solve_ivp

from numerics.common.errors import InputError, require_choice, require_finite_array, require_int, require_real
from numerics.core.field import MODELS

#: the initial curves must be on the sphere to this accuracy (they are not renormalised silently)
UNIT_TOLERANCE = 1e-12


def curve_circle(s: np.ndarray) -> np.ndarray:
    """Initial curve on S^1: angle g(s) = 2.5 s + 0.4 cos(3 s) (analytic in s; g' >= 1.3 > 0, so g is increasing
    and the tokens spread over g(1) - g(0) = 2.5 + 0.4 (cos 3 - 1) ~ 1.70 rad)."""
    g = 2.5 * s + 0.4 * np.cos(3.0 * s)
    return np.stack([np.cos(g), np.sin(g)], axis=-1)


def curve_sphere(s: np.ndarray) -> np.ndarray:
    """Initial curve on S^2: a tilted spiral, polar angle 2 s + 0.3, azimuth 1.2 pi s + 0.5 sin(2 s)."""
    a, b = 2.0 * s + 0.3, 1.2 * np.pi * s + 0.5 * np.sin(2.0 * s)
    return np.stack([np.sin(a) * np.cos(b), np.sin(a) * np.sin(b), np.cos(a)], axis=-1)


#: built-in initial curves by name (the ``masked-meanfield`` command's ``--curve``)
CURVES = {"circle": curve_circle, "sphere": curve_sphere}


def chebyshev_labels(N: int) -> np.ndarray:
    """The N Chebyshev points of the first kind mapped to (0, 1), increasing."""
    N = require_int(N, "label nodes N", minimum=2, maximum=4096)
    return (1.0 - np.cos(np.pi * (2 * np.arange(N) + 1) / (2 * N))) / 2.0


def _vandermonde(s: np.ndarray, N: int) -> np.ndarray:
    return C.chebvander(2.0 * np.asarray(s, float) - 1.0, N - 1)


def integration_matrix(N: int) -> np.ndarray:
    r""":math:`S` (:math:`N \times N`) with :math:`(S f)_i = \int_0^{s_i} p(\tau)\, d\tau`, :math:`p` the interpolant of
    :math:`f` at :func:`chebyshev_labels`.

    Built in the Chebyshev basis: coefficients :math:`c = T^{-1} f` (:math:`T_{ik} = T_k(2 s_i - 1)`), antiderivatives
    of :math:`T_k` from :math:`-1` (``numpy.polynomial.chebyshev.chebint``), :math:`d\tau = dy / 2`.
    """
    s = chebyshev_labels(N)
    T = _vandermonde(s, N)
    y = 2.0 * s - 1.0
    A = np.empty((N, N))
    for k in range(N):
        e = np.zeros(N)
        e[k] = 1.0
        A[:, k] = C.chebval(y, C.chebint(e, lbnd=-1.0))
    return 0.5 * A @ np.linalg.inv(T)


def masked_velocity(X: np.ndarray, weights: np.ndarray, S: np.ndarray, beta: float, kind: str = "sa",
                    Q: np.ndarray | None = None, K: np.ndarray | None = None,
                    V: np.ndarray | None = None) -> np.ndarray:
    """The discretised masked mean-field velocity at the nodes: X (M, N, d) -> (M, N, d).

    v_{a,i} = P_{x_{a,i}}( V sum_{b,j} w_b S_ij e^{beta <Q x_{a,i}, K x_{b,j}>} x_{b,j} / Z_{a,i} ), Z the same sum
    without x_{b,j} (``sa``) or 1 (``usa``). Logits are shifted by their row maximum (exact for ``sa``; for
    ``usa`` the shift is multiplied back).
    """
    M, N, d = X.shape
    flat = X.reshape(M * N, d)
    left = flat if Q is None else flat @ Q.T
    right = flat if K is None else flat @ K.T
    L = beta * (left @ right.T)
    shift = L.max(axis=1, keepdims=True)
    Wt = np.kron(np.tile(weights, (M, 1)), S) * np.exp(L - shift)
    num = Wt @ flat
    if kind == "sa":
        num = num / Wt.sum(axis=1, keepdims=True)
    else:
        num = num * np.exp(shift)
    if V is not None:
        num = num @ V.T
    num -= (np.einsum("ij,ij->i", flat, num) / np.einsum("ij,ij->i", flat, flat))[:, None] * flat
    return num.reshape(M, N, d)


@dataclass(frozen=True)
class MaskedSolution:
    """Solution of the masked mean-field equation at the Chebyshev labels.

    Attributes
    ----------
    times : (T,) ndarray
    labels : (N,) ndarray
        Chebyshev points of :func:`chebyshev_labels`.
    X : (T, M, N, d) ndarray
        Curve a at label s_i and time t.
    weights : (M,) ndarray
    info : dict
        Solver details (method, tolerances, evaluations).
    """

    times: np.ndarray
    labels: np.ndarray
    X: np.ndarray
    weights: np.ndarray
    info: dict

    def at(self, s, frame: int = -1) -> np.ndarray:
        """(M, len(s), d): the curves of frame ``frame`` at labels ``s`` in [0, 1], by Chebyshev interpolation."""
        s = require_finite_array(s, "labels", ndim=1)
        if np.any(s < 0) or np.any(s > 1):
            raise InputError("labels must lie in [0, 1]")
        N = self.labels.size
        coeff = np.linalg.solve(_vandermonde(self.labels, N), np.moveaxis(self.X[frame], 1, 0).reshape(N, -1))
        vals = _vandermonde(s, N) @ coeff
        M, _, d = self.X[frame].shape
        return np.moveaxis(vals.reshape(s.size, M, d), 0, 1)


def _initial_curves(initial, labels: np.ndarray) -> np.ndarray:
    X0 = np.asarray(initial(labels) if callable(initial) else initial, dtype=float)
    if X0.ndim == 2:
        X0 = X0[None]
    if X0.ndim != 3 or X0.shape[1] != labels.size or X0.shape[2] < 2:
        raise InputError(f"the initial curves must give an (N, d) or (M, N, d) array at the N = {labels.size} "
                         f"labels, got shape {X0.shape}")
    require_finite_array(X0, "initial curves", ndim=3)
    if np.max(np.abs(np.linalg.norm(X0, axis=2) - 1.0)) > UNIT_TOLERANCE:
        raise InputError("the initial curves must lie on the unit sphere")
    return X0


def solve_masked_meanfield(initial: Callable[[np.ndarray], np.ndarray], t_end: float, beta: float, *,
                           kind: str = "sa", N: int = 32, weights=None, Q=None, K=None, V=None, times=None,
                           rtol: float = 1e-11, atol: float = 1e-13, alibi: float = 0.0) -> MaskedSolution:
    r"""Solve the masked mean-field equation (module docstring) from the curves ``initial``.

    Parameters
    ----------
    initial : callable
        ``initial(s)`` for an (N,) array of labels returns (N, d) (one curve) or (M, N, d) (M curves), unit rows.
    t_end : float
        Final time (natural time unit; the field's normalisation is the particle system's).
    beta : float
        Inverse temperature.
    kind : {"sa", "usa"}
    N : int
        Chebyshev label nodes (spectral accuracy in s).
    weights : (M,) array_like, optional
        Curve weights, positive, summing to 1 (default equal).
    Q, K, V : (d, d) array_like, optional
        Query, key and value matrices (default the identity).
    times : array_like, optional
        Output times in [0, t_end] (default 0 and t_end).
    rtol, atol : float
        Tolerances of the DOP853 time integration.
    alibi : float
        :math:`\lambda \ge 0`: the ALiBi label kernel :math:`e^{-\lambda (s - \tau)}` multiplies the integrand
        (:math:`\tau \le s`; written without the absolute value so that it stays analytic for the Chebyshev rule).
        Labels in :math:`[0, 1]`: the particle system with labels :math:`j/n` and
        ``Model(alibi=lambda, positions=j/n)``.
    """
    kind = require_choice(kind, "model", MODELS)
    beta = require_real(beta, "beta")
    # t_end = 0 would leave nothing to integrate (solve_ivp then fails with a message about the step size)
    t_end = require_real(t_end, "t_end", minimum=0.0, strict_minimum=True)
    labels = chebyshev_labels(N)
    X0 = _initial_curves(initial, labels)
    M, _, d = X0.shape
    w = np.full(M, 1.0 / M) if weights is None else require_finite_array(weights, "curve weights", ndim=1)
    if w.size != M or np.any(w <= 0) or abs(w.sum() - 1.0) > 1e-12:
        raise InputError(f"curve weights must be {M} positive numbers summing to 1")
    mats = []
    for M_, name in ((Q, "Q"), (K, "K"), (V, "V")):
        if M_ is not None:
            M_ = require_finite_array(M_, name, ndim=2)
            if M_.shape != (d, d):
                raise InputError(f"{name} must be {d} x {d}, got {M_.shape}")
        mats.append(M_)
    ts = np.array([0.0, t_end]) if times is None else require_finite_array(times, "times", ndim=1)
    if np.any(np.diff(ts) <= 0) or ts[0] < 0 or ts[-1] > t_end:
        raise InputError("times must increase strictly within [0, t_end]")
    alibi = require_real(alibi, "alibi lambda", minimum=0.0, maximum=700.0)
    S = integration_matrix(N)
    if alibi:
        S = S * np.exp(-alibi * (labels[:, None] - labels[None, :]))
    shape = X0.shape

    def rhs(t, y):
        with np.errstate(over="ignore", invalid="ignore"):
            v = masked_velocity(y.reshape(shape), w, S, beta, kind, *mats).ravel()
        if not np.all(np.isfinite(v)):
            raise InputError(f"the masked mean-field velocity is not finite at t = {t:.3g} (beta = {beta:g}, {kind}: "
                             "the attention weights overflow)")
        return v

    sol = solve_ivp(rhs, (0.0, t_end), X0.ravel(), method="DOP853", t_eval=ts, rtol=rtol, atol=atol)
    if not sol.success:
        raise InputError(f"the masked mean-field integration failed: {sol.message}")
    X = sol.y.T.reshape((ts.size,) + shape)
    return MaskedSolution(ts, labels, X, w, {"method": "Chebyshev collocation in s (N = %d) + DOP853" % N,
                                             "rtol": rtol, "atol": atol, "evaluations": int(sol.nfev),
                                             "kind": kind, "beta": beta})


def causal_particles(initial: Callable[[np.ndarray], np.ndarray], n: int, t_end: float, beta: float, *,
                     kind: str = "sa", Q=None, K=None, V=None, reverse: bool = False,
                     rtol: float = 1e-11, atol: float = 1e-13,
                     progress: Callable[[float, float], None] | None = None) -> np.ndarray:
    r"""The n-token causal particle system at ``t_end``, token :math:`j` at label :math:`j/n` starting at
    ``initial(j/n)`` (one curve): ``numerics.core`` model with ``causal=True`` (backend blocks, adaptive
    Dormand-Prince). ``reverse``: the mask reversed (token :math:`j` attends to labels :math:`\ge j/n`), for the
    planted-error test. ``progress(t, t_end)`` is passed to
    :func:`numerics.core.trajectory.simulate`. Returns ``(n, d)`` in label order."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate

    n = require_int(n, "n", minimum=1)
    labels = np.arange(1, n + 1) / n
    X0 = _initial_curves(initial, labels)
    if X0.shape[0] != 1:
        raise InputError("causal_particles takes one initial curve")
    X0 = X0[0][::-1] if reverse else X0[0]
    model = Model(kind, beta, Q=Q, K=K, V=V, causal=True)
    tr = simulate(model, X0, t_end, solver=Solver("adaptive", rtol=rtol, atol=atol, backend="direct"),
                  save=SaveAt(times=[0.0, t_end]), progress=progress)
    X = tr.X[-1]
    return X[::-1] if reverse else X


def particle_errors(solution: MaskedSolution, initial, ns, *, kind: str = "sa", beta: float, Q=None, K=None,
                    V=None, reverse: bool = False, progress: Callable[[float, float], None] | None = None,
                    return_largest: bool = False) -> list[dict] | tuple[list[dict], np.ndarray]:
    """For each n: max_j |x_j(T) - X(T, j/n)| (particles vs the mean-field solution at the same labels), and the
    Richardson combination 2 x^{(2n)}_{2j} - x^{(n)}_j (first-order error removed) against X(T, j/n) for
    consecutive n, 2n in ``ns``.

    ``progress(done, total)`` reports the particle work, sum of n^2 over the runs done plus the current run's
    share t/T (each run is an O(n^2) adaptive simulation). With ``return_largest`` the result is ``(rows, X)``,
    X the (n, d) final state of the largest n (e.g. for a plot, so that it is not simulated twice).
    """
    T = float(solution.times[-1])
    total = float(sum(int(n) ** 2 for n in ns))
    rows, prev, done, largest = [], None, 0.0, None
    for n in ns:
        # each run's simulate progress (t, T) becomes the share of the total particle work
        run_progress = (None if progress is None else
                        (lambda t, t_end, base=done, w=float(n) ** 2: progress(base + w * t / t_end, total)))
        Xp = causal_particles(initial, n, T, beta, kind=kind, Q=Q, K=K, V=V, reverse=reverse, progress=run_progress)
        done += float(n) ** 2
        if progress is not None:
            progress(done, total)
        if largest is None or n > largest[0]:
            largest = (n, Xp)
        mf = solution.at(np.arange(1, n + 1) / n)[0]
        row = {"n": int(n), "max_error": float(np.max(np.linalg.norm(Xp - mf, axis=1)))}
        if prev is not None and n == 2 * prev[0]:
            rich = 2.0 * Xp[1::2] - prev[1]
            row["richardson_error"] = float(np.max(np.linalg.norm(rich - prev[2], axis=1)))
            row["observed_order"] = float(np.log2(rows[-1]["max_error"] / row["max_error"]))
        rows.append(row)
        prev = (n, Xp, mf)
    return (rows, largest[1]) if return_largest else rows


def self_convergence(initial, t_end: float, beta: float, *, kind: str = "sa", N: int = 32,
                     N_fine: int | None = None, **options) -> tuple[MaskedSolution, MaskedSolution, float]:
    """The solver's self-convergence: solutions with N and ``N_fine`` (default N + N // 2) Chebyshev labels and
    their largest difference on 201 equally spaced labels in [0, 1] (the spectral error of the N solution, as
    long as the finer one is much more accurate). ``options`` go to :func:`solve_masked_meanfield` (Q, K, V,
    weights, tolerances). Returns (solution with N, solution with N_fine, max difference)."""
    N_fine = N + N // 2 if N_fine is None else N_fine
    sol = solve_masked_meanfield(initial, t_end, beta, kind=kind, N=N, **options)
    fine = solve_masked_meanfield(initial, t_end, beta, kind=kind, N=N_fine, **options)
    grid = np.linspace(0.0, 1.0, 201)
    return sol, fine, float(np.max(np.abs(sol.at(grid) - fine.at(grid))))
