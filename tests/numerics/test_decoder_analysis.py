"""The decoder next to the theory: heads as attnflow parameters, attnflow's flow with the weights, the value-map
predictions, per-layer energies and long contexts (numerics.decoder), on small random checkpoints (fast) and on
one layer of the packaged SmolLM2."""
import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.decoder import heads as hd
from numerics.decoder.checkpoint import load_decoder
from numerics.decoder.forward import projections, run_decoder
from numerics.trained.geometry import unit_rows
from tests.numerics.decoder_support import packaged, requires_decoder, requires_readers, tiny  # noqa: F401

pytestmark = requires_readers
TEXT = "the thin tan theater in the inn then the heat"


def test_small_matrix_spectra_equal_the_full_ones():
    from numerics.trained.heads import sym_eigenvalues

    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((6, 40)), rng.standard_normal((6, 40))
    full = sym_eigenvalues(Q, K, 0.7)
    assert np.allclose(np.sort(hd.sym_spectrum(Q, K, 0.7)), full[np.abs(full) > 1e-9], atol=1e-12)
    S = Q.T @ K
    assert np.allclose(hd.score_norms(Q, K), (np.linalg.norm(S, 2), np.linalg.norm(S), np.trace(S)), rtol=1e-12)
    V, W = rng.standard_normal((6, 40)), rng.standard_normal((6, 40))
    big = np.linalg.eigvals(W.T @ V)
    small = hd.value_spectrum(V, W)
    assert np.allclose(np.sort_complex(small), np.sort_complex(big[np.abs(big) > 1e-9]), atol=1e-10)


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_heads_on_unit_tokens_give_the_models_scores(tiny, family):
    """(d/sqrt(k)) <Q_h u_i, K_h u_j> is the block's score <q_i, k_j>/sqrt(k) without rotation (positions 0) and
    biases, up to the RMSNorm/LayerNorm epsilon factors 1/sqrt(1 + eps d / r^2) (LayerNorm: of the centred x)."""
    import dataclasses

    model = load_decoder(tiny[family])
    c = model.config
    w = dataclasses.replace(model.blocks[1], attn_norm_b=None if family == "llama" else 0 * model.blocks[1].attn_norm_b,
                            bq=None, bk=None, bv=None)
    X = run_decoder(model, model.tokenizer.encode(TEXT), logits="none").states[1]
    from numerics.decoder.forward import block_norm

    Y = block_norm(X, w.attn_norm_g, w.attn_norm_b, c)
    q, k, _ = projections(Y, w, dataclasses.replace(c, rope_base=None), np.zeros(len(X), dtype=int))
    Q, K, _, _ = hd.head_blocks(model, 1)
    Xc = X if family == "llama" else X - X.mean(axis=1, keepdims=True)
    r2 = np.sum(Xc * Xc, axis=1)
    f = 1.0 / np.sqrt(1.0 + c.norm_eps * c.d / r2)
    U = unit_rows(Xc)
    for h in range(c.heads):
        model_scores = q[:, h] @ k[:, c.kv_head(h)].T / np.sqrt(c.d_head)
        ours = (c.d / np.sqrt(c.d_head)) * (U @ Q[h].T) @ (K[h] @ U.T) * np.outer(f, f)
        assert np.abs(model_scores - ours).max() < 1e-12 * np.abs(model_scores).max()


def test_flow_model_is_the_hand_written_causal_layer_map(tiny):
    """attnflow's simulate with the callable schedule = u <- N(u + P_u(sum_h s O_h V_h a_i^h)) written here."""
    from scipy.special import softmax

    from numerics.decoder.flows import layer_speeds, run_flow

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    frames = run_flow(model, trace)
    c = model.config
    U = unit_rows(trace.states[0])
    n = len(U)
    for l, s in enumerate(layer_speeds(model, trace)):
        Q, K, V, O = hd.head_blocks(model, l)
        out = np.zeros_like(U)
        for h in range(c.heads):
            S = (c.d / np.sqrt(c.d_head)) * (U @ Q[h].T) @ (K[h] @ U.T)
            S[np.triu_indices(n, 1)] = -np.inf
            out += s * (softmax(S, axis=1) @ U) @ V[h].T @ O[h]
        out -= np.sum(out * U, axis=1, keepdims=True) * U
        U = unit_rows(U + out)
        assert np.abs(U - frames[l + 1]).max() < 1e-12


def test_identity_value_flow_keeps_the_first_token_and_gathers_the_others(tiny):
    from numerics.decoder.flows import first_token_motion, run_flow

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    frames = run_flow(model, trace, values="identity")
    assert max(first_token_motion(frames)) < 1e-14
    cos0 = lambda F: np.mean(unit_rows(F)[1:] @ unit_rows(F)[0])  # noqa: E731
    assert cos0(frames[-1]) > cos0(frames[0])


def test_the_radius_hook_refuses_until_norm_schemes_exist(tiny):
    from numerics.core.model import Model
    from numerics.decoder.flows import flow_model

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    if "norm" in Model.__dataclass_fields__:
        pytest.skip("Model(norm=...) exists: the hook is live")
    with pytest.raises(InputError, match=r"Model\(norm=...\)"):
        flow_model(model, trace, radius="pre")


def test_layer_map_near_a_cluster_is_first_order(tiny):
    from numerics.decoder.flows import layer_speeds
    from numerics.decoder.predictions import cluster_step_check

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    c = unit_rows(trace.states[1]).mean(axis=0)
    c /= np.linalg.norm(c)
    s = layer_speeds(model, trace)[1]
    coarse, fine = (cluster_step_check(model, 1, s, c, spread=e) for e in (1e-4, 1e-5))
    assert fine["relative_gap"] < 1e-3
    assert 5 < coarse["relative_gap"] / fine["relative_gap"] < 20
    assert abs(fine["measured_factor"] - fine["factor"]) < 0.2 * fine["factor"]


def test_layer_map_check_fails_on_a_wrong_rate(tiny, monkeypatch):
    """With the rate rho replaced by -rho (differences growing where they shrink) the layer map is wrong."""
    from numerics.decoder import predictions as pr
    from numerics.decoder.flows import layer_speeds

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    c = unit_rows(trace.states[1]).mean(axis=0)
    c /= np.linalg.norm(c)
    real = pr.linear_layer_map
    monkeypatch.setattr(pr, "linear_layer_map", lambda M, c, D: real(-M, c, D))
    assert pr.cluster_step_check(model, 1, layer_speeds(model, trace)[1], c, spread=1e-5)["relative_gap"] > 1e-2


def test_predictions_and_sink_tables(tiny):
    from numerics.decoder.flows import flow_runs, flow_study
    from numerics.decoder.predictions import sink_study, value_predictions

    model = load_decoder(tiny["llama"])
    trace = run_decoder(model, model.tokenizer.encode(TEXT), attentions=False, logits="none")
    runs = flow_runs(model, trace)
    study = flow_study(model, trace, runs=runs)
    rows = value_predictions(model, trace, study["speeds"], runs["attnflow"])
    assert len(rows) == model.config.layers and all(0 <= r["alignment_model"] <= 1 for r in rows)
    sink = sink_study(trace, study["first_token_angle"])
    assert sink[0]["first_token_angle attnflow V=I"] < 1e-14
    assert all(0 <= r["attention_on_first"] <= 1 for r in sink)


def test_energy_sequences_and_monotonicity(tiny):
    from numerics.decoder.layers import ENERGY_BETA_MAX, energy, layer_study, monotone

    assert monotone([0.1, 0.2, 0.2])["non_decreasing"] and monotone([0.1, 0.3, 0.2])["decreases_at"] == [2]
    model = load_decoder(tiny["llama"])
    study = layer_study(model, TEXT)
    assert len(study["energy"]) == model.config.layers + 1 and study["normalization"][0] == "glpr-shifted"
    U = unit_rows(np.random.default_rng(1).standard_normal((5, 4)))
    assert energy(U, ENERGY_BETA_MAX + 1)[1] == "log-mean-exp"
    G = U @ U.T
    assert np.isclose(energy(U, 2.0)[0], np.sum(np.exp(2.0 * G) - 1) / (2 * 2.0 * 25))


def test_context_study_on_a_small_model(tiny):
    from numerics.decoder.context import check_lengths, context_study

    model = load_decoder(tiny["gpt2"])
    study = context_study(model, TEXT * 4, lengths=(8, 16, 32))
    assert [r["n"] for r in study["lengths"]] == [8, 16, 32]
    assert abs(study["slopes"]["uniform"] - 1) < 0.1
    assert all(r["entropy_mean"] <= r["uniform"] + 1e-12 for r in study["lengths"])
    with pytest.raises(InputError, match="exceeds"):
        check_lengths([8, 100], 50, 64)
    with pytest.raises(InputError, match=">= 2"):
        check_lengths([1], 50, 64)


@requires_decoder
def test_smollm_heads_have_the_structural_signature(packaged):
    reps = hd.head_reports(packaged, 4, 0.5)
    assert all((r.sym_positive, r.sym_negative) == (64, 64) for r in reps)
    assert all(r.kv_head == r.head // 3 for r in reps)
    assert all(0 < r.rotary_slow_share < 1 for r in reps)
