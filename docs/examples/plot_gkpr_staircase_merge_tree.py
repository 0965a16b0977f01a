r"""
The energy staircase and a merge tree (GKPR)
============================================

**Paper.** Geshkovski, Koubbi, Polyanskiy, Rigollet, *Dynamic metastability in the self-attention model*, arXiv
2410.06833 (GKPR): after the tokens gather into clusters, the normalised energy :math:`\frac{1}{n^2} \sum_{i,j}
e^{\beta(\langle x_i, x_j\rangle - 1)}` sits on plateaus at height about :math:`\sum_c (m_c/n)^2` (:math:`m_c` the
cluster sizes) and jumps when two clusters merge, after exponentially long times (their staircase figure, energy
against log time).

**Ours.** n = 24 tokens on :math:`\mathbb{S}^{1}` (seed 3), :math:`\beta = 9`, the ``sa`` flow integrated adaptively
to t = 3000 and saved at log-spaced times; the plateaus found by :func:`attnflow.energy_staircase` beside
:math:`\sum_c (m_c/n)^2` (GKPR's height); the merge tree of the :math:`\varepsilon = 10^{-3}` clusters
(:func:`attnflow.merge_history`) as a dendrogram against log time. The later merges of the three surviving clusters,
beyond the simulated window, are predicted by the reduced model (:func:`attnflow.predict_merges`).

**What matches, what does not.** Once clusters have formed, each plateau height equals :math:`\sum_c (m_c/n)^2` up to
the cross terms :math:`e^{-\beta(1 - \cos\theta)}` between clusters (about :math:`10^{-6}` here, printed below); with
the merge brackets refined, every merge joins exactly two clusters, as GKPR describe (on the saved frames alone,
several merges fall between two frames and look simultaneous). The initial state (24 singletons, height all cross
terms) is not a staircase step and is not drawn. GKPR's figure uses other n, :math:`\beta` and seeds, so only the
structure is compared, not the merge times.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import dendrogram

import attnflow as af

beta, eps = 9.0, 1e-3
times = np.concatenate([[0.0], np.geomspace(0.01, 3000.0, 120)])
traj = af.simulate_keywords("sa", beta, 3000.0, n=24, d=2, seed=3, method="adaptive", save_times=times)
energy = af.normalized_energies(traj.X, beta)
plateaus = af.energy_staircase(traj.times, traj.X, beta, eps)
# merge brackets re-integrated (Dormand-Prince) until narrower than 1e-9 + 1e-6 t, so simultaneous-looking
# merges between two saved frames are resolved in time
hist = af.merge_history(traj.times, traj.X, eps, reintegrate=af.reintegrator_from_meta(traj.meta))
Y, sizes, _ = af.reduce_configuration(traj.X[-1], eps)
future = af.predict_merges(Y, sizes, beta, eps=eps, t_start=3000.0, t_end=1e9).events

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
ax1.semilogx(traj.times[1:], energy[1:], color="k", label="(1/n^2) sum e^{beta(<x_i,x_j> - 1)}")
for p in plateaus:
    if len(p.sizes) == 24:  # the initial state (24 singletons), not a staircase step
        continue
    ax1.hlines(p.predicted, p.start, p.end, colors="r", linewidth=3, alpha=0.5)
    print(f"plateau [{p.start:9.3g}, {p.end:9.3g}]: {len(p.sizes):2d} clusters, height {p.height:.6f}, "
          f"sum (m_c/n)^2 = {p.predicted:.6f}")
ax1.plot([], [], "r", linewidth=3, alpha=0.5, label="sum_c (m_c/n)^2 (GKPR)")
for e in future:
    ax1.axvline(e.time, color="b", linestyle=":")
    print(f"predicted merge beyond the window at t = {e.time:.4g}")
ax1.axvline(np.nan, color="b", linestyle=":", label="reduced-model merges (predicted)")
ax1.set_xlim(1e-2, 1e9)
ax1.set_xlabel("t (log scale)")
ax1.set_ylabel("normalised energy")
ax1.set_title("energy staircase (GKPR arXiv 2410.06833)")
ax1.legend(fontsize=7, loc="lower right")

Z = hist.linkage(top=6000.0)
Z[:, 2] = np.log10(np.maximum(Z[:, 2], 1e-2))
dendrogram(Z, ax=ax2, color_threshold=0, above_threshold_color="k", no_labels=True)
ax2.axhline(np.log10(3000.0), color="0.6", linestyle="--", linewidth=0.8)
ax2.set_ylabel("log10 merge time")
ax2.text(0.02, 0.95, "above the dashed line: not merged by t = 3000", transform=ax2.transAxes, fontsize=8)
ax2.set_title(f"merge tree: {len(hist.merges)} merges, all pairwise: {hist.pairwise}")
fig.tight_layout()
