r"""
Normalisation as speed regulation: mean cosine similarity across depth (Karagodin, Ge, Polyanskiy, Rigollet)
============================================================================================================

**Paper.** Karagodin, Ge, Polyanskiy, Rigollet, *Normalization in attention dynamics*, arXiv 2510.22026 (the
figure reproduced in the survey arXiv 2512.01868, "The impact of normalization"): the average cosine similarity
:math:`\rho(t)` of the tokens across depth, with a 90% band, for Post-LN, Pre-LN, Peri-LN, Mix-LN and nGPT, on a
transformer with random weights (d = 512, :math:`\beta = \sqrt{d}`, :math:`n < d`, random initial tokens).

**Ours.** n = 32 tokens iid uniform on :math:`\mathbb{S}^{63}` (d = 64), :math:`Q = K = V = I`, :math:`\beta = 1`,
five random starts per scheme, the :math:`(\theta, r)` dynamics of ``Model(norm=...)`` integrated with RK4 (dt = 0.05)
up to t = 10; the band is the 5%-95% range over the starts. Dashed: the equiangular reduction from :math:`\rho` = 0
(the same emitted ODE as claim ``architectures.norm-equiangular``). Right: :math:`1 - \rho` on a log scale, where
exponential (Post-LN, nGPT) and polynomial (Pre-, Peri-, Mix-LN) contraction separate.

**What matches, what does not.** Matches: the ordering the paper reports and our closed forms explain. Post-LN
contracts fastest and exponentially (:math:`1 - \rho \sim e^{-2t}`); Pre-LN delays contraction (:math:`1/t^2`);
Peri-LN moves faster than Pre-LN early (its speed :math:`1/(r \vert A\vert)` is large while :math:`\vert A\vert` is
small) and then slows down polynomially; Mix-LN follows Post-LN up to its switch (t = 2) and Pre-LN after; nGPT with
:math:`\alpha` = 0.5 contracts exponentially at half the rate. For iid starts in high dimension the equiangular curve
from :math:`\rho` = 0 tracks the band. Does not match: the paper's random-weight transformer (random Q, K, V at d =
512, :math:`\beta = \sqrt{d}`) is not reproduced (we use :math:`Q = K = V = I` at d = 64, :math:`\beta = 1`: with
identity weights and :math:`\beta = \sqrt{512}` nothing moves over this depth), the paper's curves were not digitised,
and no number is compared with them.
"""

import matplotlib.pyplot as plt
import numpy as np

import attnflow as af
from numerics.architectures.norms import reduced_solution

n, d, beta, t_end, seeds = 32, 64, 1.0, 10.0, 5
schemes = [("post", {}, "Post-LN"), ("pre", {}, "Pre-LN"), ("peri", {}, "Peri-LN"),
           ("mix", {"norm_switch": 2.0}, "Mix-LN (switch t = 2)"), ("ngpt", {"norm_alpha": 0.5}, "nGPT (alpha 0.5)")]
times = np.linspace(0.0, t_end, 41)
off = ~np.eye(n, dtype=bool)

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for k, (norm, extra, label) in enumerate(schemes):
    model = af.Model("sa", beta, norm=norm, **extra)
    curves = []
    for seed in range(seeds):
        tr = af.simulate(model, af.uniform_sphere(n, d, seed), t_end, solver=af.Solver("rk4", dt=0.05),
                         save=af.SaveAt(times=times))
        G = np.einsum("tid,tjd->tij", tr.X, tr.X)
        curves.append(G[:, off].mean(axis=1))
    curves = np.array(curves)
    colour = f"C{k}"
    lo, hi = np.percentile(curves, [5, 95], axis=0)
    left.fill_between(times, lo, hi, color=colour, alpha=0.25)
    left.plot(times, curves.mean(axis=0), color=colour, label=label)
    eps, _ = reduced_solution(norm, "sa", beta, n, 1.0, model.radius0, times, model)
    left.plot(times, 1.0 - eps, color=colour, linestyle="--", linewidth=1)
    right.semilogy(times, np.maximum(1.0 - curves.mean(axis=0), 1e-17), color=colour, label=label)
    print(f"{label:22s} rho(t_end) = {curves[:, -1].mean():.6f}  (equiangular ODE {1 - eps[-1]:.6f})")

left.set(xlabel="depth t", ylabel="mean cosine similarity rho(t)", ylim=(-0.05, 1.05),
         title="rho(t), band 5-95% over starts; dashed: equiangular ODE")
right.set(xlabel="depth t", ylabel="1 - rho(t)", title="exponential (Post-LN, nGPT) vs polynomial contraction")
left.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()
