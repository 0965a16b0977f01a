"""Figures of the trained-model measurements (matplotlib imported inside the functions; PNG written atomically)."""
from __future__ import annotations

import numpy as np

from numerics.common.plots import save_figure
from numerics.trained.geometry import histogram_edges


def draw_layer_histograms(axes, runs: dict) -> None:
    """One panel per layer: the histogram of pairwise token cosines of each run (GLPR's layer-by-layer figure)."""
    edges = histogram_edges(len(next(iter(runs.values()))[0]["histogram"]))
    centres = 0.5 * (edges[1:] + edges[:-1])
    width = edges[1] - edges[0]
    for l, ax in enumerate(axes):
        for k, (name, geo) in enumerate(runs.items()):
            ax.step(centres, geo[l]["histogram"], where="mid", color=f"C{k}", label=name,
                    linewidth=2.4 if k == 0 else 1.1, zorder=3 if k == 0 else 2)
        ax.set_title(f"layer {l}" if l else "layer 0 (embeddings)", fontsize=9)
        ax.set_xlim(-1 - width, 1 + width)
        ax.set_xlabel("cosine")
    axes[0].set_ylabel("fraction of pairs")
    axes[-1].legend(fontsize=7, loc="upper left")


def plot_layer_histograms(runs: dict, path, title: str = "") -> str:
    """Per-layer histograms of the pairwise cosines (``runs``: name -> list of LayerGeometry dicts)."""
    import matplotlib.pyplot as plt

    L = len(next(iter(runs.values())))
    cols = min(L, 4)
    rows = -(-L // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.6 * rows), sharey=True, squeeze=False)
    flat = axes.ravel()
    draw_layer_histograms(flat[:L], runs)
    for ax in flat[L:]:
        ax.set_visible(False)
    for r in range(rows):
        axes[r, 0].set_ylabel("fraction of pairs")
    fig.suptitle(title + " - pairwise cosines of the tokens, layer by layer", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_heads(reports, path) -> str:
    """Per head: effective inverse temperature (beta_spec, beta_iso) and the eigenvalue range of sym(A)."""
    import matplotlib.pyplot as plt

    x = np.arange(len(reports))
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(max(6.0, 0.09 * len(x) + 3), 5.2), sharex=True)
    a1.bar(x, [r.beta_spec for r in reports], color="C0", label="beta_spec = r^2 |Q^T K|_2 / sqrt(k)")
    a1.bar(x, [r.beta_iso for r in reports], color="C3", label="beta_iso = r^2 tr(Q^T K) / (d sqrt(k))")
    a1.axhline(0, color="k", linewidth=0.6)
    a1.set_yscale("symlog", linthresh=1.0)
    a1.set_ylim(top=2.0 * max(r.beta_spec for r in reports))
    a1.set_ylabel("effective beta")
    a1.legend(fontsize=7)
    a2.vlines(x, [r.lambda_min for r in reports], [r.lambda_max for r in reports], color="0.4")
    a2.scatter(x, [r.lambda_max for r in reports], s=8, color="C3", label="largest eigenvalue (blow-up)")
    a2.scatter(x, [r.lambda_min for r in reports], s=8, color="C0", label="smallest eigenvalue (collapse)")
    a2.axhline(0, color="k", linewidth=0.6)
    a2.set_ylabel("eig sym(K^T Q)/sqrt(k)")
    a2.legend(fontsize=7)
    layers = sorted({r.layer for r in reports})
    ticks = [next(i for i, r in enumerate(reports) if r.layer == l) for l in layers]
    a2.set_xticks(ticks, [f"L{l}" for l in layers])
    for t in ticks[1:]:
        for a in (a1, a2):
            a.axvline(t - 0.5, color="0.85", linewidth=0.8)
    a2.set_xlabel("heads, grouped by layer")
    fig.suptitle("trained heads as attnflow parameters", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_iterated(cmp: dict, path) -> str:
    """Mean cosine and eps-cluster count against iterations of one layer, plateaus shaded."""
    import matplotlib.pyplot as plt

    it = np.arange(len(cmp["counts"]))
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(6.4, 4.8), sharex=True)
    a1.plot(it, cmp["mean_cosine"], color="C0")
    a1.set_ylabel("mean pairwise cosine")
    a1.set_ylim(min(0.0, min(cmp["mean_cosine"])) - 0.02, 1.02)
    a2.step(it, cmp["counts"], where="post", color="C1")
    a2.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    a2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a2.yaxis.set_minor_formatter(NullFormatter())
    a2.set_yticks([t for t in (1, 2, 3, 5, 10, 20, 50, 100, 200) if t <= 1.5 * max(cmp["counts"])])
    a2.set_ylabel(f"clusters (eps = {cmp['eps']:g} rad)")
    a2.set_xlabel("iterations of the layer")
    for p in cmp["plateaus"]:
        for a in (a1, a2):
            a.axvspan(p["first"], p["last"], color="0.9")
        a2.annotate(str(p["clusters"]), ((p["first"] + p["last"]) / 2, p["clusters"]), ha="center", va="bottom",
                    fontsize=8)
    fig.suptitle(f"layer {cmp['layer']} iterated ({cmp['variant']}), n = {cmp['n']} tokens", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)
