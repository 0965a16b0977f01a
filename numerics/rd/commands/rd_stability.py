"""``attnflow rd-stability``: the Wasserstein stability ratio W_p(t)/W_p(0) of two particle systems in R^d against
the constant of the coupling proof (CACP arXiv 2501.18322 well-posedness), and an optional adversarial search."""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.provenance import package_versions
from numerics.common.render import emit, key_values
from numerics.rd.names import OT_BACKENDS
from numerics.rd.commands.rd import add_model_arguments, build_model, finite_or_none, initial_tokens, load_tokens

NAME = "rd-stability"
ORDER = 62
HELP = "Wasserstein stability of R^d self-attention: measured W_p ratio against the proof's constant C(T, R0)"
DESCRIPTION = (HELP + ". mu_0: --n tokens from N(0, I_d) scaled into the ball of radius --R0 (or --init); nu_0 = "
               "mu_0 + --eps times Gaussian noise (or --init2). Exact W_p by optimal transport (POT). Softmax only.")


def add_arguments(p):
    # the constant is derived for softmax attention only
    add_model_arguments(p, attentions=("softmax",), default="softmax")
    p.add_argument("--init2", help="nu_0: (m, d) array in a .npy file (default: mu_0 perturbed by --eps)")
    p.add_argument("--R0", type=float, default=0.5, help="radius of mu_0 for --n (default 0.5)")
    p.add_argument("--eps", type=float, default=0.01, help="perturbation size of nu_0 (default 0.01)")
    p.add_argument("--p", type=float, default=2.0, help="order of W_p (default 2)")
    p.add_argument("--t-end", required=True, type=float, help="final time (depth)")
    p.add_argument("--dt", type=float, default=0.025, help="RK4 step in the rescaled variables")
    p.add_argument("--every", type=int, default=4, help="measure every k-th step (default 4)")
    p.add_argument("--ot", choices=OT_BACKENDS, default="pot", help="exact OT backend (default pot)")
    p.add_argument("--search", action="store_true", help="also run the adversarial search (Nelder-Mead)")
    p.add_argument("--search-n", type=int, default=4, help="tokens of each measure in the search")
    p.add_argument("--search-evals", type=int, default=60, help="Nelder-Mead evaluations per start")
    p.add_argument("--search-starts", type=int, default=2, help="Nelder-Mead starts")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", help="write the ratio and radius against their bounds to FILE.png")


def run(args) -> int:
    from numerics.rd.stability import adversarial_search, check_search_cost, stability_ratios

    model = build_model(args)
    d = model.d
    t_end = require_real(args.t_end, "--t-end", minimum=0.0, strict_minimum=True)
    dt = require_real(args.dt, "--dt", minimum=0.0, strict_minimum=True)
    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    if args.search:  # sized before the (long) main run, so an absurd search is refused at once
        search = {"n": require_int(args.search_n, "--search-n", minimum=2),
                  "starts": require_int(args.search_starts, "--search-starts", minimum=1),
                  "max_evals": require_int(args.search_evals, "--search-evals", minimum=1)}
        check_search_cost(search["n"], d, t_end, dt, search["starts"], search["max_evals"])
    X0 = initial_tokens(args, d)
    if args.init is None:
        R0 = require_real(args.R0, "--R0", minimum=0.0, strict_minimum=True)
        X0 = X0 * (R0 / np.max(np.linalg.norm(X0, axis=1)))
    if args.init2 is not None:
        Y0 = load_tokens(args.init2, d)
    else:
        rng = np.random.default_rng(require_int(args.seed, "--seed", minimum=0) + 1)
        Y0 = X0 + eps * rng.standard_normal(X0.shape)
    res = stability_ratios(model, X0, Y0, t_end, dt=dt, p=args.p, every=require_int(args.every, "--every", minimum=1),
                           backend=args.ot)
    logC = res["log_constant"]
    slack = logC[1:] - np.log(res["ratio"][1:])
    payload = {"t_end": float(res["times"][-1]), "p": res["p"], "ot": res["backend"], "W0": res["W0"],
               "R0": res["R0"], "ratio": float(res["ratio"][-1]), "max_ratio": float(np.max(res["ratio"])),
               "log_constant": float(logC[-1]), "log10_constant": float(logC[-1] / np.log(10)),
               "ratio_below_constant": bool(np.all(slack >= 0)),
               "min_log10_slack": float(np.min(slack) / np.log(10)) if len(slack) else None,
               "radius": finite_or_none(res["radius"][-1]), "radius_bound": finite_or_none(res["radius_bound"][-1]),
               "radius_never_above_bound": bool(np.all(res["radius"][1:] <= res["radius_bound"][1:] * (1 + 1e-12))),
               "model": model.to_meta(), "versions": package_versions()}
    pairs = [("t_end", payload["t_end"]), ("W_p(0)", res["W0"]), ("W_p(t)/W_p(0)", payload["ratio"]),
             ("log10 C(t)", payload["log10_constant"]), ("ratio below C", payload["ratio_below_constant"]),
             ("radius", payload["radius"]), ("radius_bound", payload["radius_bound"])]
    if args.search:
        adv = adversarial_search(model, search["n"], t_end, R0=res["R0"], eps=eps, dt=dt, p=args.p,
                                 starts=search["starts"], max_evals=search["max_evals"],
                                 seed=require_int(args.seed, "--seed", minimum=0))
        payload["adversarial"] = {"ratio": adv["ratio"], "log10_constant": adv["log_constant"] / np.log(10),
                                  "evaluations": adv["evaluations"], "X0": adv["X0"].tolist(),
                                  "Y0": adv["Y0"].tolist()}
        pairs += [("adversarial ratio", adv["ratio"]), ("adversarial log10 C", adv["log_constant"] / np.log(10))]
    if args.plot:
        from numerics.rd.plots import plot_stability

        try:
            plot_stability(args.plot, res)
        except OSError as exc:
            raise InputError(f"cannot write --plot {args.plot!r}: {exc}") from None
        payload["plot"] = args.plot
    emit(args, payload, key_values(pairs))
    return 0
