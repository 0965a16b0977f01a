"""attnflow's causal attention-only flow with a decoder's own weights, started from its layer-0 tokens.

The flow (:func:`flow_model`): the depth schedule whose layer l is block l's heads on unit tokens
(:func:`numerics.decoder.heads.layer_heads`: Q_h = W_q^h G, K_h = W_k^{g(h)} G, V_h = W_v^{g(h)} G,
W_h = s_l O_h^T, score scale d / sqrt(k), beta = 1), the causal mask, and attnflow's ``layer`` step of size 1,

    u_i <- N( u_i + P_{u_i}( sum_h s_l O_h V_h sum_{j <= i} softmax_j( (d / sqrt(k)) <Q_h u_i, K_h u_j> ) u_j ) ),

from u_i = x_i^0 / |x_i^0| (the normalised embeddings). The speed s_l = sqrt(d) / r_l with r_l the median token
norm at block l's input in the model (:func:`numerics.decoder.heads.speed_of`) stands in for the pre-norm
radius dynamics: a pre-norm block adds an update of size about sqrt(d) |O V| to a token of norm r, so its
direction moves by about sqrt(d) / r times the sphere update.

**Where a norm scheme plugs in.** ``radius`` selects how 1/r enters. ``"measured"`` (the default) is the rule
above. Any other value is passed to ``Model(norm=radius)`` with W_h = sqrt(d) O_h^T, for the radius dynamics of
the normalisation schemes of the architectures work (arXiv 2510.22026: Pre-LN as a speed regulator); a
version of attnflow without ``Model(norm=...)`` refuses it with :class:`InputError`. This is the one hook: the
rest of the study (geometry, comparison, sink) does not change.

The variant ``values="identity"`` keeps the model's attention (Q_h, K_h, each padded with zero rows to d x d)
and replaces the value-output maps by W_h^T V_h = I / H: the setting V = I of the causal-mask theorem of
Karagodin, Polyanskiy, Rigollet (arXiv 2411.04990), in which the first token never moves and every token
converges to it. The rotary rotation and the MLP are not in either flow.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import InputError, require_choice, require_int
from numerics.core.blocks import MultiHead, Schedule
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate
from numerics.decoder.forward import DecoderTrace
from numerics.decoder.heads import head_blocks, layer_heads, speed_of
from numerics.decoder.weights import Decoder
from numerics.trained.flows import angles
from numerics.trained.geometry import DEFAULT_EPS, layer_geometry, unit_rows

VALUES = ("model", "identity")


def layer_speeds(model: Decoder, trace: DecoderTrace) -> list[float]:
    """s_l = sqrt(d) / (median token norm at block l's input), l = 1 .. L."""
    return [speed_of(trace.states[l], model.config.d) for l in range(trace.layers)]


def identity_value_heads(model: Decoder, layer: int) -> MultiHead:
    """Block ``layer``'s attention with W_h^T V_h = I / H (Q_h, K_h zero-padded to d rows)."""
    Q, K, _, _ = head_blocks(model, layer)
    H, k, d = Q.shape
    pad = np.zeros((H, d - k, d))
    eye = np.broadcast_to(np.eye(d), (H, d, d))
    return MultiHead(np.concatenate([Q, pad], axis=1), np.concatenate([K, pad], axis=1), eye, eye / H,
                     scale=d / np.sqrt(k))


def flow_model(model: Decoder, trace: DecoderTrace, layers: int | None = None, values: str = "model",
               radius="measured") -> Model:
    """The causal attention-only flow of the first ``layers`` blocks as an attnflow :class:`Model` (docstring).

    The depth schedule is callable (layer l's heads are built when the step reaches t = l), so that only one
    layer's heads exist at a time (the V = I heads are d x d: 96 MB per layer for SmolLM2).
    """
    L = trace.layers if layers is None else require_int(layers, "layers", 1, trace.layers)
    values = require_choice(values, "values", VALUES)
    d = model.config.d
    measured = isinstance(radius, str) and radius == "measured"
    speeds = layer_speeds(model, trace)[:L] if measured else [float(np.sqrt(d))] * L

    def layer(t: float):
        l = min(L - 1, max(0, int(np.floor(t + 1e-9))))
        return (identity_value_heads(model, l) if values == "identity" else layer_heads(model, l, speeds[l])), None

    schedule = Schedule(fn=layer, d=d)
    if measured or values == "identity":
        return Model(kind="sa", beta=1.0, schedule=schedule, causal=True)
    try:
        return Model(kind="sa", beta=1.0, schedule=schedule, causal=True, norm=radius)
    except TypeError:
        raise InputError("radius dynamics need Model(norm=...), which this version of attnflow does not have; "
                         "use radius='measured'") from None


def run_flow(model: Decoder, trace: DecoderTrace, layers: int | None = None, values: str = "model",
             radius="measured") -> np.ndarray:
    """(L + 1, n, d) frames of :func:`flow_model` with the ``layer`` step of size 1 (direct field)."""
    L = trace.layers if layers is None else require_int(layers, "layers", 1, trace.layers)
    m = flow_model(model, trace, L, values, radius)
    traj = simulate(m, unit_rows(trace.states[0]), float(L), solver=Solver("layer", dt=1.0, backend="direct"),
                    save=SaveAt(every=1))
    return np.asarray(traj.X)


def first_token_motion(frames: np.ndarray) -> list[float]:
    """Angle (radians) of the first token at each frame from its direction at frame 0."""
    U = unit_rows(frames[:, 0, :])
    return angles(U, np.repeat(U[:1], len(U), axis=0)).tolist()


def flow_runs(model: Decoder, trace: DecoderTrace, radius="measured") -> dict[str, np.ndarray]:
    """Frames (L + 1, n, d) of the model (its token states), attnflow's flow and the V = I flow."""
    return {"model": trace.states, "attnflow": run_flow(model, trace, radius=radius),
            "attnflow V=I": run_flow(model, trace, values="identity")}


def flow_study(model: Decoder, trace: DecoderTrace, eps: float = DEFAULT_EPS, runs: dict | None = None,
               radius="measured") -> dict:
    """The model, attnflow's flow with the model's weights and the V = I flow from the same layer-0 tokens.

    Returns per run the per-layer geometry (mean cosine, clusters), the first token's motion, the mean angle
    between each flow's tokens and the model's at every layer, and ``reproduced``: the flow's rise of the mean
    cosine from layer 0 to layer L as a fraction of the model's (1 = as much clustering as the model, > 1 more).
    ``runs`` (from :func:`flow_runs`) is computed when not given.
    """
    runs = flow_runs(model, trace, radius) if runs is None else runs
    geo = {k: [g.to_dict() for g in layer_geometry(v, eps)] for k, v in runs.items()}
    mc = {k: [g["mean_cosine"] for g in v] for k, v in geo.items()}
    rise = mc["model"][-1] - mc["model"][0]
    return {"eps": eps, "speeds": layer_speeds(model, trace), "layers": geo,
            "first_token_angle": {k: first_token_motion(v) for k, v in runs.items()},
            "angle_to_model": {k: [float(angles(runs[k][l], runs["model"][l]).mean()) for l in range(len(runs[k]))]
                               for k in runs if k != "model"},
            "reproduced": {k: (mc[k][-1] - mc[k][0]) / rise if rise else None for k in runs if k != "model"},
            "radius": radius if isinstance(radius, str) else repr(radius)}
