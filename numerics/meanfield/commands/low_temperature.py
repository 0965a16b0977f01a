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
    p.add_argument("--rings", type=int, default=60, help="rings of the radial reduction (default 60)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    p.add_argument("--plot", metavar="FILE.png", help="W_2(mu_t, limit) against t for each beta (default: none)")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress, package_versions
    from numerics.meanfield.low_temperature import closest_approach, radial_flow, zero_temperature_defect

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    betas = _betas(args.betas)
    rings = require_int(args.rings, "--rings", minimum=4, maximum=20_000)
    progress = StderrProgress("low-temperature", unit="beta ")
    rows, curves = [], []
    for i, beta in enumerate(betas):
        t_end = math.log(beta) + 2.0
        times, D = radial_flow(beta, rings, t_end, saves=int(40 * t_end) + 1)
        t_star, D_star = closest_approach(times, D)
        rows.append({"beta": beta, "t_star": t_star, "t_star_minus_log_beta": t_star - math.log(beta),
                     "W2_star": D_star, "W2_star_beta_over_log_beta": D_star * beta / math.log(beta)})
        curves.append((times, D))
        progress(i + 1, len(betas))
    payload = {"rows": rows, "rings": rings, "model": "dz/dt = m_beta(z) - z, A = V = I, uniform disc",
               "versions": package_versions()}
    text = table([(r["beta"], r["t_star"], r["t_star_minus_log_beta"], r["W2_star"], r["W2_star_beta_over_log_beta"])
                  for r in rows], ["beta", "t*", "t* - log beta", "W_2 at t*", "W_2* beta/log beta"])
    if len(rows) >= 2:
        lb = np.log(betas)
        slope = float(np.polyfit(lb, [r["t_star"] for r in rows], 1)[0])
        payload["t_star_slope_in_log_beta"] = slope
        text = key_values([("t* grows like", f"{slope:.4g} log beta"),
                           ("zero temperature", "W_2 = e^(-t)/sqrt(6)")]) + "\n\n" + text
    if args.plot:
        import matplotlib.pyplot as plt

        from numerics.common.plots import save_figure

        fig, ax = plt.subplots(figsize=(6.5, 4))
        for beta, (times, D) in zip(betas, curves):
            ax.semilogy(times, D, label=f"beta = {beta:g}")
        tt = np.linspace(0, max(c[0][-1] for c in curves), 200)
        ax.semilogy(tt, zero_temperature_defect(tt), "k--", label="zero temperature")
        ax.set_xlabel("t")
        ax.set_ylabel("W_2(mu_t, uniform on the circle)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(fig, args.plot, dpi=110)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0
