"""``attnflow clusters FILE.npz``: eps-clusters over a saved trajectory, merge events, violations, staircase."""
from __future__ import annotations


import numpy as np

from typing import TYPE_CHECKING

from numerics.clusters.names import DEFAULT_EPS
from numerics.common.plots import save_figure
from numerics.common.errors import InputError, require_real
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, fmt, key_values, table

if TYPE_CHECKING:  # heavy modules are imported where they are used (attnflow --help stays fast)
    from numerics.clusters.merge_tree import MergeHistory
    from numerics.core.trajectory import Trajectory

NAME = "clusters"
ORDER = 70
HELP = "clusters over a trajectory: counts, merge events (pairwise?), violations, energy staircase"
DESCRIPTION = (HELP + f". Clusters are the components of the graph joining particles at geodesic distance <= eps "
               f"(default eps = {DEFAULT_EPS:g} rad: clusters contract like e^-t in sa, so one born at time t0 is "
               "below it by t0 + 7, while iid uniform points on S^1 stay apart up to n ~ 6000).")
MAX_ROWS = 40
#: the dendrogram shows at most this many leaves (the subtrees below are drawn as one leaf labelled by its size)
PLOT_MAX_LEAVES = 30


def add_arguments(p):
    p.add_argument("file", help="trajectory .npz written by attnflow")
    p.add_argument("--eps", type=float, default=DEFAULT_EPS, help=f"cluster threshold in radians (default {DEFAULT_EPS:g})")
    p.add_argument("--refine", action="store_true",
                   help="locate merge times between saved frames by re-integrating the ODE (Dormand-Prince)")
    p.add_argument("--time-rtol", type=float, default=1e-6,
                   help="with --refine: bracket width <= 1e-9 + time_rtol * t (default 1e-6)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="dendrogram against log time, count and energy staircase")


def analyse(traj: Trajectory, eps: float, refine: bool, time_rtol: float,
            progress: bool = False) -> tuple[MergeHistory, dict]:
    """Merge history and staircase payload of a trajectory (the library calls behind the command); with
    ``progress``, progress lines (or a bar) on stderr."""
    from numerics.clusters.merge_tree import history_payload, merge_history, reintegrator_from_meta
    from numerics.clusters.staircase import energy_staircase, normalized_energies

    reint = reintegrator_from_meta(traj.meta, traj.arrays) if refine else None
    hist = merge_history(traj.times, traj.X, eps, reintegrate=reint, time_rtol=time_rtol,
                         progress=StderrProgress("clusters", unit="frames ") if progress else None,
                         refine_progress=StderrProgress("clusters --refine", unit="brackets ") if progress else None)
    payload = history_payload(hist)
    payload["saved_frames"] = int(traj.times.size)
    payload["inserted_frames"] = int(hist.info.get("inserted", 0)) if hist.refined else 0
    beta = traj.meta.get("beta")
    payload["staircase"] = None
    if beta is not None and float(beta) >= 0:
        energy = normalized_energies(traj.X, float(beta))
        plateaus = energy_staircase(traj.times, traj.X, float(beta), eps, energy=energy)
        payload["staircase"] = {"energy": energy, "energy_normalization": "gkpr: (1/n^2) sum e^{beta(<x_i,x_j>-1)}",
                                "plateaus": [p.to_dict() for p in plateaus]}
    payload["time_unit"] = traj.meta.get("time_unit", "natural")
    return hist, payload


def run(args) -> int:
    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    time_rtol = require_real(args.time_rtol, "--time-rtol", minimum=0.0, strict_minimum=True)
    from numerics.core.trajectory import Trajectory

    traj = Trajectory.load(args.file)
    hist, payload = analyse(traj, eps, args.refine, time_rtol, progress=True)
    if args.plot:
        plot_history(hist, payload, traj, args.plot)
        payload["plot"] = args.plot
    frames = (f"{payload['saved_frames']} saved + {payload['inserted_frames']} inserted by --refine"
              if hist.refined else payload["saved_frames"])
    summary = [("file", args.file), ("particles", hist.n), ("eps (rad)", eps), ("frames", frames),
               ("time unit", payload["time_unit"]), ("clusters first/last", f"{hist.counts[0]} / {hist.counts[-1]}"),
               ("merge events", len(hist.merges)), ("pairwise", hist.pairwise),
               ("pairwise fraction", hist.pairwise_fraction), ("violations", len(hist.violations)),
               ("merge times", "refined to 1e-9 + %g t" % time_rtol if hist.refined else "saved frames")]
    text = key_values(summary)
    rows = [(e.time, e.bracket[1] - e.bracket[0], list(e.clusters), list(e.sizes), e.new) for e in hist.merges]
    if rows:
        text += "\n\n" + table(rows[:MAX_ROWS], ["time", "bracket", "clusters", "sizes", "new"])
        if len(rows) > MAX_ROWS:
            text += f"\n... {len(rows) - MAX_ROWS} more (use --json)"
    if hist.violations:
        text += "\n\nviolations (a tracked cluster split again)\n" + table(
            [(v.cluster, v.start, v.end, list(v.pieces)) for v in hist.violations[:MAX_ROWS]],
            ["cluster", "from", "to", "pieces"])
    if payload["staircase"] and payload["staircase"]["plateaus"]:
        text += "\n\nenergy plateaus (normalised energy vs sum_c (m_c/n)^2)\n" + table(
            [(p["start"], p["end"], p["count"], p["height"], p["predicted"], p["height"] - p["predicted"])
             for p in payload["staircase"]["plateaus"]], ["from", "to", "clusters", "height", "sum (m/n)^2", "diff"])
    emit(args, payload, text)
    return 0


def plot_history(hist: MergeHistory, payload: dict, traj: Trajectory, path: str) -> None:
    """Three panels: the merge tree as a dendrogram against log time, the cluster count, the energy staircase.

    Above :data:`PLOT_MAX_LEAVES` leaves the dendrogram shows the last merges only: each leaf is then a subtree
    labelled by its number of particles (a tree of 500 leaves is a solid block); the count axis is logarithmic.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter
    from scipy.cluster.hierarchy import dendrogram

    positive = hist.times[hist.times > 0]
    if positive.size == 0:
        raise InputError("the trajectory has no positive time to plot on a log axis")
    floor = positive[0] / 2  # frame-0 clusters are drawn at this time on the log axis
    last = float(hist.times[-1])
    top = 2.0 * last
    Z = hist.linkage(top=top if len(hist.roots()) > 1 else None)
    fig, axes = plt.subplots(3, 1, figsize=(8, 10), sharex=True)
    truncated = Z.shape[0] + 1 > PLOT_MAX_LEAVES
    if Z.shape[0]:
        dn = dendrogram(Z, no_plot=True, truncate_mode="lastp" if truncated else None, p=PLOT_MAX_LEAVES,
                        show_leaf_counts=True)
        for xs, hs in zip(dn["icoord"], dn["dcoord"]):
            axes[0].plot(np.maximum(hs, floor), xs, color="tab:blue", lw=0.8)
        leaves = dn["ivl"]
        if truncated:
            axes[0].set_yticks(5 + 10 * np.arange(len(leaves)))
            axes[0].set_yticklabels([s.strip("()") if s.startswith("(") else "1" for s in leaves], fontsize=6)
        else:
            axes[0].set_yticks([])
        if len(hist.roots()) > 1:
            axes[0].axvline(last, color="grey", ls=":", label="end of run (later joins: not merged)")
            axes[0].legend(loc="lower right", fontsize=8)
    axes[0].set_ylabel("particles per leaf" if truncated else "particles")
    axes[0].set_title(f"merge tree (eps = {hist.eps:g} rad)" + (
        f": the last {PLOT_MAX_LEAVES - 1} merges; a leaf is a cluster, labelled by its size" if truncated else ""),
        fontsize=10)
    axes[1].step(np.maximum(hist.times, floor), hist.counts, where="post")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("clusters (log scale)")
    # 20 and 50, not 2 x 10^1 and 5 x 10^1; minor ticks labelled at 2, 3, 5 x 10^k only (9, 8, 7 would collide)
    axes[1].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes[1].yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if v > 0 and round(v / 10 ** np.floor(np.log10(v))) in (2, 3, 5) else ""))
    stair = payload.get("staircase")
    if stair is not None:
        axes[2].plot(np.maximum(traj.times, floor), stair["energy"], color="tab:red", label="normalised energy")
        for k, p in enumerate(stair["plateaus"]):  # labelled once, and only when a plateau is drawn
            axes[2].hlines(p["predicted"], max(p["start"], floor), p["end"], color="k", ls="--", lw=0.8,
                           label=r"plateau height $\sum_c (m_c/n)^2$" if k == 0 else None)
        axes[2].legend(loc="lower right", fontsize=8)
    axes[2].set_ylabel(r"$n^{-2} \sum_{i,j}\, e^{\beta(\langle x_i, x_j\rangle - 1)}$", fontsize=11)
    axes[2].set_xlabel(f"time ({payload['time_unit']}, log scale; t = 0 drawn at {fmt(floor)})")
    axes[2].set_xscale("log")
    fig.tight_layout()

    save_figure(fig, path, dpi=110)
