r"""
Metastable cluster count against β, the l_max staircase and the growth rates (BPA)
==================================================================================

**Paper.** Bruno, Pasqualotto, Agazzi, *Emergence of meta-stable clustering in mean-field transformer models*, arXiv
2410.23228 (BPA): near the uniform measure on :math:`\mathbb{S}^{1}` each Fourier mode :math:`l` grows at its own rate
:math:`\lambda_l(\beta)`; the fastest mode :math:`l_{\max}(\beta)` predicts the number of metastable clusters (their
figures of the growth rates and of the cluster count against :math:`\beta`).

**Ours.** Left: the derived rates :math:`\lambda_l = l^2 I_l(\beta) / (\beta I_0(\beta))` (``sa`` on
:math:`\mathbb{S}^{1}`, our natural time unit, :func:`theory.meanfield.growth_rates`) for a few :math:`\beta`. Right:
the staircase :math:`l_{\max}(\beta)` with its switch points (:func:`theory.meanfield.switch_points`), and the number
of clusters observed from uniform starts (n = 2000 particles, 2 seeds per :math:`\beta`,
:func:`attnflow.metastable_experiment`).

**What matches, what does not.** The observed counts follow the staircase away from the switch points; near a switch
point (two modes with nearly equal rates) and at finite n the count can differ from :math:`l_{\max}` (the conjecture
lab found such a case at n = 200, :math:`\beta = 4`: see ``proofs_notes/conjecture-metastable-lmax.md``). BPA's rates
may differ from ours by a constant factor (their time normalisation); :math:`l_{\max}` does not depend on it.
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af
from theory.meanfield import dominant_degree, growth_rates, switch_points

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
ls = np.arange(1, 11)
for beta in (1.0, 3.0, 5.0, 10.0):
    rates = np.array(growth_rates("sa", 2, beta, len(ls)), dtype=float)
    ax1.plot(ls, rates, "o-", label=f"beta = {beta:g} (l_max = {ls[np.argmax(rates)]})")
ax1.set_xlabel("Fourier mode l")
ax1.set_ylabel("lambda_l (sa, natural time)")
ax1.set_title("growth rates at the uniform measure")
ax1.legend(fontsize=8)

betas = np.linspace(0.2, 16, 400)
lmax = [dominant_degree("sa", 2, float(b)).l_max for b in betas]
ax2.step(betas, lmax, where="post", color="k", label="l_max(beta) (derived)")
for b, lo, hi in switch_points(2, 16.0):
    ax2.axvline(b, color="0.8", linewidth=0.8)
observed_betas = [2.1, 4.7, 8.2, 12.7]
for beta in observed_betas:
    result = af.metastable_experiment(beta, 2000, seeds=[0, 1])
    ax2.plot([beta] * len(result.observed), result.observed, "rx", markersize=9)
    print(f"beta = {beta:5.2f}: l_max = {result.predicted}, observed counts {list(result.observed)}")
ax2.plot([], [], "rx", label="observed clusters (n = 2000, 2 seeds)")
ax2.set_xlabel("beta")
ax2.set_ylabel("number of clusters")
ax2.set_title("metastable count vs l_max (BPA arXiv 2410.23228)")
ax2.legend(fontsize=8, loc="upper left")
fig.tight_layout()
