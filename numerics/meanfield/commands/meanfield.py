"""``attnflow meanfield``: solve the S^1 continuity equation from a perturbed uniform density; measured vs
predicted growth rates of its Fourier modes."""
from __future__ import annotations

import math

from numerics.common.plots import save_figure
from numerics.common.errors import InputError, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "meanfield"
#: default grids without and with noise (with noise the linear phase is measured; cutoff 32 > the 12 perturbed modes)
GRID, NOISY_GRID = 512, 96
ORDER = 51
HELP = "pseudo-spectral mean-field PDE on S^1: measured vs predicted growth rates of the Fourier modes"


def add_arguments(p):
    p.add_argument("--beta", type=float, required=True, help="inverse temperature, |beta| <= 700 (Bessel-function rates evaluated unscaled)")
    p.add_argument("--model", default="sa", choices=("sa", "usa"), help="sa (default) or usa")
    p.add_argument("--grid", type=int, default=None,
                   help=f"grid points M (even; modes |k| <= M/3 kept; default {GRID}, with --noise {NOISY_GRID}: "
                        "diffusion damps the high modes, and the explicit solver's step shrinks like 1/(D (M/3)^2))")
    p.add_argument("--amplitude", type=float, default=1e-6, help="relative amplitude of each perturbed mode")
    p.add_argument("--modes", type=int, default=12, help="perturb (and fit) modes 1..K")
    p.add_argument("--t-end", type=float, default=None,
                   help="final time (default: 2 log(1/amplitude) / lambda_max, well past the linear phase)")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbation phases")
    p.add_argument("--threshold", type=float, default=1e-2,
                   help="the linear phase ends when a mode reaches this relative amplitude")
    p.add_argument("--time-unit", default="natural", choices=("natural", "rescaled"),
                   help="usa only: rescaled is t' = e^beta t")
    p.add_argument("--noise", type=float, default=0.0, metavar="D",
                   help="D >= 0: Fokker-Planck with D d^2/dtheta^2 (noisy tokens); mode k grows at lambda_k - D k^2")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="heat map of the density over time")


def meanfield_payload(args):
    """Run the solver and the fits; returns (payload, history)."""
    from numerics.meanfield.growth import fastest_predicted_rate, pde_growth_rates, predicted_rates
    from numerics.meanfield.pde import solve_continuity_circle
    from numerics.common.provenance import StderrProgress
    from theory.meanfield import dominant_degree

    beta = require_real(args.beta, "beta", minimum=-700.0, maximum=700.0)
    amplitude = require_real(args.amplitude, "amplitude", minimum=0.0, strict_minimum=True)
    noise = require_real(args.noise, "noise", minimum=0.0)
    if args.grid is None:
        args.grid = NOISY_GRID if noise else GRID
    if args.t_end is None:
        if noise:
            lam = max(r - noise * k * k for k, r in
                      enumerate(predicted_rates(args.model, 2, beta, range(1, 4 * int(math.sqrt(abs(beta))) + 12),
                                                args.time_unit), start=1))
        else:
            lam = fastest_predicted_rate(args.model, 2, beta, args.time_unit)
        if lam <= 0:
            raise InputError(f"no growing mode at beta={beta:g}" + (f", noise={noise:g}" if noise else "")
                             + "; pass --t-end explicitly")
        # with noise only the linear phase is measured (the rates lambda_k - D k^2): stop soon after it ends
        # instead of following the clusters, which the stiff diffusion term makes slow to integrate
        t_end = (1.5 * math.log(max(args.threshold / amplitude, math.e)) if noise else
                 2 * math.log(max(1 / amplitude, math.e))) / lam
    else:
        t_end = args.t_end
    progress = StderrProgress("meanfield")
    if noise:
        from numerics.common.limits import check_work
        from numerics.meanfield.pde import noise_stiffness_estimate

        est = noise_stiffness_estimate(require_int(args.grid, "grid", minimum=8), noise, t_end)
        what = (f"the noisy mean-field PDE (D = {noise:g}: diffusion rate D k^2 = {est['diffusion_rate']:.3g} at "
                f"the cutoff mode {est['cutoff_mode']}, about {est['steps']:.3g} explicit steps to t = {t_end:.3g})")
        check_work(est["flops"], what)
        if est["seconds"] > 2:
            progress.note(f"{what}; estimated {est['seconds']:.3g} s on an idle core (the cost grows like "
                          f"--grid cubed: the stable step shrinks like the cutoff mode squared)")
    history = solve_continuity_circle(beta, args.model, grid=args.grid, t_end=t_end, amplitude=amplitude,
                                      seed=args.seed, perturbation_modes=args.modes, time_unit=args.time_unit,
                                      progress=progress, noise=noise)
    growth = pde_growth_rates(history, threshold=args.threshold)
    dom = dominant_degree(args.model, 2, beta, time_unit=args.time_unit)
    g = growth.to_dict()
    if noise:  # what is meaningful with noise: the modes that stay above round-off, the noisy prediction
        g = _noisy_fits(g, amplitude)
        dom = None
    payload = {"beta": beta, "model": args.model, "noise": noise, "grid": args.grid, "amplitude": amplitude, "seed": args.seed,
               "t_end": t_end, "t_reached": history.t_reached, "stopped": history.stopped,
               "time_unit": history.meta["time_unit"], "dominant_mode": g["dominant_mode"],
               "predicted_dominant_mode": g["predicted_dominant_mode"] if noise else dom.l_max,
               "decayed_modes": g.get("decayed_modes"), "modes": g["modes"], "measured_rates": g["measured_rates"],
               "predicted_rates": g["predicted_rates"], "relative_errors": g["relative_errors"],
               "stderr": g["stderr"], "window": g["window"], "window_points": g["window_points"],
               "threshold": g["threshold"], "max_mass_drift": history.max_mass_drift,
               "min_density": float(history.min_density.min()),
               "solver": {k: history.meta[k] for k in ("integrator", "dealiasing", "cutoff_mode", "rtol", "atol",
                                                       "steps_rhs_evaluations", "resolution_tol", "wall_seconds")}}
    return payload, history


#: a mode whose amplitude falls below this, relative to the mean density, is at round-off: no rate is fitted
ROUND_OFF_AMPLITUDE = 1e-13


def _noisy_fits(g: dict, amplitude: float) -> dict:
    """Fits with noise: modes whose predicted rate lambda_k - D k^2 takes them below round-off within the fit
    window are listed as decayed (their fitted slopes measure rounding, not the PDE); the dominant mode is the
    fastest of the fitted modes, predicted argmax_k (lambda_k - D k^2) (not the noiseless l_max)."""
    t_stop = g["window"][1]
    floor = math.log(ROUND_OFF_AMPLITUDE / amplitude) / max(t_stop, 1e-300)  # the slowest decay still above it
    keep = [i for i, p in enumerate(g["predicted_rates"]) if p > floor]
    out = dict(g)
    for key in ("modes", "measured_rates", "predicted_rates", "relative_errors", "stderr"):
        out[key] = [g[key][i] for i in keep]
    out["decayed_modes"] = [m for i, m in enumerate(g["modes"]) if i not in keep]
    out["dominant_mode"] = out["modes"][max(range(len(keep)), key=lambda i: out["measured_rates"][i])] if keep else None
    out["predicted_dominant_mode"] = out["modes"][max(range(len(keep)), key=lambda i: out["predicted_rates"][i])] \
        if keep else None
    return out


def density_norm(excess):
    """Colour scale for 2 pi rho - 1: symmetric about 0, logarithmic above the initial perturbation's size,
    so that the linear growth phase (amplitude ~1e-6 growing by decades) shows as well as the clusters."""
    import numpy as np
    from matplotlib.colors import SymLogNorm

    vmax = float(np.nanmax(np.abs(excess))) or 1.0
    start = float(np.nanmax(np.abs(excess[0]))) if excess.shape[0] else 0.0
    linthresh = max(start, 1e-12 * vmax, np.finfo(float).tiny)
    return SymLogNorm(linthresh=linthresh, vmin=-vmax, vmax=vmax, base=10)


def plot_density(history, path: str, title: str) -> None:
    import matplotlib.pyplot as plt
    import numpy as np


    fig, ax = plt.subplots(figsize=(8, 4.5))
    extent = (0.0, 2 * np.pi, float(history.times[0]), float(history.times[-1]))
    excess = history.density * 2 * np.pi - 1.0  # 2 pi rho - 1: 0 for the uniform measure
    norm = density_norm(excess)
    im = ax.imshow(excess, aspect="auto", origin="lower", extent=extent, cmap="RdBu_r", norm=norm)
    lo, hi = math.ceil(math.log10(norm.linthresh)) + 1, math.floor(math.log10(norm.vmax))
    decades = list(range(hi, lo - 1, -max(1, (hi - lo + 3) // 4)))  # at most about 4 decades per sign
    ticks = sorted([-(10.0 ** k) for k in decades] + [0.0] + [10.0 ** k for k in decades])
    bar = fig.colorbar(im, ax=ax, label="2 pi rho - 1 (symmetric log scale; 0 = uniform)", ticks=ticks)
    bar.ax.set_yticklabels(["0" if t == 0 else f"{t:.0e}" for t in ticks])
    bar.ax.minorticks_off()
    ax.set_xlabel("theta")
    ax.set_ylabel(f"t ({history.meta['time_unit']})")
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def run(args) -> int:
    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    payload, history = meanfield_payload(args)
    if args.plot:
        plot_density(history, args.plot, f"{args.model}, beta = {payload['beta']:g}: density over time "
                                          f"(stopped: {history.stopped} at t = {history.t_reached:.3g})")
        payload["plot"] = args.plot
    # the measured rate is a least-squares slope of log|c_k| over the fit window: its standard error is the
    # accuracy of that number (the rel. error beside it compares with the exact linear prediction)
    rows = [(k, m, p, e, s) for k, m, p, e, s in zip(payload["modes"], payload["measured_rates"],
                                                     payload["predicted_rates"], payload["relative_errors"],
                                                     payload["stderr"])]
    noisy = bool(payload["noise"])
    text = key_values([("model", payload["model"]), ("beta", payload["beta"]), ("noise D", payload["noise"]),
                       ("fastest mode (measured)" if noisy else "dominant mode (measured)", payload["dominant_mode"]),
                       ("argmax_k lambda_k - D k^2 (predicted)" if noisy else "l_max (predicted)",
                        payload["predicted_dominant_mode"]),
                       *([("decayed below round-off (not fitted)", payload["decayed_modes"] or "none")]
                         if noisy else []),
                       ("fit window", f"[{payload['window'][0]:.4g}, {payload['window'][1]:.4g}] "
                                      f"({payload['window_points']} frames)"),
                       ("stopped", f"{payload['stopped']} at t = {payload['t_reached']:.4g}"),
                       ("mass drift", payload["max_mass_drift"]), ("min density", payload["min_density"])])
    text += "\n\n" + table(rows, ["mode", "measured", "predicted", "rel. error", "fit std. error"])
    emit(args, payload, text)
    return 0
