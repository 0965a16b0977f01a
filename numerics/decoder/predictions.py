"""What the theory predicts from a decoder's weights, set against what the model and attnflow's flow do.

**Collapse speed set by the value maps** (derived here; the value-spectrum picture of Dovonon et al. arXiv
2401.04301 and of GLPR23 arXiv 2305.05465). In attnflow's flow with heads (attention over all tokens) write the
tokens near a cluster as x_i = c + eps_i, eps_i tangent at c. The attention weights vary only at second order
in the average (sum_j dp_ij x_j = O(eps^2) because sum_j dp_ij = 0), so a_i^h = c + mean_j eps_j + O(eps^2) and,
with M = sum_h W_h^T V_h,

    d/dt (x_i - x_j) = -rho(c) (x_i - x_j) - <x_i - x_j, M c> c + O(eps^2),   rho(c) = <c, M c>:

the tangent differences shrink (rho > 0) or grow (rho < 0) at the Rayleigh quotient of the value map at the
cluster, whatever the attention (for V = I, rho = 1 and 1 - <x_i, x_j> ~ e^{-2t}, GLPR's rate). attnflow's
``layer`` step y_i = x_i + P_{x_i}(v_i), x_i <- y_i / |y_i| maps the differences by the linear map

    delta -> (I - yhat yhat^T) ((1 - rho) delta - <delta, M c> c) / |y|,   y = c + P_c(M c),       (layer map)

so 1 - cos shrinks per layer by about ((1 - rho) / |y|)^2 for directions delta orthogonal to P_c(M c) (all
but one of the d - 1). :func:`cluster_step_check` compares the layer map with one step of attnflow's flow from
a tight cluster; :func:`value_predictions` sets the per-layer factor beside the measured ratios
(1 - mean cos_l) / (1 - mean cos_{l-1}) of the model and of attnflow's flow (with the causal mask: late
tokens see almost all tokens, the prediction is for them).

**Power-method alignment** (Li and Altafini, arXiv 2605.25619): residual layers x <- x + M a act like a power
iteration on the value-output product, so tokens align with its leading eigenvector. Measured: the mean length of
the projection of the unit tokens after block l on the leading real invariant subspace of block l's M
(:func:`numerics.decoder.heads.layer_values`), beside the same for random directions.

**The first token** (Karagodin, Polyanskiy, Rigollet, arXiv 2411.04990): with the causal mask and V = I the
first token never moves (its attention row is itself, P_x x = 0) and the others converge to it.
:func:`sink_study` measures, per layer, the attention the heads pay to the first token (the "attention sink"),
the first token's norm against the median token norm, and how far its direction moves (model, attnflow's flow,
attnflow's flow with V = I).
"""
from __future__ import annotations

import numpy as np

from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate
from numerics.decoder.forward import DecoderTrace
from numerics.decoder.heads import alignment, layer_heads, layer_values, random_alignment, value_map
from numerics.decoder.weights import Decoder
from numerics.trained.geometry import unit_rows


def layer_step_factor(M: np.ndarray, c: np.ndarray) -> dict:
    """rho = <c, M c>, |y| = |c + P_c(M c)| and the isotropic per-layer factor ((1 - rho)/|y|)^2 on 1 - cos."""
    Mc = M @ c
    rho = float(c @ Mc)
    y = c + Mc - rho * c
    return {"rho": rho, "y_norm": float(np.linalg.norm(y)), "factor": float(((1.0 - rho) / np.linalg.norm(y)) ** 2)}


def linear_layer_map(M: np.ndarray, c: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """The layer map of the module docstring applied to tangent differences ``delta`` (rows)."""
    Mc = M @ c
    rho = float(c @ Mc)
    y = c + Mc - rho * c
    yn = np.linalg.norm(y)
    yhat = y / yn
    Z = (1.0 - rho) * delta - np.outer(delta @ Mc, c)
    return (Z - np.outer(Z @ yhat, yhat)) / yn


def cluster_step_check(model: Decoder, layer: int, speed: float, c: np.ndarray, n: int = 12,
                       spread: float = 1e-6, seed: int = 0) -> dict:
    """One ``layer`` step of attnflow's flow (all-token attention, block ``layer``'s heads) from a tight cluster
    around the unit vector c, against the layer map: the largest relative gap between the measured and predicted
    differences x_i - x_0, and the measured and predicted (isotropic) factors on the mean |x_i - x_0|^2."""
    rng = np.random.default_rng(seed)
    d = c.size
    E = rng.standard_normal((n, d)) * spread
    E -= np.outer(E @ c, c)
    X0 = unit_rows(c[None, :] + E)
    heads = layer_heads(model, layer, speed)
    traj = simulate(Model(kind="sa", beta=1.0, heads=heads), X0, 1.0, solver=Solver("layer", dt=1.0, backend="direct"),
                    save=SaveAt(every=1))
    X1 = np.asarray(traj.X)[-1]
    M = value_map(model, layer, speed)
    D0, D1 = X0[1:] - X0[0], X1[1:] - X1[0]
    pred = linear_layer_map(M, c, D0)
    gap = float(np.abs(D1 - pred).max() / np.abs(pred).max())
    f = layer_step_factor(M, c)
    measured = float(np.mean(np.sum(D1 * D1, axis=1)) / np.mean(np.sum(D0 * D0, axis=1)))
    return {"layer": layer + 1, "relative_gap": gap, "measured_factor": measured, **f, "spread": spread, "n": n}


def mean_cosines(frames: np.ndarray) -> list[float]:
    """Mean pairwise cosine of each frame."""
    out = []
    for X in frames:
        U = unit_rows(X)
        n = U.shape[0]
        s = U.sum(axis=0)
        out.append(float((s @ s - n) / (n * (n - 1))))
    return out


def value_predictions(model: Decoder, trace: DecoderTrace, speeds: list[float], flow: np.ndarray | None = None
                      ) -> list[dict]:
    """Per block: rho, the predicted factor on 1 - mean cos, the measured factors (model, flow), the leading
    eigenvalue of M and the power-method alignment of the block's output tokens (model, flow) against random."""
    mc_model = mean_cosines(trace.states)
    mc_flow = mean_cosines(flow) if flow is not None else None
    rows = []
    baseline = {}
    for l in range(trace.layers):
        U_in = unit_rows(trace.states[l])
        lv = layer_values(model, l, speeds[l], U_in)
        c = U_in.mean(axis=0)
        f = layer_step_factor(value_map(model, l, speeds[l]), c / np.linalg.norm(c))
        dim = lv.basis.shape[1]
        if dim not in baseline:
            baseline[dim] = random_alignment(model.config.d, dim)
        row = {**lv.to_dict(), "rho": f["rho"], "predicted_factor": f["factor"],
               "model_factor": (1 - mc_model[l + 1]) / (1 - mc_model[l]),
               "alignment_model": alignment(unit_rows(trace.states[l + 1]), lv.basis),
               "alignment_random": baseline[dim]}
        if flow is not None:
            c_f = flow[l].mean(axis=0)
            f_f = layer_step_factor(value_map(model, l, speeds[l]), c_f / np.linalg.norm(c_f))
            row.update({"flow_rho": f_f["rho"], "flow_predicted_factor": f_f["factor"],
                        "flow_factor": (1 - mc_flow[l + 1]) / (1 - mc_flow[l]) if mc_flow[l] < 1 else None,
                        "alignment_flow": alignment(flow[l + 1], lv.basis)})
        rows.append(row)
    return rows


def sink_study(trace: DecoderTrace, first_token_angle: dict | None = None) -> list[dict]:
    """Per block: attention on the first token (mean over heads and rows i >= 1, and the largest head), the
    first token's norm over the median norm at the block's output, its angle to its previous direction, and its
    cosine with the other tokens (their mean); ``first_token_angle`` adds the flows' angles from layer 0."""
    rows = []
    norms = np.linalg.norm(trace.states, axis=2)
    U = unit_rows(trace.states.reshape(-1, trace.states.shape[2])).reshape(trace.states.shape)
    for l in range(trace.layers):
        first = trace.first[l][:, 1:] if trace.n > 1 else trace.first[l]
        step = float(np.arccos(np.clip(U[l, 0] @ U[l + 1, 0], -1.0, 1.0)))
        row = {"layer": l + 1, "attention_on_first": float(first.mean()),
               "attention_on_first_max_head": float(first.mean(axis=1).max()),
               "first_norm_ratio": float(norms[l + 1, 0] / np.median(norms[l + 1, 1:])) if trace.n > 1 else 1.0,
               "first_token_step_angle": step,
               "cosine_to_first": float(np.mean(U[l + 1, 1:] @ U[l + 1, 0])) if trace.n > 1 else 1.0}
        if first_token_angle:
            row.update({f"first_token_angle {k}": v[l + 1] for k, v in first_token_angle.items()})
        rows.append(row)
    return rows
