"""``attnflow lost-in-the-middle``: the retrieval profile of causal attention with ALiBi on the circle (closed form
of the kinetic limit), its threshold t_crit(beta), and optionally the causal ALiBi particle system."""
from __future__ import annotations

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "lost-in-the-middle"
ORDER = 53
HELP = "lost in the middle: U-shaped retrieval profile of causal ALiBi attention on S^1 and its threshold t_crit"
DESCRIPTION = (HELP + ". S_t(s) = sum_n w_n kappa(1,s) psi_{a_n t}(Y_lambda(s)), a_n = n^2 I_n(beta), "
               "w_n = exp(-pi^2 n^2/(2 M^2)); U-shaped for t < t_crit = 2(1 - e^-lambda) sum w a / sum w a^2 "
               "(arXiv 2605.09213; proofs_notes/architectures-lost-in-the-middle.md).")
#: particle systems: tokens and runs above these are refused (each run integrates an N x N tangent, O(N^3) a stage)
MAX_TOKENS, MAX_RUNS = 512, 10000


def add_arguments(p):
    p.add_argument("--beta", type=float, required=True, help="inverse temperature, 0 < beta <= 700")
    p.add_argument("--alibi", type=float, default=1.0, metavar="LAMBDA",
                   help="ALiBi slope lambda >= 0 for labels s in [0, 1] (default 1)")
    p.add_argument("--window", type=float, default=8.0, metavar="M",
                   help="M > 0 of the window w_n = exp(-pi^2 n^2/(2 M^2)) (default 8, the authors' script)")
    p.add_argument("--modes", type=int, default=20, help="Fourier modes n = 1..modes (default 20, <= 200)")
    p.add_argument("--time-unit", choices=("paper", "sa"), default="paper",
                   help="paper: force W' = d/du e^(beta cos u) (rates n^2 I_n); sa: attnflow's causal softmax "
                        "(rates divided by beta I_0(beta)) (default paper)")
    p.add_argument("--times", metavar="T1,T2,...",
                   help="times at which the profile is tabulated (default t_crit/2, t_crit, 3 t_crit/2)")
    p.add_argument("--points", type=int, default=9, help="source positions s in the table (default 9, 3..101)")
    p.add_argument("--particles", type=int, metavar="N",
                   help="also run the causal ALiBi sa particle system with N tokens (needs --time-unit sa) and "
                        "report its binned profile (Monte Carlo, exact derivative estimator); default: none")
    p.add_argument("--runs", type=int, default=16, help="with --particles: independent uniform starts (default 16)")
    p.add_argument("--bins", type=int, default=8, help="with --particles: position bins (default 8)")
    p.add_argument("--dt", type=float, default=0.1, help="with --particles: RK4 step (default 0.1)")
    p.add_argument("--seed", type=int, default=0, help="with --particles: seed of the uniform starts (default 0)")
    p.add_argument("--plot", metavar="FILE.png", help="the profiles against s (and the particles' bins)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _times(text: str | None, tc: float) -> list[float]:
    if text is None:
        if tc <= 0:
            raise InputError("lambda = 0 gives t_crit = 0 (no recency at any time): give --times")
        return [0.5 * tc, tc, 1.5 * tc]
    from numerics.common.readers import comma_list

    values = comma_list(text, "--times")
    if len(values) > 12:
        raise InputError("--times takes 1 to 12 times")
    return [require_real(t, "time", minimum=0.0, maximum=1e3, strict_minimum=True) for t in values]


def run(args) -> int:
    import numpy as np

    from numerics.architectures import lost_in_the_middle as L
    from numerics.common.limits import check_work
    from numerics.common.provenance import StderrProgress

    beta, lam, M, n_max = L.validate(args.beta, args.alibi, args.window, args.modes)
    points = require_int(args.points, "points", minimum=3, maximum=101)
    tc = L.threshold(beta, lam, M, n_max, args.time_unit)
    times = _times(args.times, tc)
    if args.particles is not None and args.time_unit != "sa":
        raise InputError("--particles simulates attnflow's causal softmax: give --time-unit sa")
    sigma = np.linspace(1.0 / points, 1.0, points)
    grid = np.linspace(0.02, 1.0, 491)
    rows, profiles = [], []
    for t in times:
        values = L.profile(sigma, t, beta, lam, M, n_max, args.time_unit)
        shape = L.profile_shape(grid, L.profile(grid, t, beta, lam, M, n_max, args.time_unit))
        profiles.append({"t": t, "t_over_t_crit": t / tc if tc > 0 else None, "s": sigma.tolist(),
                         "profile": values.tolist(),
                         "right_end_slope": L.right_end_slope(t, beta, lam, M, n_max, args.time_unit), **shape})
        rows.append([f"{t:.4g}"] + [f"{v:.4g}" for v in values] + [f"{shape['argmin']:.3f}",
                                                                     "yes" if shape["u_shaped"] else "no"])
    payload = {"beta": beta, "lambda": lam, "M": M, "modes": n_max, "time_unit": args.time_unit, "t_crit": tc,
               "profiles": profiles}
    text = key_values([("beta", beta), ("lambda", lam), ("window M", M), ("modes", n_max),
                       ("time unit", args.time_unit), ("t_crit", f"{tc:.10g}")])
    text += "\n\n" + table(rows, ["t"] + [f"s={s:.3g}" for s in sigma] + ["argmin", "U"], max_width=12)
    text += "\n\nS_t(s) = sum_n w_n G_n(t, 1; s): N x correlation of the last token at t with the token at s at 0"
    part = None
    if args.particles is not None:
        N = require_int(args.particles, "particles", minimum=4, maximum=MAX_TOKENS)
        runs = require_int(args.runs, "runs", minimum=2, maximum=MAX_RUNS)
        bins = require_int(args.bins, "bins", minimum=1, maximum=N - 1)
        dt = require_real(args.dt, "dt", minimum=0.0, maximum=1.0, strict_minimum=True)
        seed = require_int(args.seed, "seed", minimum=0)
        steps = sum(max(1.0, np.ceil(t / dt)) for t in times)
        check_work(runs * steps * 4 * (2.0 * N**3 + 20.0 * N**2), "the particle runs")
        progress = StderrProgress("lost-in-the-middle --particles", unit="runs ")
        part = []
        prows = []
        for k, t in enumerate(times):
            pp = L.particle_profile(N, t, beta, lam, runs=runs, bins=bins, M=M, n_max=n_max, dt=dt, seed=seed,
                                    progress=(lambda done, total, k=k: progress(k * total + done,
                                                                                len(times) * total)))
            limit = L.profile(pp.centres, t, beta, lam, M, n_max, "sa")
            part.append({"t": t, "centres": pp.centres.tolist(), "mean": pp.mean.tolist(),
                         "stderr": pp.stderr.tolist(), "kinetic_limit": limit.tolist()})
            prows += [[f"{t:.4g}", f"{c:.3f}", f"{m:.4g}", f"{e:.2g}", f"{g:.4g}"]
                      for c, m, e, g in zip(pp.centres, pp.mean, pp.stderr, limit)]
        payload["particles"] = {"N": N, "runs": runs, "bins": bins, "dt": dt, "seed": seed, "profiles": part}
        text += "\n\n" + table(prows, ["t", "bin s", "particles", "stderr", "kinetic limit"])
    if args.plot:
        _plot(args.plot, beta, lam, M, n_max, args.time_unit, times, tc, part)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0


def _plot(path, beta, lam, M, n_max, unit, times, tc, part) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    from numerics.architectures import lost_in_the_middle as L
    from numerics.common.plots import save_figure

    s = np.linspace(0.02, 1.0, 400)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, t in enumerate(times):
        ax.plot(s, L.profile(s, t, beta, lam, M, n_max, unit), color=f"C{k}", lw=1.4,
                label=f"t = {t:.3g}" + (f" = {t / tc:.2g} t_crit" if tc > 0 else ""))
        if part is not None:
            ax.errorbar(part[k]["centres"], part[k]["mean"], yerr=2 * np.array(part[k]["stderr"]), fmt="o",
                        color=f"C{k}", ms=3, capsize=2)
    ax.set_xlabel("source position s")
    ax.set_ylabel("retrieval profile S_t(s)")
    ax.set_title(f"lost in the middle: beta = {beta:g}, lambda = {lam:g}, M = {M:g}, time unit {unit}", fontsize=10)
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=110, bbox_inches="tight")
