"""Independent references for the transformer block's wiring: the field written token by token and head by head
from its definition, the default score scale stated explicitly, and the symbolic masked mean-field velocity
evaluated at exact position labels (claims ``architectures.per-head-mlp``, ``architectures.head-score-scale``
and ``architectures.masked-indicator``).

The block field of :mod:`numerics.core.blocks` (velocity of token i, H heads, blocks (k, d)):

    v_i = P_{x_i}( (1/H) sum_h MLP^{[h]}( H W_h^T V_h a_i^{[h]} ) ),   a_i^{[h]} = sum_j p_ij^{[h]} x_j,
    p_ij^{[h]} = softmax_j( beta c <Q_h x_i, K_h x_j> )   (``usa``: e^{...} / n),   c = 1/sqrt(k) by default,

without MLP sum_h W_h^T V_h a_i^{[h]}. The references below loop over tokens and heads in plain NumPy and
share nothing with :mod:`numerics.core.blocks` but the activations' definitions (restated here).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

_ACTIVATIONS = {"identity": lambda z: z, "relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh,
                "gelu": lambda z: 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))}


def reference_block_velocity(X, Q, K, V, W, beta, kind, scale, mlps=None, activation="tanh", causal=False):
    """v_i of the block field by explicit loops. ``mlps`` = None or a list of H tuples (W1, b1, W2, b2)."""
    n, d = X.shape
    H = Q.shape[0]
    out = np.zeros((n, d))
    for i in range(n):
        total = np.zeros(d)
        cols = range(i + 1) if causal else range(n)
        for h in range(H):
            s = np.array([beta * scale * float((Q[h] @ X[i]) @ (K[h] @ X[j])) for j in cols])
            w = np.exp(s - s.max())
            a = sum(wj * X[j] for wj, j in zip(w, cols))
            a = a / w.sum() if kind == "sa" else a * math.exp(s.max()) / n
            y = W[h].T @ (V[h] @ a)
            if mlps is None:
                total += y
            else:
                W1, b1, W2, b2 = mlps[h]
                total += (W2 @ _ACTIVATIONS[activation](W1 @ (H * y) + b1) + b2) / H
        out[i] = total - (X[i] @ total) * X[i]
    return out


def _points(n: int, d: int, rng) -> np.ndarray:
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def per_head_mlp_cases(seed: int = 0) -> list[dict]:
    """Model(heads, per-head MLP) fields against the reference; the MLPs of two heads swapped must differ."""
    from numerics.core.blocks import MLP, MultiHead
    from numerics.core.model import Model

    rng = np.random.default_rng(seed)
    rows = []
    for kind, beta, H, k, d, m, act in (("sa", 1.3, 3, 2, 4, 5, "tanh"), ("usa", 0.7, 2, 3, 3, 4, "gelu"),
                                        ("sa", -0.8, 4, 1, 3, 3, "relu")):
        n = 7
        Q, K, V, W = (rng.standard_normal((H, k, d)) for _ in range(4))
        W1, b1, W2, b2 = (rng.standard_normal(s) for s in ((H, m, d), (H, m), (H, d, m), (H, d)))
        X = _points(n, d, rng)
        heads = MultiHead(Q, K, V, W)
        model = Model(kind, beta, heads=heads, mlp=MLP(W1, b1, W2, b2, activation=act))
        field, backend = model.vector_field(n, d, "auto")
        got = field(X)
        mlps = [(W1[h], b1[h], W2[h], b2[h]) for h in range(H)]
        ref = reference_block_velocity(X, Q, K, V, W, beta, kind, 1.0 / math.sqrt(k), mlps, act)
        swapped = reference_block_velocity(X, Q, K, V, W, beta, kind, 1.0 / math.sqrt(k),
                                           [mlps[1], mlps[0], *mlps[2:]], act)
        scale = float(np.abs(ref).max())
        rows.append({"model": kind, "beta": beta, "H": H, "k": k, "d": d, "m": m, "activation": act, "n": n,
                     "backend": backend, "error": float(np.abs(got - ref).max()) / scale,
                     # the symbolic path once (SymPy in floating point costs ~1 s a token)
                     "symbolic_error": None if rows else _symbolic_block_error(
                         X, Q, K, V, W, beta, kind, 1.0 / math.sqrt(k), mlps, act, ref, causal=False,
                         tokens=(n - 1,)) / scale,
                     "swapped_mlps_change": float(np.abs(swapped - ref).max()) / scale})
    return rows


def _symbolic_block_error(X, Q, K, V, W, beta, kind, scale, mlps, act, ref, causal, tokens=(0, -1)) -> float:
    """theory.architectures.block_particle_field evaluated in floating point at ``tokens`` against ``ref``."""
    import sympy as sp

    from theory.architectures import block_particle_field

    n = X.shape[0]
    pts = [sp.Matrix(row.tolist()) for row in X]
    heads = [tuple(sp.Matrix(M[h].tolist()) for M in (Q, K, V, W)) for h in range(Q.shape[0])]
    mlp = None if mlps is None else [(*(sp.Matrix(np.atleast_2d(a).T.tolist() if a.ndim == 1 else a.tolist())
                                        for a in m), act) for m in mlps]
    worst = 0.0
    for i in tokens:
        i = i % n
        v = block_particle_field(kind, pts, i, heads, beta=sp.Float(beta), scale=sp.Float(scale), mlp=mlp,
                                 causal=causal)
        worst = max(worst, float(np.abs(np.array(v.evalf(17), dtype=float).ravel() - ref[i]).max()))
    return worst


def head_scale_cases(seed: int = 1) -> list[dict]:
    """Heads without an explicit scale (c must be 1/sqrt(k)) and with one (taken as given), k != d, k >= 2,
    against the reference with c stated; also the score maps c Q_h^T K_h of the Gaussian and critical paths."""
    from numerics.core.blocks import MultiHead
    from numerics.core.model import Model

    rng = np.random.default_rng(seed)
    rows = []
    for kind, beta, H, k, d, given in (("sa", 2.0, 2, 4, 3, None), ("usa", 1.0, 3, 2, 5, None),
                                       ("sa", 1.5, 1, 9, 4, None), ("sa", 1.0, 2, 4, 3, 0.3)):
        n = 6
        Q, K, V, W = (rng.standard_normal((H, k, d)) for _ in range(4))
        X = _points(n, d, rng)
        heads = MultiHead(Q, K, V, W, scale=given)
        c = 1.0 / math.sqrt(k) if given is None else given
        field, backend = Model(kind, beta, heads=heads).vector_field(n, d, "auto")
        ref = reference_block_velocity(X, Q, K, V, W, beta, kind, c)
        maps = np.stack([c * Q[h].T @ K[h] for h in range(H)])
        rows.append({"model": kind, "beta": beta, "H": H, "k": k, "d": d, "given_scale": given,
                     "scale_used": heads.scale, "expected_scale": c, "backend": backend,
                     "field_error": float(np.abs(field(X) - ref).max() / np.abs(ref).max()),
                     "score_map_error": float(np.abs(heads.score_maps - maps).max() / np.abs(maps).max())})
    return rows


def masked_indicator_cases(seed: int = 2) -> list[dict]:
    """theory.architectures.causal_meanfield_velocity on the empirical measure of (x_j, j/n), evaluated at
    every token's own label s = i/n (the indicator 1{tau <= s} must count tau = s) and between labels, against
    the numerical causal field (one head, Q = K = V = W = I, scale 1)."""
    import sympy as sp

    from numerics.core.model import Model
    from theory.architectures import causal_meanfield_velocity

    rng = np.random.default_rng(seed)
    rows = []
    for kind, beta, n, d in (("sa", 1.7, 4, 3), ("usa", 0.9, 3, 2)):
        X = _points(n, d, rng)
        field, backend = Model(kind, beta, causal=True).vector_field(n, d, "auto")
        numeric = field(X)
        atoms = [(sp.Matrix([sp.Float(v, 30) for v in X[j]]), sp.Rational(j + 1, n)) for j in range(n)]
        worst_on, worst_between = 0.0, 0.0
        for i in range(n):
            for s, where in ((sp.Rational(i + 1, n), "on"), (sp.Rational(2 * i + 3, 2 * n), "between")):
                if where == "between" and i == n - 1:
                    s = sp.Integer(2)  # past the last label: every token counts
                v = causal_meanfield_velocity(atoms[i][0], s, atoms, kind, beta=sp.Float(beta, 30))
                err = float(np.abs(np.array(v.evalf(20), dtype=float).ravel() - numeric[i]).max())
                if where == "on":
                    worst_on = max(worst_on, err)
                else:
                    worst_between = max(worst_between, err)
        eye = np.eye(d)[None]
        particle = _symbolic_block_error(X, eye, eye, eye, eye, beta, kind, 1.0, None, None, numeric, causal=True,
                                         tokens=range(n))
        rows.append({"model": kind, "beta": beta, "n": n, "d": d, "backend": backend,
                     "max_error_on_labels": worst_on, "max_error_between_labels": worst_between,
                     "max_error_particle_field": particle,
                     "field_size": float(np.abs(numeric).max())})
    return rows
