r"""What survives of the 2023 idealisation once tokens carry positions (ALiBi, RoPE): the experiments behind the
claims ``architectures.alibi-*`` and ``architectures.rope-*``.

- ALiBi, no mask: the pair weight :math:`e^{\beta\langle x_i, x_j\rangle - \lambda \lvert p_i - p_j\rvert}` is
  symmetric in :math:`(i, j)`, so ``usa`` with :math:`Q = K = V = I` is :math:`v_i = n \operatorname{grad}_i E_\lambda`,

  .. math::

      E_\lambda = \frac{1}{2\beta n^2} \sum_{ij} \bigl(e^{\beta\langle x_i, x_j\rangle} - 1\bigr)
      e^{-\lambda \lvert p_i - p_j\rvert}

  (:func:`theory.architectures.alibi_gradient_derivation`), and ``sa`` is
  :math:`Z_i v_i = n^2 \operatorname{grad}_i E_\lambda` (GLPR's metric); both make :math:`E_\lambda` a Lyapunov
  function (:math:`dE/dt = \sum_i m_i \lvert v_i\rvert^2 \ge 0`).
- RoPE: scores depend on :math:`p_j - p_i` only (translation invariance of the labels) and the field is equivariant
  under the rotations that commute with every :math:`R(p)` (block-diagonal plane rotations, :math:`SO(2)^{d/2}` for
  distinct frequencies), not under :math:`O(d)`. ``usa`` with *rotated values* :math:`R(p_i)^\top R(p_j) x_j` is
  :math:`n \operatorname{grad} E_R`,
  :math:`E_R = \frac{1}{2\beta n^2} \sum_{ij} e^{\beta\langle R(p_i) x_i, R(p_j) x_j\rangle}`; with plain values it
  is not (:func:`theory.architectures.rope_gradient_derivation` and the planted test).
- Causal mask, :math:`V = I`: the first token attends to itself only and stays fixed; token 2 merges into token 1
  with the weight :math:`\sigma(s_{21} - s_{22} - \lambda \lvert p_2 - p_1\rvert) \in (0, 1)`: KPR's collapse to the
  first token survives (checked).
- No mask, :math:`d \ge 3`: one cluster from random starts in every run (numerical evidence, not a theorem).
"""
from __future__ import annotations

import numpy as np

from numerics.architectures.gradient import fd_riemannian_gradient
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.positions import rotate
from numerics.core.trajectory import simulate, uniform_sphere


def alibi_energy(X: np.ndarray, beta: float, lam: float, labels: np.ndarray) -> float:
    r""":math:`E_\lambda = \frac{1}{2\beta n^2} \sum_{ij} (e^{\beta\langle x_i, x_j\rangle} - 1)
    e^{-\lambda \lvert p_i - p_j\rvert}` (same gradient as without :math:`-1`)."""
    n = X.shape[0]
    w = np.exp(-lam * np.abs(labels[:, None] - labels[None, :]))
    return float(np.sum(np.expm1(beta * (X @ X.T)) * w) / (2.0 * beta * n * n))


def rope_energy(X: np.ndarray, beta: float, base: float, labels: np.ndarray) -> float:
    r""":math:`E_R = \frac{1}{2\beta n^2} \sum_{ij} (e^{\beta\langle R(p_i) x_i, R(p_j) x_j\rangle} - 1)`."""
    n = X.shape[0]
    Y = rotate(X, labels, base)
    return float(np.sum(np.expm1(beta * (Y @ Y.T))) / (2.0 * beta * n * n))


def rope_rotated_values_field(X: np.ndarray, beta: float, base: float, labels: np.ndarray) -> np.ndarray:
    """usa with RoPE and rotated values, hand-written: v_i = P_{x_i}(R(p_i)^T (1/n) sum_j e^{s_ij} R(p_j) x_j)."""
    n, d = X.shape
    Y = rotate(X, labels, base)
    acc = np.exp(beta * (Y @ Y.T)) @ Y / n
    # R(p)^T = R(-p): rotate back by -p_i
    back = rotate(acc, -labels, base)
    return back - np.einsum("ij,ij->i", X, back)[:, None] * X


def alibi_energy_rows(seeds=(3, 4), n: int = 7, d: int = 3, beta: float = 1.2, lam: float = 0.6,
                      t_end: float = 6.0) -> list[dict]:
    """usa: field (blocks, ALiBi) vs n x the FD gradient of E_lambda; sa and usa: the smallest increment of
    E_lambda between saved frames of a simulation (adaptive, no mask), which must be >= 0 up to round-off."""
    rows = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X = uniform_sphere(n, d, rng)
        labels = np.sort(rng.uniform(0.0, 5.0, n))
        field, backend = Model("usa", beta, alibi=lam, positions=labels).vector_field(n, d, "direct")
        v = field(X)
        g = n * fd_riemannian_gradient(lambda Y: alibi_energy(Y, beta, lam, labels), X)
        row = {"seed": seed, "n": n, "d": d, "beta": beta, "lambda": lam, "backend": backend,
               "gradient_relative_error": float(np.max(np.abs(v - g)) / np.max(np.abs(v)))}
        for kind in ("sa", "usa"):
            tr = simulate(Model(kind, beta, alibi=lam, positions=labels), X, t_end,
                          solver=Solver("adaptive", rtol=1e-10, atol=1e-12, backend="direct"),
                          save=SaveAt(times=np.linspace(0.0, t_end, 61)))
            E = np.array([alibi_energy(F, beta, lam, labels) for F in tr.X])
            row[f"{kind}_min_increment"] = float(np.min(np.diff(E)))
            row[f"{kind}_energy_gain"] = float(E[-1] - E[0])
        rows.append(row)
    return rows


def rope_structure_rows(seeds=(5, 6), n: int = 6, d: int = 4, beta: float = 1.1, base: float = 7.0) -> list[dict]:
    """RoPE (sa and usa, with and without mask): translation of the labels, equivariance under the commutant
    torus and its failure under a generic rotation; rotated-values usa vs n x the FD gradient of E_R."""
    rows = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X = uniform_sphere(n, d, rng)
        labels = rng.uniform(0.0, 6.0, n)
        a = rng.uniform(0.0, 2.0 * np.pi, d // 2)
        U = np.zeros((d, d))
        for m, ang in enumerate(a):
            c, s = np.cos(ang), np.sin(ang)
            U[2 * m:2 * m + 2, 2 * m:2 * m + 2] = [[c, -s], [s, c]]
        G, _ = np.linalg.qr(rng.standard_normal((d, d)))
        for kind in ("sa", "usa"):
            for causal in (False, True):
                f = Model(kind, beta, rope=base, positions=labels, causal=causal).vector_field(n, d, "direct")[0]
                shifted = Model(kind, beta, rope=base, positions=labels + 2.5, causal=causal).vector_field(n, d,
                                                                                                          "direct")[0]
                v = f(X)
                scale = float(np.max(np.abs(v)))
                rows.append({"seed": seed, "kind": kind, "causal": causal,
                             "translation_error": float(np.max(np.abs(shifted(X) - v)) / scale),
                             "torus_equivariance_error": float(np.max(np.abs(f(X @ U.T) - v @ U.T)) / scale),
                             "generic_rotation_residual": float(np.max(np.abs(f(X @ G.T) - v @ G.T)) / scale)})
        v = rope_rotated_values_field(X, beta, base, labels)
        g = n * fd_riemannian_gradient(lambda Y: rope_energy(Y, beta, base, labels), X)
        rows.append({"seed": seed, "kind": "usa, rotated values", "causal": False,
                     "gradient_relative_error": float(np.max(np.abs(v - g)) / np.max(np.abs(v)))})
    return rows


def causal_collapse_position_runs(cases, t_end: float = 120.0) -> list[dict]:
    """Causal sa, V = I, random Q, K, with positions: max angle of x_i(t_end) to x_1(0) and |x_1(t) - x_1(0)|.

    ``cases``: (seed, n, d, beta, alibi, rope) with alibi/rope ``None`` when absent."""
    from numerics.architectures.causal import angle_between

    out = []
    for seed, n, d, beta, alibi, rope in cases:
        rng = np.random.default_rng(seed)
        Q, K = 2.0 * rng.standard_normal((d, d)) / np.sqrt(d), 2.0 * rng.standard_normal((d, d)) / np.sqrt(d)
        X0 = uniform_sphere(n, d, rng)
        model = Model("sa", beta, Q=Q, K=K, causal=True, alibi=alibi, rope=rope)
        tr = simulate(model, X0, t_end, solver=Solver("adaptive", rtol=1e-9, atol=1e-12, backend="direct"),
                      save=SaveAt(times=np.linspace(0.0, t_end, 7)))
        out.append({"seed": seed, "n": n, "d": d, "beta": beta, "alibi": alibi, "rope": rope,
                    "max_angle_to_x1_0": max(angle_between(x, X0[0]) for x in tr.X[-1]),
                    "x1_displacement": float(np.max(np.abs(tr.X[:, 0] - X0[0])))})
    return out


def one_cluster_runs(cases, t_end: float = 200.0) -> list[dict]:
    """No mask, Q = K = V = I: the smallest <x_i, x_j> at t_end from a uniform start (1 means one cluster).

    ``cases``: (seed, kind, n, d, beta, alibi, rope)."""
    out = []
    for seed, kind, n, d, beta, alibi, rope in cases:
        X0 = uniform_sphere(n, d, np.random.default_rng(seed))
        tr = simulate(Model(kind, beta, alibi=alibi, rope=rope), X0, t_end,
                      solver=Solver("adaptive", rtol=1e-9, atol=1e-12, backend="direct"),
                      save=SaveAt(times=[0.0, t_end]))
        X = tr.X[-1]
        out.append({"seed": seed, "kind": kind, "n": n, "d": d, "beta": beta, "alibi": alibi, "rope": rope,
                    "t_end": t_end, "one_minus_min_cos": float(1.0 - np.min(X @ X.T))})
    return out


def generated_field_error(kind: str = "usa", n: int = 3, d: int = 4, beta: float = 1.2, base: float = 5.0,
                          lam: float = 0.4, labels=(0.0, 1.5, 4.0), particle: int = 2, seed: int = 0) -> dict:
    """The generated block field with ALiBi and RoPE (:func:`theory.architectures.block_velocity_function`, SymPy ->
    NumPy) against the hand-written one (``Model(..., alibi=, rope=, positions=)``, backend blocks) at one particle.
    d = 4 so that two RoPE frequencies (1 and base^{-1/2}) enter."""
    from theory.architectures import block_velocity_function

    X = uniform_sphere(n, d, np.random.default_rng(seed))
    I = np.eye(d)
    ref = Model(kind, beta, rope=base, alibi=lam, positions=list(labels)).vector_field(n, d, "direct")[0](X)[particle]
    f = block_velocity_function(kind, n, [(I, I, I, I)], rope=base, alibi=lam, labels=list(labels), particle=particle)
    gen = np.array(f(*X.ravel(), beta))
    return {"kind": kind, "n": n, "d": d, "beta": beta, "base": base, "lambda": lam, "particle": particle,
            "relative_error": float(np.max(np.abs(gen - ref)) / np.max(np.abs(ref)))}
