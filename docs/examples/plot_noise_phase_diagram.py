r"""
Noisy self-attention: the phase diagram in (β, D)
=================================================

Tokens of the unnormalised self-attention dynamics ``usa`` on the sphere :math:`\mathbb{S}^{2}` (d = 3) also diffuse
with noise :math:`D`. The uniform state loses linear stability below the threshold :math:`D_c(\beta)` (Mun and
Rosenzweig's :math:`K_\# = 1/(2 D_c)`, arXiv 2606.05140). Below :math:`\beta^*` = 1.816 the transition is continuous
and happens there; above :math:`\beta^*` it is first order: clustered states exist up to a fold :math:`D_{\rm fold} >
D_c` and have the lower free energy below the first-order noise :math:`D_{\rm 1st}`, with :math:`D_c < D_{\rm 1st} <
D_{\rm fold}` (their :math:`K_c = 1/(2 D_{\rm 1st}) < K_\#`). The branch bifurcating from degree 2 (states even under
:math:`x \mapsto -x`) is transcritical. Everything is computed by ``numerics.noise.diagram`` from the continued
stationary branches and their free energy (claims ``noise.global-*``).
"""
# %%
# The transitions of the modes 1 and 2 on a grid of :math:`\beta` (fold and first-order noise without their accuracy
# check, which ``attnflow phase`` adds).
import numpy as np

from numerics.noise.diagram import beta_noise_diagram, beta_noise_figure, curves

betas = np.linspace(0.5, 5.5, 11)
rows = beta_noise_diagram(3, betas, modes=2)
c = curves(rows)
for b, Dc, Dfold, D1 in zip(c["beta"], c["threshold_1"], c["fold_1"], c["first_order_1"]):
    print(f"beta = {b:4.1f}   D_c = {Dc:9.5f}   D_1st = {D1:9.5f}   D_fold = {Dfold:9.5f}   K_c/K_# = {Dc / D1:.4f}")

# %%
# The diagram: left, every threshold, fold and first-order noise against :math:`\beta` (:math:`D` on a log
# scale); right, mode 1 relative to :math:`D_c`, where the bistable window :math:`(D_c, D_{\rm fold})` opens at
# :math:`\beta^*` and the first-order noise stays inside.
fig = beta_noise_figure(3, rows)
