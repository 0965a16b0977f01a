r"""
Two tokens under random value matrices: the antipodal phase diagram over (β, d)
===============================================================================

Two tokens on :math:`\mathbb{S}^{d-1}` with identity query, key and value matrices (attention ``usa``) and the
common noise of random value matrices (the ``values`` law of ``docs/guide/common-noise.md``, strength
:math:`\sigma = 2`, so :math:`a = \sigma^2/d`), started at the angle :math:`\theta_0 = 2.5`. Fedorov, Sander, Elie,
Marion and Lauriere (arXiv 2601.21942, abstract read) report a phase transition in (interaction strength, d) above
which antipodal configurations are reached with positive probability. attnflow's own derivation (claim
``noise.common-noise-two-token-transition``) puts the boundary where the attention's pull at the antipode equals the
noise's: :math:`e^{-\beta} = a`, i.e. :math:`\beta_c(d) = \log(d/\sigma^2)`. The left panel is the fraction of 150
simulated pairs ending antipodal by :math:`T = 30` (projected Euler-Maruyama, step 0.02), the right panel the
scale-function probability; the white line is :math:`\beta_c(d)` in both. Near the boundary the antipode is only
marginally stable and the pairs decide slowly, so the fractions at :math:`T = 30` differ there from the limit
probability by up to about 0.1. The paper's own figure was not read.
"""
# %%
import matplotlib.pyplot as plt
import numpy as np

from numerics.noise.homogenized_phase import phase_grid

betas = np.linspace(0.0, 3.0, 7)
ds = [3, 4, 6, 8, 12, 16]
grid = phase_grid(betas, ds, sigma=2.0, model="usa", theta0=2.5, t=30.0, dt=0.02, samples=150, seed=0)
print("largest |measured - predicted|:", np.round(np.abs(grid["measured"] - grid["predicted"]).max(), 3))
print("largest undecided fraction:", np.round(grid["undecided"].max(), 3))

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
step = betas[1] - betas[0]
extent = (betas[0] - step / 2, betas[-1] + step / 2, -0.5, len(ds) - 0.5)
for ax, key, title in ((axes[0], "measured", "simulated P(antipodal)"),
                       (axes[1], "predicted", "scale-function P(antipodal)")):
    im = ax.imshow(grid[key], origin="lower", aspect="auto", extent=extent, cmap="magma", vmin=0, vmax=0.8)
    ax.plot(grid["boundary"], range(len(ds)), "w-o", label=r"$\beta_c(d) = \log(d/\sigma^2)$")
    ax.set_xlabel("beta")
    ax.set_title(title)
axes[0].set_yticks(range(len(ds)), [str(d) for d in ds])
axes[0].set_ylabel("d")
axes[1].legend(loc="lower right")
fig.colorbar(im, ax=axes)
