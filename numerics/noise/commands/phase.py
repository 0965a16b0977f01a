"""``attnflow phase``: the phase transition of noisy usa: linear-stability threshold, type, fold, first-order
noise of the modes k = 1..K, the branch, particles; at several betas, the (beta, D) phase diagram."""
from __future__ import annotations

import math

from numerics.common.errors import InputError
from numerics.common.render import emit, key_values, table, with_aliases

NAME = "phase"
ORDER = 55
HELP = ("noisy usa: linear-stability threshold D_c(beta), transition type, fold and first-order (equal free "
        "energy) noise for modes k = 1..K, stationary branch r(D), particle averages; K = 1/(2D)")

CONVERSION = ("D_c is the linear-stability threshold of the uniform state (not the transition above beta*).\n"
              "Mun-Rosenzweig's coupling is K = 1/(2D): K_# = 1/(2 D_c). Above beta* the transition is first order,\n"
              "at the equal-free-energy noise D_1st > D_c (K_c = 1/(2 D_1st) < K_#).")


def add_arguments(p):
    p.add_argument("--beta", type=float, nargs="+", required=True, metavar="BETA",
                   help="inverse temperature(s); several values print one table and --plot draws the (beta, D) "
                        "phase diagram (required)")
    p.add_argument("--d", type=int, default=2, help="ambient dimension (particles on S^{d-1}; default 2)")
    p.add_argument("--modes", type=int, default=3, metavar="K",
                   help="modes k = 1..K: k-fold states on the circle, degree k on S^{d-1} (default 3)")
    p.add_argument("--noise", type=float, nargs="*", default=[], metavar="D",
                   help="noise values at which the branch (and particles, with --particles) are evaluated "
                        "(one --beta only; default none)")
    p.add_argument("--particles", type=int, default=0, metavar="N",
                   help="run N noisy particles at each --noise value from a clustered and a uniform start "
                        "(default 0: none)")
    p.add_argument("--t-end", type=float, default=50.0,
                   help="particle run length (average over the second half; default 50)")
    p.add_argument("--dt", type=float, default=0.02, help="particle step (weak-order-2 scheme; default 0.02)")
    p.add_argument("--seed", type=int, default=0, help="seed of the particle noise and uniform start (default 0)")
    p.add_argument("--pde", type=int, default=0, metavar="L",
                   help="d = 3: also solve the S^2 Fokker-Planck equation (spherical harmonics up to degree L) at "
                        "each --noise value from a clustered and a near-uniform non-zonal start (default 0: no)")
    p.add_argument("--pde-t-end", type=float, default=40.0, help="time of the PDE runs (default 40)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="one beta: bifurcation diagram r against D; several: the (beta, D) phase diagram "
                        "(default: no plot)")
    p.add_argument("--json", action="store_true", help="print one JSON object (default: tables)")


def _estimate(e, digits: int = 12) -> str:
    """'value +- accuracy' with enough digits for the accuracy, or '-'."""
    if e is None:
        return "-"
    if e.accuracy == 0:
        return f"{e.value:.{digits}g}"
    if not math.isfinite(e.accuracy):
        return f"{e.value:.6g} (accuracy unknown)"
    return f"{e.value:.{digits}g} +- {e.accuracy:.1g}"


def _coupling(D) -> str:
    from theory.noise_global import coupling_of_noise

    return "-" if D is None or not D > 0 else f"{coupling_of_noise(D):.6g}"


def _kind(tr) -> str:
    return {"continuous": "continuous", "discontinuous": "discontinuous (first order)",
            "transcritical": "transcritical (first order)", "none": "none (g_k <= 0)"}.get(tr.kind, tr.kind)


def _mode_json(tr) -> dict:
    est = lambda e: None if e is None else {"D": e.value, "accuracy": e.accuracy, "how": e.note}  # noqa: E731
    return {"mode": tr.mode, "states": tr.states, "linear_stability_threshold": tr.threshold,
            "coupling_threshold": tr.coupling_threshold, "type": tr.kind, "fold": est(tr.fold),
            "fold_amplitude": tr.fold_amplitude, "first_order_noise": est(tr.first_order),
            "coupling_first_order": tr.coupling_first_order, "note": tr.note or None,
            "branch_stopped": tr.meta.get("stopped"), "L": tr.meta.get("L")}


def _mode_rows(beta, trs, with_beta: bool) -> list:
    rows = []
    for tr in trs:
        first = tr.first_order.value if tr.first_order else None
        row = [tr.mode, tr.threshold if tr.kind != "none" else "-", _kind(tr), _estimate(tr.fold),
               _estimate(tr.first_order), _coupling(tr.threshold if tr.kind != "none" else None), _coupling(first)]
        rows.append(tuple([beta] + row if with_beta else row))
    return rows


MODE_HEADERS = ["k", "D_k (linear-stability threshold)", "type", "fold D", "first-order D (equal F)",
                "K_# = 1/(2 D_k)", "K_c = 1/(2 D_1st)"]


def _notes(trs_by_beta) -> list[str]:
    out = []
    for beta, trs in trs_by_beta:
        for tr in trs:
            if tr.note:
                out.append(f"beta = {beta:g}, k = {tr.mode}: {tr.note}")
    return out


def run(args) -> int:
    from numerics.common.provenance import StderrProgress

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    if (args.particles or args.pde) and not args.noise:
        raise InputError("--particles and --pde need --noise values")
    if len(args.beta) > 1:
        if args.noise or args.particles or args.pde:
            raise InputError("--noise, --particles and --pde take one --beta (several betas print the table of "
                             "transitions only)")
        return _several(args)
    return _one(args, StderrProgress("phase", unit="steps "))


def _several(args) -> int:
    from numerics.common.errors import require_int, require_real
    from numerics.common.provenance import StderrProgress
    from numerics.noise.diagram import beta_noise_diagram, plot_beta_noise_diagram
    from numerics.noise.phase import PHASE_MAX_D
    from numerics.noise.transitions import MAX_MODES
    from theory.noise import discontinuity_threshold

    d = require_int(args.d, "d", minimum=2, maximum=PHASE_MAX_D)
    modes = require_int(args.modes, "modes", minimum=1, maximum=MAX_MODES)
    betas = [require_real(b, "beta", minimum=-50.0, maximum=50.0) for b in args.beta]
    rows = beta_noise_diagram(d, betas, modes, accuracy=True, progress=StderrProgress("phase", unit="betas "))
    if args.plot:
        plot_beta_noise_diagram(d, rows, args.plot)
    bstar = discontinuity_threshold(d)
    payload = {"d": d, "discontinuity_beta": bstar, "conversion": "K = 1/(2D)",
               "betas": [{"beta": b, "modes": [_mode_json(tr) for tr in trs]} for b, trs in rows],
               "plot": args.plot}
    text = key_values([("d", d), ("beta* (continuous at and below, first order above)", bstar)])
    text += "\n" + CONVERSION + "\n\n" + table([r for b, trs in rows for r in _mode_rows(b, trs, True)],
                                               ["beta"] + MODE_HEADERS)
    notes = _notes(rows)
    if notes:
        text += "\n\n" + "\n".join(notes)
    emit(args, with_aliases({k: v for k, v in payload.items() if v is not None}), text)
    return 0


def _one(args, progress) -> int:
    from numerics.noise.phase import phase_diagram, plot_phase_diagram

    beta = args.beta[0]
    ph = phase_diagram(args.d, beta, args.noise, n=args.particles, t_end=args.t_end, dt=args.dt,
                       seed=args.seed, pde_L=args.pde, pde_t_end=args.pde_t_end, progress=progress,
                       modes=args.modes, trace_continuous=bool(args.plot))
    if args.plot:
        plot_phase_diagram(ph, args.plot)
    first = ph.transitions[0]
    kind = "continuous" if ph.continuous else "discontinuous (first order)"
    if first.note.startswith("beta = beta*"):
        kind = "continuous (beta = beta*: quartic Landau coefficient 0)"
    fold = None if ph.fold is None else {"D": ph.fold[0], "r": ph.fold[1], "accuracy": ph.meta["fold_accuracy"]}
    # issue 43: "critical_noise" (renamed) and "fold_pair" (the old [D, r] form of "fold", now an object with its
    # accuracy) are aliases for one release
    fold_pair = None if ph.fold is None else [ph.fold[0], ph.fold[1]]
    payload = {"d": ph.d, "beta": ph.beta, "linear_stability_threshold": ph.linear_threshold,
               "coupling_threshold": first.coupling_threshold, "conversion": "K = 1/(2D)",
               "transition": "continuous" if ph.continuous else "discontinuous",
               "discontinuity_beta": ph.discontinuity_beta, "landau_slope": ph.meta["landau_slope"],
               "fold": fold, "fold_pair": fold_pair,
               "first_order_noise": None if first.first_order is None else
               {"D": first.first_order.value, "accuracy": first.first_order.accuracy},
               "coupling_first_order": first.coupling_first_order,
               "modes": [_mode_json(tr) for tr in ph.transitions],
               "branch_at": [{"D": D, "r": r} for D, r in ph.branch_at.items()],
               "particles": [p.__dict__ for p in ph.particles], "branch_points": int(ph.branch.D.size),
               "branch_stopped": ph.branch.meta["stopped"], "plot": args.plot,
               "particle_settings": {k: ph.meta[k] for k in ("n", "t_end", "dt", "seed")} if args.particles else None,
               "pde": [p.__dict__ for p in ph.pde] or None}
    fold_text = "none" if ph.fold is None else (
        f"({_estimate(first.fold)}, r = {ph.fold[1]:.6g})" if math.isfinite(ph.fold[1]) else _estimate(first.fold))
    text = key_values([("d", ph.d), ("beta", ph.beta), ("linear-stability threshold D_c", ph.linear_threshold),
                       ("K_# = 1/(2 D_c)", _coupling(ph.linear_threshold)),
                       ("transition", kind),
                       ("discontinuous above beta*", ph.discontinuity_beta),
                       ("Landau slope r^2/(D_c - D)", ph.meta["landau_slope"]),
                       ("fold (D, r)", fold_text),
                       ("first-order noise D_1st", _estimate(first.first_order)),
                       ("K_c = 1/(2 D_1st)", _coupling(first.first_order.value if first.first_order else None))])
    text += "\n" + CONVERSION + "\n\n" + table(_mode_rows(beta, ph.transitions, False), MODE_HEADERS)
    notes = _notes([(beta, ph.transitions)])
    if notes:
        text += "\n" + "\n".join(notes)
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
    emit(args, with_aliases({k: v for k, v in payload.items() if v is not None}), text)
    return 0
