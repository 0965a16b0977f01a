"""The NumPy forward pass of the packaged SmolLM2-135M-Instruct and the checks that it is right (numerics.decoder).

Kept cheap for the default suite: the model is read once per process (about 10 s), prompts are a few tokens.
Every check is shown to fail on the planted errors of the issue (rotary angle off by a factor, key/value head
grouping shifted, RMSNorm epsilon or weight dropped, causal mask off by one), planted with monkeypatch.
"""
import numpy as np
import pytest

from numerics.decoder import checks
from numerics.decoder import forward as fw
from numerics.decoder.weights import DecoderConfig
from tests.numerics.decoder_support import packaged, requires_decoder  # noqa: F401 - fixture

pytestmark = requires_decoder


def _plant(monkeypatch, name):
    """The issue's planted errors, in the forward pass only (the checks' second paths are untouched)."""
    if name == "rotary-angle":
        orig = fw.rotary_frequencies
        monkeypatch.setattr(fw, "rotary_frequencies", lambda k, base: 2.0 * orig(k, base))
    elif name == "kv-grouping":
        monkeypatch.setattr(DecoderConfig, "kv_head", lambda self, h: (h // self.group + 1) % self.kv_heads)
    elif name == "rmsnorm-eps":
        orig = fw.rms_norm
        monkeypatch.setattr(fw, "rms_norm", lambda X, g, eps: orig(X, g, 0.0))
    elif name == "rmsnorm-weight":
        orig = fw.rms_norm
        monkeypatch.setattr(fw, "rms_norm", lambda X, g, eps: orig(X, np.ones_like(g), eps))
    elif name == "causal-off-by-one":
        monkeypatch.setattr(fw, "causal_bias", lambda rows, cols: np.where(
            np.arange(cols)[None, :] > rows[:, None] + 1, fw.MASKED, 0.0))


#: the recorded prompt the planted-error tests use (the claim compares all of them)
SHORT = "The capital of France is"
PLANTS = ("rotary-angle", "kv-grouping", "rmsnorm-eps", "rmsnorm-weight", "causal-off-by-one")


# -- the model as described ---------------------------------------------------------------------------------------
def test_the_packaged_model_is_smollm2_135m(packaged):
    c = packaged.config
    assert (c.family, c.layers, c.d, c.heads, c.kv_heads, c.d_head, c.intermediate) == ("llama", 30, 576, 9, 3, 64, 1536)
    assert (c.context, c.rope_base, c.vocab, c.tied) == (8192, 1e5, 49152, True)
    assert packaged.head is packaged.embed
    assert packaged.nbytes < 1.5e9
    assert packaged.source["quantisation"] == {"Q8_0": 1, "Q4_1": 210, "F32": 61}


def test_tokenizer_isolates_digits_and_knows_the_chat_tokens(packaged):
    tok = packaged.tokenizer
    assert tok.pieces(tok.encode("1 + 12 =")) == ["1", " +", " ", "1", "2", " ="]
    ids = tok.encode("<|im_start|>user")
    assert ids[0] == 1 and tok.pieces(ids)[0] == "<|im_start|>"
    assert tok.decode(tok.encode("The capital of France is")) == "The capital of France is"
    assert tok.eos_ids == (2,) and not tok.add_bos


# -- the checks, and that each can fail ---------------------------------------------------------------------------
def test_layer_maps_are_the_documented_block(packaged):
    g = checks.block_gaps(packaged)
    assert max(g["layer_gaps"]) < 1e-12
    assert g["row_sum_error"] < 1e-14 and g["above_diagonal"] == 0.0 and g["min_probability"] >= 0


@pytest.mark.parametrize("plant", PLANTS)
def test_layer_map_check_sees_each_planted_error(packaged, monkeypatch, plant):
    _plant(monkeypatch, plant)
    g = checks.block_gaps(packaged)
    assert max(max(g["layer_gaps"]), g["above_diagonal"]) > 1e-6, plant


def test_logits_agree_with_the_recorded_transformers_run(packaged):
    r = checks.recorded_gap(packaged)
    assert r["max_relative"] < 1e-4 and r["argmax_agrees"]


@pytest.mark.parametrize("plant", PLANTS)
def test_recorded_reference_sees_each_planted_error(packaged, monkeypatch, plant):
    _plant(monkeypatch, plant)
    assert checks.recorded_gap(packaged, only=(SHORT,))["max_relative"] > 1e-4, plant


def test_forgetting_the_gguf_row_order_breaks_the_reference(packaged):
    """A reader that keeps llama.cpp's interleaved query/key rows but rotates halves gives wrong logits."""
    import dataclasses

    from numerics.decoder import gguf_reader

    rows = np.arange(64.0)[:, None]
    assert gguf_reader.unpermute_rotary_rows(rows, 1)[:4, 0].tolist() == [0, 2, 4, 6]

    def interleave(W, heads):  # llama.cpp's converter: row j k/2 + i -> row 2i + j
        r, d = W.shape
        return W.reshape(heads, 2, r // heads // 2, d).swapaxes(1, 2).reshape(r, d)

    c = packaged.config
    assert np.array_equal(gguf_reader.unpermute_rotary_rows(interleave(packaged.blocks[0].Wq, c.heads), c.heads),
                          packaged.blocks[0].Wq)
    forgot = dataclasses.replace(packaged, blocks=tuple(
        dataclasses.replace(b, Wq=interleave(b.Wq, c.heads), Wk=interleave(b.Wk, c.kv_heads)) for b in packaged.blocks))
    assert checks.recorded_gap(forgot, only=(SHORT,))["max_relative"] > 1e-2


def test_greedy_answers_to_factual_prompts(packaged):
    rows = checks.greedy_answers(packaged)
    assert all(r["ok"] for r in rows), rows


@pytest.mark.parametrize("plant", ["kv-grouping", "rmsnorm-weight"])
def test_greedy_check_sees_planted_errors_that_change_answers(packaged, monkeypatch, plant):
    _plant(monkeypatch, plant)
    assert not all(r["ok"] for r in checks.greedy_answers(packaged, limit=2, chat=False))


def test_the_cached_step_is_the_last_row_of_a_full_pass(packaged):
    from numerics.decoder.generation import greedy_generate

    g = greedy_generate(packaged, "The opposite of hot is", 3)
    full = fw.run_decoder(packaged, g.prompt_ids + g.tokens[:-1], attentions=False).logits[-1]
    assert np.abs(full - g.last_logits).max() < 1e-11 * np.abs(full).max()


def test_a_context_longer_than_the_model_is_refused(packaged):
    from numerics.common.errors import InputError
    from numerics.decoder.generation import greedy_generate

    with pytest.raises(InputError, match="context of 8192"):
        fw.run_decoder(packaged, np.zeros(8193, dtype=int), attentions=False)
    with pytest.raises(InputError, match="exceed the model's context"):
        greedy_generate(packaged, "word " * 4200, 4096)  # refused before any work
