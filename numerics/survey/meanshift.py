"""Self-attention as mean shift on the sphere, with its time factor.

For tokens X and a query point x of S^{d-1}, the kernel density estimate f_X(x) = (1/n) sum_j e^{beta <x, x_j>}
has Euclidean gradient grad log f_X(x) = beta sum_j softmax_j(beta <x, x_j>) x_j = beta m(x), so the ``sa``
velocity of token i is

    v_i = P_{x_i} m(x_i) = (1/beta) grad_S log f_X(x_i)              (data X held fixed in f_X),

a Riemannian gradient ascent of the log density in the time unit t / beta, not t: the mean-shift correspondence
holds up to the factor 1/beta (claim ``survey.mean-shift``).
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

#: central-difference step of log f: truncation O(h^2) ~ 1e-12 beta^3, round-off ~1e-16 beta / h
FD_STEP = 1e-6


def log_kde(x: np.ndarray, X: np.ndarray, beta: float) -> float:
    """log f_X(x) = log((1/n) sum_j e^{beta <x, x_j>}) (log-sum-exp; defined for any x in R^d)."""
    return float(logsumexp(beta * (X @ x)) - np.log(X.shape[0]))


def mean_shift_gradient(X: np.ndarray, beta: float, h: float = FD_STEP) -> np.ndarray:
    """Row i: P_{x_i} of the central-difference gradient of x -> log f_X(x) at x = x_i (data X fixed)."""
    n, d = X.shape
    G = np.empty_like(X)
    for i in range(n):
        for a in range(d):
            e = np.zeros(d)
            e[a] = h
            G[i, a] = (log_kde(X[i] + e, X, beta) - log_kde(X[i] - e, X, beta)) / (2 * h)
    return G - np.sum(G * X, axis=1, keepdims=True) * X


def time_factor(V: np.ndarray, G: np.ndarray) -> float:
    """Least-squares c in V = c G (the sa field against the mean-shift gradient)."""
    return float(np.sum(V * G) / np.sum(G * G))
