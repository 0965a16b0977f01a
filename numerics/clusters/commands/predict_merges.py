"""``attnflow predict-merges FILE.npz --at T``: reduced-model merge predictions beside the observed merges."""
from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING

from numerics.clusters.names import DEFAULT_EPS
from numerics.common.errors import InputError, require_real
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, key_values, table

if TYPE_CHECKING:  # heavy modules are imported where they are used (attnflow --help stays fast)
    from numerics.core.trajectory import Trajectory

NAME = "predict-merges"
ORDER = 71
HELP = "predict the merge sequence and times from the clusters at time T (reduced model) beside the observed ones"


def add_arguments(p):
    p.add_argument("file", help="trajectory .npz written by attnflow")
    p.add_argument("--at", type=float, required=True, help="start from the first saved frame with time >= T")
    p.add_argument("--eps", type=float, default=DEFAULT_EPS, help=f"cluster threshold in radians (default {DEFAULT_EPS:g})")
    p.add_argument("--horizon", type=float, help="predict up to this time (default: the last saved time)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def predict_from_trajectory(traj: Trajectory, at: float, eps: float, horizon: float | None = None,
                            progress: bool = False) -> dict:
    """Reduced-model predictions from the frame at time >= ``at`` and the observed merges after it (with
    ``progress``, progress lines or a bar on stderr)."""
    from numerics.clusters.merge_tree import merge_history
    from numerics.clusters.reduced import compare_merges, predict_merges, reduce_configuration

    meta = traj.meta
    for key in ("Q", "K", "V"):
        if meta.get(key) is not None:
            raise InputError(f"the reduced model needs Q = K = V = I; this trajectory has {key} set")
    if "beta" not in meta or "model" not in meta:
        raise InputError("trajectory meta lacks beta/model")
    times = traj.times
    if at < times[0] or at > times[-1]:
        raise InputError(f"--at must lie in [{times[0]:g}, {times[-1]:g}], got {at:g}")
    k = int(np.searchsorted(times, at, side="left"))
    horizon = float(times[-1]) if horizon is None else horizon
    if horizon <= times[k]:
        raise InputError(f"--horizon must exceed the start time {times[k]:g}, got {horizon:g}")
    Y, sizes, cl = reduce_configuration(traj.X[k], eps)
    pred = predict_merges(Y, sizes, float(meta["beta"]), eps=eps, t_start=float(times[k]), t_end=horizon,
                          model=meta["model"], time_unit=meta.get("time_unit", "natural"),
                          progress=StderrProgress("predict-merges", unit="merges ") if progress else None)
    observed = merge_history(times[k:], traj.X[k:], eps,
                             progress=StderrProgress("predict-merges: observed", unit="frames ") if progress else None)
    rows = compare_merges(pred, observed)
    # within the observed window [at, last saved time] the predicted and observed merge sequences (as sets of
    # start clusters) must coincide; predictions beyond the window cannot be compared
    window = float(times[-1])
    predicted_seq = [sorted(pred.leaves[e.new]) for e in pred.events if e.time <= window]
    observed_seq = [r["clusters"] for r in sorted((r for r in rows if r["observed_rank"] is not None),
                                                  key=lambda r: r["observed_rank"])]
    order_agrees = predicted_seq == observed_seq
    return {"at": float(times[k]), "eps": eps, "horizon": horizon, "model": meta["model"], "beta": meta["beta"],
            "time_unit": meta.get("time_unit", "natural"), "clusters": {"sizes": sizes, "centres": Y,
                                                                      "diameters": cl.diameters},
            "predicted": [{**e.to_dict(), "contains": sorted(pred.leaves[e.new])} for e in pred.events],
            "observed_until": float(times[-1]), "comparison": rows, "order_agrees": order_agrees}


def run(args) -> int:
    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    at = require_real(args.at, "--at")
    horizon = None if args.horizon is None else require_real(args.horizon, "--horizon")
    from numerics.core.trajectory import Trajectory

    traj = Trajectory.load(args.file)
    out = predict_from_trajectory(traj, at, eps, horizon, progress=True)
    text = key_values([("start frame time", out["at"]), ("clusters at start", len(out["clusters"]["sizes"])),
                       ("sizes", [int(s) for s in out["clusters"]["sizes"]]), ("eps (rad)", eps),
                       ("horizon", out["horizon"]), ("observed until", out["observed_until"]),
                       ("same order until last frame", out["order_agrees"])])
    rows = [(r["clusters"], r["merging"], r["predicted_time"], r["observed_time"], r["ratio"])
            for r in out["comparison"]]
    text += "\n\n" + (table(rows, ["new cluster (start ids)", "merging", "predicted t", "observed t", "ratio"])
                      if rows else "no merges predicted or observed")
    emit(args, out, text)
    return 0
