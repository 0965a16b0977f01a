r"""
Critical attention scaling: the angle ratio over (ρ, γ) (CLPR-LC)
=================================================================

**Paper.** Chen, Lin, Polyanskiy, Rigollet, *Critical attention scaling in long-context transformers*, arXiv
2510.05554 (CLPR-LC). Its figure of the "input-to-output angle ratio" as a function of :math:`\rho` and
:math:`\gamma`: tokens normalised, then one self-attention layer with :math:`\beta_n = \gamma \log n`, residual and
MLP omitted; a dashed curve :math:`\gamma = 1/(1 - \rho)`, which (the caption says) approximates the actual phase
transition with increasing accuracy as d grows. We read the caption, not the figure's data (the full text was not at
hand), so the ratio below is our reading: :math:`\lambda = \arccos(\rho') / \arccos(\rho)`, the angle between two
output tokens over the angle between the inputs (0: collapse, 1: identity).

**Ours.** n = 64 tokens. Left: the exact simplex (:math:`d \ge n`; :func:`attnflow.simplex_layer`, the O(1) map of
``attnflow long-context``). Middle and right: almost-simplex tokens :math:`y_k = \sqrt{\rho}\, e_0 + \sqrt{1 - \rho}\,
z_k` with :math:`z_k` uniform on the sphere of :math:`\mathbb{R}^{d-1}` (one draw, seed 0), the layer applied to the n
explicit tokens (the mean angle ratio over all pairs), in :math:`\mathbb{R}^{8}` and :math:`\mathbb{R}^{256}`.

**What matches, what does not.** The transition from collapse (dark) to identity (light) follows :math:`\gamma = 1/(1
- \rho)`, and the finite-d picture approaches the exact one as d grows, as the caption says (printed below: the angle
ratio reaches 1/2 at :math:`\rho = 0.5` for :math:`\gamma = 1.81` exactly, 1.81 in :math:`\mathbb{R}^{256}` and 1.25
in :math:`\mathbb{R}^{8}`). At finite n the angle-ratio transition sits a little below the curve (1.81 against 2 at n
= 64; the self weight's midpoint is :math:`\log(n - 1) / ((1 - \rho) \log n) = 1.99`), and the transition is wide: its
10-90 width is :math:`2 \log 9 / ((1 - \rho) \log n)` in :math:`\gamma` (``longcontext.simplex-transition``). In low
dimension the angle ratio moves *down* (:math:`\mathbb{R}^{8}`), while the self weight of the same kind of tokens
moves *up* (``longcontext.almost-simplex-finite-d``: by about :math:`\log n / (2 (d - 1))` relative): at finite d "the
transition" depends on the observable. The paper's n, d and colour scale are unknown to us: the comparison is
qualitative.
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af

n = 64
rhos = np.linspace(0.02, 0.9, 14)
gammas = np.linspace(0.05, 12.0, 30)


def angle_ratio_exact(rho, gamma):
    rho_out = af.simplex_layer(n, gamma, rho).rho_out
    return np.arccos(np.clip(rho_out, -1, 1)) / np.arccos(rho)


def angle_ratio_tokens(Z, rho, gamma):
    """Mean over pairs of the output angle over the input angle, for the explicit tokens."""
    Y = np.column_stack([np.full(len(Z), np.sqrt(rho)), np.sqrt(1 - rho) * Z])
    G = Y @ Y.T
    L = gamma * np.log(n) * G
    A = np.exp(L - L.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    out = A @ Y
    C = out @ out.T
    nrm = np.sqrt(np.diag(C))
    C = np.clip(C / np.outer(nrm, nrm), -1, 1)
    off = ~np.eye(n, dtype=bool)
    return float(np.mean(np.arccos(C[off]) / np.arccos(np.clip(G[off], -1, 1))))


rng = np.random.default_rng(0)
panels = [("exact simplex (d >= n)", None)]
for d in (8, 256):
    Z = rng.standard_normal((n, d - 1))
    panels.append((f"almost simplex in R^{d}", Z / np.linalg.norm(Z, axis=1, keepdims=True)))

fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
for ax, (title, Z) in zip(axes, panels):
    R, Gm = np.meshgrid(rhos, gammas, indexing="ij")
    if Z is None:
        lam = angle_ratio_exact(R, Gm)
    else:
        lam = np.array([[angle_ratio_tokens(Z, r, g) for g in gammas] for r in rhos])
    im = ax.pcolormesh(rhos, gammas, lam.T, shading="auto", cmap="viridis", vmin=0, vmax=1)
    ax.plot(rhos, 1 / (1 - rhos), "w--", lw=1.5, label="gamma = 1/(1 - rho)")
    ax.set_ylim(gammas[0], gammas[-1])
    ax.set_xlabel("rho")
    ax.set_title(title, fontsize=10)
axes[0].set_ylabel("gamma  (beta = gamma log n)")
axes[0].legend(fontsize=8, loc="upper left")
fig.colorbar(im, ax=axes, shrink=0.9, label="angle ratio arccos(rho') / arccos(rho)")
fig.suptitle(f"one attention layer, n = {n} tokens, no residual", fontsize=11)

# the transition in gamma at rho = 0.5 (where the mean angle ratio crosses 1/2), by panel
for title, Z in panels:
    vals = ([angle_ratio_exact(0.5, g) for g in gammas] if Z is None
            else [angle_ratio_tokens(Z, 0.5, g) for g in gammas])
    print(f"{title:>24}: angle ratio 1/2 at gamma = {np.interp(0.5, vals, gammas):.3f} (1/(1 - rho) = 2)")
