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
#: at most this many particle lines in the plot of a noisy run
NOISY_PLOT_MAX_LINES = 40


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
    p.add_argument("--noise", type=float, default=0.0, metavar="D",
                   help="D >= 0: noisy Kuramoto, each token also diffuses (sqrt(2D) dB on the angle); runs the "
                        "sphere model with noise (layer = Euler-Maruyama, rk4 = weak order 2) and compares r with "
                        "the stationary Bessel prediction r = I_1(K r/D)/I_0(K r/D) (beta = 0, K = 1, K_c = 2D)")
    p.add_argument("--noise-seed", type=int, help="seed of the noise (default: --seed)")
    p.add_argument("--plot", metavar="FILE.png", help="angles over time, order parameter and energy")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.circle.angles import simulate_circle, sphere_angle_deviation

    if args.n < 1:
        raise InputError(f"--n must be >= 1, got {args.n}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    if args.noise != 0.0 or args.noise_seed is not None:
        return _run_noisy(args)
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


def stationary_prediction(model: str, beta: float, noise: float, time_unit: str = "natural") -> dict:
    """The stationary order parameter of the noisy model at beta = 0 (sa and usa coincide there): the Kuramoto
    coupling is K = 1 (d theta_i/dt = (1/n) sum_j sin(theta_j - theta_i)), the critical noise K_c = 2 D, i.e.
    D_c = 1/2, and for D < D_c the positive root of r = I_1(K r/D)/I_0(K r/D) (theory.noise.kuramoto_order_parameter;
    Bertini-Giacomin-Pakdaman 2010). For beta != 0 only the linear threshold D_c(beta) is given (the stationary
    branch of usa is ``attnflow phase --beta B --d 2 --noise D``).

    ``time_unit="rescaled"`` (usa, t' = e^beta t): the simulation's drift is e^{-beta} v and its noise D acts per
    unit of t', so the threshold in that unit is D_c' = e^{-beta} D_c (scaled in mpmath: finite even where the
    natural-time D_c overflows a float); at beta = 0 both units coincide."""
    from theory.noise import critical_noise, growth_rate, kuramoto_order_parameter, laplacian_eigenvalue

    if time_unit == "rescaled":
        import mpmath

        Dc = max(float(growth_rate(model, 2, l, beta) * mpmath.exp(-beta) / laplacian_eigenvalue(l, 2))
                 for l in range(1, 41))  # critical_noise's maximum over l <= 40, each rate times e^{-beta}
    else:
        Dc = critical_noise(model, 2, beta)[0]
    if beta == 0.0:
        # "critical_noise": the key's old name, an alias for one release (issue 43, CHANGELOG)
        return {"coupling_K": 1.0, "linear_stability_threshold": 0.5, "critical_noise": 0.5,
                "r": kuramoto_order_parameter(noise),
                "equation": "r = I_1(K r/D) / I_0(K r/D), K = 1 (K_c = 2D: D_c = 1/2)"}
    branch = (f"stationary branch: attnflow phase --beta {beta:g} --d 2 --noise D" if model == "usa"
              else "no stationary branch for sa (the self-consistency branch is derived for usa)")
    return {"coupling_K": None, "linear_stability_threshold": Dc, "critical_noise": Dc, "r": None,
            "equation": f"beta = {beta:g} != 0: not a one-harmonic Kuramoto model; linear-stability threshold D_c(beta) = "
                        f"{Dc:.6g}" + (" (per unit of t' = e^beta t: e^-beta times the natural-time value)"
                                       if time_unit == "rescaled" else "") + f"; {branch}"}


def _run_noisy(args) -> int:
    """The noisy Kuramoto model through the model object: Model(noise=D), simulate on S^1 in R^2, r(t) = |mean x|."""
    from numerics.circle.angles import CircleTrajectory, initial_angles
    from numerics.common.errors import require_real
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.simulate import simulate, with_provenance

    noise = require_real(args.noise, "noise", minimum=0.0)
    if noise == 0.0:
        raise InputError("--noise-seed needs --noise D > 0")
    if args.method not in ("layer", "rk4"):
        raise InputError(f"with --noise use --method layer (Euler-Maruyama) or rk4 (weak order 2), got {args.method}")
    noise_seed = args.seed if args.noise_seed is None else args.noise_seed
    model = Model(args.model, args.beta, time_unit=args.time_unit, noise=noise)
    theta0 = initial_angles(args.n, args.seed)
    X0 = np.stack([np.cos(theta0), np.sin(theta0)], axis=1)
    traj = simulate(model, X0, args.t_end, solver=Solver(args.method, dt=args.dt, backend="auto", seed=noise_seed),
                    save=SaveAt(every=args.save_every), progress=StderrProgress("kuramoto --noise"))
    with_provenance(traj, seed=args.seed, init="uniform")
    theta = np.unwrap(np.arctan2(traj.X[..., 1], traj.X[..., 0]), axis=0)
    r = np.linalg.norm(traj.X.mean(axis=1), axis=1)
    late = traj.times >= traj.times[-1] / 2
    pred = stationary_prediction(args.model, args.beta, noise, model.time_unit)
    m = traj.meta
    meta = {"model": m["model"], "beta": m["beta"], "n": m["n"], "t_end": m["t_end"], "time_unit": m["time_unit"],
            "time_unit_note": m["time_unit_note"], "method": m["method"], "dt": m["dt"], "seed": args.seed,
            "noise": noise, "noise_seed": noise_seed, "scheme": m["scheme"], "backend": m["backend"],
            "energy_normalization": m["energy_normalization"], "seconds": m["seconds"]}
    circ = CircleTrajectory(times=traj.times, theta=theta, order_parameter=r, energy=traj.energy, meta=meta)
    payload = {**meta, "times": traj.times, "order_parameter": r, "energy": traj.energy,
               "r_late_mean": float(r[late].mean()), "r_late_std": float(r[late].std()),
               "late_window": [float(traj.times[-1] / 2), float(traj.times[-1])], "prediction": pred,
               "finite_n_note": f"|mean x| of n = {args.n} tokens fluctuates by O(1/sqrt(n)) around the mean-field r "
                                "(and is O(1/sqrt(n)) above D_c, where the mean-field r is 0)"}
    if args.plot:
        payload["plot"] = _plot(circ, args.plot, prediction=pred["r"])
    picks = np.unique(np.linspace(0, traj.times.size - 1, 6).round().astype(int))
    text = key_values([
        ("model", meta["model"]), ("beta", meta["beta"]), ("n", meta["n"]), ("noise D", noise),
        ("noise seed", noise_seed), ("time unit", meta["time_unit_note"]),
        ("integrator", f"{meta['method']} ({meta['scheme']}), dt={meta['dt']}"), ("backend", meta["backend"]),
        ("mean |r_1| over [t_end/2, t_end]", f"{payload['r_late_mean']:.6g} (std {payload['r_late_std']:.3g})"),
        ("stationary prediction r", "-" if pred["r"] is None else pred["r"]),
        ("linear-stability threshold D_c", pred["linear_stability_threshold"]), ("prediction", pred["equation"]),
    ])
    text += "\n\n" + table([(traj.times[i], r[i], traj.energy[i]) for i in picks],
                             ["t", "|r_1|", f"energy ({meta['energy_normalization']})"])
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


def _plot(circ, path: str, prediction: float | None = None) -> str:
    import matplotlib.pyplot as plt

    theta = circ.theta
    n = theta.shape[1]
    # noisy paths are jagged: fewer lines keep the picture readable
    most = NOISY_PLOT_MAX_LINES if circ.meta.get("noise") else PLOT_MAX_LINES
    shown = np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int))
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
                      + (f", noise D={m['noise']:g}" if m.get("noise") else "")
                      + (f" ({shown.size} lines shown)" if shown.size < n else "")
                      + ", colour = initial angle")
    axes[1].plot(circ.times, circ.order_parameter, color="k", label="|r_1(t)|")
    if prediction is not None:
        axes[1].axhline(prediction, color="tab:blue", ls="--",
                        label=f"stationary r = I_1(r/D)/I_0(r/D) = {prediction:.4g}")
        axes[1].legend(fontsize=8, loc="lower right")
    axes[1].set_ylabel("|r_1(t)|")
    axes[1].set_ylim(0, 1.05)
    axes[2].plot(circ.times, circ.energy, color="C3")
    axes[2].set_ylabel(f"energy ({m['energy_normalization']})")
    axes[2].set_xlabel(f"t ({m['time_unit_note']})")
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)
