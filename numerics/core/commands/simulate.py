"""``attnflow simulate``: integrate sa/usa dynamics on the sphere and save the trajectory (.npz)."""
from __future__ import annotations

import math
import time

import numpy as np

from numerics.common.errors import InputError
from numerics.common.limits import check_array
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, key_values
from numerics.core.ensemble_cli import add_batch_arguments, batch_requested, refuse_inapplicable_step
from numerics.core.beta_scaling import add_beta_scaling_arguments, scaling_from_args
from numerics.core.kernel_options import add_kernel_arguments, kernel_from_args
from numerics.core.names import ADAPTIVE_METHODS, BACKENDS, METHODS, MODELS, TIME_UNITS
from numerics.core.norm_options import (FROM_INIT, NORM_OPTIONS, add_norm_arguments, initial_with_radii,
                                       norm_from_args, norm_summary, refuse_batch_norm)
from numerics.core.positions import add_position_arguments

NAME = "simulate"
ORDER = 20
HELP = "simulate self-attention dynamics on the sphere and save the trajectory (.npz)"
#: the three ways to call it (argparse would show the model options as optional brackets)
USAGE = ("attnflow simulate --model {sa,usa} --beta BETA (--n N --d D | --init FILE.npy) --t-end T_END --out OUT "
         "[options]\n       attnflow simulate --resume FILE.npz --t-end T_END --out OUT [options]")
INPUTS = ("init", "matrices", "resume", "positions")
OUTPUTS = ("out", "plot")
#: --resume F --out F continues a run in place: the input is read completely before the output is written
IN_PLACE = (("resume", "out"),)


def add_arguments(p):
    # required unless --resume (which reads them from the file); --init gives n and d: one group, not "options"
    model = p.add_argument_group("model (required, no defaults; --resume reads all four from its file, --init "
                                 "gives --n and --d)")
    model.add_argument("--model", choices=MODELS, help="sa (softmax) or usa (unnormalised)")
    model.add_argument("--n", type=int, help="number of particles (tokens)")
    model.add_argument("--d", type=int, help="ambient dimension (particles on S^{d-1})")
    model.add_argument("--beta", type=float, help="inverse temperature (or --beta-scaling log --gamma G)")
    add_beta_scaling_arguments(p)
    p.add_argument("--t-end", type=float, required=True, help="final time (in --time-unit)")
    p.add_argument("--dt", type=float, help="step (layer, rk4; default 0.05); initial step hint for adaptive")
    p.add_argument("--method", choices=METHODS, default="rk4",
                   help="integrator (default rk4); adaptive = dop853 at --rtol <= 1e-3, dp5 above (recorded)")
    p.add_argument("--seed", type=int, default=0, help="seed of the uniform initial condition (default 0)")
    p.add_argument("--init", help="initial condition: .npy file of shape (n, d) with unit rows")
    p.add_argument("--normalize", action="store_true", help="renormalise the rows of --init instead of rejecting")
    p.add_argument("--matrices", metavar="FILE.npz", help="attention matrices: arrays Q, K and/or V (d x d; "
                   "missing ones are the identity), used as given: scores beta <Q x, K y>, no 1/sqrt(d) (--heads "
                   "scales by 1/sqrt(k); docs/conventions.md, section 11)")
    p.add_argument("--heads", metavar="FILE.npz", help="several heads: arrays Q, K, V, W each (H, k, d) "
                   "(scores beta <Q_h x, K_h y>/sqrt(k); optional scalar 'scale' replaces 1/sqrt(k): one head with "
                   "scale 1 and W = I is --matrices, whose Q, K are used as given)")
    p.add_argument("--mlp", metavar="FILE.npz", help="MLP on each head's output: arrays W1 (m, d), b1 (m,), "
                   "W2 (d, m), b2 (d,) and optional string 'activation' (relu, gelu, tanh, identity)")
    p.add_argument("--schedule", metavar="FILE.npz", help="depth schedule: 'times' (L,) and per-layer heads Q, K, V, "
                   "W (L, H, k, d) and optional MLP arrays with a leading layer axis")
    p.add_argument("--causal", action="store_true", default=None,
                   help="causal mask: token i attends to tokens j <= i (row order)")
    add_position_arguments(p)
    add_kernel_arguments(p, "the dynamics (Q = K = V = I, natural time; sa needs phi' > 0)")
    add_norm_arguments(p)
    p.add_argument("--save-every", type=int, default=1, help="keep every k-th step (fixed-step methods)")
    p.add_argument("--save-times", metavar="TIMES",
                   help="keep the states at these times (every method): a comma list 't1,t2,...' or 'log:T0:T1:N' "
                        "(N log-spaced times from T0 > 0 to T1); t = 0 and --t-end are always kept")
    p.add_argument("--time-unit", choices=TIME_UNITS, default="natural",
                   help="usa only: 'rescaled' integrates in t' = e^beta t (finite for any beta)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="field evaluation: direct sums, fourier (d=2, Q=K=V=I), numba (fused compiled kernel; "
                        "pip install 'attnflow[fast]'), harmonic (d=3, Q^T K = aI, V = bI: spherical harmonics, "
                        "tolerance 1e-10), or auto (never numba; default auto)")
    p.add_argument("--noise", type=float, default=0.0, help="D >= 0: Brownian noise sqrt(2D) P_x o dB on each token "
                   "(layer = Euler-Maruyama, rk4 = weak-order-2 splitting)")
    p.add_argument("--noise-seed", type=int, help="seed of the noise (default: --seed)")
    p.add_argument("--rtol", type=float, default=1e-9, help="adaptive: relative tolerance")
    p.add_argument("--atol", type=float, default=1e-12, help="adaptive: absolute tolerance")
    p.add_argument("--resume", metavar="FILE.npz", help="continue a saved trajectory up to --t-end (parameters "
                   "from its metadata)")
    p.add_argument("--out", required=True, help="output trajectory .npz")
    p.add_argument("--plot", metavar="FILE.png", help="figure: particles at several times and the energy curve")
    p.add_argument("--projection", choices=("first", "pca"), default="pca",
                   help="--plot for d > 3: the first two coordinates or the two leading principal axes of the "
                        "final state (default pca)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_batch_arguments(p)  # --batch, --betas, --seeds: an ensemble (numerics.core.ensemble_cli)


def parse_save_times(text: str, t_end: float, frame_size: int = 1) -> np.ndarray:
    """Save times from ``--save-times``: ``'t1,t2,...'`` or ``'log:T0:T1:N'``; 0 and ``t_end`` are added.

    Every time must lie in (0, t_end]; the result increases strictly from 0 to t_end. N is checked against the
    memory limit (N frames of ``frame_size`` = n d numbers each) before the times are made.
    """
    text = text.strip()
    try:
        if text.startswith("log:"):
            parts = text[4:].split(":")
            if len(parts) != 3:
                raise InputError(f"--save-times log form is log:T0:T1:N, got {text!r}")
            t0, t1, count = float(parts[0]), float(parts[1]), int(parts[2])
            if not (math.isfinite(t0) and math.isfinite(t1) and 0 < t0 < t1) or count < 2:
                raise InputError(f"--save-times log:T0:T1:N needs 0 < T0 < T1 and N >= 2, got {text!r}")
            # every saved time keeps a frame of frame_size numbers: refuse before allocating the times
            check_array((count, frame_size + 3), f"--save-times with {count} times (frames of {frame_size} numbers)")
            times = np.geomspace(t0, t1, count)
        else:
            times = np.array([float(v) for v in text.split(",") if v.strip()])
    except InputError:
        raise
    except ValueError:
        raise InputError(f"--save-times must be a comma list of times or log:T0:T1:N, got {text!r}") from None
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError(f"--save-times holds no finite time: {text!r}")
    if np.any(np.diff(times) <= 0):
        raise InputError(f"--save-times must increase strictly, got {text!r}")
    if times[0] < 0 or times[-1] > t_end * (1 + 1e-12):
        raise InputError(f"--save-times must lie in [0, --t-end = {t_end:g}], got {times[0]:g}..{times[-1]:g}")
    times = np.minimum(times, t_end)
    if times[0] > 0:
        times = np.concatenate([[0.0], times])
    if times[-1] < t_end:
        times = np.concatenate([times, [t_end]])
    return times


def run(args) -> int:
    wall_start = time.perf_counter()
    from numerics.core.blocks import architecture_from_args, architecture_summary
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import initial_state, load_attention_matrices, load_initial, resume, simulate

    progress = StderrProgress("simulate")
    energy_progress = StderrProgress("simulate: energy", unit="frames ")
    if args.resume:
        given = [f"--{k.replace('_', '-')}" for k in ("model", "n", "d", "beta", "init", "dt", "matrices", "kernel",
                                                            "heads", "mlp", "schedule", "causal", "batch", "betas",
                                                            "seeds", "alibi", "rope", "positions", "beta_scaling",
                                                            "gamma")
                 + NORM_OPTIONS if getattr(args, k) is not None]
        if given:
            raise InputError(f"--resume continues with the parameters saved in {args.resume}; "
                             f"do not pass {', '.join(given)}")
        if args.save_times:
            raise InputError("--save-times does not apply to --resume (the saved run's spacing is kept)")
        refuse_inapplicable_step(args, batch=False)
        traj = resume(args.resume, args.t_end, progress=progress, energy_progress=energy_progress)
    elif batch_requested(args):
        from numerics.core.ensemble_cli import run_batch

        refuse_batch_norm(args)  # the batch path would otherwise run the sphere flow and drop them silently

        return run_batch(args, wall_start, parse_save_times)
    else:
        refuse_inapplicable_step(args, batch=False)
        missing = [f"--{k}" for k in ("model", "beta") if getattr(args, k) is None
                   and not (k == "beta" and args.beta_scaling == "log")]
        if args.init is None:
            missing += [f"--{k}" for k in ("n", "d") if getattr(args, k) is None]
        if missing:
            raise InputError(f"simulate needs {', '.join(missing)} (or --resume FILE.npz)")
        radii = None
        if args.init and args.radius0 == FROM_INIT:  # un-normalised rows: directions and radii (norm_options)
            X0, radii = initial_with_radii(args.init)
        else:
            X0 = load_initial(args.init, normalize=args.normalize) if args.init else None
        d = X0.shape[1] if X0 is not None else args.d
        mats = load_attention_matrices(args.matrices, d if isinstance(d, int) and d >= 2 else None) \
            if args.matrices else {}
        model = Model(kind=args.model, **scaling_from_args(args), kernel=kernel_from_args(args),
                      time_unit=args.time_unit, noise=args.noise, **mats, **architecture_from_args(args),
                      **norm_from_args(args, radii))
        dt = args.dt if (args.dt is not None or args.method in ADAPTIVE_METHODS) else 0.05
        noise_seed = args.seed if args.noise_seed is None else args.noise_seed
        solver = Solver(method=args.method, dt=dt, rtol=args.rtol, atol=args.atol, backend=args.backend,
                        seed=noise_seed)
        frame = (X0.size if X0 is not None else abs(args.n or 1) * abs(args.d or 1))
        save_times = None if args.save_times is None else parse_save_times(args.save_times, args.t_end, frame)
        save = SaveAt(every=args.save_every, times=save_times)
        X0, init = initial_state(args.n, args.d, X0, args.seed, args.normalize)
        traj = simulate(model, X0, args.t_end, solver=solver, save=save, progress=progress,
                        energy_progress=energy_progress, provenance={"seed": args.seed, "init": init})
    write_start = time.perf_counter()
    traj.save(args.out)
    if args.plot:
        from numerics.common.plots import plot_trajectory

        plot_trajectory(traj, args.plot, projection=args.projection)
    write_seconds = time.perf_counter() - write_start
    meta = traj.meta
    energy = traj.energy
    # Round-off in a sum of n^2 exponentials: allow decreases of 1e-12 relative to the energy's size.
    slack = 1e-12 * max(1.0, float(np.max(np.abs(energy))))
    monotone = bool(np.all(np.diff(energy) >= -slack))
    norm_error = float(np.max(np.abs(np.linalg.norm(traj.X, axis=2) - 1.0)))
    payload = {
        "out": args.out, "n": meta["n"], "d": meta["d"], "beta": meta["beta"], "model": meta["model"],
        **({"beta_scaling": meta["beta_scaling"], "gamma": meta["gamma"]} if "beta_scaling" in meta else {}),
        "method": meta["method"], "noise": meta.get("noise") or None,
        "noise_seed": meta.get("noise_seed"), "backend": meta.get("backend"), "time_unit": meta["time_unit"],
        "kernel": (meta.get("kernel") or {}).get("expr"),
        "architecture": architecture_summary(traj.model) if meta.get("causal") is not None else None,
        "t_end": float(traj.times[-1]), "frames": int(traj.times.size), "final_energy": float(energy[-1]),
        "energy_normalization": meta["energy_normalization"], "energy_monotone": monotone,
        "energy_is_lyapunov": meta.get("energy_is_lyapunov"), "max_norm_error": norm_error,
        "energy_method": meta.get("energy_method"),
        "resumed_from": args.resume, **norm_summary(traj),
    }
    if meta["method"] == "adaptive":  # the scheme the automatic choice ran (dop853 or dp5), right after the method
        items = list(payload.items())
        at = [k for k, _ in items].index("method") + 1
        payload = dict(items[:at] + [("method_used", meta.get("method_used"))] + items[at:])
    timings = meta.get("timings", {})
    seconds = time.perf_counter() - wall_start
    payload["seconds"] = seconds  # wall time of the whole command
    payload["timings"] = {"integrate": float(timings.get("integrate", meta["seconds"])),
                          "energy": float(timings.get("energy", 0.0)), "write": write_seconds,
                          "other": max(0.0, seconds - float(timings.get("integrate", meta["seconds"]))
                                       - float(timings.get("energy", 0.0)) - write_seconds)}
    payload["versions"] = meta.get("versions")
    payload["plot"] = args.plot
    shown = [(k, v) for k, v in payload.items() if v is not None and k not in ("timings", "versions", "plot")]
    shown = [(k, f"{v:.3g} (integrate {payload['timings']['integrate']:.3g}, energy "
                 f"{payload['timings']['energy']:.3g}, write {write_seconds:.3g}, other "
                 f"{payload['timings']['other']:.3g})") if k == "seconds" else (k, v) for k, v in shown]
    text = key_values(shown)
    emit(args, payload, text)
    return 0
