"""Figures of the R^d area: rescaled trajectories with the polytope and its leaders, P(t) as images, the radius
and the Wasserstein ratio against their bounds (matplotlib; the CLI selects the Agg backend)."""
from __future__ import annotations

import numpy as np

from numerics.common.provenance import atomic_write


def plot_run(path: str, run, limit: dict, hull: list[int], radius: np.ndarray, bound: np.ndarray,
             hyperplanes: dict | None = None) -> str:
    """Four panels: rescaled trajectories + initial hull + leaders (+ the hyperplanes {w^T z = c} in d = 2);
    P(0); P(t_end); radius over its bound."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 2, figsize=(11, 9.5))
    ax = axes[0, 0]
    Z, t = run.Z, run.times
    leaders = limit["leaders"]
    if Z.shape[2] == 1:
        for i in range(Z.shape[1]):
            ax.plot(t, Z[:, i, 0], lw=0.8, color="C1" if i in leaders else "0.55")
        ax.set_xlabel("t")
        ax.set_ylabel("z = e^{-tV} x")
        ax.set_title("rescaled tokens (leaders in orange)")
    else:
        for i in range(Z.shape[1]):
            ax.plot(Z[:, i, 0], Z[:, i, 1], lw=0.6, color="0.6")
        if Z.shape[2] == 2 and len(hull) > 2:
            H = Z[0, hull]
            H = H[np.argsort(np.arctan2(*(H - H.mean(axis=0)).T[::-1]))]  # counter-clockwise polygon
            H = np.vstack([H, H[:1]])
            ax.plot(H[:, 0], H[:, 1], "--", color="C0", lw=1, label="conv{z_i(0)}")
        ax.scatter(Z[0, :, 0], Z[0, :, 1], s=12, color="0.3", label="z_i(0)", zorder=3)
        ax.scatter(Z[-1, :, 0], Z[-1, :, 1], s=12, color="C2", label=f"z_i({t[-1]:.3g})", zorder=4)
        ax.scatter(Z[0, leaders, 0], Z[0, leaders, 1], s=90, facecolors="none", edgecolors="C1", lw=1.8,
                   label="leaders", zorder=5)
        if hyperplanes is not None and Z.shape[2] == 2:
            w = np.asarray(hyperplanes["normal"])
            lo, hi = Z[..., :2].reshape(-1, 2).min(axis=0), Z[..., :2].reshape(-1, 2).max(axis=0)
            s = np.linspace(-1, 1, 2) * float(np.linalg.norm(hi - lo))
            for k, c in enumerate(hyperplanes["values"]):
                pts = c * w[None, :] + s[:, None] * np.array([-w[1], w[0]])[None, :]
                ax.plot(pts[:, 0], pts[:, 1], ":", color="C3", lw=1, label="w^T z = c" if k == 0 else None)
            ax.set_xlim(lo[0] - 0.05 * (hi - lo)[0], hi[0] + 0.05 * (hi - lo)[0])
            ax.set_ylim(lo[1] - 0.05 * (hi - lo)[1], hi[1] + 0.05 * (hi - lo)[1])
        else:
            ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("z_1")
        ax.set_ylabel("z_2")
        ax.legend(fontsize=7, loc="best")
        ax.set_title("rescaled trajectories, initial hull and leaders")
    if run.P is not None:
        for a, k, name in ((axes[0, 1], 0, "P(0)"), (axes[1, 0], -1, f"P({t[-1]:.3g})")):
            im = a.imshow(run.P[k], vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
            a.set_title(f"attention matrix {name}")
            a.set_xlabel("j (key token)")
            a.set_ylabel("i (query token)")
            a.xaxis.set_major_locator(MaxNLocator(integer=True))
            a.yaxis.set_major_locator(MaxNLocator(integer=True))
            fig.colorbar(im, ax=a, fraction=0.046)
    else:
        for a in (axes[0, 1], axes[1, 0]):
            a.text(0.5, 0.5, "P(t) not stored (n > 2000)", ha="center", va="center")
            a.set_axis_off()
    ax = axes[1, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ax.plot(t, radius / bound, label="R(t) / (exp(t ||V||_2) R_0)")
    ax.axhline(1.0, ls="--", color="C3", label="bound (= 1)")
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("t")
    ax.set_ylabel("R(t) / bound")
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title("support radius R(t) = max_i |x_i(t)| over its bound")
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)
    return path


def plot_stability(path: str, res: dict) -> str:
    """W_p(t)/W_p(0) against the proof's constant C(t) (log scale), and the radius against its bound."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
    t = res["times"]
    a1.semilogy(t, res["ratio"], "o-", ms=3, label=f"measured W_{res['p']:g}(t) / W_{res['p']:g}(0)")
    a1.semilogy(t, np.exp(res["log_constant"]), "--", label="C(t) of the coupling proof")
    a1.set_xlabel("t")
    a1.legend(fontsize=8)
    a1.set_title("Wasserstein stability: ratio against the constant")
    a2.semilogy(t, res["radius"], label="R(t)")
    a2.semilogy(t, res["radius_bound"], "--", label="exp(t ||V||_2) R_0")
    a2.set_xlabel("t")
    a2.legend(fontsize=8)
    a2.set_title("support radius against its bound")
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)
    return path
