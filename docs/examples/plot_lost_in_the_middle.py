r"""
Lost in the middle: the U-shaped retrieval profile of causal attention and its threshold (DGR)
==============================================================================================

**Paper.** Duerinckx, Geshkovski, Rossi, *Kinetic theory for transformers and the lost-in-the-middle phenomenon*,
arXiv 2605.09213 (we read the abstract and the authors' public scripts): causal attention on the circle with ALiBi,
iid uniform tokens; the retrieval profile :math:`S_t(s)` (how much of the token at position s the last token holds at
time t) is U-shaped (primacy, recency, one interior minimum) for t below a threshold :math:`t_{\rm crit}(\beta)`.
Their figures: the profile centred at its minimum for t from 1 to 2 (:math:`\beta = 1, \lambda = 1, M = 8`, 20 modes;
the recency edge fades as t passes :math:`t_{\rm crit} = 2.457`), and the threshold curve :math:`t_{\rm crit}(\beta)`.

**Ours.** Left: the same overlay from :func:`attnflow.retrieval_profile` (our closed form :math:`\kappa(1, s)\,
\psi_{a t}(Y_\lambda(s))`, derived in ``proofs_notes/architectures-lost-in-the-middle.md``), with t up to 3 so that
the threshold is crossed. Middle: :math:`t_{\rm crit}(\beta)` (:func:`attnflow.lost_in_the_middle_threshold`) in the
paper's time and in attnflow's ``sa`` time (:math:`\beta I_0(\beta)` times larger; in that clock the threshold hardly
depends on :math:`\beta`, between 2.4 and 3.2 for :math:`\beta \in [0.1, 4.8]`). Right: the causal ALiBi ``sa``
particle system (:func:`attnflow.particle_profile`, N = 64 tokens, 24 uniform starts, error bars 2 standard errors) at
:math:`t_{\rm crit}/2` and :math:`\tfrac32 t_{\rm crit}` against the kinetic limit.

**What matches, what does not.** The closed form reproduces the authors' script exactly (the :math:`t_{\rm crit}`
printed below is their number at :math:`\beta = 1`) and its U shape disappears at :math:`t_{\rm crit}`. The particles
follow the limit at :math:`t_{\rm crit}/2` within their error bars (a few per cent below it at N = 64: the finite-N
and next-order terms); at :math:`\tfrac32 t_{\rm crit}` they are decreasing (no recency, as predicted) but well below
the linear theory: the correlations have left the order-1/N regime and saturate. We could not compare with the paper's
own figures' numbers (full text not available to us).
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af

beta, lam = 1.0, 1.0
tc = af.lost_in_the_middle_threshold(beta, lam)
print(f"t_crit(beta = 1, lambda = 1, M = 8, 20 modes) = {tc:.6f} (paper time)")

s = np.linspace(0.02, 0.98, 400)
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
ax = axes[0]
times = np.linspace(1.0, 3.0, 11)
for k, t in enumerate(times):
    S = af.retrieval_profile(s, t, beta, lam)
    ax.plot(s, S - S.min(), color=plt.cm.viridis(k / (len(times) - 1)), lw=1.6 if t in (1.0, 3.0) else 0.9,
            label=f"t = {t:.1f}" if k in (0, 5, 10) else None)
ax.set_ylim(-0.05, 1.0)  # the primacy divergence at s -> 0 is cut off so that the recency edge shows
ax.set_xlabel("source position s")
ax.set_ylabel("S_t(s) - min S_t")
ax.set_title(f"profiles, t = 1 to 3 (t_crit = {tc:.3f})", fontsize=10)
ax.legend(fontsize=8)

ax = axes[1]
betas = np.linspace(0.1, 4.8, 48)
ax.semilogy(betas, [af.lost_in_the_middle_threshold(b, lam) for b in betas], label="paper time")
ax.semilogy(betas, [af.lost_in_the_middle_threshold(b, lam, time="sa") for b in betas], "--", label="attnflow sa time")
ax.set_xlabel("beta")
ax.set_ylabel("t_crit")
ax.set_title("threshold t_crit(beta), lambda = 1", fontsize=10)
ax.legend(fontsize=8)

ax = axes[2]
tc_sa = af.lost_in_the_middle_threshold(beta, lam, time="sa")
for k, frac in enumerate((0.5, 1.5)):
    t = frac * tc_sa
    pp = af.particle_profile(64, t, beta, lam, runs=24, bins=4, dt=0.1, seed=1)
    ax.plot(s, af.retrieval_profile(s, t, beta, lam, time="sa"), color=f"C{k}", lw=1.4,
            label=f"kinetic limit, t = {frac:g} t_crit")
    ax.errorbar(pp.centres, pp.mean, yerr=2 * pp.stderr, fmt="o", color=f"C{k}", capsize=3,
                label=f"64 causal ALiBi tokens, t = {frac:g} t_crit")
    print(f"t = {frac:g} t_crit: particles {np.round(pp.mean, 3).tolist()} +- {np.round(pp.stderr, 3).tolist()}")
ax.set_yscale("log")
ax.set_xlabel("source position s")
ax.set_ylabel("S_t(s)")
ax.set_title("particles (attnflow sa time) vs kinetic limit", fontsize=10)
ax.legend(fontsize=7)
fig.tight_layout()
plt.show()
