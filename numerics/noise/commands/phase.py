"""``attnflow phase``: the phase transition of noisy usa at fixed beta: threshold, branch, particles."""
from __future__ import annotations

from numerics.common.errors import InputError
from numerics.common.render import emit, key_values, table

NAME = "phase"
ORDER = 55
HELP = "noisy usa: critical noise D_c(beta), stationary branch r(D), transition type, particle averages"


def add_arguments(p):
    p.add_argument("--beta", type=float, required=True, help="inverse temperature")
    p.add_argument("--d", type=int, default=2, help="ambient dimension (particles on S^{d-1}; default 2)")
    p.add_argument("--noise", type=float, nargs="*", default=[], metavar="D",
                   help="noise values at which the branch (and particles, with --particles) are evaluated")
    p.add_argument("--particles", type=int, default=0, metavar="N",
                   help="run N noisy particles at each --noise value from a clustered and a uniform start")
    p.add_argument("--t-end", type=float, default=50.0, help="particle run length (average over the second half)")
    p.add_argument("--dt", type=float, default=0.02, help="particle step (weak-order-2 scheme)")
    p.add_argument("--seed", type=int, default=0, help="seed of the particle noise and uniform start")
    p.add_argument("--pde", type=int, default=0, metavar="L",
                   help="d = 3: also solve the S^2 Fokker-Planck equation (spherical harmonics up to degree L) at "
                        "each --noise value from a clustered and a near-uniform non-zonal start")
    p.add_argument("--pde-t-end", type=float, default=40.0, help="time of the PDE runs (default 40)")
    p.add_argument("--plot", metavar="FILE.png", help="bifurcation diagram r against D")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress
    from numerics.noise.phase import phase_diagram, plot_phase_diagram

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    if (args.particles or args.pde) and not args.noise:
        raise InputError("--particles and --pde need --noise values")
    ph = phase_diagram(args.d, args.beta, args.noise, n=args.particles, t_end=args.t_end, dt=args.dt,
                       seed=args.seed, pde_L=args.pde, pde_t_end=args.pde_t_end,
                       progress=StderrProgress("phase") if (args.particles or args.pde) else None)
    if args.plot:
        plot_phase_diagram(ph, args.plot)
    payload = {"d": ph.d, "beta": ph.beta, "critical_noise": ph.critical_noise,
               "transition": "continuous" if ph.continuous else "discontinuous",
               "discontinuity_beta": ph.discontinuity_beta, "landau_slope": ph.meta["landau_slope"],
               "fold": list(ph.fold) if ph.fold else None,
               "branch_at": [{"D": D, "r": r} for D, r in ph.branch_at.items()],
               "particles": [p.__dict__ for p in ph.particles], "branch_points": int(ph.branch.D.size),
               "branch_stopped": ph.branch.meta["stopped"], "plot": args.plot,
               "particle_settings": {k: ph.meta[k] for k in ("n", "t_end", "dt", "seed")} if args.particles else None,
               "pde": [p.__dict__ for p in ph.pde] or None}
    text = key_values([("d", ph.d), ("beta", ph.beta), ("critical noise D_c", ph.critical_noise),
                       ("transition", payload["transition"]),
                       ("discontinuous above beta*", ph.discontinuity_beta),
                       ("Landau slope r^2/(D_c - D)", ph.meta["landau_slope"]),
                       ("fold (D, r)", "none" if ph.fold is None else f"({ph.fold[0]:.6g}, {ph.fold[1]:.6g})")])
    if ph.branch_at:
        rows = []
        for D, r in ph.branch_at.items():
            parts = {p.start: p.r for p in ph.particles if p.D == D}
            row = [D, "-" if r is None else r, parts.get("clustered", "-"), parts.get("uniform", "-")]
            if ph.pde:
                pdes = {p.start: p.r for p in ph.pde if p.D == D}
                row += [pdes.get("clustered", "-"), pdes.get("uniform", "-")]
            rows.append(tuple(row))
        headers = ["D", "stable branch r", "particles (clustered)", "particles (uniform)"]
        if ph.pde:
            headers += ["PDE (clustered)", "PDE (uniform)"]
        text += "\n\n" + table(rows, headers)
    emit(args, {k: v for k, v in payload.items() if v is not None}, text)
    return 0
