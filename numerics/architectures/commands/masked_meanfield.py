"""``attnflow masked-meanfield``: the masked (causal) mean-field equation with position labels, solved by Chebyshev
collocation in the label, and optionally compared with causal particle systems of several sizes."""
from __future__ import annotations

from numerics.common.errors import EXP_BETA_MAX, InputError, require_int, require_real
from numerics.common.render import emit, key_values, table

NAME = "masked-meanfield"
ORDER = 52
HELP = "masked mean-field attention with position labels s in [0, 1] (tokens attend to tau <= s): solver + particles"
DESCRIPTION = (HELP + ". dx/dt = P_x(int_{tau <= s} e^{beta<x,y>} y dmu / Z) from a curve s -> x_0(s); the n-token "
               "causal system with labels j/n converges at order 1/n (proofs_notes/architectures-masked-meanfield.md).")
#: particle sizes above this are refused (an adaptive O(n^2) simulation each)
MAX_PARTICLES = 5000


def add_arguments(p):
    p.add_argument("--model", choices=("sa", "usa"), default="sa", help="sa (default) or usa")
    p.add_argument("--beta", type=float, required=True, help=f"inverse temperature, |beta| <= {EXP_BETA_MAX:g}")
    p.add_argument("--curve", choices=("circle", "sphere"), default="circle",
                   help="initial curve s -> x_0(s): circle (S^1, angle 2.5 s + 0.4 cos 3s) or sphere (S^2 spiral)")
    p.add_argument("--t-end", type=float, default=3.0, help="final time (default 3)")
    p.add_argument("--nodes", type=int, default=32, help="Chebyshev label nodes N (default 32; spectral in N)")
    p.add_argument("--compare", metavar="N1,N2,...",
                   help="also simulate causal particle systems of these sizes and report the errors and orders")
    p.add_argument("--reverse-mask", action="store_true",
                   help="with --compare: particles attend to later labels instead (a planted error: no convergence)")
    p.add_argument("--plot", metavar="FILE.png", help="the curve X(t, s) against s at t = 0 and t_end (angle on S^1, "
                   "coordinates on S^2), with the largest --compare particle system as dots")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _sizes(text: str) -> list[int]:
    from numerics.common.readers import comma_list

    sizes = comma_list(text, "--compare", int)
    if len(sizes) > 8:
        raise InputError("--compare takes 1 to 8 particle sizes")
    return [require_int(n, "particle size", minimum=2, maximum=MAX_PARTICLES) for n in sizes]


def run(args) -> int:
    import numpy as np

    from numerics.architectures.masked_meanfield import CURVES, particle_errors, self_convergence
    from numerics.common.limits import check_work
    from numerics.common.provenance import StderrProgress

    beta = require_real(args.beta, "beta", minimum=-EXP_BETA_MAX, maximum=EXP_BETA_MAX)
    t_end = require_real(args.t_end, "t_end", minimum=0.0, maximum=1e3, strict_minimum=True)
    N = require_int(args.nodes, "nodes", minimum=4, maximum=512)
    sizes = _sizes(args.compare) if args.compare else []
    if args.reverse_mask and not sizes:
        raise InputError("--reverse-mask changes the particle systems only: give --compare too")
    # work: about 200 field evaluations per unit time and unit speed (tolerance 1e-11) of O(N^2 d) and O(n^2 d)
    # each; the speed is at most 1 + |beta| for sa (a convex combination, Lipschitz ~ beta) and e^{|beta|} for usa.
    # Solves: N and N + N // 2 labels (self-convergence), one particle run per size (--plot reuses the largest)
    speed = 1.0 + abs(beta) if args.model == "sa" else float(np.exp(min(abs(beta), 460.0)))  # capped: a finite estimate
    N_fine = N + N // 2
    check_work(200.0 * max(1.0, t_end * speed) * (N**2 + N_fine**2 + sum(n * n for n in sizes)) * 20.0,
               "the masked mean-field run")
    initial = CURVES[args.curve]
    sol, _, self_err = self_convergence(initial, t_end, beta, kind=args.model, N=N, N_fine=N_fine)
    payload = {"model": args.model, "beta": beta, "curve": args.curve, "t_end": t_end, "nodes": N,
               "solver": sol.info["method"], "rtol": sol.info["rtol"], "evaluations": sol.info["evaluations"],
               "self_error": self_err, "self_error_nodes": [N, N_fine],
               "final_curve_at": {"s": [0.25, 0.5, 0.75, 1.0],
                                  "x": sol.at(np.array([0.25, 0.5, 0.75, 1.0]))[0].tolist()}}
    lines = [("model", args.model), ("beta", beta), ("curve", args.curve), ("t_end", t_end),
             ("solver", sol.info["method"]), (f"N={N} vs N={N_fine}", f"max difference {self_err:.3g}"),
             ("x(t_end, s=1)", "[" + ", ".join(f"{v:.6f}" for v in payload["final_curve_at"]["x"][-1]) + "]")]
    text = key_values(lines)
    particles = None
    if sizes:
        # the largest system's final state comes back for the plot (max(sizes): the sizes need not be sorted)
        rows, particles = particle_errors(sol, initial, sizes, kind=args.model, beta=beta, reverse=args.reverse_mask,
                                          progress=StderrProgress("masked-meanfield --compare", unit="token pairs "),
                                          return_largest=True)
        payload["particles"] = rows
        payload["mask"] = "reversed (tau >= s)" if args.reverse_mask else "causal (tau <= s)"
        text += "\n\n" + table([(r["n"], r["max_error"], r.get("observed_order", "-"), r.get("richardson_error", "-"))
                                for r in rows], ["n", "max |x_j - X(t, j/n)|", "order", "Richardson error"])
        text += ("\n\norder = log2(e(n/2)/e(n)), expected 1 (right-endpoint rule in the label); Richardson error of "
                 "2 x^(n) - x^(n/2), expected O(1/n^2)")
    if args.plot:
        _plot(args.plot, sol, initial, particles, args)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0


def _plot(path, sol, initial, particles, args) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    from numerics.common.plots import save_figure

    s = np.linspace(0.0, 1.0, 401)
    X0, XT = initial(s), sol.at(s)[0]
    d = X0.shape[1]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    if d == 2:
        series = [(np.unwrap(np.arctan2(X0[:, 1], X0[:, 0])), "t = 0", "C0", "--"),
                  (np.unwrap(np.arctan2(XT[:, 1], XT[:, 0])), f"t = {sol.times[-1]:g} (mean field)", "C1", "-")]
        ylabel = "angle of X(t, s) (rad)"
    else:
        series = [(X0[:, c], f"x{c + 1}, t = 0", f"C{c}", "--") for c in range(d)]
        series += [(XT[:, c], f"x{c + 1}, t = {sol.times[-1]:g}", f"C{c}", "-") for c in range(d)]
        ylabel = "coordinates of X(t, s)"
    for y, label, color, style in series:
        ax.plot(s, y, style, color=color, label=label, lw=1.4)
    if particles is not None:
        n = particles.shape[0]
        lab = np.arange(1, n + 1) / n
        if d == 2:
            ang = np.arctan2(particles[:, 1], particles[:, 0])
            ref = np.unwrap(np.arctan2(sol.at(lab)[0][:, 1], sol.at(lab)[0][:, 0]))
            ang = ref + (ang - ref + np.pi) % (2 * np.pi) - np.pi  # the branch of the mean-field curve
            ax.plot(lab, ang, ".", color="k", ms=2.5, label=f"{n} causal tokens, t = {sol.times[-1]:g}")
        else:
            for c in range(d):
                ax.plot(lab, particles[:, c], ".", color=f"C{c}", ms=2.5,
                        label=f"{n} causal tokens" if c == 0 else None)
    ax.set_xlabel("position label s")
    ax.set_ylabel(ylabel)
    ax.set_title(f"masked mean field, {args.model}, beta = {args.beta:g}, curve {args.curve}", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    save_figure(fig, path, dpi=110, bbox_inches="tight")
