"""``attnflow critical``: is a configuration a fixed point, and is it stable? Also a multi-start search and a
beta sweep. Thin: parse, call :mod:`numerics.critical.report` / :mod:`numerics.critical.newton`, render."""
from __future__ import annotations

import math

import numpy as np

from numerics.common.plots import save_figure
from numerics.common.errors import EXP_BETA_MAX, InputError, require_int, require_real
from numerics.core.options import add_beta_scaling_arguments, add_kernel_arguments, beta_from_args, kernel_from_args
from numerics.core.names import MODELS
from numerics.critical.names import CONFIGS
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, fmt, key_values, table

NAME = "critical"
ORDER = 30
HELP = "critical points of the attention energy: residual, Hessian spectrum, classification, search, beta sweep"
DESCRIPTION = (HELP + ". Energy E_beta = 1/(2 beta n^2) sum (e^{beta<x_i,x_j>} - 1) (docs/conventions.md); usa is its "
               "ascent, so unstable directions are positive Hessian eigenvalues; rates in the natural time unit.")


def add_arguments(p):
    p.add_argument("--config", choices=CONFIGS, help="structured configuration (or 'file' with --file)")
    p.add_argument("--k", type=int, help="number of clusters (clusters)")
    p.add_argument("--masses", help="cluster sizes m1,m2,... (clusters, antipodal, simplex, orthoplex)")
    p.add_argument("--file", help="(n, d) .npy file of unit vectors (config file)")
    p.add_argument("--normalize", action="store_true", help="renormalise the rows of --file")
    p.add_argument("--n", type=int, help="number of particles")
    p.add_argument("--d", type=int, help="ambient dimension (sphere S^{d-1})")
    p.add_argument("--beta", type=float, help=f"inverse temperature, |beta| <= {EXP_BETA_MAX:g} for the attention kernel (e^{{beta s}} is evaluated unscaled)")
    add_beta_scaling_arguments(p)
    p.add_argument("--model", choices=MODELS, default="usa",
                   help="dynamics for unstable_rate (default usa = n grad E; sa = (n^2/Z_i) grad_i E)")
    p.add_argument("--search", action="store_true", help="Newton from --starts random starts; distinct critical points")
    p.add_argument("--starts", type=int, help="number of random starts for --search")
    p.add_argument("--seed", type=int, default=0, help="seed of the random starts (default 0, reported)")
    p.add_argument("--warmup", type=int, default=0,
                   help="up to this many normalised ascent steps before Newton (finds cluster states; default 0)")
    p.add_argument("--sweep-beta", dest="sweep", metavar="B0:B1:STEPS", help="spectrum over a beta grid")
    p.add_argument("--plot", help="write a figure (spectrum, or spectrum against beta) to FILE.png")
    p.add_argument("--closed-form", action="store_true",
                   help="also evaluate the closed-form spectrum of the structured family and compare (each branch "
                        "as a combination of phi'(s), phi''(s) at the family's inner products)")
    p.add_argument("--expanded", action="store_true",
                   help="with --closed-form: the branches with the kernel substituted (exponentials, trigonometry)")
    add_kernel_arguments(p, "the energy E = 1/(2n^2) sum phi(<x_i, x_j>)")
    p.add_argument("--heads", metavar="FILE.npz", help="several heads (arrays Q, K, V, W each (H, k, d)): the "
                   "configuration is tested as a zero of the block field, stability from its Jacobian spectrum")
    p.add_argument("--mlp", metavar="FILE.npz", help="MLP after each head (W1, b1, W2, b2; shared or per head)")
    p.add_argument("--causal", action="store_true", help="causal mask (token i attends to j <= i, row order)")
    p.add_argument("--schedule", metavar="FILE.npz",
                   help="not accepted: critical points need time-independent weights (rejected with a reason)")
    # default None, not 0: so that an explicit --symmetry-modes without --heads/--mlp/--causal can be refused
    p.add_argument("--symmetry-modes", type=int, default=None,
                   help="with --heads/--mlp/--causal: zero eigenvalues expected from symmetries (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _masses(text):
    if text is None:
        return None
    from numerics.common.readers import comma_list

    return comma_list(text, "--masses", int)


def _sweep_grid(text: str) -> np.ndarray:
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"--sweep-beta must be B0:B1:STEPS, got {text!r}")
    b0 = require_real(parts[0], "sweep start")
    b1 = require_real(parts[1], "sweep end")
    for b, name in ((b0, "sweep start"), (b1, "sweep end")):
        require_real(b, name, minimum=-EXP_BETA_MAX, maximum=EXP_BETA_MAX)
    try:
        steps = int(parts[2])
    except ValueError:
        raise InputError(f"--sweep-beta STEPS must be an integer, got {parts[2]!r}") from None
    steps = require_int(steps, "sweep STEPS", minimum=2, maximum=2000)
    return np.linspace(b0, b1, steps)


def closed_form_spectrum(*a, **k):
    from numerics.critical.report import closed_form_spectrum as spectrum

    return spectrum(*a, **k)


def _configuration(args):
    from numerics.critical.configurations import build_configuration

    if args.config is None:
        raise InputError("give --config (or --search)")
    return build_configuration(args.config, n=args.n, d=args.d, k=args.k, masses=_masses(args.masses),
                               file=args.file, normalize=args.normalize)


ARCHITECTURE_FLAGS = ("heads", "mlp", "causal", "schedule")


def _scaled_beta(args):
    """``--beta-scaling log --gamma G``: beta = G log n, n the tokens of the configuration (``--n`` for --search)."""
    if args.sweep:
        raise InputError("--sweep-beta sweeps beta itself; it does not combine with --beta-scaling/--gamma")
    n = args.n if args.search else _configuration(args).shape[0]
    return beta_from_args(args, n)


def run(args) -> int:
    from numerics.critical.report import closed_form_comparison, critical_point_report

    if args.beta_scaling is not None or args.gamma is not None:  # beta = gamma log n of the configuration
        args.beta = _scaled_beta(args)
    if any(getattr(args, f, None) for f in ARCHITECTURE_FLAGS):
        return _run_architecture(args)
    if args.symmetry_modes is not None:
        # the energy path counts its symmetry zero modes itself (orbit of the rotations); the option would be unused
        raise InputError("--symmetry-modes applies to --heads/--mlp/--causal only")
    if args.search:
        return _run_search(args)
    if args.sweep:
        if args.beta is not None:
            raise InputError("give either --beta or --sweep-beta, not both")
        return _run_sweep(args)
    if args.beta is None:
        raise InputError("--beta is required")
    if args.kernel is None:
        require_real(args.beta, "beta", minimum=-EXP_BETA_MAX, maximum=EXP_BETA_MAX)
    kernel = kernel_from_args(args)
    if kernel is not None and args.closed_form:
        raise InputError("--closed-form is derived for the attention kernel only; drop --kernel or --closed-form")
    X = _configuration(args)
    report = critical_point_report(X, args.beta, args.model, kernel=kernel)
    payload = {"config": args.config, **report.to_dict()}
    lines = [("config", args.config), ("n, d", f"{report.n}, {report.d}"), ("beta", report.beta),
             ("model", report.model), ("residual", report.residual), ("energy E_beta" if kernel is None else f"energy E ({kernel.expr})", report.energy),
             ("classification", report.classification), ("reason", report.reason)]
    if report.critical:
        lines += [("counts (+, 0, -)", f"{report.counts['positive']}, {report.counts['zero']}, "
                                       f"{report.counts['negative']}"),
                  ("symmetry zero modes", report.symmetry_zero_modes),
                  ("unstable rate", f"{fmt(report.unstable_rate)} ({report.model}, natural time unit)")]
    lines += [("cluster sizes", report.cluster_sizes), ("eigenvalues", _eigen_text(report.eigenvalues))]
    if args.closed_form:
        branches = closed_form_spectrum(args.config, n=report.n, d=report.d, k=args.k, masses=_masses(args.masses))
        if branches is None:
            raise InputError(f"no closed form for config {args.config!r} with these masses (equal masses only)")
        comparison = closed_form_comparison(branches, report.beta, report.eigenvalues)
        shown = _readable_branches(args, report, branches)
        for b, text in zip(comparison["branches"], shown):
            b["structured"] = text
        payload["closed_form"] = comparison
        if not args.expanded:
            from theory.kernels import exponential_kernel

            kern = exponential_kernel()
            lines.append(("closed form: kernel", f"phi'(s) = {kern.derivative(1)}, phi''(s) = {kern.derivative(2)}"))
        lines += [(f"closed form: {b['label']}", f"{text} = {fmt(b['value'])} (x{b['multiplicity']})")
                  for b, text in zip(comparison["branches"], shown)]
        lines.append(("closed form vs numeric", f"max |difference| = {fmt(comparison['max_abs_difference'], 3)}"))
    if args.plot:
        _plot_spectrum(args.plot, report)
        payload["plot"] = args.plot
    emit(args, payload, key_values(lines))
    return 0


def _run_architecture(args) -> int:
    """``--heads/--mlp/--causal``: is the configuration a zero of the block field, and its Jacobian spectrum
    (numerics.critical.stationary; these models are in general not gradient flows, so there is no Hessian)."""
    from numerics.core.blocks import architecture_summary
    from numerics.core.options import architecture_from_args
    from numerics.core.model import Model
    from numerics.critical.stationary import stationary_report

    if args.schedule:
        raise InputError("critical points need a time-independent model: a --schedule makes the weights depend on "
                         "depth (analyse one layer with --heads/--mlp instead)")
    for flag, name in (("search", "--search"), ("sweep", "--sweep-beta"), ("closed_form", "--closed-form"),
                       ("plot", "--plot")):
        if getattr(args, flag):
            raise InputError(f"{name} is not available with --heads/--mlp/--causal (it works on the energy, which these models do not have in general)")
    if args.kernel is not None:
        raise InputError("a user kernel cannot be combined with --heads, --mlp or --causal")
    if args.param:
        # without --kernel the energy path refuses --param in kernel_from_args; this path never reads it
        raise InputError("--param sets kernel parameters, which --heads, --mlp and --causal do not use")
    if args.beta is None:
        raise InputError("--beta is required")
    require_real(args.beta, "beta", minimum=-EXP_BETA_MAX, maximum=EXP_BETA_MAX)
    modes = require_int(0 if args.symmetry_modes is None else args.symmetry_modes, "symmetry modes", minimum=0)
    model = Model(args.model, args.beta, **architecture_from_args(args))
    X = _configuration(args)
    model.check_dimension(X.shape[1])
    # the Jacobian costs 2 n(d-1) field evaluations of O(n^2) each: report progress over its columns
    rep = stationary_report(model, X, symmetry_modes=modes,
                            progress=StderrProgress("critical --heads/--mlp/--causal", unit="columns "))
    mu = rep["eigenvalues"]
    payload = {"config": args.config, "n": rep["n"], "d": rep["d"], "beta": args.beta, "model": args.model,
               "architecture": architecture_summary(model), "residual": rep["residual"],
               "stationary": rep["stationary"], "verdict": rep["verdict"], "counts": rep["counts"],
               "symmetry_modes": modes, "max_real_part": rep["max_real_part"],
               "eigenvalues": {"real": mu.real.tolist(), "imag": mu.imag.tolist()},
               "jacobian": "field Jacobian in tangent coordinates, central differences (h = 1e-5)"}
    lines = [("config", args.config), ("n, d", f"{rep['n']}, {rep['d']}"), ("beta", args.beta),
             ("model", args.model), ("architecture", payload["architecture"]),
             ("residual", rep["residual"]), ("verdict", rep["verdict"]),
             ("counts (+, 0, -) of Re", f"{rep['counts']['positive']}, {rep['counts']['zero']}, "
                                        f"{rep['counts']['negative']}"),
             ("symmetry zero modes", modes), ("max real part", rep["max_real_part"]),
             ("eigenvalues (Re)", _eigen_text(mu.real))]
    emit(args, payload, key_values(lines))
    return 0


def _readable_branches(args, report, branches) -> list[str]:
    """Branch formulas for the text output: phi'/phi'' combinations (default) or the substituted kernel."""
    from theory.structured import placeholder_derivatives, readable_branch

    if args.expanded:
        return [readable_branch(b.value) for b in branches]
    abstract = closed_form_spectrum(args.config, n=report.n, d=report.d, k=args.k, masses=_masses(args.masses),
                                    kernel=placeholder_derivatives())
    if abstract is None or [a.label for a in abstract] != [b.label for b in branches]:
        return [readable_branch(b.value) for b in branches]
    return [readable_branch(a.value) for a in abstract]


def _eigen_text(eig) -> str:
    values, counts = np.unique(np.round(eig, 10) + 0.0, return_counts=True)  # + 0.0: no '-0'
    return ", ".join(f"{fmt(v)}" + (f" (x{c})" if c > 1 else "") for v, c in zip(values, counts))


def _run_search(args) -> int:
    from numerics.critical.newton import find_critical_points

    for name in ("n", "d", "beta", "starts"):
        if getattr(args, name) is None:
            raise InputError(f"--search needs --{name}")
    found, stats = find_critical_points(args.n, args.d, args.beta, starts=args.starts, seed=args.seed,
                                        model=args.model, warmup=args.warmup, kernel=kernel_from_args(args),
                                        progress=StderrProgress("critical --search"))
    points = [f.to_dict() for f in found]
    payload = {"n": args.n, "d": args.d, "beta": args.beta, "model": args.model, "seed": args.seed,
               "warmup": args.warmup, **stats,
               "critical_points": points}
    rows = [(p["energy"], ",".join(map(str, p["cluster_sizes"])), p["classification"],
             f"{p['counts']['positive']}/{p['counts']['zero']}/{p['counts']['negative']}",
             p["symmetry_zero_modes"], p["unstable_rate"], p["hits"]) for p in points]
    text = table(rows, ["energy", "clusters", "classification", "+/0/-", "sym", "unstable rate", "hits"])
    text += (f"\n\n{stats['distinct']} distinct critical points (up to rotations and permutations) from "
             f"{stats['converged']}/{stats['starts']} converged Newton runs (seed {args.seed})")
    emit(args, payload, text)
    return 0


def _run_sweep(args) -> int:
    from numerics.critical.report import critical_point_report

    grid = _sweep_grid(args.sweep)
    X = _configuration(args)
    kernel = kernel_from_args(args)
    progress = StderrProgress("critical --sweep-beta")
    reports = []
    for i, b in enumerate(grid):
        reports.append(critical_point_report(X, float(b), args.model, kernel=kernel))
        progress(i + 1, len(grid))
    rows = [(r.beta, r.classification, f"{r.counts['positive']}/{r.counts['zero']}/{r.counts['negative']}",
             r.unstable_rate, float(r.eigenvalues.max())) for r in reports]
    payload = {"config": args.config, "n": int(X.shape[0]), "d": int(X.shape[1]), "model": args.model,
               "sweep": [{k: v for k, v in r.to_dict().items() if k not in ("n", "d", "model", "kernel")}
                         for r in reports]}
    if args.plot:
        _plot_sweep(args.plot, grid, reports, args.config)
        payload["plot"] = args.plot
    emit(args, payload, table(rows, ["beta", "classification", "+/0/-", "unstable rate", "max eigenvalue"]))
    return 0


def eigen_axis(ax, values, zero_tolerance: float) -> str:
    """Scale the y axis of an eigenvalue plot so that every label is readable and no point is clipped.

    Linear when the nonzero |eigenvalues| span less than three decades; otherwise symmetric-log with the linear
    zone at the smallest nonzero |eigenvalue| and at most four decade ticks per sign. Returns the scale used.
    """
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    nonzero = np.abs(values[np.abs(values) > zero_tolerance])
    ax.margins(y=0.08)
    if nonzero.size == 0 or nonzero.max() / nonzero.min() < 1e3:
        return "linear"
    lo, hi = math.floor(math.log10(nonzero.min())), math.ceil(math.log10(nonzero.max()))
    ax.set_yscale("symlog", linthresh=10.0 ** lo, linscale=0.5)
    decades = np.unique(np.linspace(lo, hi, min(4, hi - lo + 1)).round().astype(int))
    ticks = [0.0]
    if np.any(values > zero_tolerance):
        ticks += [10.0 ** k for k in decades]
    if np.any(values < -zero_tolerance):
        ticks += [-(10.0 ** k) for k in decades]
    # limits: the data with a factor-2 margin on the log part (no point on the frame), ticks inside them
    bottom = 2.0 * values.min() if values.min() < -zero_tolerance else -(10.0 ** lo)
    top = 2.0 * values.max() if values.max() > zero_tolerance else 10.0 ** lo
    ticks = sorted(t for t in ticks if bottom <= t <= top)
    ax.set_yticks(ticks, [("0" if t == 0 else f"{t:.0e}") for t in ticks])
    ax.set_ylim(bottom, top)
    from matplotlib.ticker import NullLocator

    ax.yaxis.set_minor_locator(NullLocator())
    return "symlog"


def _plot_spectrum(path, report) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    eig = report.eigenvalues
    ax.plot(np.arange(eig.size), eig, "o", ms=4, clip_on=False)
    ax.axhline(0.0, color="k", lw=0.5)
    eigen_axis(ax, eig, report.zero_tolerance)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("index")
    ax.set_ylabel("Hessian eigenvalue of E_beta")
    ax.set_title(f"n={report.n}, d={report.d}, beta={report.beta:g}: {report.classification}")
    save_figure(fig, path, dpi=120, bbox_inches="tight")


def _plot_sweep(path, grid, reports, config) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for b, r in zip(grid, reports):
        ax.plot(np.full(r.eigenvalues.size, b), r.eigenvalues, ".", color="C0", ms=3, clip_on=False)
    ax.axhline(0.0, color="k", lw=0.5)
    eigen_axis(ax, np.concatenate([r.eigenvalues for r in reports]), max(r.zero_tolerance for r in reports))
    ax.set_xlabel("beta")
    ax.set_ylabel("Hessian eigenvalues of E_beta")
    ax.set_title(f"{config}: n={reports[0].n}, d={reports[0].d}")
    save_figure(fig, path, dpi=120, bbox_inches="tight")

