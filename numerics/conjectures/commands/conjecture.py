"""``attnflow conjecture``: list, run and replay counterexample searches (numerics.conjectures.framework)."""
from __future__ import annotations

from numerics.common.errors import EXP_BETA_MAX, InputError, require_real
from numerics.common.provenance import StderrProgress
from numerics.core.kernel_options import command_line_message, kernel_parameters
from numerics.common.render import emit, key_values, table

NAME = "conjecture"
ORDER = 80
HELP = "search for counterexamples to conjectures from the literature (list, run ID, replay FILE)"


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    q = sub.add_parser("list", help="list the catalogue")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    r = sub.add_parser("run", help="search one conjecture for a counterexample")
    r.add_argument("id", help="conjecture id (see `attnflow conjecture list`)")
    r.add_argument("--budget", type=int, default=None, help="examples to try (default: the conjecture's own)")
    r.add_argument("--seconds", type=float, default=None, help="stop evaluating new examples after this time")
    r.add_argument("--seed", type=int, default=0, help="Hypothesis seed (same seed, same search)")
    r.add_argument("--save", metavar="FILE.json", help="write a counterexample here (atomically) if one is found")
    r.add_argument("--kernel", help="kernel string phi(s) for the 'landscape' conjecture, e.g. \"exp(beta*s) + c*s**3\"")
    r.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="kernel parameter (repeatable)")
    r.add_argument("--beta-range", nargs=2, type=float, metavar=("LOW", "HIGH"), help="beta range ('landscape'), each end within [-700, 700] (e^{beta s} is evaluated unscaled)")
    r.add_argument("--d", type=int, help="ambient dimension ('landscape'; default 2)")
    r.add_argument("--module", metavar="FILE.py", help="a user module defining the conjecture ID (module-level "
                   "Conjecture objects, CONJECTURES or conjectures())")
    r.add_argument("--hypothesis-db", metavar="DIR", help="keep Hypothesis's storage (its caches) in DIR (default: "
                   "a temporary directory; nothing is written to the working directory). Searches are seeded, so "
                   "Hypothesis saves no example database: keep a counterexample with --save")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    y = sub.add_parser("replay", help="re-evaluate a saved counterexample")
    y.add_argument("file", help="a counterexample file written by `conjecture run --save`")
    y.add_argument("--module", metavar="FILE.py", help="the user module defining the conjecture (for ids "
                   "outside the catalogue; the file records where it was saved from)")
    y.add_argument("--json", action="store_true", help="print one JSON object")


def _conjecture(args, get_conjecture):
    """The user module's conjecture, the catalogue entry, or for ``landscape`` the user's kernel/beta range/d."""
    custom = args.kernel is not None or args.param or args.beta_range is not None or args.d is not None
    if args.module is not None:
        from numerics.conjectures.framework import load_conjectures

        found = load_conjectures(args.module)
        if args.id not in found:
            raise InputError(f"{args.module} defines no conjecture {args.id!r} (it defines: {', '.join(found)})")
        if custom:
            raise InputError("--kernel/--param/--beta-range/--d apply to the catalogue's 'landscape' conjecture")
        return found[args.id]
    if args.id != "landscape":
        if custom:
            raise InputError(f"--kernel/--param/--beta-range/--d apply to the 'landscape' conjecture, not {args.id!r}")
        return get_conjecture(args.id)
    from numerics.conjectures.catalogue import landscape_conjecture

    params = kernel_parameters(args.param)
    if params and args.kernel is None:
        raise InputError("--param needs --kernel")
    low, high = args.beta_range if args.beta_range is not None else (-1.0, 1.0)
    for b, name in ((low, "beta range LOW"), (high, "beta range HIGH")):
        require_real(b, name, minimum=-EXP_BETA_MAX, maximum=EXP_BETA_MAX)
    try:
        return landscape_conjecture(low, high, kernel=args.kernel if args.kernel is not None else "exponential",
                                    params=params, d=2 if args.d is None else args.d)
    except InputError as exc:
        raise InputError(command_line_message(exc)) from None


def run(args) -> int:
    from numerics.conjectures.catalogue import catalogue, get_conjecture
    from numerics.conjectures.catalogue import replay

    if args.action == "list":
        cat = catalogue()
        rows = [(c.id, c.title, c.source.split(",")[0], c.expected, c.max_examples) for c in cat.values()]
        payload = {"conjectures": [{"id": c.id, "title": c.title, "source": c.source, "note": c.note,
                                    "expected": c.expected, "default_budget": c.max_examples}
                                   for c in cat.values()]}
        emit(args, payload, table(rows, ["id", "conjecture", "source", "literature", "budget"], 70))
        return 0
    if args.action == "run":
        conj = _conjecture(args, get_conjecture)
        if args.budget is not None and args.budget < 1:
            raise InputError(f"--budget must be >= 1, got {args.budget}")
        if args.seconds is not None and not args.seconds > 0:
            raise InputError(f"--seconds must be > 0, got {args.seconds}")
        result = conj.run(max_examples=args.budget, seconds=args.seconds, seed=args.seed, save=args.save,
                          hypothesis_db=args.hypothesis_db,
                          progress=StderrProgress(f"conjecture {conj.id}", unit="examples "))
        payload = result.to_dict()
        cx = result.counterexample
        # a user kernel has no literature result: "open" (an open problem) would claim one
        expects = "- (user kernel)" if getattr(args, "kernel", None) and conj.expected == "open" else conj.expected
        pairs = [("id", result.id), ("status", result.status), ("literature expects", expects),
                 ("examples tried", result.examples_tried), ("decided / undecided", f"{result.decided} / {result.undecided}"),
                 ("seconds", f"{result.seconds:.1f}"), ("seed", result.seed)]
        if result.undecided_reasons:
            pairs.append(("undecided because", ", ".join(f"{k} ({v})" for k, v in result.undecided_reasons.items())))
        if cx:
            inputs = {k: v for k, v in cx["inputs"].items() if k != "X0"}
            pairs += [("counterexample", cx["verdict"]["detail"]), ("inputs", str(inputs))]
            if "X0" in cx["inputs"]:  # the drawn start (inputs.X0), not the counterexample: say which is which
                pairs.append(("drawn start X0", f"shape {tuple(cx['inputs']['X0'].shape)} (inputs.X0)"))
            outcome = cx.get("outcome") or {}
            if "start" in outcome:  # landscape outcomes: the drawn start or a symmetric configuration
                pairs.append(("found from", outcome["start"]))
            if "X" in outcome:
                X = outcome["X"]
                pairs.append(("critical point", f"{len(X)} points in R^{len(X[0])} (outcome.X)"))
        if result.saved_to:
            pairs.append(("saved to", result.saved_to))
        emit(args, payload, key_values(pairs))
        return 0
    res = replay(args.file, module=args.module)
    pairs = [("id", res.id), ("reproduced", res.reproduced), ("verdict now", res.verdict.detail),
             ("verdict saved", res.saved_verdict.get("detail", "-"))]
    changed = {k: (v, res.versions_now.get(k)) for k, v in res.versions_then.items() if res.versions_now.get(k) != v}
    if changed:
        pairs.append(("versions changed", ", ".join(f"{k} {a} -> {b}" for k, (a, b) in changed.items())))
    emit(args, res.to_dict(), key_values(pairs))
    return 0 if res.reproduced else 1
