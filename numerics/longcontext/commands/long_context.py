"""``attnflow long-context``: critical attention scaling with the context length (beta_n = gamma log n).

Three experiments, one per mode: the simplex model (``--rho``; arXiv 2510.05554), a fixed query against n iid
uniform keys (``--fixed-query``; arXiv 2605.08505) and the gap-counting families (``--gap-counting``; arXiv
2605.12697). Thin: parse, call :mod:`numerics.longcontext.report`, render.
"""
from __future__ import annotations

import math

from numerics.common.errors import InputError
from numerics.common.render import emit, fmt, key_values, table

NAME = "long-context"
ORDER = 57
HELP = "long contexts: critical gamma of beta = gamma log n (simplex model), fixed query vs n keys, gap counting"
DESCRIPTION = (HELP + ". Conventions: beta_n = gamma log n (natural log); simplex layer x' = sum_j A_ij y_j + "
               "alpha x, |x|^2 = q, y = x/|x| (pre-LN, Q = K = V = I).")
OUTPUTS = ("plot",)


def add_arguments(p):
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--rho", type=float, help="simplex model: the tokens' pairwise inner product, 0 <= rho < 1")
    mode.add_argument("--fixed-query", action="store_true",
                      help="one query against n iid uniform keys on S^{d-1} (--d): the critical constant C_d")
    mode.add_argument("--gap-counting", action="store_true",
                      help="beta_1/2(n) / A_n for four score families (gaussian, simplex, flat edge, sphere)")
    p.add_argument("--alpha", type=float, default=0.0, help="simplex: residual coefficient alpha >= 0 (default 0)")
    p.add_argument("--q", type=float, default=1.0, help="simplex: squared token norm q > 0 (default 1)")
    p.add_argument("--n-max", type=float, default=None,
                   help="largest n, in decades from 10 (default 1e6; 1e4 for --gap-counting; --d Monte Carlo and "
                        "direct routes at most 1e7)")
    p.add_argument("--d", type=int, default=None,
                   help="simplex: also run almost-simplex tokens in R^d (Monte Carlo; default: exact simplex only); "
                        "--fixed-query and --gap-counting: keys on S^{d-1} (default 3)")
    p.add_argument("--queries", type=int, default=8,
                   help="simplex with --d: query tokens per configuration (default 8)")
    p.add_argument("--configurations", type=int, default=8,
                   help="simplex with --d: independent token sets (the standard errors; default 8)")
    p.add_argument("--replicates", type=int, default=2000,
                   help="--fixed-query: independent queries (and Poisson processes) per n (default 2000)")
    p.add_argument("--route", choices=("order", "direct"), default="order",
                   help="--fixed-query: order = exact top order statistics (any n up to 1e15), direct = all n keys "
                        "(default order)")
    p.add_argument("--rows", type=int, default=100, help="--gap-counting: independent rows per n (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Monte Carlo parts (default 0)")
    p.add_argument("--plot", metavar="FILE.png", help="figure of the transition")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.common.provenance import StderrProgress
    from numerics.longcontext import plots, report

    if args.plot and not args.plot.lower().endswith(".png"):
        raise InputError(f"--plot must name a .png file, got {args.plot!r}")
    progress = StderrProgress("long-context", unit="")
    if args.fixed_query or args.gap_counting:
        if args.alpha != 0.0 or args.q != 1.0:
            raise InputError("--alpha and --q belong to the simplex model (--rho)")
    if args.fixed_query:
        payload = report.fixed_query_report(3 if args.d is None else args.d,
                                            1e6 if args.n_max is None else args.n_max, args.replicates, args.seed,
                                            args.route, progress)
        text = _fixed_query_text(payload)
        draw = plots.plot_fixed_query
    elif args.gap_counting:
        payload = report.gap_report(1e4 if args.n_max is None else args.n_max, args.rows, args.seed,
                                    d=3 if args.d is None else args.d, progress=progress)
        text = _gap_text(payload)
        draw = plots.plot_gaps
    else:
        if args.rho is None:
            raise InputError("give --rho RHO (simplex model), --fixed-query or --gap-counting")
        payload = report.simplex_report(args.rho, args.alpha, args.q, 1e6 if args.n_max is None else args.n_max,
                                        args.d, args.queries, args.configurations, args.seed, progress)
        text = _simplex_text(payload)
        draw = plots.plot_simplex
    if args.plot:
        draw(payload, args.plot)
        payload["plot"] = args.plot
    emit(args, payload, text)
    return 0


def _simplex_text(p: dict) -> str:
    lim = dict(p["limits"]["inner_product"])
    if math.isnan(lim["subcritical"]):  # rho = 0 without residual: no single limit (theory.longcontext)
        lim["subcritical"] = "1 for gamma < 1/2, 0 for 1/2 < gamma < 1"
    lines = [("model", "simplex tokens, beta_n = gamma log n (arXiv 2510.05554)"),
             ("rho, alpha, q", f"{fmt(p['rho'])}, {fmt(p['alpha'])}, {fmt(p['q'])}"),
             ("critical gamma", f"{fmt(p['critical_gamma'])}  (= 1/(1 - rho))"),
             ("self weight A_ii, n -> oo", "0 below, 1/2 at, 1 above the critical gamma"),
             ("rho' (n -> oo)", f"below {fmt(lim['subcritical'])}, at {fmt(lim['critical'])}, "
                                f"above {fmt(lim['supercritical'])}")]
    rows = [(f"{r['n']:.0e}", r["gamma_half"], r["width_p"], r["width_p_log_n"], r["width_rho"],
             r["rho_out_at_gamma_c"]) for r in p["transition"]]
    text = key_values(lines) + "\n\ntransition over n (exact reduction, O(1) per n):\n"
    text += table(rows, ["n", "gamma_1/2", "width (10-90)", "width * log n", "width of rho'", "rho' at gamma_c"])
    if p.get("width_fit"):
        f = p["width_fit"]
        text += (f"\nwidth ~ (log n)^s: s = {f['slope']:.4f} +- {f['standard_error']:.1g} "
                 f"(n = {f['window'][0]:.0e} .. {f['window'][1]:.0e})")
    fin = p.get("finite_d")
    if fin:
        frows = [(f"{r['n']:.0e}", f"{r['gamma_half']:.4f} +- {r['standard_error']:.1g}", r["spread"],
                  r["annealed_gamma_half"], r["median_width"], r["simplex_gamma_half"]) for r in fin["rows"]]
        text += (f"\n\nalmost-simplex tokens in R^{fin['d']} (Monte Carlo: {fin['configurations']} configurations x "
                 f"{fin['queries']} queries, seed {fin['seed']}):\n")
        text += table(frows, ["n", "gamma_1/2 +- SE", "spread", "annealed", "median width", "exact simplex"])
    return text


def _fixed_query_text(p: dict) -> str:
    lines = [("model", f"one query, n iid uniform keys on S^{p['d'] - 1} (arXiv 2605.08505)"),
             ("critical scale", f"beta*_n ~ n^{fmt(p['critical_exponent'])} (= n^(2/(d-1)))"),
             ("C_d, Poisson limit", f"{fmt(p['constant_quadrature'])} (quadrature)"),
             ("C_d, simulated Poisson", f"{p['constant_poisson_mc']:.4f} +- {p['constant_poisson_mc_se']:.1g} "
                                        f"({p['replicates']} processes, seed {p['seed']})")]
    rows = [(f"{r['n']:.0e}", f"{r['constant']:.4f} +- {r['standard_error']:.1g}",
             r["regimes"]["below"]["top_weight"], r["regimes"]["at"]["top_weight"],
             r["regimes"]["above"]["top_weight"]) for r in p["rows"]]
    text = key_values(lines) + f"\n\nC_d(n) and the mean top weight E W_1 ({p['rows'][0]['route']} route):\n"
    text += table(rows, ["n", "C_d(n) +- SE", "E W_1 below", "E W_1 at C_d", "E W_1 above"])
    return text + "\n(below: beta = n^{a_c/2}; at: beta = C_d n^{a_c}; above: beta = n^{3 a_c/2}; a_c = 2/(d-1))"


def _gap_text(p: dict) -> str:
    rows = []
    for fam in p["families"]:
        for r in fam["rows"]:
            rows.append((fam["family"], f"{r['n']:.0e}", r["accumulation_scale"], r["beta_half"],
                         f"{r['ratio']:.3f} +- {r['ratio_se']:.1g}", fam["limit_ratio"]))
    text = ("gap counting (arXiv 2605.12697): A_n = sup_delta log Nbar_n(delta) / delta; beta_1/2 where the mean top "
            f"weight is 1/2 ({p['rows_per_n']} rows per n, seed {p['seed']})\n")
    text += table(rows, ["family", "n", "A_n", "beta_1/2", "beta_1/2 / A_n", "limit"])
    laws = "; ".join(f"{f['family']}: {f['law']}" for f in p["families"])
    return text + f"\nlaws of A_n: {laws}"
