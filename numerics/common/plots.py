"""Figures of trajectories (matplotlib, imported inside the functions; the CLI selects the Agg backend)."""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import atomic_write


def snapshot_indices(m: int, count: int = 4) -> list[int]:
    """Indices of ``count`` frames spread evenly over ``m`` saved frames (first and last included)."""
    return sorted(set(np.linspace(0, m - 1, min(count, m)).round().astype(int).tolist()))


def principal_axes(X: np.ndarray, k: int = 2) -> np.ndarray:
    """The ``k`` leading principal axes (d, k) of the points ``X`` (n, d) (uncentred second moment, so that
    the projection of a point of the sphere stays in the unit disc)."""
    _, _, vt = np.linalg.svd(np.asarray(X, float), full_matrices=False)
    return vt[:k].T


def plot_trajectory(trajectory, path, snapshots: int = 4, projection: str = "pca") -> str:
    """Particles at several times and the energy against time, written atomically to ``path`` (PNG).

    d = 2: points on the unit circle; d = 3: points on a wireframe sphere (3-D view); d > 3: a projection inside
    the unit disc, on the two leading principal axes of all saved states (``projection="pca"``, the same axes
    for every panel, so clusters that stay apart in R^d are seen apart) or on the first two coordinates
    (``"first"``). The last panel is the energy curve (normalisation and time unit from meta).
    """
    if projection not in ("pca", "first"):
        raise InputError(f"projection must be 'pca' or 'first', got {projection!r}")
    import matplotlib.pyplot as plt  # the backend is chosen by the caller (the CLI selects Agg)

    X, times, energy, meta = trajectory.X, trajectory.times, trajectory.energy, trajectory.meta
    d = X.shape[2]
    idx = snapshot_indices(len(times), snapshots)
    if d > 3:
        axes2 = principal_axes(X.reshape(-1, d)) if projection == "pca" else np.eye(d)[:, :2]
        X = X @ axes2  # (m, n, 2): inside the unit disc
    fig = plt.figure(figsize=(3.2 * (len(idx) + 1), 3.4))
    for k, frame in enumerate(idx):
        if d == 3:
            ax = fig.add_subplot(1, len(idx) + 1, k + 1, projection="3d")
            u, v = np.mgrid[0:2 * np.pi:24j, 0:np.pi:12j]
            ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", linewidth=0.4)
            ax.scatter(X[frame, :, 0], X[frame, :, 1], X[frame, :, 2], s=8, color="C0", depthshade=False)
            ax.set_box_aspect((1, 1, 1))
            ax.set_axis_off()
        else:
            ax = fig.add_subplot(1, len(idx) + 1, k + 1)
            theta = np.linspace(0, 2 * np.pi, 200)
            ax.plot(np.cos(theta), np.sin(theta), color="0.8", linewidth=0.8)
            ax.scatter(X[frame, :, 0], X[frame, :, 1], s=8, color="C0")
            ax.set_aspect("equal")
            ax.set_xlim(-1.1, 1.1)
            ax.set_ylim(-1.1, 1.1)
            ax.set_xticks([])
            ax.set_yticks([])
            if d > 3:
                ax.set_xlabel("principal axes 1-2 (all frames)" if projection == "pca"
                              else "first two coordinates")
        ax.set_title(f"t = {times[frame]:.3g}")
    ax = fig.add_subplot(1, len(idx) + 1, len(idx) + 1)
    ax.plot(times, energy, color="C1")
    ax.set_xlabel(f"t ({meta.get('time_unit', 'natural')})")
    ax.set_ylabel(f"energy ({meta.get('energy_normalization', 'glpr')})")
    fig.suptitle(f"{meta.get('model')}  n={X.shape[1]}  d={d}  beta={meta.get('beta')}  {meta.get('method')}")
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(fig, path, dpi: int = 90, **savefig) -> str:
    """Write ``fig`` as PNG atomically (:func:`numerics.common.provenance.atomic_write`) and close it, also
    when writing fails; an unwritable path is one :class:`InputError` line. Every command's ``--plot`` ends here.
    ``savefig`` passes options such as ``bbox_inches="tight"`` to matplotlib."""
    import matplotlib.pyplot as plt

    def writer(tmp):
        fig.savefig(tmp, format="png", dpi=dpi, **savefig)

    try:
        return atomic_write(path, writer, suffix=".png")
    except OSError as exc:
        raise InputError(f"cannot write plot {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
