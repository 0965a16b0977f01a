"""``attnflow simulate``: integrate sa/usa dynamics on the sphere and save the trajectory (.npz)."""
from __future__ import annotations

import time

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, key_values
from numerics.core.ensemble_cli import add_batch_arguments, batch_requested, refuse_inapplicable_step
from numerics.core.norm_options import FROM_INIT, initial_with_radii, norm_summary
from numerics.core.options import (MODEL_OPTIONS, RUN_OPTIONS, add_architecture_arguments,
                                   add_beta_scaling_arguments, add_dynamics_arguments, add_kernel_arguments,
                                   add_matrix_arguments, add_model_arguments, add_norm_arguments,
                                   add_position_arguments, add_save_arguments, add_solver_arguments, given_options,
                                   model_from_args, require_model_options, save_from_args, solver_from_args)
from numerics.core.options import parse_save_times  # noqa: F401  (re-exported: it was defined here)
from numerics.core.options import events_from_args
from numerics.core.events import events_summary

NAME = "simulate"
ORDER = 20
HELP = "simulate self-attention dynamics on the sphere and save the trajectory (.npz)"
#: the three ways to call it (argparse would show the model options as optional brackets)
USAGE = ("attnflow simulate --model {sa,usa} --beta BETA (--n N --d D | --init FILE.npy) --t-end T_END --out OUT "
         "[options]\n       attnflow simulate --resume FILE.npz --t-end T_END --out OUT [options]")
#: its file inputs and outputs (and the in-place pair --resume F --out F) are declared in numerics.common.paths


def add_arguments(p):
    # the groups that describe the simulation are shared with the batch path and other commands
    # (numerics.core.options); --model, --n, --d, --beta form a group of their own (required unless --resume)
    add_model_arguments(p)
    add_beta_scaling_arguments(p)
    p.add_argument("--t-end", type=float, required=True, help="final time (in --time-unit)")
    p.add_argument("--seed", type=int, default=0, help="seed of the uniform initial condition (default 0)")
    p.add_argument("--init", help="initial condition: .npy file of shape (n, d) with unit rows")
    p.add_argument("--normalize", action="store_true", help="renormalise the rows of --init instead of rejecting")
    add_matrix_arguments(p)
    add_architecture_arguments(p)
    add_position_arguments(p)
    add_kernel_arguments(p, "the dynamics (Q = K = V = I, natural time; sa needs phi' > 0)")
    add_norm_arguments(p)
    add_dynamics_arguments(p)
    add_solver_arguments(p)
    add_save_arguments(p)
    p.add_argument("--resume", metavar="FILE.npz", help="continue a saved trajectory up to --t-end (parameters "
                   "from its metadata)")
    p.add_argument("--out", required=True, help="output trajectory .npz")
    p.add_argument("--plot", metavar="FILE.png", help="figure: particles at several times and the energy curve")
    p.add_argument("--projection", choices=("first", "pca"), default="pca",
                   help="--plot for d > 3: the first two coordinates or the two leading principal axes of the "
                        "final state (default pca)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_batch_arguments(p)  # --batch, --betas, --seeds: an ensemble (numerics.core.ensemble_cli)


def run(args) -> int:
    wall_start = time.perf_counter()
    from numerics.core.blocks import architecture_summary
    from numerics.core.record import load_initial
    from numerics.core.simulate import initial_state, resume, simulate, with_provenance

    progress = StderrProgress("simulate")
    progress.energy = StderrProgress("simulate: energy", unit="frames ")  # the driver's energy-phase progress
    if args.resume:
        # the saved run's model, solver and spacing continue: every option that would describe another one (a new
        # start, a batch, or a value other than an option's default) is refused rather than ignored
        given = given_options(args, MODEL_OPTIONS + ("init", "normalize", "seed", "batch", "betas", "seeds")
                              + RUN_OPTIONS, defaults={"seed": 0, "normalize": False})
        if given:
            raise InputError(f"--resume continues with the parameters saved in {args.resume}; "
                             f"do not pass {', '.join(given)}")
        if args.save_times:
            raise InputError("--save-times does not apply to --resume (the saved run's spacing is kept)")
        refuse_inapplicable_step(args, batch=False)
        traj = resume(args.resume, args.t_end, progress=progress)
        if traj.X.ndim == 4:  # an ensemble file resumes as an ensemble (the one driver) and reports as one
            from numerics.core.ensemble_cli import report_resumed

            return report_resumed(args, traj, wall_start)
    elif batch_requested(args):
        from numerics.core.ensemble_cli import run_batch

        # the same translation to a Model (numerics.core.options); the ensemble driver refuses what it cannot batch
        return run_batch(args, wall_start)
    else:
        refuse_inapplicable_step(args, batch=False)
        require_model_options(args)
        radii = None
        if args.init and args.radius0 == FROM_INIT:  # un-normalised rows: directions and radii (norm_options)
            X0, radii = initial_with_radii(args.init)
        else:
            X0 = load_initial(args.init, normalize=args.normalize) if args.init else None
        d = X0.shape[1] if X0 is not None else args.d
        model = model_from_args(args, d, radii)
        solver = solver_from_args(args, seed=args.seed if args.noise_seed is None else args.noise_seed)
        save = save_from_args(args, X0.size if X0 is not None else abs(args.n or 1) * abs(args.d or 1))
        X0, init = initial_state(args.n, args.d, X0, args.seed, args.normalize)
        traj = with_provenance(simulate(model, X0, args.t_end, solver=solver, save=save, progress=progress,
                                        events=events_from_args(args)), seed=args.seed, init=init)
    write_start = time.perf_counter()
    traj.save(args.out)
    if args.plot:
        from numerics.common.plots import plot_trajectory
        from numerics.core.plugins import load_plugin

        # the panels' cluster counts come from the clusters area, a plug-in of the core (the core imports no area)
        detection = load_plugin("numerics.clusters.detection")
        counter = None if detection is None else (lambda X, eps: detection.find_clusters(X, eps, normalize=True).count)
        plot_trajectory(traj, args.plot, projection=args.projection, counter=counter)
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
    if meta.get("events"):  # --stop-when: whether and when the system stopped
        payload["events"] = events_summary(meta)
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
