"""``attnflow fokker-planck``: the Fokker-Planck equation of noisy sa/usa on S^2 in spherical harmonics."""
from __future__ import annotations

import math

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.render import emit, key_values, table, with_aliases

NAME = "fokker-planck"
ORDER = 56
HELP = ("noisy sa/usa on S^2: the Fokker-Planck PDE in spherical harmonics (non-zonal); growth rates of every "
        "(l, m) vs lambda_l - D l(l+1), steady state vs the self-consistency branch")
OUTPUTS = ("plot",)


def add_arguments(p):
    p.add_argument("--beta", type=float, required=True, help="inverse temperature, |beta| <= 50")
    p.add_argument("--noise", type=float, required=True, metavar="D", help="diffusion coefficient D >= 0")
    p.add_argument("--model", default="usa", choices=("usa", "sa"), help="usa (default) or sa")
    p.add_argument("--L", type=int, default=12, help="largest spherical-harmonic degree (default 12)")
    p.add_argument("--start", default="perturbed", choices=("perturbed", "clustered"),
                   help="perturbed: uniform plus --amplitude times random (l, m) noise (growth rates); clustered: "
                        "a von Mises-Fisher bump exp(kappa <x, e>) about a tilted axis e (steady state)")
    p.add_argument("--amplitude", type=float, default=1e-6, help="perturbation size of each harmonic (perturbed)")
    p.add_argument("--kappa", type=float, default=3.0, help="concentration of the clustered start (default 3)")
    p.add_argument("--t-end", type=float, default=None,
                   help="final time (default: 2 log(1/amplitude)/mu_max for a perturbed start with a growing mode)")
    p.add_argument("--dt", type=float, default=0.02, help="ETDRK4 step (default 0.02)")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbation")
    p.add_argument("--threshold", type=float, default=1e-2,
                   help="the linear phase ends when a coefficient reaches this size")
    p.add_argument("--plot", metavar="FILE.png", help="final density on a longitude-latitude map and r(t)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _branch_r(beta: float, D: float) -> float | None:
    """The stable branch's r at D (usa), or None if the uniform state is the only stable state there."""
    from numerics.noise.stationary import order_parameter_at, stationary_branch

    try:
        return order_parameter_at(stationary_branch(3, beta, L=24, points=60, r_max=0.97), D)
    except InputError:
        return None


def run(args) -> int:
    from numerics.common.provenance import StderrProgress
    from numerics.noise.sphere import clustered_coefficients, fitted_rates, initial_coefficients, solve_sphere
    from theory.meanfield import growth_rate

    beta = require_real(args.beta, "beta", minimum=-50.0, maximum=50.0)
    D = require_real(args.noise, "noise", minimum=0.0)
    L = require_int(args.L, "L", minimum=2, maximum=64)
    amplitude = require_real(args.amplitude, "amplitude", minimum=0.0, strict_minimum=True, maximum=0.1)
    kappa = require_real(args.kappa, "kappa", minimum=0.0, maximum=20.0)
    threshold = require_real(args.threshold, "threshold", minimum=0.0, strict_minimum=True)
    seed = require_int(args.seed, "--seed", minimum=0)        # numpy's own message for a negative seed is not ours
    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    if args.model == "sa" and beta == 0.0:
        raise InputError("sa at beta = 0 is the same dynamics as usa at beta = 0; use --model usa")
    predicted = {l: float(growth_rate(args.model, 3, l, beta)) - D * l * (l + 1) for l in range(1, L + 1)}
    if args.t_end is None:
        mu = max(predicted.values())
        if args.start == "clustered" or mu <= 0:
            raise InputError("pass --t-end (the default 2 log(1/amplitude)/mu_max needs a perturbed start with a "
                             f"growing mode; mu_max = {mu:.4g})")
        t_end = 2 * math.log(max(1 / amplitude, math.e)) / mu
    else:
        t_end = require_real(args.t_end, "t-end", minimum=0.0, strict_minimum=True)
    if args.start == "perturbed":
        c0 = initial_coefficients(L, amplitude, seed=seed)
    else:
        c0 = clustered_coefficients(L, kappa)
    hist = solve_sphere(beta, D, L=L, t_end=t_end, c0=c0, dt=args.dt, model=args.model, saves=1001,
                        progress=StderrProgress("fokker-planck"))
    rows = []
    try:
        if args.start == "clustered":
            # a clustered start is far from the uniform state: it has no linear phase, and the fit's advice
            # (lower --amplitude) does not apply to it
            raise InputError("the clustered start has no linear phase; growth rates need --start perturbed")
        rates, deg, order = fitted_rates(hist, threshold=threshold)
        for l in range(1, L + 1):
            sel = (deg == l) & np.isfinite(rates)
            zonal, other = sel & (order == 0), sel & (order != 0)
            rows.append({"l": l, "predicted": predicted[l],
                         "measured_m0": float(rates[zonal][0]) if zonal.any() else None,
                         "measured_m_nonzero_min": float(rates[other].min()) if other.any() else None,
                         "measured_m_nonzero_max": float(rates[other].max()) if other.any() else None})
        linear_note = None
    except InputError as exc:
        linear_note = f"no rates: {exc}"
    r = hist.order_parameter
    branch = _branch_r(beta, D) if args.model == "usa" else None
    from theory.noise import critical_noise

    Dc = critical_noise(args.model, 3, beta)[0]
    payload = {"beta": beta, "noise": D, "model": args.model, "L": L, "start": args.start, "t_end": t_end,
               "linear_stability_threshold": Dc, "rates": rows, "rates_note": linear_note, "final_r": float(r[-1]),
               "branch_r": branch, "mass_drift": hist.mass_drift,
               "final_power": hist.power()[-1].tolist(), "solver": hist.meta,
               "rates_note_fit": "each coefficient is fitted over its frames with M = max |c_lm| < threshold and "
                                 "|c_lm| > 1e4 M^2 (a decaying mode below the quadratic products of the others "
                                 "is slaved to them); '-' where fewer than 5 such frames exist"}
    if args.plot:
        payload["plot"] = _plot(hist, args.plot, payload)
    text = key_values([("model", args.model), ("beta", beta), ("noise D", D), ("linear-stability threshold D_c", Dc),
                       ("degree L", L), ("start", args.start), ("t_end", t_end),
                       ("integrator", f"{hist.meta['integrator']}, h = {hist.meta['step']:.4g}"),
                       ("grid (lat x lon)", f"{hist.meta['n_lat']} x {hist.meta['n_lon']}"),
                       ("mass drift", hist.mass_drift), ("final r = |E x|", float(r[-1])),
                       ("stable branch r (usa)", "-" if branch is None else branch)])
    if rows:
        shown = [(row["l"], row["predicted"], "-" if row["measured_m0"] is None else row["measured_m0"],
                  "-" if row["measured_m_nonzero_min"] is None else row["measured_m_nonzero_min"],
                  "-" if row["measured_m_nonzero_max"] is None else row["measured_m_nonzero_max"])
                 for row in rows[:min(L, 6)]]
        text += "\n\n" + table(shown, ["l", "predicted lambda_l - D l(l+1)", "measured m = 0",
                                       "measured m != 0 (min)", "measured m != 0 (max)"])
        if L > len(shown):
            # the table stays short; the JSON output has every degree
            hidden = f"degree {L}" if L == len(shown) + 1 else f"degrees {len(shown) + 1} to {L}"
            text += f"\n({hidden} not shown: --json lists every degree under \"rates\")"
    elif linear_note:
        text += f"\n\n{linear_note}"
    # issue 43: D_c was written as "critical_noise" until it was renamed; the old key stays (same value) for one
    # release, as in phase and kuramoto
    emit(args, with_aliases(payload), text)
    return 0


def _plot(hist, path: str, payload: dict) -> str:
    import matplotlib.pyplot as plt

    from numerics.common.plots import save_figure
    from numerics.noise.sphere import SphereGrid

    G = SphereGrid.build(hist.L)
    lon = np.linspace(-np.pi, np.pi, 181)
    lat = np.linspace(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3, 91)
    LO, LA = np.meshgrid(lon, lat)
    pts = np.stack([np.cos(LA) * np.cos(LO), np.cos(LA) * np.sin(LO), np.sin(LA)], -1).reshape(-1, 3)
    a, b = hist.unpacked()
    u = G.evaluate(a, b, pts).reshape(LA.shape)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.6, 1]})
    im = axes[0].pcolormesh(np.degrees(lon), np.degrees(lat), u, shading="auto", cmap="viridis")
    fig.colorbar(im, ax=axes[0], label="rho / rho_uniform")
    axes[0].set_xlabel("longitude (degrees)")
    axes[0].set_ylabel("latitude (degrees)")
    axes[0].set_title(f"density at t = {hist.times[-1]:.3g}")
    axes[1].plot(hist.times, hist.order_parameter, color="k", label="PDE: r(t) = |E x|")
    if payload.get("branch_r") is not None:
        axes[1].axhline(payload["branch_r"], color="tab:blue", ls="--", label="stable branch r")
    axes[1].set_xlabel("t")
    axes[1].set_ylabel("order parameter r")
    axes[1].set_ylim(0, 1.02)
    axes[1].legend(fontsize=8)
    fig.suptitle(f"{payload['model']} on S^2, beta = {payload['beta']:g}, D = {payload['noise']:g}, L = {hist.L}")
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
