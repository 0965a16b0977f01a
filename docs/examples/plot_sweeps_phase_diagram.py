r"""
Phase diagram: probability of one cluster by time T over (β, n)
===============================================================

A small parameter sweep of the self-attention dynamics ``sa`` on the sphere :math:`\mathbb{S}^{2}` (d = 3): for each
inverse temperature :math:`\beta` and number of tokens n, several seeds (iid uniform initial states drawn from
``SeedSequence(root_seed, spawn_key=(seed,))``) are integrated to T = 12 and we record whether all tokens form a
single eps-cluster. At small :math:`\beta` every run synchronises quickly (GLPR, arXiv 2312.10794); at larger
:math:`\beta` the dynamics lingers in metastable multi-cluster states (GKPR, arXiv 2410.06833), so the fraction of
seeds with one cluster by T falls. The sweep runs in-process (``scheduler="synchronous"``) into a Zarr store; the same
specification runs on a Dask cluster with ``scheduler="local"``, ``"slurm"`` or ``"tcp://host:port"``.

The cells run as ensembles: the cells of one n that differ in :math:`\beta` and the seed are blocks of one task each,
integrated together in one :math:`(B, n, d)` array (``docs/guide/ensembles.md``), and written to the store one region
per block. The run prints how long it took.
"""
# %%
# The specification: the same tables as a TOML file for ``attnflow sweep run``.
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from numerics.sweeps.plotting import aggregate
from numerics.sweeps.runner import run_sweep

spec = {
    "model": {"model": "sa", "d": 3},
    "sweep": {"n": [6, 12, 24], "beta": [0.5, 2.0, 4.0, 8.0], "seeds": 6},  # beta and seeds last: batched
    "run": {"t_end": 12.0, "dt": 0.1, "frames": 13, "root_seed": 1},
    "observables": {"one_cluster": {"eps": 1e-2}},
}

# %%
# Run the 72 cells and open the store with xarray.
folder = Path(tempfile.mkdtemp(prefix="attnflow-gallery-"))
report = run_sweep(spec, folder / "phase.zarr", scheduler="synchronous", progress=lambda *a, **k: None)
print(report.counts)
print(f"{report.computed} trajectories in {report.tasks} ensembles of up to {report.block} cells: "
      f"{report.seconds:.1f} s (store creation {report.setup_seconds:.1f} s)")
ds = xr.open_zarr(str(folder / "phase.zarr"))
print(ds["one_cluster"].dims, ds["one_cluster"].shape)

# %%
# The fraction of seeds with one cluster, with its Wilson 95% interval, over :math:`(n, \beta)`.
agg = aggregate(ds, "p_one_cluster", ("n", "beta"))
fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
im = ax.imshow(agg.value, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=1)
ax.set_xticks(range(len(agg.coords["beta"])), [f"{b:g}" for b in agg.coords["beta"]])
ax.set_yticks(range(len(agg.coords["n"])), [str(n) for n in agg.coords["n"]])
for i in range(agg.value.shape[0]):
    for j in range(agg.value.shape[1]):
        ax.text(j, i, f"{agg.value[i, j]:.2f}", ha="center", va="center",
                color="white" if agg.value[i, j] < 0.5 else "black")
ax.set_xlabel("beta")
ax.set_ylabel("n")
ax.set_title(f"P(one cluster by T = 12), sa on S^2, {spec['sweep']['seeds']} seeds per cell")
fig.colorbar(im, ax=ax)
for i, n in enumerate(agg.coords["n"]):
    line, = ax2.plot(agg.coords["beta"], agg.value[i], "o-", label=f"n = {n}")
    ax2.fill_between(agg.coords["beta"], agg.lower[i], agg.upper[i], color=line.get_color(), alpha=0.15)
ax2.set_xlabel("beta")
ax2.set_ylabel("P(one cluster by T)")
ax2.set_ylim(-0.03, 1.03)
ax2.set_title("with Wilson 95% intervals")
ax2.legend()
fig.tight_layout()
print(np.round(agg.value, 2))

# %%
# The store was only needed for this page: remove it.
ds.close()
shutil.rmtree(folder)
