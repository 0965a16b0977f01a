"""Spectral selection with symmetric attention, Q^T K = V = V^T (Kuehn-Yoon, arXiv 2604.26085; note
``proofs_notes/architectures-spectral-selection.md``).

With Q^T K = V = V^T the self-attention field is a gradient field of

    E_V(X) = 1/(2 beta n^2) sum_{i,j} e^{beta <x_i, V x_j>}:

the ambient gradient of E_V in x_i is (1/n^2) sum_j e^{beta <x_i, V x_j>} V x_j (V symmetric: both (i, j) and
(j, i) contribute), so

    sa:  v_i = (n^2 / Z_i) grad_i E_V,   Z_i = sum_j e^{beta <x_i, V x_j>}   (a gradient flow for the metric
                                                                          (Z_i / n^2) <., .> on the i-th sphere)
    usa: v_i = n grad_i E_V                                                 (the round metric, scaled)

and along a trajectory dE_V/dt = sum_i (Z_i / n^2) |v_i|^2 (sa) or (1/n) sum_i |v_i|^2 (usa): E_V never
decreases (a Lyapunov function).

The consensus at an eigenvector e_k of V (V e_k = lambda_k e_k, all x_i = e_k) is an equilibrium. Perturb
x_i = e_k + eps_i (eps_i orthogonal to e_k): the logits <x_i, V x_j> = lambda_k + O(eps^2) (V e_k is parallel
to e_k), so the weights are uniform to first order and the sa field's tangent part is

    d eps_i/dt = V eps_bar - lambda_k eps_i,     eps_bar = (1/n) sum_j eps_j.

Along the eigenvector e_m (m != k) the mean mode has rate lambda_m - lambda_k and the n - 1 differences have
rate -lambda_k: the pure mode e_k is linearly stable iff lambda_k > 0 and lambda_k > lambda_m for every
m != k (for usa every rate is multiplied by e^{beta lambda_k}). :func:`consensus_rates` is this spectrum,
:func:`pole_rates` its extension to the sign-split states x_i = +-e_k, and :func:`measured_pole_rates` the
eigenvalues of a central-difference Jacobian of attnflow's own field.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_choice
from numerics.core.field import attention_field

#: central-difference step of the Jacobian: truncation O(h^2) ~ 1e-12 for fields of size 1, round-off
#: ~ 1e-16 / h ~ 1e-10
JACOBIAN_STEP = 1e-6


def symmetric_value(eigenvalues, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """V = U diag(eigenvalues) U^T with a random orthogonal U (seeded); returns (V, U) (columns of U are the
    eigenvectors, in the order of ``eigenvalues``)."""
    lam = np.asarray(eigenvalues, float)
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((lam.size, lam.size)))
    V = U @ np.diag(lam) @ U.T
    return 0.5 * (V + V.T), U


def factor_scores(V: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A non-trivial factorisation Q^T K = V: Q random (well conditioned), K = Q^{-T} V. Only Q^T K enters the
    field, so the dynamics are those of (I, V)."""
    d = V.shape[0]
    rng = np.random.default_rng(seed)
    Q = np.eye(d) + 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
    return Q, np.linalg.solve(Q.T, V)


def value_energy(X: np.ndarray, beta: float, V: np.ndarray) -> float:
    """E_V(X) = 1/(2 beta n^2) sum_{i,j} e^{beta <x_i, V x_j>} (module docstring)."""
    n = X.shape[0]
    return float(np.exp(beta * (X @ V @ X.T)).sum() / (2.0 * beta * n * n))


def metric_factors(X: np.ndarray, beta: float, V: np.ndarray, kind: str) -> np.ndarray:
    """m_i with v_i = grad_i E_V / m_i: Z_i / n^2 for sa, 1/n for usa."""
    n = X.shape[0]
    if kind == "sa":
        return np.exp(beta * (X @ V @ X.T)).sum(axis=1) / (n * n)
    if kind == "usa":
        return np.full(n, 1.0 / n)
    raise InputError(f"model must be sa or usa, got {kind!r}")


def dissipation_rate(X: np.ndarray, beta: float, V: np.ndarray, kind: str, field: np.ndarray) -> float:
    """dE_V/dt = sum_i <grad_i E_V, v_i> = sum_i m_i |v_i|^2 (``field`` is v at X)."""
    return float(np.sum(metric_factors(X, beta, V, kind) * np.sum(field * field, axis=1)))


def consensus_rates(eigenvalues, k: int, n: int, beta: float = 1.0, kind: str = "sa") -> np.ndarray:
    """The transverse spectrum of the consensus at e_k, sorted: lambda_m - lambda_k (once per m != k) and
    -lambda_k ((n - 1) (d - 1) times); times e^{beta lambda_k} for usa."""
    require_choice(kind, "model", ("sa", "usa"))
    lam = np.asarray(eigenvalues, float)
    others = np.delete(lam, k)
    rates = np.concatenate([others - lam[k], np.full((n - 1) * others.size, -lam[k])])
    if kind == "usa":
        rates = rates * np.exp(beta * lam[k])
    return np.sort(rates)


def pole_rates(eigenvalues, k: int, signs, beta: float = 1.0, kind: str = "sa") -> np.ndarray:
    """The transverse spectrum of the pole state x_i = s_i e_k (s_i = +-1; all +1 is the consensus), sorted.

    The logits are beta s_i s_j lambda_k + O(eps^2), so the weights are those of the pole state:
    w_ij = e^{beta lambda_k s_i s_j} / Z_i (sa) or / n (usa), and with c_i = sum_j w_ij s_j the tangent part of
    the field is d eps_i/dt = sum_j w_ij V eps_j - lambda_k s_i c_i eps_i. Along each eigenvector e_m (m != k)
    the block is lambda_m W - lambda_k diag(s_i c_i); the spectrum is the union of their eigenvalues."""
    require_choice(kind, "model", ("sa", "usa"))
    lam = np.asarray(eigenvalues, float)
    s = np.asarray(signs, float)
    W = np.exp(beta * lam[k] * np.outer(s, s))
    W = W / W.sum(axis=1, keepdims=True) if kind == "sa" else W / s.size
    c = W @ s
    blocks = [lam[m] * W - lam[k] * np.diag(s * c) for m in range(lam.size) if m != k]
    return np.sort(np.concatenate([np.linalg.eigvals(B).real for B in blocks]))


def tangent_jacobian(field, X: np.ndarray, h: float = JACOBIAN_STEP) -> np.ndarray:
    """Central-difference Jacobian of ``field`` (X -> (n, d)) at an equilibrium X, in an orthonormal basis of
    the tangent space of (S^{d-1})^n at X; each token is moved along geodesics x cos h + u sin h.
    (:func:`numerics.critical.stationary.field_jacobian` does the same for a Model, with another retraction;
    this area may not import ``critical``, and the tests compare the two.)"""
    n, d = X.shape
    bases = []
    for i in range(n):
        # the last d - 1 columns of a QR with x_i first span the tangent space at x_i
        q, _ = np.linalg.qr(np.column_stack([X[i], np.eye(d)]))
        bases.append(q[:, 1:d])
    m = n * (d - 1)
    J = np.empty((m, m))
    for i in range(n):
        for a in range(d - 1):
            u = bases[i][:, a]
            plus, minus = X.copy(), X.copy()
            plus[i] = X[i] * np.cos(h) + u * np.sin(h)
            minus[i] = X[i] * np.cos(h) - u * np.sin(h)
            dv = (field(plus) - field(minus)) / (2.0 * h)
            J[:, i * (d - 1) + a] = np.concatenate([bases[j].T @ dv[j] for j in range(n)])
    return J


def measured_pole_rates(V: np.ndarray, U: np.ndarray, k: int, signs, beta: float = 1.0, kind: str = "sa",
                        Q: np.ndarray | None = None, K: np.ndarray | None = None) -> np.ndarray:
    """Eigenvalues of the tangent Jacobian of attnflow's field (Q, K default I and V, the value matrix V) at the
    pole state x_i = s_i U[:, k], sorted by real part (complex: the caller compares them with the real
    predicted spectrum, so an imaginary part counts as an error)."""
    X = np.asarray(signs, float)[:, None] * U[:, k][None, :]
    Q = np.eye(V.shape[0]) if Q is None else Q
    K = V if K is None else K
    J = tangent_jacobian(lambda Y: attention_field(Y, beta, kind, Q=Q, K=K, V=V), X)
    ev = np.linalg.eigvals(J)
    return ev[np.argsort(ev.real)]


def alignment(X: np.ndarray, e: np.ndarray) -> dict:
    """How far the tokens are from {e, -e}: max_i (1 - |<x_i, e>|), the signs of <x_i, e>, and the largest
    angle between two tokens of the same sign."""
    c = X @ e
    signs = np.sign(c)
    worst = 0.0
    for s in (-1.0, 1.0):
        G = X[signs == s] @ X[signs == s].T
        if G.size:
            worst = max(worst, float(np.max(1.0 - G)))
    return {"max_off_axis": float(np.max(1.0 - np.abs(c))), "plus": int(np.sum(signs > 0)),
            "minus": int(np.sum(signs < 0)), "max_one_minus_cos_same_sign": worst}
