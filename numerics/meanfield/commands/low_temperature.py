"""``attnflow low-temperature``: how close the consensus flow from the uniform disc comes to its zero-temperature
limit, and when (arXiv 2605.10931): t*(beta) and W_2 at t*."""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "low-temperature"
ORDER = 55
HELP = "low-temperature concentration (arXiv 2605.10931): closest approach of mu_t to its zero-temperature limit"
DESCRIPTION = (HELP + ". dz/dt = m_beta(z) - z (A = V = I) from the uniform disc, solved by its exact radial "
               "reduction; the zero-temperature limit is the uniform measure on the unit circle.")


def _betas(text):
    from numerics.common.readers import comma_list

    values = comma_list(text, "--betas")
    if len(values) > 20:
        raise InputError("--betas takes 1 to 20 values")
    # beta > 1: the printed W_2* beta / log beta is undefined at beta = 1
    return [require_real(v, "--betas value", minimum=1.0, strict_minimum=True, maximum=1e5) for v in values]


def add_arguments(p):
    p.add_argument("--betas", default="16,64,256", help="comma-separated inverse temperatures (default 16,64,256)")
    p.add_argument("--rings", type=int, default=120,
                   help="rings of the radial reduction; also run at twice as many for the accuracy (default 120)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    p.add_argument("--plot", metavar="FILE.png", help="W_2(mu_t, limit) against t for each beta (default: none)")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress, package_versions
    from numerics.meanfield.low_temperature import TARGET_RTOL, radial_flow, refined_approach, zero_temperature_defect

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    betas = _betas(args.betas)
    rings = require_int(args.rings, "--rings", minimum=4, maximum=10_000)
    progress = StderrProgress("low-temperature", unit="beta ")
    rows = []
    for i, beta in enumerate(betas):
        # every number comes with its accuracy: rings and 2 rings, Richardson-extrapolated (first order in 1/rings)
        ref = refined_approach(beta, rings)
        lb = math.log(beta)
        rows.append({"beta": beta, "t_star": ref["t_star"], "t_star_error": ref["t_star_error"],
                     "t_star_minus_log_beta": ref["t_star"] - lb, "W2_star": ref["W2_star"],
                     "W2_star_error": ref["W2_star_error"], "W2_star_beta_over_log_beta": ref["W2_star"] * beta / lb,
                     "W2_star_beta_over_log_beta_error": ref["W2_star_error"] * beta / lb,
                     "unextrapolated": {k: ref[k] for k in ("t_star_N", "t_star_2N", "W2_star_N", "W2_star_2N")}})
        progress(i + 1, len(betas))
    worst = max(max(r["t_star_error"] / abs(r["t_star"]), r["W2_star_error"] / abs(r["W2_star"])) for r in rows)
    payload = {"rows": rows, "rings": rings, "rings_fine": 2 * rings, "worst_relative_error": worst,
               "target_relative_error": TARGET_RTOL, "target_met": worst <= TARGET_RTOL,
               "accuracy": "values 2 f(2N) - f(N) at N = rings; error |f(2N) - f(N)| (first order in 1/N)",
               "model": "dz/dt = m_beta(z) - z, A = V = I, uniform disc", "versions": package_versions()}
    pm = lambda v, e: f"{v:.6g} +- {e:.1g}"  # noqa: E731
    text = table([(r["beta"], pm(r["t_star"], r["t_star_error"]), pm(r["t_star_minus_log_beta"], r["t_star_error"]),
                   pm(r["W2_star"], r["W2_star_error"]),
                   pm(r["W2_star_beta_over_log_beta"], r["W2_star_beta_over_log_beta_error"])) for r in rows],
                 ["beta", "t*", "t* - log beta", "W_2 at t*", "W_2* beta/log beta"])
    verdict = "met" if worst <= TARGET_RTOL else "NOT met: raise --rings"
    head = [("accuracy", f"Richardson from {rings} and {2 * rings} rings; worst relative error {worst:.1g} "
                         f"(target {TARGET_RTOL:g}: {verdict})")]
    if len(rows) >= 2:
        fit = lambda ts: float(np.polyfit(np.log(betas), ts, 1)[0])  # noqa: E731
        slope = fit([r["t_star"] for r in rows])
        # the slope's accuracy as the values': its change between the 2N-ring values and the extrapolated ones
        slope_error = abs(slope - fit([r["unextrapolated"]["t_star_2N"] for r in rows]))
        payload["t_star_slope_in_log_beta"] = slope
        payload["t_star_slope_in_log_beta_error"] = slope_error
        head += [("t* grows like", f"{pm(slope, slope_error)} log beta"),
                 ("zero temperature", "W_2 = e^(-t)/sqrt(6)")]
    text = key_values(head) + "\n\n" + text
    if args.plot:
        import matplotlib.pyplot as plt

        from numerics.common.plots import save_figure

        fig, ax = plt.subplots(figsize=(6.5, 4))
        for beta in betas:
            times, D = radial_flow(beta, 2 * rings, math.log(beta) + 2.0, saves=int(40 * (math.log(beta) + 2.0)) + 1)
            ax.semilogy(times, D, label=f"beta = {beta:g}")
        tt = np.linspace(0, max(math.log(b) + 2.0 for b in betas), 200)
        ax.semilogy(tt, zero_temperature_defect(tt), "k--", label="zero temperature")
        ax.set_xlabel("t")
        ax.set_ylabel("W_2(mu_t, uniform on the circle)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(fig, args.plot, dpi=110)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0
