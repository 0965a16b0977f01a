"""The consensus under rotary positions (RoPE) with V = I: the derived transverse spectrum and attnflow's measured
one (note ``proofs_notes/architectures-rope-consensus.md``; the derivation is :mod:`theory.rope_consensus`).

At a consensus x_i = x the logits are s_ij = beta <Q x, R(p_j - p_i) K x>; per rotary plane m (coordinates
(2m, 2m + 1), frequency theta_m) with q = (Q x)_m, k = (K x)_m:

    <q, R(a) k> = cos(a) (q . k) + sin(a) (q_1 k_0 - q_0 k_1),

so s_ij = beta (sum_m alpha_m cos((p_j - p_i) theta_m) + omega_m sin((p_j - p_i) theta_m) + c_0)
(:func:`plane_split`, :func:`consensus_logits`). With the weights A of the consensus (softmax rows for sa,
e^{s}/n for usa) the transverse Jacobian is (A - diag(A 1)) (x) I_{d-1} (:func:`predicted_spectrum`).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from numerics.common.errors import InputError
from numerics.core.positions import rope_frequencies


def plane_split(x: np.ndarray, Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(alpha, omega, c_0): per rotary plane alpha_m = q . k and omega_m = q_1 k_0 - q_0 k_1 of q = (Q x)_m,
    k = (K x)_m, and c_0 the product of the unrotated last coordinates (odd d; 0 otherwise). For Q = K = I,
    alpha_m is the energy |x_m|^2 of x in plane m."""
    q, k = Q @ x, K @ x
    half = x.size // 2
    q0, q1, k0, k1 = q[0:2 * half:2], q[1:2 * half:2], k[0:2 * half:2], k[1:2 * half:2]
    c0 = float(q[-1] * k[-1]) if x.size % 2 else 0.0
    return q0 * k0 + q1 * k1, q1 * k0 - q0 * k1, c0


def consensus_logits(x: np.ndarray, Q: np.ndarray, K: np.ndarray, labels: np.ndarray, base: float,
                     beta: float) -> np.ndarray:
    """s_ij = beta <Q x, R(p_j - p_i) K x> from :func:`plane_split` (module docstring)."""
    alpha, omega, c0 = plane_split(x, Q, K)
    freq = rope_frequencies(x.size, base)
    # the angle of plane m between tokens i and j: (p_j - p_i) theta_m
    ang = (labels[None, :] - labels[:, None])[:, :, None] * freq[None, None, :]
    return beta * (np.sum(alpha * np.cos(ang) + omega * np.sin(ang), axis=2) + c0)


def consensus_weights(s: np.ndarray, kind: str) -> np.ndarray:
    """A of the consensus: row softmax of the logits (sa) or e^{s}/n (usa)."""
    if kind == "sa":
        E = np.exp(s - s.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True)
    if kind == "usa":
        return np.exp(s) / s.shape[0]
    raise InputError(f"model must be sa or usa, got {kind!r}")


def predicted_spectrum(x: np.ndarray, Q: np.ndarray, K: np.ndarray, labels, base: float, beta: float,
                       kind: str = "sa") -> np.ndarray:
    """The transverse spectrum at the consensus on x: the eigenvalues of A - diag(A 1), each d - 1 times."""
    labels = np.asarray(labels, float)
    A = consensus_weights(consensus_logits(x, Q, K, labels, base, beta), kind)
    ev = np.linalg.eigvals(A - np.diag(A.sum(axis=1)))
    return np.repeat(ev, x.size - 1)


def measured_spectrum(x: np.ndarray, Q: np.ndarray, K: np.ndarray, labels, base: float, beta: float,
                      kind: str = "sa") -> np.ndarray:
    """Eigenvalues of the central-difference tangent Jacobian of attnflow's RoPE field (one head, scale 1,
    V = I) at the consensus on x."""
    from numerics.architectures.spectral import tangent_jacobian
    from numerics.core.model import Model

    labels = np.asarray(labels, float)
    n, d = labels.size, x.size
    f = Model(kind, beta, Q=Q, K=K, rope=base, positions=labels).vector_field(n, d, "direct")[0]
    return np.linalg.eigvals(tangent_jacobian(f, np.tile(x, (n, 1))))


def spectrum_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a_k - b_pi(k)| over the best matching pi of two complex spectra of equal size."""
    cost = np.abs(a[:, None] - b[None, :])
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


def torus_rotation(x: np.ndarray, angles) -> np.ndarray:
    """x with rotary plane m rotated by angles[m] (the torus that commutes with every R(p))."""
    y = x.copy()
    for m, a in enumerate(angles):
        c, s = np.cos(a), np.sin(a)
        y[2 * m], y[2 * m + 1] = c * x[2 * m] - s * x[2 * m + 1], s * x[2 * m] + c * x[2 * m + 1]
    return y


def hemisphere_margin(Q: np.ndarray, K: np.ndarray, base: float, beta: float, n: int, d: int, seed: int,
                      t_end: float, on_boundary: int = 2) -> dict:
    """Start n tokens in the closed hemisphere <x, w> >= 0 (``on_boundary`` of them on its boundary, random w)
    and integrate the RoPE sa field (V = I, dop853 rtol 1e-10): the smallest <x_i(t), w> over the saved frames."""
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import simulate, uniform_sphere

    rng = np.random.default_rng(seed)
    w = uniform_sphere(1, d, rng)[0]
    X0 = uniform_sphere(n, d, rng)
    X0 = X0 * np.sign(X0 @ w)[:, None]
    # the boundary tokens: projected onto the great sphere <x, w> = 0
    X0[:on_boundary] -= np.outer(X0[:on_boundary] @ w, w)
    X0[:on_boundary] /= np.linalg.norm(X0[:on_boundary], axis=1, keepdims=True)
    tr = simulate(Model("sa", beta, Q=Q, K=K, rope=base), X0, t_end,
                  solver=Solver("dop853", rtol=1e-10, atol=1e-13, backend="direct"),
                  save=SaveAt(times=np.linspace(0.0, t_end, 201)))
    margins = np.einsum("tnd,d->tn", tr.X, w)
    return {"min_margin": float(margins.min()), "start_min": float((X0 @ w).min()),
            "final_min": float(margins[-1].min())}
