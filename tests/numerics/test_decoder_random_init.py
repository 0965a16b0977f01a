"""Decoders with drawn weights (numerics.decoder.random_init): the block check without the packaged weights, and
the untrained SmolLM2 architecture.

The block check (claim decoder.block) runs on an in-process random checkpoint, so the five planted errors of the
review (rotary pairing, RMSNorm, head grouping, SwiGLU, causal mask) fail it with and without the packaged weights.
"""
import numpy as np
import pytest

from numerics.decoder import claims
from numerics.decoder import forward as fw
from numerics.decoder import random_init as ri
from numerics.decoder.checks import block_gaps
from numerics.decoder.weights import DecoderConfig
from tests.numerics.decoder_support import packaged, requires_decoder  # noqa: F401 - fixture


def _interleaved_rotary(Z, cos, sin):
    """Rotary pairs (c_{2p}, c_{2p+1}) (GPT-J's convention) where the model uses (c_p, c_{p+k/2})."""
    a, b = Z[..., 0::2], Z[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(Z)
    out[..., 0::2], out[..., 1::2] = a * c - b * s, b * c + a * s
    return out


def plant(monkeypatch, name: str) -> None:
    """The review's five planted errors in the forward pass only (the second path is untouched)."""
    if name == "rotary-pairing":
        monkeypatch.setattr(fw, "apply_rotary", _interleaved_rotary)
    elif name == "rmsnorm-eps":
        orig = fw.rms_norm
        monkeypatch.setattr(fw, "rms_norm", lambda X, g, eps: orig(X, g, 0.0))
    elif name == "rmsnorm-weight":
        orig = fw.rms_norm
        monkeypatch.setattr(fw, "rms_norm", lambda X, g, eps: orig(X, np.ones_like(g), eps))
    elif name == "kv-grouping":
        monkeypatch.setattr(DecoderConfig, "kv_head", lambda self, h: h % self.kv_heads)
    elif name == "swiglu":
        def swapped(Z, w, family):
            return ((Z @ w.W_gate.T) * fw.silu(Z @ w.W_up.T)) @ w.W_down.T
        monkeypatch.setattr(fw, "mlp", swapped)
    elif name == "causal-mask":
        monkeypatch.setattr(fw, "causal_bias", lambda rows, cols: np.where(
            np.arange(cols)[None, :] > rows[:, None] + 1, fw.MASKED, 0.0))
    else:  # pragma: no cover
        raise ValueError(name)


PLANTS = ("rotary-pairing", "rmsnorm-eps", "rmsnorm-weight", "kv-grouping", "swiglu", "causal-mask")


def _no_weights(monkeypatch):
    from numerics.decoder import gguf_reader

    monkeypatch.setattr(gguf_reader, "packaged_available", lambda: False)


# -- the block check without the packaged weights -------------------------------------------------------------------
def test_the_check_checkpoint_is_the_documented_block():
    g = block_gaps(ri.check_decoder(), ids=ri.CHECK_IDS)
    assert len(g["layer_gaps"]) == ri.CHECK_CONFIG.layers and max(g["layer_gaps"]) < 1e-12
    assert g["row_sum_error"] < 1e-14 and g["above_diagonal"] == 0.0
    assert ri.CHECK_CONFIG.group == 3


def test_the_block_claim_runs_without_the_packaged_weights(monkeypatch):
    _no_weights(monkeypatch)
    r = claims.check_block()
    assert r.status == "passed" and not r.details["packaged_weights"]
    assert list(r.details["checkpoints"]) == ["random check checkpoint"]


@pytest.mark.parametrize("name", PLANTS)
def test_the_block_claim_fails_on_each_planted_error_without_the_weights(monkeypatch, name):
    _no_weights(monkeypatch)
    plant(monkeypatch, name)
    r = claims.check_block()
    assert r.status == "failed" and r.measured > 1e-6, (name, r.measured)


@requires_decoder
@pytest.mark.parametrize("name", PLANTS)
def test_the_block_check_of_the_packaged_model_sees_each_planted_error(packaged, monkeypatch, name):
    plant(monkeypatch, name)
    g = block_gaps(packaged)
    assert max(max(g["layer_gaps"]), g["above_diagonal"]) > 1e-6, name


# -- the untrained architecture ---------------------------------------------------------------------------------------
def test_random_decoder_draws_the_stated_law():
    cfg = DecoderConfig(family="llama", d=64, layers=2, heads=4, kv_heads=2, d_head=16, intermediate=96, vocab=300,
                        context=128, norm_eps=1e-5, rope_base=1e4, tied=True, name="toy")
    m = ri.random_decoder(cfg, seed=3, std=0.05)
    assert m.head is m.embed and np.array_equal(m.blocks[0].attn_norm_g, np.ones(64))
    every = np.concatenate([m.embed.ravel()] + [getattr(b, n).ravel() for b in m.blocks
                                                 for n in ("Wq", "Wk", "Wv", "Wo", "W_gate", "W_up", "W_down")])
    assert abs(every.std() - 0.05) < 3 * 0.05 / np.sqrt(every.size) * 2 and abs(every.mean()) < 4 * 0.05 / np.sqrt(every.size)
    again = ri.random_decoder(cfg, seed=3, std=0.05)
    assert np.array_equal(again.blocks[1].W_down, m.blocks[1].W_down)
    assert not np.array_equal(ri.random_decoder(cfg, seed=4, std=0.05).blocks[1].W_down, m.blocks[1].W_down)
    assert ri.random_decoder(cfg, rope=False).config.rope_base is None


def test_random_decoder_refuses_bad_input():
    from numerics.common.errors import InputError

    with pytest.raises(InputError, match="std"):
        ri.random_decoder(ri.CHECK_CONFIG, std=-1.0)
    with pytest.raises(InputError, match="seed"):
        ri.random_decoder(ri.CHECK_CONFIG, seed=-1)


def _toy(tied: bool = True) -> DecoderConfig:
    return DecoderConfig(family="llama", d=64, layers=4, heads=4, kv_heads=2, d_head=16, intermediate=96, vocab=300,
                         context=128, norm_eps=1e-5, rope_base=1e4, tied=tied, name="toy")


class _Codec:
    """Token ids from the characters of a text (the study only encodes)."""

    def encode(self, text):
        return [ord(c) % 300 for c in text]


def test_vanishing_scores_give_the_cesaro_rows():
    """With std -> 0 the scores vanish like std^2 d, so every attention row tends to the uniform causal row."""
    from numerics.decoder.untrained import cesaro_distance

    ids = list(range(3, 40))
    tight = fw.run_decoder(ri.random_decoder(_toy(), seed=1, std=1e-4), ids, attentions=True, logits="none")
    loose = fw.run_decoder(ri.random_decoder(_toy(), seed=1, std=0.3), ids, attentions=True, logits="none")
    assert max(cesaro_distance(tight.attentions)) < 1e-5
    assert max(cesaro_distance(loose.attentions)) > 0.3
    # the distance is that of rows from 1/(i+1): a uniform row over all n keys is far from it
    n = len(ids)
    uniform_all = np.full((1, 1, n, n), 1.0 / n)
    assert cesaro_distance(uniform_all)[0] > 0.4


def test_effective_rank_is_one_for_aligned_tokens_and_k_for_orthonormal_ones():
    from numerics.decoder.untrained import effective_rank

    assert effective_rank(np.outer(np.arange(1.0, 6.0), np.ones(8))) == pytest.approx(1.0, abs=1e-12)
    assert effective_rank(np.eye(8)[:5] * 3.0) == pytest.approx(5.0, rel=1e-12)


def test_random_init_study_bands_and_the_stated_std():
    from numerics.decoder.untrained import random_init_study

    base = ri.random_decoder(_toy(), seed=9, std=0.1, tokenizer=_Codec())
    calls = []
    s = random_init_study(base, "the thin tan theater in the inn", seeds=(4, 5), progress=lambda d, t: calls.append(d))
    assert s["std"] == ri.GPT2_STD and "GPT-2" in s["std_from"] and calls == [1, 2, 3]
    assert [r["seed"] for r in s["random"]["per_seed"]] == [4, 5]
    for q, b in s["random"]["band"].items():
        assert len(b["mean"]) == 5
        assert all(lo <= m <= hi for lo, m, hi in zip(b["min"], b["mean"], b["max"])), q
    first = s["random"]["per_seed"][0]
    again = random_init_study(base, "the thin tan theater in the inn", seeds=(4,), std=ri.GPT2_STD)
    assert again["random"]["per_seed"][0]["mean_cosine"] == first["mean_cosine"]
    own = dict(base.source, initializer_range=0.05)
    import dataclasses

    s2 = random_init_study(dataclasses.replace(base, source=own), "the thin tan", seeds=(0,))
    assert s2["std"] == 0.05 and s2["std_from"] == "the checkpoint's initializer_range"


@pytest.mark.slow
@requires_decoder
def test_the_random_init_claim_and_its_failure_at_the_variance(monkeypatch):
    from numerics.decoder.claims_untrained import check_random_init_collapse

    assert check_random_init_collapse().status == "passed"
    orig = ri.random_decoder

    def variance(cfg, seed=0, std=ri.DEFAULT_STD, **kw):  # the mutant decoder-init-variance-for-std
        return orig(cfg, seed, std * std, **kw)

    import numerics.decoder.untrained as un

    monkeypatch.setattr(un, "random_decoder", variance)
    assert check_random_init_collapse().status == "failed"


def test_the_layer_studys_betas_are_the_head_reports_beta_iso_bit_for_bit():
    """decoder_betas reads beta_iso without the head spectra (issue 44: they were two thirds of decoder tokens)."""
    from numerics.decoder.heads import beta_iso_values, head_reports

    m = ri.random_decoder(_toy(), seed=2, std=0.2)
    for layer in range(m.config.layers):
        assert beta_iso_values(m, layer) == [r.beta_iso for r in head_reports(m, layer, 1.0)]


@pytest.mark.slow
@requires_decoder
def test_the_at_birth_claim_and_its_failure_at_large_scores(monkeypatch):
    from numerics.decoder.claims_untrained import check_random_init_at_birth

    assert check_random_init_at_birth().status == "passed"
    monkeypatch.setattr(ri, "GPT2_STD", 0.2)  # scores of order sigma^2 d = 23: far from uniform rows
    assert check_random_init_at_birth().status == "failed"


def test_the_init_law_claim_passes_and_sees_a_wrong_scale(monkeypatch):
    """decoder.random-init-law (default run): each matrix's mean and mean square within 5 standard errors of the
    stated law. The variance drawn for the standard deviation (mutant decoder-init-variance-for-std, which the block
    check cannot see: both of its paths read the same weights) fails it, and so does a scale 3% high (the pooled
    entries)."""
    from numerics.decoder.claims_random_init import check_random_init_law, moment_scores

    assert check_random_init_law().status == "passed"
    z = moment_scores(np.random.default_rng(1).standard_normal(20000) * 0.3, 0.3)
    assert abs(z["z_mean"]) < 5 and abs(z["z_scale"]) < 5 and z["entries"] == 20000
    for wrong in (lambda std: std ** 2, lambda std: 1.03 * std):
        monkeypatch.setattr(ri, "_normal", lambda rng, shape, std, f=wrong: ri.frozen64(rng.standard_normal(shape)
                                                                                          * f(std)))
        assert check_random_init_law().status == "failed"
