"""Figures of the decoder measurements (matplotlib imported inside the functions; PNG written atomically)."""
from __future__ import annotations

import numpy as np

from numerics.common.plots import save_figure
from numerics.trained.geometry import histogram_edges


def _finish(fig, path, title: str) -> str:
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_layers(study: dict, path, minilm: dict | None = None) -> str:
    """Mean cosine and energies per layer (layer numbers as in the table, 0 = the embeddings; MiniLM beside on its
    own 6 layers), and the cosine histograms of a few layers."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13.5, 3.6))
    runs = {study["model"]: study} | ({minilm["model"]: minilm} if minilm else {})
    for k, (name, s) in enumerate(runs.items()):
        x = np.arange(len(s["layers"]))
        axes[0].plot(x, [g["mean_cosine"] for g in s["layers"]], "o-", ms=3, color=f"C{k}", label=name)
        axes[1].plot(x, s["energy"], "o-", ms=3, color=f"C{k}", label=f"{name}: own beta")
        axes[1].plot(x, s["energy_fixed_beta"], "s--", ms=2, color=f"C{k}", alpha=0.6,
                     label=f"{name}: beta = {s['fixed_beta']:g}")
    axes[0].set_xlabel("layer (0 = embeddings)")
    axes[0].set_ylabel("mean pairwise cosine")
    axes[0].legend(fontsize=7)
    axes[1].set_xlabel("layer (0 = embeddings)")
    axes[1].set_ylabel("E_beta of the normalised tokens")
    axes[1].legend(fontsize=6)
    edges = histogram_edges(len(study["layers"][0]["histogram"]))
    centres = 0.5 * (edges[1:] + edges[:-1])
    L = len(study["layers"]) - 1
    shown = sorted({0, 1, L // 4, L // 2, 3 * L // 4, L})
    for j, l in enumerate(shown):
        axes[2].step(centres, study["layers"][l]["histogram"], where="mid", color=plt.cm.viridis(j / max(1, len(shown) - 1)),
                     label=f"layer {l}")
    axes[2].set_xlabel("cosine")
    axes[2].set_ylabel("fraction of pairs")
    axes[2].legend(fontsize=7)
    return _finish(fig, path, f"{study['model']}: {study['tokens']} tokens")


def plot_random_init(study: dict, path) -> str:
    """Trained against random initialisation per layer: mean cosine, effective rank and cluster count, the draws'
    mean with their smallest-to-largest band (:func:`numerics.decoder.untrained.random_init_study`)."""
    import matplotlib.pyplot as plt

    panels = (("mean_cosine", "mean pairwise cosine"), ("effective_rank", "effective rank of the unit tokens"),
              ("clusters", f"clusters (eps = {study['eps']:g} rad)"))
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 3.6))
    x = np.arange(len(study["trained"]["mean_cosine"]))
    for ax, (key, label) in zip(axes, panels):
        band = study["random"]["band"][key]
        ax.plot(x, study["trained"][key], "o-", ms=3, color="C0", label="trained")
        ax.plot(x, band["mean"], "s-", ms=3, color="C3",
                label=f"random init (std {study['std']:.3g}), {len(study['seeds'])} seeds")
        ax.fill_between(x, band["min"], band["max"], color="C3", alpha=0.25, linewidth=0)
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=7)
    return _finish(fig, path, f"{study['model']}: trained against random initialisation, {study['tokens']} tokens")


def plot_flow(study: dict, path) -> str:
    """Mean cosine per layer of the model and attnflow's flows, and the first token's angle from layer 0."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for k, (name, geo) in enumerate(study["layers"].items()):
        a1.plot([g["mean_cosine"] for g in geo], "o-", ms=3, color=f"C{k}", label=name)
        a2.plot(study["first_token_angle"][name], "o-", ms=3, color=f"C{k}", label=name)
    a1.set_xlabel("layer")
    a1.set_ylabel("mean pairwise cosine")
    a1.legend(fontsize=7)
    a2.set_xlabel("layer")
    a2.set_ylabel("first token: angle from layer 0 (rad)")
    a2.legend(fontsize=7)
    return _finish(fig, path, "the decoder and attnflow's causal attention-only flow with its weights")


def plot_context(study: dict, path) -> str:
    """Mean attention entropy of the late rows against log n, per block (grey) and averaged, beside log n."""
    import matplotlib.pyplot as plt

    rows = study["lengths"]
    n = np.array([r["n"] for r in rows], dtype=float)
    E = np.array([r["entropy"] for r in rows])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for l in range(E.shape[1]):
        a1.plot(n, E[:, l], color="0.75", linewidth=0.8)
    a1.plot(n, E.mean(axis=1), "o-", color="C0", label=f"mean over blocks (slope {study['slopes']['mean']:.2f})")
    a1.plot(n, [r["uniform"] for r in rows], "k--", label="uniform attention (slope 1)")
    a1.set_xscale("log")
    a1.set_xlabel("context length n")
    a1.set_ylabel("attention entropy, late rows (nats)")
    a1.legend(fontsize=7)
    a2.plot(n, [r["clusters"] / r["n"] for r in rows], "o-", color="C1", label="clusters / n (last block)")
    a2.plot(n, [r["mean_cosine"] for r in rows], "s-", color="C2", label="mean cosine (last block)")
    a2.plot(n, [float(np.mean(r["first"])) for r in rows], "^-", color="C3", label="attention on the first token")
    a2.set_xscale("log")
    a2.set_xlabel("context length n")
    a2.legend(fontsize=7)
    return _finish(fig, path, "long contexts")
