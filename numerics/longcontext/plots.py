"""Figures of ``attnflow long-context --plot`` (matplotlib, Agg chosen by the CLI; written atomically)."""
from __future__ import annotations

import numpy as np

from numerics.common.plots import save_figure
from numerics.longcontext import fixed_query, simplex


def plot_simplex(payload: dict, path: str) -> str:
    """Self weight p_n and output inner product rho' against gamma for each n, the limits dashed."""
    import matplotlib.pyplot as plt

    rho, alpha, q = payload["rho"], payload["alpha"], payload["q"]
    gc = payload["critical_gamma"]
    gammas = np.linspace(0.0, 3.0 * gc, 400)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(payload["transition"])))
    for c, row in zip(colors, payload["transition"]):
        layer = simplex.simplex_layer(row["n"], gammas, rho, alpha, q)
        ax1.plot(gammas, layer.p, color=c, label=f"n = {row['n']:.0e}")
        ax2.plot(gammas, layer.rho_out, color=c)
    for ax in (ax1, ax2):
        ax.axvline(gc, color="k", ls=":", lw=1)
        ax.set_xlabel("gamma  (beta = gamma log n)")
    for value, label in zip(payload["limits"]["inner_product"].values(), ("below", "at", "above")):
        ax2.axhline(value, color="0.5", ls="--", lw=0.8)
        ax2.annotate(f"{label}: {value:.3g}", (3.0 * gc, value), fontsize=7, ha="right", va="bottom")
    fin = payload.get("finite_d")
    if fin:
        ax1.errorbar([r["gamma_half"] for r in fin["rows"]], [0.5] * len(fin["rows"]),
                     xerr=[r["spread"] for r in fin["rows"]], fmt="o", color="C3", ms=4,
                     label=f"gamma_1/2 in R^{fin['d']} (Monte Carlo, +- spread)")
    ax1.set_ylabel("self weight p_n = A_ii")
    ax1.legend(fontsize=7)
    ax1.set_title(f"simplex layer, rho = {rho:g}: critical gamma = {gc:.4g}", fontsize=10)
    ax2.set_ylabel("output inner product rho'")
    ax2.set_title(f"alpha = {alpha:g}, q = {q:g} (limits dashed)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)


def plot_fixed_query(payload: dict, path: str) -> str:
    """E W_1 against c (beta = c n^{2/(d-1)}) in the Poisson limit, and C_d(n) against n with error bars."""
    import matplotlib.pyplot as plt

    d, C = payload["d"], payload["constant_quadrature"]
    cs = np.geomspace(C / 20, C * 20, 60)
    W = [fixed_query.poisson_top_weight(d, c) for c in cs]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.semilogx(cs, W, color="C0", label="Poisson limit (quadrature)")
    ax1.axhline(0.5, color="0.5", ls=":")
    ax1.axvline(C, color="k", ls=":", label=f"C_d = {C:.5g}")
    ax1.set_xlabel("c  (beta_n = c n^{2/(d-1)})")
    ax1.set_ylabel("mean top weight E W_1")
    ax1.legend(fontsize=8)
    ax1.set_title(f"fixed query, n uniform keys on S^{d - 1}", fontsize=10)
    ns = [r["n"] for r in payload["rows"]]
    ax2.errorbar(ns, [r["constant"] for r in payload["rows"]], yerr=[2 * r["standard_error"] for r in payload["rows"]],
                 fmt="o", label=f"finite n ({payload['rows'][0]['route']} route, +- 2 SE)")
    ax2.axhline(C, color="k", ls=":", label="Poisson limit (quadrature)")
    ax2.set_xscale("log")
    ax2.set_xlabel("n")
    ax2.set_ylabel("beta_1/2 / n^{2/(d-1)}")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)


def plot_gaps(payload: dict, path: str) -> str:
    """beta_1/2(n) / A_n against n for each family, with its limit."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, fam in enumerate(payload["families"]):
        ns = [r["n"] for r in fam["rows"]]
        ax.errorbar(ns, [r["ratio"] for r in fam["rows"]], yerr=[2 * r["ratio_se"] for r in fam["rows"]],
                    fmt="o-", color=f"C{i}", ms=4, label=f"{fam['family']}: A_n ~ {fam['law']}")
        ax.axhline(fam["limit_ratio"], color=f"C{i}", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("beta_1/2(n) / A_n  (+- 2 SE; limits dashed)")
    ax.legend(fontsize=7)
    ax.set_title("gap counting: one scale for four laws", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
