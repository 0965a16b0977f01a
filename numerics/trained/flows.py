r"""The trained model next to attnflow's flow: the idealised attention sub-layer, its gap to BERT, depth and weight sharing.

**The idealisation compared.** attnflow's ``layer`` step with step 1 and the heads of a trained layer
(:func:`numerics.trained.heads.multihead`, scale :math:`\beta / \sqrt{k}`) maps unit tokens :math:`u_i` to

.. math::

    u_i \leftarrow N\Big(u_i + P_{u_i}\Big(\sum_h W_h^\top V_h a_i^h\Big)\Big), \qquad
    a_i^h = \sum_j \operatorname{softmax}_j\big(\beta \langle Q_h u_i, K_h u_j\rangle / \sqrt{k}\big)\, u_j

with :math:`N(y) = y / \lVert y\rVert` and :math:`P_u y = y - \langle u, y\rangle u` (:mod:`numerics.core.blocks`,
:mod:`numerics.core.integrators`). :math:`\beta = r^2`, the mean squared norm of the trained model's tokens at that
layer's input, so that unit tokens see the scores of tokens of norm :math:`r`. A BERT attention sub-layer
(:mod:`numerics.trained.encoder`) differs in four ways, switched on one at a time by :func:`sublayer_ladder` on the same
input (the model's own layer input):

1. ``token norms``: the scores and values use the tokens :math:`x_i` themselves (norms vary around :math:`r`),
   not :math:`r u_i`;
2. ``biases``: :math:`b_q, b_k, b_v, b_o` (:math:`b_k` cancels in the softmax; :math:`b_q` does not: it adds
   :math:`\langle b_q^h, K_h x_j\rangle`);
3. ``no projection``: the residual is :math:`x` + attention output, without the tangent projection :math:`P_x`;
4. ``LayerNorm``: :math:`\mathrm{LN}_1` (centring, division by the standard deviation, learned scale :math:`g` and
   shift :math:`b`) instead of :math:`N`; this step ends at the model's sub-layer output exactly.

The gap of each step is the mean angle (radians) between the directions of consecutive outputs, and of each
variant to the model's output.

**Depth.** :func:`depth_study` runs the first L layers four ways from the model's layer-0 tokens: the model; no
MLP; no LayerNorm centring; and attnflow's attention-only flow with the six layers as a depth schedule
(:class:`numerics.core.blocks.Schedule`, times 0..L-1, ``layer`` step 1) started from the normalised layer-0
tokens. Each is measured with :func:`numerics.trained.geometry.layer_geometry`.

**Weight sharing** (ALBERT, Lan et al. arXiv 1909.11942, the GLPR figure): :func:`iterate_layer` applies one
trained layer many times, either the full BERT block or attnflow's idealised attention map of that layer.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.core.blocks import Schedule
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate
from numerics.trained.checkpoint import Checkpoint, LayerWeights
from numerics.trained.encoder import (EncoderTrace, attention_output, attention_probabilities, encoder_layer,
                                      layer_norm, run_encoder, softmax_rows, split_heads)
from numerics.trained.geometry import DEFAULT_EPS, layer_geometry, unit_rows
from numerics.trained.heads import mean_square_norm, multihead

LADDER = ("attnflow", "token norms", "biases", "no projection", "LayerNorm")


# -- the idealised sub-layer, written directly from the weights (second code path to numerics.core.blocks) -----
def idealised_sublayer(U: np.ndarray, w: LayerWeights, H: int, beta: float) -> np.ndarray:
    """attnflow's step on unit tokens U (module docstring), computed with full-width products (no biases)."""
    Qf = split_heads(U @ w.Wq.T, H)
    Kf = split_heads(U @ w.Wk.T, H)
    P = softmax_rows(beta * (Qf @ Kf.transpose(0, 2, 1)) / np.sqrt(Qf.shape[-1]))
    out = _merge(P, U, w, H, bias=False)
    out -= np.einsum("ij,ij->i", U, out)[:, None] * U
    return unit_rows(U + out)


def _merge(P: np.ndarray, X: np.ndarray, w: LayerWeights, H: int, bias: bool) -> np.ndarray:
    v = split_heads(X @ w.Wv.T + (w.bv if bias else 0.0), H)
    ctx = (P @ v).transpose(1, 0, 2).reshape(X.shape[0], -1)
    return ctx @ w.Wo.T + (w.bo if bias else 0.0)


def sublayer_ladder(X: np.ndarray, w: LayerWeights, H: int, ln_eps: float) -> dict[str, np.ndarray]:
    """The outputs (as unit directions) of the five variants of :data:`LADDER` for the layer input X (n, d)."""
    r2 = mean_square_norm(X)
    U = unit_rows(X)
    out = {"attnflow": idealised_sublayer(U, w, H, r2)}

    def project(X, Y):
        return Y - (np.einsum("ij,ij->i", X, Y) / np.einsum("ij,ij->i", X, X))[:, None] * X

    k = X.shape[1] // H
    q, kk = split_heads(X @ w.Wq.T, H), split_heads(X @ w.Wk.T, H)
    P0 = softmax_rows(q @ kk.transpose(0, 2, 1) / np.sqrt(k))
    out["token norms"] = unit_rows(X + project(X, _merge(P0, X, w, H, bias=False)))
    P = attention_probabilities(X, w, H)
    A = attention_output(X, P, w)
    out["biases"] = unit_rows(X + project(X, A))
    out["no projection"] = unit_rows(X + A)
    out["LayerNorm"] = unit_rows(layer_norm(X + A, w.ln1_g, w.ln1_b, ln_eps))
    return out


def angles(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per-row angle (radians) between the directions of the rows of A and B."""
    chord = np.linalg.norm(unit_rows(A) - unit_rows(B), axis=1)
    return 2.0 * np.arcsin(np.clip(chord / 2.0, 0.0, 1.0))   # accurate near 0, unlike arccos


def ladder_gaps(ckpt: Checkpoint, trace: EncoderTrace) -> list[dict]:
    """Per layer: mean angle of each variant to the model's sub-layer output and to the previous variant."""
    rows = []
    for l in range(trace.sublayer.shape[0]):
        outs = sublayer_ladder(trace.states[l], ckpt.layer_weights[l], ckpt.heads, ckpt.ln_eps)
        real = trace.sublayer[l]
        prev = None
        for name in LADDER:
            rows.append({"layer": l + 1, "variant": name,
                         "angle_to_model": float(angles(outs[name], real).mean()),
                         "angle_to_previous": None if prev is None else float(angles(outs[name], prev).mean())})
            prev = outs[name]
    return rows


# -- attnflow's schedule built from the weights --------------------------------------------------------------
def layer_input_scales(trace: EncoderTrace) -> list[float]:
    """r_l^2 = mean squared token norm at the input of each layer of the model (states[0..L-1])."""
    return [mean_square_norm(X) for X in trace.states[:-1]]


def trained_schedule(ckpt: Checkpoint, r2s) -> Schedule:
    r"""attnflow depth schedule of the first ``len(r2s)`` layers: layer :math:`l`'s heads with scale
    ``r2s[l]`` :math:`/ \sqrt{k}`."""
    r2s = list(r2s)
    if not 1 <= len(r2s) <= ckpt.layers:
        raise InputError(f"need between 1 and {ckpt.layers} layer scales, got {len(r2s)}")
    heads = tuple(multihead(ckpt.layer_weights[l], ckpt.heads, r2) for l, r2 in enumerate(r2s))
    return Schedule(times=np.arange(len(r2s), dtype=float), heads=heads)


def attnflow_depth_run(ckpt: Checkpoint, trace: EncoderTrace, layers: int | None = None) -> np.ndarray:
    """(L + 1, n, d) frames of attnflow's attention-only flow (``layer`` step 1 through the trained schedule)."""
    L = trace.sublayer.shape[0] if layers is None else require_int(layers, "layers", 1, trace.sublayer.shape[0])
    model = Model(kind="sa", beta=1.0, schedule=trained_schedule(ckpt, layer_input_scales(trace)[:L]))
    traj = simulate(model, unit_rows(trace.states[0]), float(L), solver=Solver("layer", dt=1.0, backend="direct"),
                    save=SaveAt(every=1))
    return np.asarray(traj.X)


def depth_study(ckpt: Checkpoint, text: str, eps: float = DEFAULT_EPS, layers: int | None = None) -> dict:
    """Per-layer geometry of the model, without MLP, without centring and of attnflow's attention-only flow."""
    trace = run_encoder(ckpt, text, layers=layers)
    runs = {"model": trace.states,
            "no MLP": run_encoder(ckpt, text, layers=layers, mlp=False).states,
            "no centring": run_encoder(ckpt, text, layers=layers, centre=False).states,
            "attnflow attention-only": attnflow_depth_run(ckpt, trace)}
    return {"tokens": trace.tokens, "eps": eps, "r2": layer_input_scales(trace),
            "runs": {k: [g.to_dict() for g in layer_geometry(v, eps)] for k, v in runs.items()},
            "ladder": ladder_gaps(ckpt, trace)}


# -- weight sharing --------------------------------------------------------------------------------------------
VARIANTS = ("block", "attention")


@dataclass(frozen=True)
class IteratedRun:
    """Frames of one trained layer applied ``steps`` times (frame 0 = the start)."""

    layer: int
    variant: str
    r2: float
    frames: np.ndarray

    @property
    def steps(self) -> int:
        return int(self.frames.shape[0] - 1)


def iterate_layer(ckpt: Checkpoint, text: str, layer: int = 1, steps: int = 100, variant: str = "block",
                  progress=None) -> IteratedRun:
    r"""Apply layer ``layer`` (1-based) ``steps`` times to the model's layer-0 tokens of ``text``.

    ``block``: the full BERT layer (attention, LN_1, MLP, LN_2). ``attention``: attnflow's idealised attention
    map of that layer (``layer`` step 1 of ``Model(heads=...)``) from the normalised tokens, with :math:`\beta = r^2`
    of the model's input to that layer.
    """
    layer = require_int(layer, "layer", 1, ckpt.layers)
    steps = require_int(steps, "steps", 1, 100_000)
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    trace = run_encoder(ckpt, text, layers=layer)
    r2 = mean_square_norm(trace.states[layer - 1])
    w = ckpt.layer_weights[layer - 1]
    if variant == "attention":
        # idealised_sublayer is attnflow's layer step of Model(heads=multihead(w, H, r2)) (equal to rounding:
        # tests/numerics/test_trained_flows.py); it is used here because it evaluates the heads with
        # full-width products, several times faster than the per-head field for d = 384.
        U = unit_rows(trace.states[0])
        frames = [U]
        for s in range(steps):
            U = idealised_sublayer(U, w, ckpt.heads, r2)
            frames.append(U)
            if progress is not None:
                progress(s + 1, steps)
        return IteratedRun(layer, variant, r2, np.array(frames))
    X = trace.states[0]
    frames = [X]
    for s in range(steps):
        X = encoder_layer(X, w, ckpt.heads, ckpt.ln_eps)[0]
        frames.append(X)
        if progress is not None:
            progress(s + 1, steps)
    return IteratedRun(layer, variant, r2, np.array(frames))
