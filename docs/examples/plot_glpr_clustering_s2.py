r"""
Particles clustering on the sphere S² over time (GLPR)
======================================================

**Paper.** Geshkovski, Letrouit, Polyanskiy, Rigollet, *A mathematical perspective on Transformers*, arXiv 2312.10794
(GLPR), the opening figure: tokens that start uniformly on :math:`\mathbb{S}^{2}` and follow the self-attention
dynamics (``sa``, :math:`Q = K = V = I`) first gather into a few clusters, which then merge.

**Ours.** n = 64 tokens drawn uniformly on :math:`\mathbb{S}^{2}` (seed 0), :math:`\beta = 4`, the ``sa`` flow
integrated with RK4 (dt = 0.05) by :func:`attnflow.simulate`; snapshots at four times, and the energy :math:`E_\beta`
(GLPR's minus :math:`1/(2\beta)`, see :doc:`/conventions`), which must increase along the flow.

**What matches, what does not.** The qualitative picture matches: a few clusters appear well before t = 10 and
the energy increases monotonically (checked below). The paper's figure is an illustration without published
numbers, and its exact n, :math:`\beta`, seed and time points are not ours, so only the shape is compared: the number of
clusters at a given time depends on the random start.
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af

n, beta = 64, 4.0
X0 = af.uniform_sphere(n, 3, seed=0)
model = af.Model("sa", beta=beta)
traj = af.simulate(model, X0, 30.0, solver=af.Solver("rk4", dt=0.05), save=af.SaveAt(every=1))

snap_times = [0.0, 3.0, 10.0, 30.0]
fig = plt.figure(figsize=(12, 3.6))
u, v = np.mgrid[0:2 * np.pi:40j, 0:np.pi:20j]
for k, t in enumerate(snap_times):
    ax = fig.add_subplot(1, 5, k + 1, projection="3d")
    ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", linewidth=0.3)
    i = int(np.argmin(np.abs(traj.times - t)))
    X = traj.X[i]
    ax.scatter(X[:, 0], X[:, 1], X[:, 2], s=12, c=np.arange(n), cmap="viridis", depthshade=False)
    clusters = af.find_clusters(X, 1e-2)
    ax.set_title(f"t = {traj.times[i]:g}\n{len(clusters.sizes)} clusters (eps 0.01)", fontsize=9)
    ax.set_axis_off()
    ax.set_box_aspect((1, 1, 1))
ax = fig.add_subplot(1, 5, 5)
ax.plot(traj.times, traj.energy)
ax.set_xlabel("t (natural time = depth)")
ax.set_ylabel("E_beta (GLPR minus 1/(2 beta))")
ax.set_title("energy increases", fontsize=9)
fig.suptitle(f"sa, n = {n}, d = 3, beta = {beta:g}: GLPR arXiv 2312.10794, clustering on S^2")
fig.tight_layout()

print("energy non-decreasing:", bool(np.all(np.diff(traj.energy) >= -1e-12)))
print("clusters at t = 30:", sorted(af.find_clusters(traj.final, 1e-2).sizes.astype(int).tolist()))
