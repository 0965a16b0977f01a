"""``attnflow kuramoto``: self-attention dynamics on the circle in angle form (Fourier fast path)."""
from __future__ import annotations

import numpy as np

from numerics.common.plots import save_figure
from numerics.common.errors import InputError
from numerics.core.names import METHODS, MODELS, TIME_UNITS
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, key_values, table

NAME = "kuramoto"
ORDER = 40
HELP = "simulate sa/usa on the circle S^1 as a Kuramoto model with Bessel harmonics (O(n K) Fourier field)"

#: above this n the R^2 sphere simulation (O(n^2) per step) is not run for the correspondence check
SPHERE_CHECK_MAX_N = 2000
#: at most this many particle lines in the plot
PLOT_MAX_LINES = 400


def add_arguments(p):
    p.add_argument("--model", required=True, choices=MODELS, help="sa (softmax) or usa (unnormalised)")
    p.add_argument("--n", required=True, type=int, help="number of particles")
    p.add_argument("--beta", required=True, type=float, help="inverse temperature")
    p.add_argument("--t-end", required=True, type=float, help="final time (in --time-unit)")
    p.add_argument("--dt", type=float, default=0.01, help="time step for layer/rk4 (default 0.01)")
    p.add_argument("--method", choices=METHODS, default="rk4", help="integrator (default rk4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the uniform initial angles (default 0)")
    p.add_argument("--time-unit", choices=TIME_UNITS, default="natural",
                   help="usa only: rescaled means t' = e^beta t (default natural)")
    p.add_argument("--tol", type=float, default=1e-12, help="Fourier truncation tolerance (default 1e-12)")
    p.add_argument("--save-every", type=int, default=1, help="keep every k-th step (layer/rk4)")
    p.add_argument("--plot", metavar="FILE.png", help="angles over time, order parameter and energy")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.circle.angles import simulate_circle, sphere_angle_deviation

    if args.n < 1:
        raise InputError(f"--n must be >= 1, got {args.n}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    circ = simulate_circle(args.model, args.beta, args.t_end, n=args.n, seed=args.seed, method=args.method,
                           dt=args.dt, save_every=args.save_every, time_unit=args.time_unit, tol=args.tol,
                           progress=StderrProgress("kuramoto"))
    if args.n <= SPHERE_CHECK_MAX_N:
        check = sphere_angle_deviation(circ, progress=StderrProgress("kuramoto: sphere check (direct, O(n^2) per step)"))
        deviation, note = check["max_angle_deviation"], ("max over saved times and particles of the circular "
                                                         "distance between the R^2 sphere simulation (backend "
                                                         f"{check['backends']['sphere']}, same integrator and step) "
                                                         "and the angle simulation (backend "
                                                         f"{check['backends']['angles']})")
    else:
        deviation, note = None, (f"skipped: n = {args.n} > {SPHERE_CHECK_MAX_N} (the R^2 sphere simulation is "
                                 "O(n^2) per step)")
    m = circ.meta
    payload = {
        "model": m["model"], "beta": m["beta"], "n": m["n"], "t_end": m["t_end"], "time_unit": m["time_unit"],
        "method": m["method"], "dt": m["dt"], "seed": m["seed"], "harmonics": m["harmonics"], "tol": m["tol"],
        "times": circ.times, "order_parameter": circ.order_parameter, "energy": circ.energy,
        "energy_normalization": m["energy_normalization"], "max_angle_deviation": deviation,
        "max_angle_deviation_note": note, "seconds": m["seconds"], "scheme": m["scheme"],
    }
    if args.plot:
        payload["plot"] = _plot(circ, args.plot)
    picks = np.unique(np.linspace(0, circ.times.size - 1, 6).round().astype(int))
    text = key_values([
        ("model", m["model"]), ("beta", m["beta"]), ("n", m["n"]), ("time unit", m["time_unit_note"]),
        ("integrator", f"{m['method']} ({m['scheme']}), dt={m['dt']}"), ("harmonics K", m["harmonics"]),
        ("final order parameter |r_1|", float(circ.order_parameter[-1])),
        ("max angle deviation (sphere vs angle)", "skipped" if deviation is None else deviation),
        ("seconds (angle simulation)", m["seconds"]),
    ])
    text += "\n\n" + table([(circ.times[i], circ.order_parameter[i], circ.energy[i]) for i in picks],
                           ["t", "|r_1|", f"energy ({m['energy_normalization']})"])
    if deviation is None:
        text += f"\n\nnote: {note}"
    emit(args, payload, text)
    return 0


def wrapped_paths(theta: np.ndarray) -> np.ndarray:
    """Angles (m, k) wrapped to [-pi, pi), with NaN where a path crosses +-pi (so no line jumps across the
    plot): one cluster is drawn once, where unwrapped angles drew it at theta and theta + 2 pi."""
    w = np.angle(np.exp(1j * np.asarray(theta, float)))
    jumps = np.abs(np.diff(w, axis=0)) > np.pi
    out = w.copy()
    out[1:][jumps] = np.nan
    return out


def _plot(circ, path: str) -> str:
    import matplotlib.pyplot as plt

    theta = circ.theta
    n = theta.shape[1]
    shown = np.unique(np.linspace(0, n - 1, min(n, PLOT_MAX_LINES)).round().astype(int))
    colours = plt.get_cmap("hsv")((np.mod(theta[0, shown], 2 * np.pi)) / (2 * np.pi))
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    wrapped = wrapped_paths(theta[:, shown])
    for c, j in zip(colours, range(shown.size)):
        axes[0].plot(circ.times, wrapped[:, j], color=c, lw=0.6)
    m = circ.meta
    axes[0].set_ylim(-np.pi, np.pi)
    axes[0].set_yticks([-np.pi, -np.pi / 2, 0, np.pi / 2, np.pi], ["-pi", "-pi/2", "0", "pi/2", "pi"])
    axes[0].set_ylabel("theta_i wrapped to [-pi, pi)\n(the top and bottom edges are one point)")
    axes[0].set_title(f"{m['model']} on S^1, beta={m['beta']:g}, n={n}"
                      + (f" ({shown.size} lines shown)" if shown.size < n else "")
                      + ", colour = initial angle")
    axes[1].plot(circ.times, circ.order_parameter, color="k")
    axes[1].set_ylabel("|r_1(t)|")
    axes[1].set_ylim(0, 1.05)
    axes[2].plot(circ.times, circ.energy, color="C3")
    axes[2].set_ylabel(f"energy ({m['energy_normalization']})")
    axes[2].set_xlabel(f"t ({m['time_unit_note']})")
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)
