"""``attnflow model inspect|tokens|iterate|embed``: a pretrained BERT-style encoder next to the theory.

The default model is all-MiniLM-L6-v2 from the optional extra ``attnflow[models]``; ``--model PATH`` reads any
checkpoint of the same architecture (a folder or zip with config.json, model.safetensors, tokenizer.json).
"""
from __future__ import annotations

from numerics.common.errors import require_int, require_real
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, fmt, key_values, table

NAME = "model"
ORDER = 85
HELP = "a pretrained transformer (all-MiniLM-L6-v2 or --model PATH): heads, token clustering by layer, iterated layers"
ACTIONS = ("inspect", "tokens", "iterate", "embed")


def _common(p, text: bool = True):
    # --model names the dynamics (sa/usa) in every other command: the checkpoint is --checkpoint (old name kept)
    p.add_argument("--checkpoint", "--model", dest="model", metavar="PATH",
                   help="checkpoint folder or zip (default: the packaged all-MiniLM-L6-v2)")
    if text:
        p.add_argument("--text", help="input text (default: a paragraph shipped with attnflow)")
        p.add_argument("--file", help="read the input text from this file (one sequence, at most 256 tokens)")
        p.add_argument("--paragraph", type=int, default=1, help="which shipped paragraph without --text/--file (1-4)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    sub.required = True
    q = sub.add_parser("inspect", help="every head as attnflow parameters: effective beta, sym(K^T Q) signs, class")
    _common(q)
    q.add_argument("--layer", type=int, help="only this layer (1-based; default all)")
    q.add_argument("--plot", metavar="FILE.png", help="effective beta and eigenvalue ranges of sym(A) per head")
    q = sub.add_parser("tokens", help="layer by layer: histogram of token cosines, mean cosine, eps-clusters")
    _common(q)
    q.add_argument("--eps", type=float, default=0.3, help="cluster threshold in radians (default 0.3)")
    q.add_argument("--compare", action="store_true",
                   help="also without MLP, without LN centring, attnflow's attention-only flow, and the sub-layer gaps")
    q.add_argument("--plot", metavar="FILE.png", help="per-layer cosine histograms (the GLPR figure)")
    q = sub.add_parser("iterate", help="one trained layer applied many times (weight sharing) against the theory")
    _common(q)
    q.add_argument("--layer", type=int, default=1, help="which layer to iterate (1-based, default 1)")
    q.add_argument("--steps", type=int, default=60, help="iterations (default 60)")
    q.add_argument("--variant", choices=("block", "attention"), default="block",
                   help="block: the full BERT layer; attention: attnflow's idealised attention map (default block)")
    q.add_argument("--eps", type=float, default=0.3, help="cluster threshold in radians (default 0.3)")
    q.add_argument("--plot", metavar="FILE.png", help="mean cosine and cluster count against iterations")
    q = sub.add_parser("embed", help="unit-norm sentence embeddings (mean pooling) and their cosine similarities")
    _common(q, text=False)
    q.add_argument("--text", action="append", required=True, help="a sentence (repeat for several)")


def _load(args):
    from numerics.trained.checkpoint import load_checkpoint

    return load_checkpoint(args.model)


def _text(args):
    from numerics.trained.texts import read_text

    return read_text(args.text, args.file, args.paragraph)


def run(args) -> int:
    return {"inspect": _inspect, "tokens": _tokens, "iterate": _iterate, "embed": _embed}[args.action](args)


def _summary(ckpt) -> list[tuple[str, object]]:
    return [("model", ckpt.name), ("layers x heads x width", f"{ckpt.layers} x {ckpt.heads} x {ckpt.d}")]


def _embed(args) -> int:
    from numerics.trained.encoder import sentence_embeddings

    ckpt = _load(args)
    E = sentence_embeddings(ckpt, args.text)
    S = E @ E.T
    payload = {"model": ckpt.name, "texts": list(args.text), "normalized": ckpt.normalize, "pooling": ckpt.pooling,
               "embeddings": E.tolist(), "similarities": S.tolist()}
    rows = [(i + 1, t[:40], *(f"{v:.4f}" for v in S[i])) for i, t in enumerate(args.text)]
    text = key_values(_summary(ckpt) + [("pooling", f"{ckpt.pooling}, unit norm: {ckpt.normalize}")])
    text += "\n\ncosine similarities\n" + table(rows, ["#", "text", *(str(i + 1) for i in range(len(rows)))])
    emit(args, payload, text)
    return 0


def _inspect(args) -> int:
    from numerics.trained.encoder import run_encoder
    from numerics.trained.heads import head_reports, mean_square_norm

    ckpt = _load(args)
    layers = range(ckpt.layers) if args.layer is None else [require_int(args.layer, "--layer", 1, ckpt.layers) - 1]
    trace = run_encoder(ckpt, _text(args), layers=max(layers) + 1)
    reports = [r for l in layers for r in head_reports(ckpt, l, mean_square_norm(trace.states[l]))]
    payload = {"model": ckpt.name, "tokens": trace.n, "heads": [r.to_dict() for r in reports]}
    rows = [(r.layer, r.head, fmt(r.r2, 4), fmt(r.beta_spec, 4), fmt(r.beta_iso, 3), fmt(r.isotropy, 2),
             f"{r.sym_positive}/{r.sym_negative}", fmt(r.lambda_max, 3), fmt(r.lambda_min, 3),
             fmt(r.blowup_time, 3), fmt(r.value_trace, 2), r.label) for r in reports]
    text = key_values(_summary(ckpt) + [("tokens (sets r^2)", trace.n)])
    text += "\n\n" + table(rows, ["layer", "head", "r^2", "beta_spec", "beta_iso", "isotropy", "+/-", "lam_max",
                                  "lam_min", "t_blowup", "tr(WV)/d", "class"], max_width=26)
    text += ("\n\nbeta_spec = r^2 |Q^T K|_2/sqrt(k), beta_iso = r^2 tr(Q^T K)/(d sqrt(k)); lam = eigenvalues of "
             "sym(K^T Q)/sqrt(k) (unit tokens); +/- their signs; t_blowup = 1/(2 r^2 lam_max) (CACP, V = I)")
    if args.plot:
        from numerics.trained.plots import plot_heads

        payload["plot"] = plot_heads(reports, args.plot)
    emit(args, payload, text)
    return 0


def _tokens(args) -> int:
    from numerics.trained.encoder import run_encoder
    from numerics.trained.flows import depth_study
    from numerics.trained.geometry import histogram_edges, layer_geometry

    ckpt = _load(args)
    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    text_in = _text(args)
    if args.compare:
        study = depth_study(ckpt, text_in, eps)
        runs, tokens = study["runs"], study["tokens"]
    else:
        trace = run_encoder(ckpt, text_in)
        runs, tokens, study = {"model": [g.to_dict() for g in layer_geometry(trace.states, eps)]}, trace.tokens, None
    payload = {"model": ckpt.name, "tokens": tokens, "eps": eps, "bin_edges": histogram_edges().tolist(),
               "layers": runs}
    if study:
        payload["ladder"], payload["r2"] = study["ladder"], study["r2"]
    text = key_values(_summary(ckpt) + [("tokens", len(tokens)), ("eps (rad)", eps)])
    names = list(runs)
    rows = [(l, *(x for name in names for x in (fmt(runs[name][l]["mean_cosine"], 3), runs[name][l]["clusters"])))
            for l in range(len(runs["model"]))]
    heads = ["layer"] + [h for name in names for h in (f"{name}: mean cos", "clusters")]
    text += "\n\n" + table(rows, heads, max_width=30)
    if study:
        lad = [(r["layer"], r["variant"], fmt(r["angle_to_model"], 3), fmt(r["angle_to_previous"], 3))
               for r in study["ladder"]]
        text += ("\n\nattention sub-layer: attnflow's idealised step -> BERT, one difference at a time "
                 "(mean angle in rad, same input)\n" + table(lad, ["layer", "variant", "to model", "to previous"]))
    if args.plot:
        from numerics.trained.plots import plot_layer_histograms

        payload["plot"] = plot_layer_histograms(runs, args.plot, title=f"{ckpt.name}: {len(tokens)} tokens")
    emit(args, payload, text)
    return 0


def _iterate(args) -> int:
    from numerics.trained.comparison import compare_iterated
    from numerics.trained.flows import iterate_layer

    ckpt = _load(args)
    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    steps = require_int(args.steps, "--steps", 1, 100_000)
    run = iterate_layer(ckpt, _text(args), layer=args.layer, steps=steps, variant=args.variant,
                        progress=StderrProgress("iterate", unit="step "))
    cmp = compare_iterated(ckpt, run, eps)
    payload = {"model": ckpt.name, **cmp}
    shown = sorted({0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, steps} & set(range(steps + 1)))
    b, lm, red = cmp["betas"], cmp["l_max"], cmp["reduced"]
    text = key_values(_summary(ckpt) + [
        ("layer / variant", f"{run.layer} / {run.variant}"), ("tokens", cmp["n"]), ("eps (rad)", eps),
        ("r^2 (layer input)", fmt(run.r2, 4)),
        ("beta_iso median / beta_spec max", f"{fmt(b['beta_iso_median'], 3)} / {fmt(b['beta_spec_max'], 4)}"),
        ("l_max(beta_iso) / l_max(beta_spec)", f"{lm['beta_iso_median']} / {lm['beta_spec_max']}"
                                                f"  (l_max = 2 from beta = {fmt(lm['switch_to_l2'], 4)})"),
        ("mean cosine non-decreasing (fraction of steps)", fmt(cmp["mean_cosine_increasing_fraction"], 3)),
        ("largest drop of the mean cosine", fmt(cmp["largest_mean_cosine_drop"], 3)),
        ("final clusters", cmp["final_clusters"]),
        ("plateaus (clusters: iterations)", ", ".join(f"{p['clusters']}: {p['first']}-{p['last']}"
                                                       for p in cmp["plateaus"]) or "none"),
        ("reduced model, first plateau", "-" if red is None else
         f"{red['clusters']} clusters from {red['from']}: next merge observed after {red['observed_layers']}, "
         f"predicted after {fmt(red['predicted_layers'], 3)} layers")])
    text += "\n\n" + table([(s, fmt(cmp["mean_cosine"][s], 4), cmp["counts"][s]) for s in shown],
                           ["iteration", "mean cos", "clusters"])
    if args.plot:
        from numerics.trained.plots import plot_iterated

        payload["plot"] = plot_iterated(cmp, args.plot)
    emit(args, payload, text)
    return 0

