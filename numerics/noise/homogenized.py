"""The homogenized Gaussian random transformer, measured: kick covariance, collapse ratio, trade-off curve.

The network of :mod:`theory.homogenized` (Q, K, V with independent N(0, 1/d) entries, resampled per layer and head;
attnflow's definition, Koubbi-Geshkovski-Rigollet arXiv 2604.01978 read in the abstract only). Measured here:

- the kick of one head u_i = sum_j A_ij V x_j over many draws of (Q, K, V): its mean (0: no drift) and its
  covariance E[u_i u_k^T] against the derived (C_ik/d) I, C_ik = E_{Q,K} <y_i, y_k> computed from independent
  draws of (Q, K) alone (:func:`kick_statistics`, :func:`attention_covariance`);
- the collapse ratio R = d(mean pairwise cosine) / d(mean squared displacement) of one projected layer of the
  network from orthonormal tokens, against the derived (d - 2) C_ik / ((d - 1) C_ii) (:func:`measured_collapse_ratio`,
  :func:`predicted_collapse_ratio`); each draw of V is paired with -V (the same attention), which cancels the
  first-order term of the kick exactly and leaves the O(eta^2) drift to be measured;
- the trade-off: the beta at which R crosses a level, as a function of d and n, predicted (bisection on the
  derived R with common random numbers) and simulated (crossing of the measured R on a grid of beta).

Verified by: noise.homogenized-gaussian (numerics.noise.claims_homogenized), tests/numerics/test_homogenized.py.
"""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real


def _softmax_rows(S: np.ndarray) -> np.ndarray:
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def _check(n: int, d: int, beta: float, samples: int) -> tuple[int, int, float, int]:
    n = require_int(n, "n", minimum=2)
    d = require_int(d, "d", minimum=3)
    if n > d:
        raise InputError(f"orthonormal tokens need n <= d, got n = {n}, d = {d}")
    return n, d, require_real(beta, "beta", minimum=0.0), require_int(samples, "samples", minimum=2)


def random_attention(X: np.ndarray, beta: float, rng: np.random.Generator, batch: int) -> np.ndarray:
    """(batch, n, n) attention matrices softmax_j(beta <Q x_i, K x_j>), Q and K with N(0, 1/d) entries."""
    d = X.shape[1]
    Q = rng.standard_normal((batch, d, d)) / math.sqrt(d)
    K = rng.standard_normal((batch, d, d)) / math.sqrt(d)
    QX = np.einsum("bac,nc->bna", Q, X)
    KX = np.einsum("bac,nc->bna", K, X)
    return _softmax_rows(beta * QX @ KX.transpose(0, 2, 1))


def attention_covariance(X: np.ndarray, beta: float, samples: int = 20000, seed: int = 0,
                         batch: int = 2000) -> np.ndarray:
    """C_ik = E_{Q,K} <y_i, y_k>, y = A X, over ``samples`` draws of (Q, K) alone (the derived covariance's factor)."""
    rng = np.random.default_rng(seed)
    C, done = np.zeros((X.shape[0], X.shape[0])), 0
    while done < samples:
        b = min(batch, samples - done)
        Y = random_attention(X, beta, rng, b) @ X
        C += np.einsum("bid,bkd->ik", Y, Y)
        done += b
    return C / samples


def kick_statistics(X: np.ndarray, beta: float, samples: int = 20000, seed: int = 1, batch: int = 2000) -> dict:
    """Mean and covariance of one head's kick u_i = sum_j A_ij V x_j over draws of (Q, K, V) (V: N(0, 1/d)).

    Returns ``mean`` (n, d), ``mean_se``, ``cov`` (n, n, d, d) = E[u_i u_k^T] and ``cov_se`` (entrywise).
    """
    rng = np.random.default_rng(seed)
    n, d = X.shape
    s1, s2, s2sq, done = np.zeros((n, d)), np.zeros((n, n, d, d)), np.zeros((n, n, d, d)), 0
    s1sq = np.zeros((n, d))
    while done < samples:
        b = min(batch, samples - done)
        Y = random_attention(X, beta, rng, b) @ X
        V = rng.standard_normal((b, d, d)) / math.sqrt(d)
        U = np.einsum("bac,bnc->bna", V, Y)
        s1 += U.sum(axis=0)
        s1sq += (U ** 2).sum(axis=0)
        P = np.einsum("bia,bkc->ikac", U, U)
        s2 += P
        s2sq += np.einsum("bia,bkc->ikac", U ** 2, U ** 2)
        done += b
    mean, cov = s1 / samples, s2 / samples
    return {"mean": mean, "mean_se": np.sqrt(np.maximum(s1sq / samples - mean ** 2, 0) / samples), "cov": cov,
            "cov_se": np.sqrt(np.maximum(s2sq / samples - cov ** 2, 0) / samples)}


def orthonormal_tokens(n: int, d: int) -> np.ndarray:
    """The first n basis vectors of R^d (orthonormal tokens; by rotation invariance of the weights any other
    orthonormal family has the same statistics)."""
    return np.eye(d)[:n].copy()


def orthonormal_covariance(n: int, d: int, beta: float, samples: int = 20000, seed: int = 0) -> tuple[float, float]:
    """(C_ii, C_ik) averaged over tokens and pairs, for orthonormal tokens: scores beta <u_i, w_j> with u_i = Q x_i,
    w_j = K x_j independent N(0, I/d) (exact reduction of the Q, K law; y_i = row i of A), common random numbers
    across beta for a fixed seed."""
    n, d, beta, samples = _check(n, d, beta, samples)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((samples, n, d)) / math.sqrt(d)
    W = rng.standard_normal((samples, n, d)) / math.sqrt(d)
    A = _softmax_rows(beta * U @ W.transpose(0, 2, 1))
    G = (A @ A.transpose(0, 2, 1)).mean(axis=0)
    off = ~np.eye(n, dtype=bool)
    return float(np.trace(G) / n), float(G[off].mean())


def predicted_collapse_ratio(n: int, d: int, beta: float, samples: int = 20000, seed: int = 0) -> float:
    """The derived R = (d - 2) C_ik / ((d - 1) C_ii) at orthonormal tokens (:func:`theory.homogenized.collapse_ratio`)."""
    c_self, c_cross = orthonormal_covariance(n, d, beta, samples, seed)
    return _ratio(d, c_self, c_cross)


def _ratio(d: int, c_self, c_cross):
    return (d - 2) * c_cross / ((d - 1) * c_self)


def predicted_collapse_ratio_se(n: int, d: int, beta: float, samples: int = 20000,
                                seed: int = 0) -> tuple[float, float]:
    r"""The derived :math:`R` of :func:`predicted_collapse_ratio` (the same draws, the same value) and its Monte Carlo
    standard error (delta method over the draws of :math:`(Q, K)`)."""
    n, d, beta, samples = _check(n, d, beta, samples)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((samples, n, d)) / math.sqrt(d)
    W = rng.standard_normal((samples, n, d)) / math.sqrt(d)
    A = _softmax_rows(beta * U @ W.transpose(0, 2, 1))
    G = A @ A.transpose(0, 2, 1)
    off = ~np.eye(n, dtype=bool)
    mean = G.mean(axis=0)
    R = _ratio(d, float(np.trace(mean) / n), float(mean[off].mean()))
    # R = k c_cross / c_self: to first order its error is (k dc_cross - R dc_self) / c_self, one value per draw
    c_self, c_cross = np.trace(G, axis1=1, axis2=2) / n, G[:, off].mean(axis=1)
    resid = (_ratio(d, 1.0, c_cross) - R * c_self) / c_self.mean()
    return R, float(resid.std(ddof=1) / math.sqrt(samples))


def measured_collapse_ratio(n: int, d: int, beta: float, eta: float = 0.1, samples: int = 20000, seed: int = 2,
                            batch: int = 2000, richardson: bool = False) -> dict:
    r"""One projected layer x_i <- (x_i + eta u_i)/|...| of the random network from orthonormal tokens, each V paired
    with -V: R = mean over pairs of the change of <x_i, x_k> / mean over tokens of |x_i' - x_i|^2, with its
    standard error (delta method over the antithetic pairs). ``richardson``: also :math:`R(2\eta)` on the same draws
    and ``R_extrapolated`` :math:`= (4R(\eta) - R(2\eta))/3`."""
    n, d, beta, samples = _check(n, d, beta, samples)
    eta = require_real(eta, "eta", minimum=0.0)
    rng = np.random.default_rng(seed)
    X = orthonormal_tokens(n, d)
    off = ~np.eye(n, dtype=bool)
    steps = (eta, 2 * eta) if richardson else (eta,)
    num, den, done = {h: [] for h in steps}, {h: [] for h in steps}, 0
    while done < samples:
        b = min(batch, samples - done)
        Y = random_attention(X, beta, rng, b) @ X
        V = rng.standard_normal((b, d, d)) / math.sqrt(d)
        U = np.einsum("bac,bnc->bna", V, Y)
        for h in steps:
            dr, dx = 0.0, 0.0
            for sign in (1.0, -1.0):
                Z = X + sign * h * U
                Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
                G = Z @ Z.transpose(0, 2, 1)
                dr = dr + G[:, off].mean(axis=1) / 2
                dx = dx + ((Z - X) ** 2).sum(axis=-1).mean(axis=1) / 2
            num[h].append(dr)
            den[h].append(dx)
        done += b
    ratio, resid = {}, {}
    for h in steps:
        nh, dh = np.concatenate(num[h]), np.concatenate(den[h])
        ratio[h] = float(nh.mean() / dh.mean())
        resid[h] = (nh - ratio[h] * dh) / dh.mean()
    out = {"R": ratio[eta], "se": float(resid[eta].std(ddof=1) / math.sqrt(samples)), "n": n, "d": d, "beta": beta,
           "eta": eta}
    if richardson:
        # the pairing with -V makes R even in eta: R(eta) = R + b eta^2 + O(eta^4), so the combination has no eta^2
        # term; its standard error from the same per-draw linearisation as R's
        extrapolated = (4 * ratio[eta] - ratio[2 * eta]) / 3
        out.update(R_2eta=ratio[2 * eta], R_extrapolated=extrapolated, eta_bias=ratio[eta] - extrapolated,
                   se_extrapolated=float(((4 * resid[eta] - resid[2 * eta]) / 3).std(ddof=1) / math.sqrt(samples)))
    return out


def predicted_threshold(n: int, d: int, level: float, samples: int = 20000, seed: int = 0,
                        beta_max: float = 60.0) -> float:
    """The beta where the derived R falls to ``level`` (bisection; R decreases in beta with common random numbers).

    NaN if R(0) <= level or R(beta_max) > level (no crossing in [0, beta_max])."""
    f = lambda b: predicted_collapse_ratio(n, d, b, samples, seed) - level  # noqa: E731
    lo, hi = 0.0, beta_max
    if f(lo) <= 0 or f(hi) > 0:
        return float("nan")
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def simulated_threshold(n: int, d: int, level: float, betas, eta: float = 0.1, samples: int = 20000,
                        seed: int = 2) -> dict:
    """The measured R on the grid ``betas`` and the beta where it crosses ``level`` (linear interpolation between
    the two grid points around the first crossing; NaN if it does not cross)."""
    rows = [measured_collapse_ratio(n, d, b, eta, samples, seed + k) for k, b in enumerate(betas)]
    R = [r["R"] for r in rows]
    cross = float("nan")
    for k in range(len(R) - 1):
        if R[k] > level >= R[k + 1]:
            cross = betas[k] + (R[k] - level) * (betas[k + 1] - betas[k]) / (R[k] - R[k + 1])
            break
    return {"betas": list(betas), "R": R, "se": [r["se"] for r in rows], "beta_c": cross}


def network_mean_cosine(n: int, d: int, beta: float, depth: int, eta: float, heads: int = 1, samples: int = 2000,
                        seed: int = 3) -> tuple[float, float]:
    """E[mean pairwise cosine] after ``depth`` layers of the random network from orthonormal tokens, with its
    standard error: x_i <- (x_i + (eta/H) sum_h u^h_i)/|...|, fresh (Q, K, V) per layer and head.

    The derived scaling: a layer's kick has covariance (eta^2/H) (C/d) I, so the law after L layers depends on
    (L, eta, H) through t = L eta^2/H as L grows (:func:`theory.homogenized.homogenized_time`); with L eta fixed
    instead, t = (L eta) eta/H -> 0 and the tokens do not move (Gaussian weights: no drift)."""
    n, d, beta, samples = _check(n, d, beta, samples)
    depth = require_int(depth, "depth", minimum=1)
    heads = require_int(heads, "heads", minimum=1)
    eta = require_real(eta, "eta", minimum=0.0)
    rng = np.random.default_rng(seed)
    X = np.broadcast_to(orthonormal_tokens(n, d), (samples, n, d)).copy()
    for _ in range(depth):
        kick = np.zeros_like(X)
        for _ in range(heads):
            Q = rng.standard_normal((samples, d, d)) / math.sqrt(d)
            K = rng.standard_normal((samples, d, d)) / math.sqrt(d)
            V = rng.standard_normal((samples, d, d)) / math.sqrt(d)
            QX, KX = np.einsum("bac,bnc->bna", Q, X), np.einsum("bac,bnc->bna", K, X)
            A = _softmax_rows(beta * QX @ KX.transpose(0, 2, 1))
            kick += np.einsum("bac,bnc->bna", V, A @ X)
        X = X + eta / heads * kick
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
    off = ~np.eye(n, dtype=bool)
    c = (X @ X.transpose(0, 2, 1))[:, off].mean(axis=1)
    return float(c.mean()), float(c.std(ddof=1) / math.sqrt(samples))
