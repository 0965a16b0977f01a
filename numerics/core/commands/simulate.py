"""``attnflow simulate``: integrate sa/usa dynamics on the sphere and save the trajectory (.npz)."""
from __future__ import annotations

import os

import numpy as np

from numerics.common.errors import InputError
from numerics.common.kernel_options import add_kernel_arguments, kernel_from_args
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, key_values
from numerics.core.names import BACKENDS, METHODS, MODELS, TIME_UNITS

NAME = "simulate"
ORDER = 20
HELP = "simulate self-attention dynamics on the sphere and save the trajectory (.npz)"


def add_arguments(p):
    p.add_argument("--model", choices=MODELS, help="sa (softmax) or usa (unnormalised)")
    p.add_argument("--n", type=int, help="number of particles (tokens)")
    p.add_argument("--d", type=int, help="ambient dimension (particles on S^{d-1})")
    p.add_argument("--beta", type=float, help="inverse temperature")
    p.add_argument("--t-end", type=float, required=True, help="final time (in --time-unit)")
    p.add_argument("--dt", type=float, help="step (layer, rk4; default 0.05); initial step hint for adaptive")
    p.add_argument("--method", choices=METHODS, default="rk4", help="integrator (default rk4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the uniform initial condition (default 0)")
    p.add_argument("--init", help="initial condition: .npy file of shape (n, d) with unit rows")
    p.add_argument("--normalize", action="store_true", help="renormalise the rows of --init instead of rejecting")
    p.add_argument("--matrices", metavar="FILE.npz", help="attention matrices: arrays Q, K and/or V (d x d; "
                   "missing ones are the identity)")
    add_kernel_arguments(p, "the dynamics (Q = K = V = I, natural time; sa needs phi' > 0)")
    p.add_argument("--save-every", type=int, default=1, help="keep every k-th step (fixed-step methods)")
    p.add_argument("--time-unit", choices=TIME_UNITS, default="natural",
                   help="usa only: 'rescaled' integrates in t' = e^beta t (finite for any beta)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="field evaluation: direct sums, fourier (d=2, Q=K=V=I), or auto")
    p.add_argument("--rtol", type=float, default=1e-9, help="adaptive: relative tolerance")
    p.add_argument("--atol", type=float, default=1e-12, help="adaptive: absolute tolerance")
    p.add_argument("--resume", metavar="FILE.npz", help="continue a saved trajectory up to --t-end (parameters "
                   "from its metadata)")
    p.add_argument("--out", required=True, help="output trajectory .npz")
    p.add_argument("--plot", metavar="FILE.png", help="figure: particles at several times and the energy curve")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _check_writable(path: str, what: str) -> None:
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise InputError(f"cannot write {what} {path}: directory {directory} does not exist or is not writable")
    if os.path.isdir(path):
        raise InputError(f"cannot write {what} {path}: it is a directory")


def run(args) -> int:
    from numerics.core.model import Model, SaveAt, Solver
    from numerics.core.trajectory import initial_state, load_attention_matrices, load_initial, resume, simulate

    _check_writable(args.out, "output")
    if args.plot:
        _check_writable(args.plot, "plot")
    progress = StderrProgress("simulate")
    if args.resume:
        given = [f"--{k.replace('_', '-')}" for k in ("model", "n", "d", "beta", "init", "dt", "matrices", "kernel")
                 if getattr(args, k) is not None]
        if given:
            raise InputError(f"--resume continues with the parameters saved in {args.resume}; "
                             f"do not pass {', '.join(given)}")
        traj = resume(args.resume, args.t_end, progress=progress)
    else:
        missing = [f"--{k}" for k in ("model", "beta") if getattr(args, k) is None]
        if args.init is None:
            missing += [f"--{k}" for k in ("n", "d") if getattr(args, k) is None]
        if missing:
            raise InputError(f"simulate needs {', '.join(missing)} (or --resume FILE.npz)")
        X0 = load_initial(args.init, normalize=args.normalize) if args.init else None
        d = X0.shape[1] if X0 is not None else args.d
        mats = load_attention_matrices(args.matrices, d if isinstance(d, int) and d >= 2 else None) \
            if args.matrices else {}
        model = Model(kind=args.model, beta=args.beta, kernel=kernel_from_args(args), time_unit=args.time_unit,
                      **mats)
        dt = args.dt if (args.dt is not None or args.method == "adaptive") else 0.05
        solver = Solver(method=args.method, dt=dt, rtol=args.rtol, atol=args.atol, backend=args.backend)
        save = SaveAt(every=args.save_every)
        X0, init = initial_state(args.n, args.d, X0, args.seed, args.normalize)
        traj = simulate(model, X0, args.t_end, solver=solver, save=save, progress=progress,
                        provenance={"seed": args.seed, "init": init})
    traj.save(args.out)
    if args.plot:
        from numerics.common.plots import plot_trajectory

        plot_trajectory(traj, args.plot)
    meta = traj.meta
    energy = traj.energy
    # Round-off in a sum of n^2 exponentials: allow decreases of 1e-12 relative to the energy's size.
    slack = 1e-12 * max(1.0, float(np.max(np.abs(energy))))
    monotone = bool(np.all(np.diff(energy) >= -slack))
    norm_error = float(np.max(np.abs(np.linalg.norm(traj.X, axis=2) - 1.0)))
    payload = {
        "out": args.out, "n": meta["n"], "d": meta["d"], "beta": meta["beta"], "model": meta["model"],
        "method": meta["method"], "backend": meta.get("backend"), "time_unit": meta["time_unit"],
        "kernel": (meta.get("kernel") or {}).get("expr"),
        "t_end": float(traj.times[-1]), "frames": int(traj.times.size), "final_energy": float(energy[-1]),
        "energy_normalization": meta["energy_normalization"], "energy_monotone": monotone,
        "energy_is_lyapunov": meta.get("energy_is_lyapunov"), "max_norm_error": norm_error,
        "seconds": float(meta["seconds"]), "plot": args.plot, "resumed_from": args.resume,
    }
    text = key_values([(k, v) for k, v in payload.items() if v is not None])
    emit(args, payload, text)
    return 0
