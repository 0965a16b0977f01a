"""``attnflow mean-field-rate``: W_2(mu_t, delta) of the mean field on S^1 from a wrapped Cauchy density, its decay
rate, the derived sharp rate and CLPR's explicit rate 1/100 (arXiv 2504.14697)."""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "mean-field-rate"
ORDER = 54
HELP = "mean-field clustering rate on S^1 (CLPR 2504.14697): W_2 to a Dirac, fitted vs derived sharp rate"
DESCRIPTION = (HELP + ". The mean field is solved by characteristics on a grid crowding at the antipode of the limit "
               "(the slow mass sits there); at beta = 0 (usa) the exact Ott-Antonsen solution is printed beside it.")


def add_arguments(p):
    p.add_argument("--beta", type=float, default=0.5, help="inverse temperature, |beta| <= 50 (default 0.5)")
    p.add_argument("--model", default="usa", choices=("sa", "usa"), help="sa or usa (default usa)")
    p.add_argument("--rho0", type=float, default=0.3, help="mean resultant of the wrapped Cauchy start, in (0, 1) "
                                                          "(default 0.3)")
    p.add_argument("--grid", type=int, default=1000, help="characteristics (default 1000)")
    p.add_argument("--t-end", type=float, default=20.0, help="final time (default 20)")
    p.add_argument("--dt", type=float, default=0.1, help="RK4 step (default 0.1)")
    p.add_argument("--window", default=None, help="fit window 'a,b' (default: the last 40%% of [0, t_end])")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: a table)")
    p.add_argument("--plot", metavar="FILE.png", help="W_2(t) on a log scale with the rates (default: none)")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress, package_versions
    from numerics.meanfield.quantitative import (CLPR_RATE, fitted_rate, lagrangian_circle, ott_antonsen_w2,
                                                 sharp_w2_rate, wrapped_cauchy_density)

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    beta = require_real(args.beta, "--beta", minimum=-50.0, maximum=50.0)
    rho0 = require_real(args.rho0, "--rho0", minimum=0.0, maximum=1.0, strict_minimum=True)
    if rho0 >= 1.0:
        raise InputError("--rho0 must be < 1")
    grid = require_int(args.grid, "--grid", minimum=16, maximum=1_000_000)
    t_end = require_real(args.t_end, "--t-end", minimum=0.0, strict_minimum=True, maximum=1e6)
    if args.window:
        from numerics.common.readers import comma_list

        ends = comma_list(args.window, "--window")
        if len(ends) != 2:
            raise InputError(f"--window must be 'a,b', got {args.window!r}")
        a, b = ends
        window = (require_real(a, "--window start", minimum=0.0), require_real(b, "--window end", maximum=t_end))
        if not window[0] < window[1]:
            raise InputError("--window needs a < b")
    else:
        window = (0.6 * t_end, t_end)
    saves = min(2001, max(11, int(4 * t_end) + 1))
    times, W = lagrangian_circle(beta, args.model, lambda th: wrapped_cauchy_density(th, rho0), grid, t_end,
                                 args.dt, saves=saves, progress=StderrProgress("mean-field-rate"))
    fit = fitted_rate(times, W, window)
    # the fit's standard error says nothing about the grid: run again on half the grid, and print the change
    # (for a method of order >= 1 it bounds the error of the finer run up to a factor of order 1)
    coarse = max(16, grid // 2)
    _, W_half = lagrangian_circle(beta, args.model, lambda th: wrapped_cauchy_density(th, rho0), coarse, t_end,
                                  args.dt, saves=saves)
    grid_change = {"coarse_grid": coarse, "rate": abs(fit["rate"] - fitted_rate(times, W_half, window)["rate"]),
                   "W2_relative": float(np.max(np.abs(W - W_half) / np.abs(W)))}
    sharp = sharp_w2_rate(beta, args.model)
    exact = ott_antonsen_w2(times, rho0) if beta == 0 and args.model == "usa" else None
    payload = {"beta": beta, "model": args.model, "rho0": rho0, "grid": grid, "t_end": t_end, "dt": args.dt,
               "times": times.tolist(), "W2": W.tolist(), "fit": fit, "grid_change": grid_change,
               "sharp_rate": sharp, "clpr_rate": CLPR_RATE,
               "versions": package_versions()}
    if exact is not None:
        payload["W2_ott_antonsen"] = exact.tolist()
    pairs = [("model, beta", f"{args.model}, {beta:g}"), ("start", f"wrapped Cauchy, rho0 = {rho0:g} (R_0 = {rho0 ** 2:g})"),
             ("fitted rate", f"{fit['rate']:.6g} +- {fit['stderr']:.2g} (fit) on [{window[0]:g}, {window[1]:g}]"),
             ("grid accuracy", f"rate {grid_change['rate']:.1g}, W_2 {grid_change['W2_relative']:.1g} relative "
                               f"(change from {coarse} to {grid} characteristics)"),
             ("sharp rate (derived)", sharp), ("CLPR rate", CLPR_RATE)]
    idx = np.unique(np.linspace(0, len(times) - 1, 9).astype(int))
    rows = [(times[i], W[i]) + ((exact[i],) if exact is not None else ()) for i in idx]
    text = key_values(pairs) + "\n\n" + table(rows, ["t", "W_2 (characteristics)"] +
                                              (["W_2 (Ott-Antonsen)"] if exact is not None else []))
    if args.plot:
        import matplotlib.pyplot as plt

        from numerics.common.plots import save_figure

        fig, ax = plt.subplots(figsize=(6.5, 4))
        ax.semilogy(times, W, label="characteristics")
        if exact is not None:
            ax.semilogy(times, exact, "--", label="Ott-Antonsen (exact)")
        ax.semilogy(times, W[0] * np.exp(-sharp * times), ":", label=f"e^(-{sharp:.3g} t) (sharp)")
        ax.semilogy(times, W[0] * np.exp(-CLPR_RATE * times), ":", label="e^(-t/100) (CLPR)")
        ax.set_xlabel("t (natural time)")
        ax.set_ylabel("W_2(mu_t, nearest Dirac)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(fig, args.plot, dpi=110)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0
