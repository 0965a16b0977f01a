"""``attnflow spectrum``: growth rates lambda_l(beta) of the uniform measure, l_max, runner-up, switch points."""
from __future__ import annotations

from numerics.common.plots import save_figure
from numerics.common.errors import InputError, require_choice, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "spectrum"
ORDER = 50
HELP = "growth rates of spherical-harmonic degrees around the uniform measure, l_max(beta) and switch points"


def add_arguments(p):
    p.add_argument("--d", type=int, required=True, help="ambient dimension (the sphere is S^{d-1}), d >= 2")
    p.add_argument("--beta", type=float, required=True, help="inverse temperature, |beta| <= 700 (Bessel-function rates evaluated unscaled)")
    p.add_argument("--model", default="sa", choices=("sa", "usa"), help="sa (default) or usa")
    p.add_argument("--lmax", type=int, default=None, help="report rates for l = 1..L (default max(8, 2 l_max))")
    p.add_argument("--time-unit", default="natural", choices=("natural", "rescaled"),
                   help="usa only: rescaled is t' = e^beta t")
    p.add_argument("--beta-max", type=float, default=None,
                   help="switch points and staircase up to this beta (default max(2 beta, 10))")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="plot lambda_l vs l and the l_max(beta) staircase")


def spectrum_payload(d: int, beta: float, model: str, lmax: int | None, time_unit: str, beta_max: float | None) -> dict:
    """The JSON payload of the command (library call, no I/O)."""
    from theory.meanfield import dominant_degree, growth_rates, switch_points

    d = require_int(d, "d", minimum=2, maximum=64)
    beta = require_real(beta, "beta", minimum=-700.0, maximum=700.0)
    model = require_choice(model, "model", ("sa", "usa"))
    dom = dominant_degree(model, d, beta, time_unit=time_unit)
    lmax = max(8, 2 * dom.l_max) if lmax is None else require_int(lmax, "lmax", minimum=1, maximum=500)
    beta_max = max(2 * abs(beta), 10.0) if beta_max is None else require_real(beta_max, "beta_max", minimum=0.0,
                                                                              strict_minimum=True, maximum=5000.0)
    switches = switch_points(d, beta_max)
    return {"d": d, "beta": beta, "model": model, "time_unit": time_unit if model == "usa" else "natural",
            "l": list(range(1, lmax + 1)), "rates": growth_rates(model, d, beta, lmax, time_unit),
            "l_max": dom.l_max, "rate_max": dom.rate, "runner_up": dom.runner_up, "runner_up_rate": dom.runner_up_rate,
            "ratio": dom.ratio, "near_tie": dom.near_tie,
            "switch_points": [{"beta": b, "from": a, "to": c} for b, a, c in switches], "beta_max": beta_max,
            "switch_points_note": "beta > 0 (for beta < 0 odd degrees grow and even degrees decay)",
            "source": "BPA arXiv 2410.23228 (linearisation at the uniform measure); rates in our GLPR units"}


def plot_spectrum(payload: dict, path: str) -> None:
    import matplotlib.pyplot as plt

    from theory.meanfield import switch_points

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(payload["l"], payload["rates"], "o-")
    ax1.axvline(payload["l_max"], color="C3", ls="--", label=f"l_max = {payload['l_max']}")
    ax1.set_xlabel("degree l")
    ax1.set_ylabel(f"lambda_l ({payload['time_unit']} time)")
    ax1.set_title(f"{payload['model']}, d = {payload['d']}, beta = {payload['beta']:g}")
    ax1.legend()
    sw = [(s["beta"], s["from"], s["to"]) for s in payload["switch_points"]] or switch_points(payload["d"], 10.0)
    xs, ys = [0.0], [1]
    for b, _, to in sw:
        xs += [b, b]
        ys += [ys[-1], to]
    xs.append(payload["beta_max"])
    ys.append(ys[-1])
    ax2.plot(xs, ys, "-", color="C0")
    for b, _, _ in sw:
        ax2.axvline(b, color="0.8", lw=0.8)
    ax2.axvline(payload["beta"], color="C3", ls="--", label=f"beta = {payload['beta']:g}")
    ax2.set_xlabel("beta")
    ax2.set_ylabel("l_max(beta)")
    ax2.set_title("fastest degree (switch points in grey)")
    ax2.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def run(args) -> int:
    payload = spectrum_payload(args.d, args.beta, args.model, args.lmax, args.time_unit, args.beta_max)
    if args.plot:
        if not args.plot.lower().endswith(".png"):
            raise InputError(f"--plot must name a .png file, got {args.plot!r}")
        plot_spectrum(payload, args.plot)
        payload["plot"] = args.plot
    rows = [(l, r, "l_max" if l == payload["l_max"] else ("runner-up" if l == payload["runner_up"] else ""))
            for l, r in zip(payload["l"], payload["rates"])]
    sw = ", ".join(f"{s['from']}->{s['to']} at {s['beta']:.6g}" for s in payload["switch_points"]) or "none"
    text = key_values([("model", payload["model"]), ("d", payload["d"]), ("beta", payload["beta"]),
                       ("l_max", payload["l_max"]), ("runner_up", payload["runner_up"]), ("ratio", payload["ratio"]),
                       ("near_tie", payload["near_tie"]), (f"switch points (0 < beta <= {payload['beta_max']:g})", sw)])
    text += "\n\n" + table(rows, ["l", f"lambda_l ({payload['time_unit']})", ""])
    emit(args, payload, text)
    return 0
