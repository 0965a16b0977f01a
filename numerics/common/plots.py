"""Figures of trajectories (matplotlib, imported inside the functions; the CLI selects the Agg backend)."""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import atomic_write


#: Threshold (radians) of the cluster counts in the panel titles, as in the gallery's clustering figure.
TITLE_CLUSTER_EPS = 1e-2


def snapshot_indices(m: int, count: int = 4) -> list[int]:
    """Indices of ``count`` frames spread evenly over ``m`` saved frames (first and last included)."""
    return sorted(set(np.linspace(0, m - 1, min(count, m)).round().astype(int).tolist()))


def change_indices(progress, count: int = 4) -> list[int]:
    """Indices of ``count`` frames where the state changes: the first and last frame, and between them the
    first frames by which ``progress`` has covered 1/(count-1), 2/(count-1), ... of its total variation.

    Evenly spaced times miss a clustering that happens early in a long run (beta = 4, T = 30 clusters between
    t = 3 and 9 and then barely moves); a quantity that follows the state (the log of the cluster count, or the
    energy) puts the frames where things happen. The total variation (sum of |dy|) rather than y(T) - y(0) keeps
    the choice meaningful when noise makes the quantity non-monotone. Frames chosen twice (a jump larger than a
    step) are topped up with evenly spaced ones, so that ``min(count, m)`` distinct frames are returned.

    Parameters
    ----------
    progress : (m,) array_like
        A quantity at the saved frames that changes with the state (finite).
    count : int
        Number of frames wanted.

    Returns
    -------
    list of int
        Sorted distinct frame indices, 0 and m - 1 included; evenly spaced ones when ``progress`` is constant
        or not finite.
    """
    y = np.asarray(progress, float)
    m = y.shape[0]
    count = min(count, m)
    if count <= 2 or not np.all(np.isfinite(y)):
        return snapshot_indices(m, count)
    covered = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(y)))])
    total = covered[-1]
    if total <= 0.0:
        return snapshot_indices(m, count)
    inner = [int(np.searchsorted(covered, f * total)) for f in np.arange(1, count - 1) / (count - 1)]
    chosen = set([0, m - 1] + [min(i, m - 1) for i in inner])
    for i in snapshot_indices(m, m):  # top up with evenly spaced frames
        if len(chosen) >= count:
            break
        chosen.add(i)
    return sorted(chosen)


def frames_to_show(X: np.ndarray, energy, count: int = 4, sample: int = 200, counter=None) -> list[int]:
    """The frames of a trajectory (m, n, d) that :func:`plot_trajectory` shows: by the progress of the log of the
    cluster count (at :data:`TITLE_CLUSTER_EPS`, on at most ``sample`` evenly spaced frames, to bound the cost),
    or of the energy when the count does not change (no clustering at that scale yet, a non-finite state, or no
    ``counter``: see :func:`cluster_count`).

    Returns
    -------
    list of int
        Sorted distinct frame indices, 0 and m - 1 included (see :func:`change_indices`).
    """
    m = X.shape[0]
    frames = snapshot_indices(m, min(m, sample))
    counts = [cluster_count(X[i], counter) for i in frames]
    if None not in counts and counts[0] != counts[-1]:
        picked = change_indices(np.log(np.asarray(counts, float)), count)
        chosen = {frames[i] for i in picked}
        for i in snapshot_indices(m, m):  # distinct sample frames stay distinct; top up only if m is small
            if len(chosen) >= min(count, m):
                break
            chosen.add(i)
        return sorted(chosen)
    return change_indices(energy, count)


def cluster_count(X: np.ndarray, counter=None, eps: float = TITLE_CLUSTER_EPS) -> int | None:
    """Number of eps-clusters of the directions of ``X`` (n, d) by ``counter(X, eps)`` (the caller's: shared
    services import no area, so the clustering comes from the caller, e.g. ``numerics.clusters.detection``), or
    None without a counter or for a non-finite state; for the panel titles."""
    if counter is None or not np.all(np.isfinite(X)) or np.any(np.linalg.norm(X, axis=1) == 0.0):
        return None
    return int(counter(X, eps))


def principal_axes(X: np.ndarray, k: int = 2) -> np.ndarray:
    """The ``k`` leading principal axes (d, k) of the points ``X`` (n, d) (uncentred second moment, so that
    the projection of a point of the sphere stays in the unit disc)."""
    _, _, vt = np.linalg.svd(np.asarray(X, float), full_matrices=False)
    return vt[:k].T


def plot_trajectory(trajectory, path, snapshots: int = 4, projection: str = "pca", counter=None) -> str:
    """Particles at several times and the energy against time, written atomically to ``path`` (PNG).

    d = 2: points on the unit circle; d = 3: points on a wireframe sphere (3-D view); d > 3: a projection inside
    the unit disc, on the two leading principal axes of all saved states (``projection="pca"``, the same axes
    for every panel, so clusters that stay apart in R^d are seen apart) or on the first two coordinates
    (``"first"``). The frames shown are where the state changes (:func:`frames_to_show`: the first, the last,
    and those by which the log of the cluster count, else the energy, has covered equal parts of its change),
    each titled with its time and its number of clusters at :data:`TITLE_CLUSTER_EPS`. The last panel is the
    energy curve (normalisation and time unit from meta), with the chosen times marked. ``counter(X, eps)``
    counts the clusters (:func:`cluster_count`); without it the frames follow the energy and the titles give the
    time only.
    """
    if projection not in ("pca", "first"):
        raise InputError(f"projection must be 'pca' or 'first', got {projection!r}")
    import matplotlib.pyplot as plt  # the backend is chosen by the caller (the CLI selects Agg)

    X, times, energy, meta = trajectory.X, trajectory.times, trajectory.energy, trajectory.meta
    d = X.shape[2]
    idx = frames_to_show(X, energy, snapshots, counter=counter)
    counts = [cluster_count(X[frame], counter) for frame in idx]  # before projecting (counts are in R^d)
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
        title = f"t = {times[frame]:.3g}"
        if counts[k] is not None:
            title += f"\n{counts[k]} cluster{'s' if counts[k] != 1 else ''} (eps {TITLE_CLUSTER_EPS:g})"
        ax.set_title(title, fontsize=9)
    ax = fig.add_subplot(1, len(idx) + 1, len(idx) + 1)
    ax.plot(times, energy, color="C1")
    ax.plot(times[idx], energy[idx], "o", color="C0", markersize=4, label="frames shown")
    ax.legend(fontsize=8, loc="best")
    ax.set_xlabel(f"t ({meta.get('time_unit', 'natural')})")
    ax.set_ylabel(f"energy ({meta.get('energy_normalization', 'glpr')})")
    fig.suptitle(f"{meta.get('model')}  n={X.shape[1]}  d={d}  β={meta.get('beta')}  {meta.get('method')}")
    fig.tight_layout(rect=(0, 0, 1, 0.94))  # room for the suptitle above the two-line panel titles
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
