r"""
Hardmax attention as Frank-Wolfe: the cells of the vertices and the straight paths (AGR)
========================================================================================

**Paper.** Alcalde, Geshkovski, Ruiz-Balet, *Attention's forward pass and Frank-Wolfe*, arXiv 2508.09628 (AGR): for a
positive semi-definite key-query matrix the hardmax rule, extended to the convex hull of the tokens, splits the hull
into cells (one per vertex); vertices stay put and interior tokens move on straight lines to their cell's vertex.
The authors' repository draws these cells for random polygons (their figures of "dominance cells").

**Ours.** Left: the cells for :math:`A = \begin{pmatrix} 2 & 0.3 \\ 0.3 & 0.5 \end{pmatrix}` (six vertices on the
:math:`A`-sphere, so each vertex lies in its own cell), 40 interior tokens and 25 hardmax layers of step 0.2
(:func:`attnflow.iterate_layers`); the paths are the closed form :math:`v + (1 - h)^k (z - v)` (step :math:`h`)
(:func:`attnflow.voronoi_prediction`) to rounding. Right: the same tokens at finite :math:`\beta` (softmax layers):
the tokens gather near the vertices, then stay (claims ``rd.frank-wolfe-voronoi`` and ``rd.frank-wolfe-persistence``).

**What matches, what does not.** The cell picture and the straight paths are exact for hardmax. At finite
:math:`\beta` the gathered clusters sit slightly inside the hull (a vertex is pulled toward the tokens arriving at
it), and the deviation from the hardmax paths decays polynomially, not exponentially, in :math:`\beta`.
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af

A = np.array([[2.0, 0.3], [0.3, 0.5]])
Z0 = af.polygon_tokens((0.1, 1.3, 2.2, 3.5, 4.4, 5.5), 40, 0, A=A)
cells = af.voronoi_cells(Z0, A)
V = Z0[cells["vertices"]]
lo, hi = Z0.min(axis=0) - 0.1, Z0.max(axis=0) + 0.1
g = np.stack(np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300)), axis=-1)
labels = np.argmax((g.reshape(-1, 2) @ A.T) @ V.T, axis=1).reshape(300, 300)

fig, axes = plt.subplots(1, 2, figsize=(11, 5))
for ax, beta, title in ((axes[0], np.inf, "hardmax (beta = inf)"), (axes[1], 30.0, "softmax, beta = 30")):
    ax.contourf(g[..., 0], g[..., 1], labels, levels=np.arange(len(V) + 1) - 0.5, cmap="Pastel1", alpha=0.7)
    _, frames = af.iterate_layers(Z0, A, beta, 0.2, 25)
    for i in range(Z0.shape[0]):
        ax.plot(frames[:, i, 0], frames[:, i, 1], lw=0.8, color="tab:blue")
    ax.scatter(*frames[-1].T, s=10, color="tab:red", zorder=3)
    ax.scatter(*V.T, s=50, facecolors="none", edgecolors="k", zorder=4)
    ax.set_aspect("equal")
    ax.set_title(title)
dev = np.max(np.abs(af.iterate_layers(Z0, A, np.inf, 0.2, 25)[1] - af.voronoi_prediction(Z0, A, 0.2, range(26))))
fig.suptitle(f"cells of the vertices (x^T A v largest); hardmax paths vs closed form: max deviation {dev:.1e}")
fig.tight_layout()
plt.show()
