"""``attnflow simulate --batch B | --betas LIST | --seeds LIST``: an ensemble from the command line.

Member b starts from ``--init`` (an .npy of shape (B, n, d)) or from the iid uniform state of seed ``seeds[b]``
(``--seeds``, default ``--seed`` + b: the initial state of ``attnflow simulate --seed seeds[b]``), has inverse
temperature ``betas[b]`` (``--betas``, default ``--beta``) and noise seed ``--noise-seed`` + b (default: its own
seed, as a single run). The trajectory file holds X of shape (frames, B, n, d) and energy (frames, B).
"""
from __future__ import annotations

import time

import numpy as np

from numerics.common.errors import InputError, require_int, unit_rows
from numerics.common.limits import check_array
from numerics.common.readers import read_npy
from numerics.common.render import emit, key_values, table
from numerics.core.norm_options import norm_summary

#: members listed in the text output (all of them in --json)
SHOWN_MEMBERS = 12


def add_batch_arguments(p) -> None:
    p.add_argument("--batch", type=int, help="integrate B systems at once (an ensemble; default: one system); "
                   "member b starts from seed --seed + b")
    p.add_argument("--betas", metavar="LIST", help="per-member inverse temperatures 'b1,b2,...' (an ensemble of "
                   "that many members; default: --beta for every member)")
    p.add_argument("--seeds", metavar="LIST", help="per-member seeds 's1,s2,...' of the uniform initial states "
                   "(an ensemble; default: --seed + b)")
    p.add_argument("--step", choices=("shared", "per-member"), default="shared",
                   help="adaptive steps of an ensemble (dp5, dop853, adaptive): 'shared', one step for all members "
                   "set by the worst member's error, or 'per-member', each member its own step as its single run "
                   "(dp5 only) (default: shared; per-member is refused for one system, fixed steps and noise)")


def refuse_inapplicable_step(args, batch: bool) -> None:
    """``--step per-member`` where no adaptive step is shared (one system, a fixed-step method, a noisy run) is
    refused rather than ignored: the user asked for something the run would not do."""
    from numerics.core.names import ADAPTIVE_METHODS

    if getattr(args, "step", "shared") != "per-member":
        return
    if not batch:
        raise InputError("--step per-member applies to an ensemble (--batch, --betas or --seeds); one system "
                         "has its own step already")
    if args.method not in ADAPTIVE_METHODS:
        raise InputError(f"--step per-member applies to adaptive methods (dp5); --method {args.method} takes "
                         "fixed steps")
    if args.noise:
        raise InputError("--step per-member does not apply to noisy runs (they take fixed steps)")


def batch_requested(args) -> bool:
    return any(getattr(args, k, None) is not None for k in ("batch", "betas", "seeds"))


#: the most members a comma list may name (--betas, --seeds); the batch's memory and work are checked from its shape
MAX_MEMBERS_LISTED = 100_000


def _numbers(text: str, option: str, kind=float) -> list:
    """A comma list of members' values through the one list parser (an empty item is refused, not dropped)."""
    from numerics.common.readers import comma_list

    return comma_list(text, option, kind, max_items=MAX_MEMBERS_LISTED)


def _batch_size(args, init) -> int:
    sizes = {}
    if args.batch is not None:
        sizes["--batch"] = require_int(args.batch, "--batch", minimum=1)
    if args.betas is not None:
        sizes["--betas"] = len(_numbers(args.betas, "--betas"))
    if args.seeds is not None:
        sizes["--seeds"] = len(_numbers(args.seeds, "--seeds", int))
    if init is not None:
        sizes["--init"] = init.shape[0]
    if len(set(sizes.values())) > 1:
        raise InputError("the batch size differs between " + ", ".join(f"{k} ({v})" for k, v in sizes.items()))
    return next(iter(sizes.values()))


def run_batch(args, wall_start: float) -> int:
    """The ``simulate`` command for an ensemble (see the module docstring). The Model, Solver and SaveAt come from
    the one translation of the options (:mod:`numerics.core.options`), as for one system; what the ensemble driver
    cannot batch is refused there (:func:`numerics.core.ensemble.check_batchable`), with one line."""
    from numerics.core.members import Members, require_batch
    from numerics.core.options import model_from_args, require_model_options, save_from_args, solver_from_args
    from numerics.core.options import events_from_args
    from numerics.core.sampling import uniform_sphere
    from numerics.core.simulate import simulate, with_provenance

    refuse_inapplicable_step(args, batch=True)

    if args.plot:
        raise InputError("--plot draws one system; for a batch, load the file and plot a member "
                         "(numerics.core.ensemble.member)")
    init = None
    if args.init:
        raw = read_npy(args.init, "initial condition")
        if np.ndim(raw) != 3:
            raise InputError(f"init file {args.init} must have shape (B, n, d) for a batch, got {np.shape(raw)}")
        init = raw
    B = _batch_size(args, init)
    shape = init.shape if init is not None else (B, args.n if isinstance(args.n, int) and args.n > 0 else 1,
                                                 args.d if isinstance(args.d, int) and args.d > 1 else 2)
    check_array(shape, f"a batch of B={B} systems with n={shape[1]}, d={shape[2]}", copies=20)  # before any list of B
    betas = None if args.betas is None else _numbers(args.betas, "--betas")
    require_model_options(args, batch=True)
    seeds = ([args.seed + b for b in range(B)] if args.seeds is None
             else [require_int(s, "--seeds", minimum=0) for s in _numbers(args.seeds, "--seeds", int)])
    if init is not None:
        if args.normalize:
            init, norms = unit_rows(np.asarray(init, dtype=float), axis=2)
            if np.any(norms == 0):
                raise InputError(f"init file {args.init} has a zero row that cannot be normalised")
        X0 = require_batch(init, f"init file {args.init}")
        init_how = "given"
    else:
        n = require_int(args.n, "n", minimum=1)
        d = require_int(args.d, "d", minimum=2)
        check_array((B, n, d), f"a batch of B={B} systems with n={n}, d={d}", copies=20)
        X0 = np.stack([uniform_sphere(n, d, s) for s in seeds])
        init_how = "uniform"
    # without --beta the Model takes the first member's (each member's beta comes from --betas)
    model = model_from_args(args, X0.shape[2], beta=None if betas is None else betas[0])
    noise_seeds = seeds if args.noise_seed is None else [args.noise_seed + b for b in range(B)]
    solver = solver_from_args(args)  # the noise seeds are the members' (Members.seeds)
    save = save_from_args(args, X0.size)
    from numerics.common.provenance import StderrProgress

    progress = StderrProgress("simulate")
    progress.energy = StderrProgress("simulate: energy", unit="frames ")  # the driver's energy-phase progress
    traj = simulate(model, X0, args.t_end, solver=solver, save=save,
                    members=Members(beta=betas, seeds=[int(s) for s in noise_seeds]), progress=progress,
                    events=events_from_args(args))
    with_provenance(traj, seed=seeds if init_how == "uniform" else None, init=init_how)
    write_start = time.perf_counter()
    traj.save(args.out)
    write_seconds = time.perf_counter() - write_start
    return _report(args, traj, seeds if init_how == "uniform" else None, noise_seeds, wall_start, write_seconds)


def report_resumed(args, traj, wall_start: float) -> int:
    """Write and report a resumed ensemble (``simulate --resume`` of a batch file): the seeds come from its meta."""
    if args.plot:
        raise InputError("--plot draws one system; for a batch, load the file and plot a member "
                         "(numerics.core.ensemble.member)")
    write_start = time.perf_counter()
    traj.save(args.out)
    write_seconds = time.perf_counter() - write_start
    seeds, noise_seeds = traj.meta.get("seed"), traj.meta.get("noise_seed")
    return _report(args, traj, seeds if isinstance(seeds, list) else None,
                   noise_seeds if isinstance(noise_seeds, list) else None, wall_start, write_seconds)


def _report(args, traj, seeds, noise_seeds, wall_start: float, write_seconds: float) -> int:
    meta = traj.meta
    B = traj.X.shape[1]
    energy = traj.energy
    slack = 1e-12 * np.maximum(1.0, np.max(np.abs(energy), axis=0))
    monotone = np.all(np.diff(energy, axis=0) >= -slack, axis=0)
    betas = meta["batch"]["beta"] or [meta["beta"]] * B
    noisy = meta.get("noise_seed") is not None
    members = [{"member": b, "beta": float(betas[b]), "seed": None if seeds is None else int(seeds[b]),
                "noise_seed": int(noise_seeds[b]) if noisy else None, "final_energy": float(energy[-1, b]),
                "energy_monotone": bool(monotone[b])} for b in range(B)]
    if traj.radius is not None:  # a normalisation scheme: each member's final radii (the single run's summary)
        last = traj.radius[-1].reshape(B, -1)
        for b, m in enumerate(members):
            m.update({"final_radius_min": float(last[b].min()), "final_radius_max": float(last[b].max())})
    seconds = time.perf_counter() - wall_start
    timings = meta["timings"]
    payload = {"out": args.out, "batch": B, "n": meta["n"], "d": meta["d"], "model": meta["model"],
               "method": meta["method"], "method_used": meta.get("method_used"), "backend": meta["backend"],
               "noise": meta.get("noise") or None, "time_unit": meta["time_unit"], "t_end": float(traj.times[-1]),
               "frames": int(traj.times.size), "step": meta["batch"]["step"],
               "energy_normalization": meta["energy_normalization"],
               "blas_threads": meta["threads"]["blas_threads_chosen"],
               "max_norm_error": float(np.max(np.abs(np.linalg.norm(traj.X, axis=3) - 1.0))),
               **norm_summary(traj),  # norm, centering and the radii over every member (empty on the sphere)
               "members": members, "seconds": seconds,
               "timings": {"integrate": timings["integrate"], "energy": timings["energy"], "write": write_seconds},
               "versions": meta.get("versions")}
    if meta.get("events"):  # --stop-when: how many members stopped, and the work they saved
        from numerics.core.events import events_summary

        payload["events"] = events_summary(meta)
    shown = [(k, v) for k, v in payload.items()
             if v is not None and k not in ("members", "timings", "versions", "seconds", "energy_normalization",
                                            "blas_threads")]  # the thread count depends on the machine: --json
    shown.append(("energy_normalization", str(meta["energy_normalization"])))
    shown.append(("seconds", f"{seconds:.3g} (integrate {timings['integrate']:.3g}, energy {timings['energy']:.3g}, "
                             f"write {write_seconds:.3g})"))
    radii = traj.radius is not None
    rows = [(m["member"], m["beta"], "-" if m["seed"] is None else m["seed"],
             "-" if m["noise_seed"] is None else m["noise_seed"], m["final_energy"], m["energy_monotone"])
            + ((m["final_radius_min"], m["final_radius_max"]) if radii else ())
            for m in members[:SHOWN_MEMBERS]]
    text = key_values(shown) + "\n\n" + table(rows, ["member", "beta", "seed", "noise seed", "final energy",
                                                      "energy monotone"]
                                               + (["final radius min", "final radius max"] if radii else []))
    if B > SHOWN_MEMBERS:
        text += f"\n... {B - SHOWN_MEMBERS} more members (--json lists all)"
    emit(args, payload, text)
    return 0
