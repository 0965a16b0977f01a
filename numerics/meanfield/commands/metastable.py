"""``attnflow metastable``: number of clusters after the linear phase from uniform random starts vs l_max(beta)."""
from __future__ import annotations

from numerics.common.errors import InputError, require_int
from numerics.common.render import emit, key_values, table

NAME = "metastable"
ORDER = 52
HELP = "metastable cluster count from uniform random starts on S^1 (per seed) vs the fastest mode l_max(beta)"


def add_arguments(p):
    p.add_argument("--beta", type=float, required=True, help="inverse temperature (> 0)")
    p.add_argument("--n", type=int, required=True, help="number of particles (>= 100)")
    p.add_argument("--d", type=int, default=2, help="ambient dimension; only d = 2 (the circle) is supported")
    p.add_argument("--model", default="sa", choices=("sa", "usa"), help="sa (default) or usa")
    p.add_argument("--seeds", type=int, default=5, help="number of seeds (0..S-1), at most 1000 (default 5)")
    p.add_argument("--collapse-time", type=float, default=10.0,
                   help="contraction time units simulated after the linear phase (default 10)")
    p.add_argument("--min-gap", type=float, default=0.05, help="angular gap (radians) separating clusters")
    p.add_argument("--time-unit", default="natural", choices=("natural", "rescaled"),
                   help="usa only: rescaled is t' = e^beta t")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.meanfield.metastable import metastable_experiment
    from numerics.common.provenance import StderrProgress

    d = require_int(args.d, "d", minimum=2)
    if d != 2:
        raise InputError(f"metastable supports d = 2 only (gap clustering on the circle), got d = {d}")
    result = metastable_experiment(args.beta, args.n, model=args.model, seeds=args.seeds,
                                   collapse_time=args.collapse_time, min_gap=args.min_gap,
                                   time_unit=args.time_unit, progress=lambda seed: StderrProgress(f"metastable seed {seed}"))
    payload = result.to_dict()
    # "t linear end" is the first saved frame past the threshold: the crossing lies in the frame interval before
    # it, so the frame spacing is that time's accuracy (the count history keeps every 4th saved frame)
    history = result.runs[0].counts_over_time
    frame = (history[1][0] - history[0][0]) / 4 if len(history) > 1 else float("nan")
    payload["t_linear_end_resolution"] = frame
    rows = [(r.seed, r.observed, r.dominant_mode, r.t_linear_end, r.t_observed, r.cluster_sizes)
            for r in result.runs]
    text = key_values([("model", result.model), ("beta", result.beta), ("n", result.n),
                       ("predicted (l_max)", result.predicted),
                       ("runner-up / ratio", f"{result.runner_up} / {result.ratio:.4g}"
                                             + (" (near tie)" if payload["near_tie"] else "")),
                       ("fraction of seeds matching", f"{result.fraction_matching:.3g}"),
                       ("t linear end", f"the first saved frame past the threshold (frames every {frame:.3g}: "
                                        "the crossing lies up to one frame earlier)")])
    text += "\n\n" + table(rows, ["seed", "clusters", "dominant mode", "t linear end", "t observed", "sizes"])
    emit(args, payload, text)
    return 0
