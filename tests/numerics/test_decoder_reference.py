"""The NumPy decoder against an independent implementation, transformers + torch (CPU), run now (slow).

Needs the extra attnflow[reference] (pip install torch==2.13.0 && pip install -e ".[reference]"). The packaged
GGUF is loaded by transformers' own GGUF loader; random Llama, Mistral and GPT-2 models are built by transformers,
saved with save_pretrained and read back by numerics.decoder.
"""
import numpy as np
import pytest

from numerics.decoder import forward as fw
from numerics.decoder.torch_reference import reference_available
from tests.numerics.decoder_support import byte_vocabulary, packaged, requires_decoder, tokenizer_json  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not reference_available(), reason="needs attnflow[reference]")]


@pytest.fixture(scope="module")
def reference_model():
    from numerics.decoder.gguf_reader import packaged_gguf_path
    from numerics.decoder.torch_reference import load_reference_model

    return load_reference_model(packaged_gguf_path())


@requires_decoder
def test_live_reference_agrees_to_1e4_on_the_top_logits(packaged, reference_model):
    from numerics.decoder.checks import reference_prompts
    from numerics.decoder.torch_reference import compare_top, reference_logits, top_logits

    for name, ids in reference_prompts(packaged).items():
        ref = top_logits(reference_logits(reference_model, ids))
        ours = fw.run_decoder(packaged, ids, attentions=False, logits="all").logits
        c = compare_top(ours, ref)
        assert c["max_relative"] < 1e-4 and c["argmax_agrees"], (name, c)


@requires_decoder
def test_live_reference_sees_a_planted_error(packaged, reference_model, monkeypatch):
    from numerics.decoder.torch_reference import compare_top, reference_logits, top_logits

    ids = packaged.tokenizer.encode("The capital of France is")
    ref = top_logits(reference_logits(reference_model, ids))
    orig = fw.rotary_frequencies
    monkeypatch.setattr(fw, "rotary_frequencies", lambda k, base: 2.0 * orig(k, base))
    assert compare_top(fw.run_decoder(packaged, ids, logits="all").logits, ref)["max_relative"] > 1e-2


def _random_transformers_model(kind: str, vocab: int):
    import torch
    import transformers

    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                      bos_token_id=vocab - 2, eos_token_id=vocab - 1)
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        common = dict(vocab_size=vocab, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, rope_theta=500.0,
                      rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=vocab - 2, eos_token_id=vocab - 1)
        if kind == "mistral":
            model = transformers.MistralForCausalLM(transformers.MistralConfig(**common, sliding_window=None))
        else:
            model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**common, attention_bias=kind == "llama-bias"))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    return model.double().eval()


@pytest.mark.parametrize("kind, tolerance", [("llama", 1e-6), ("llama-bias", 1e-6), ("mistral", 1e-6),
                                             ("gpt2", 1e-12)])
def test_checkpoints_saved_by_transformers_give_its_logits(tmp_path, kind, tolerance):
    """float64 torch models: GPT-2 agrees to rounding; the Llama family to ~1e-7 (transformers builds the rotary
    tables in float32)."""
    import torch

    from numerics.decoder.checkpoint import load_decoder

    tokens, merges = byte_vocabulary()
    model = _random_transformers_model(kind, len(tokens))
    model.save_pretrained(tmp_path)
    (tmp_path / "tokenizer.json").write_text(tokenizer_json(tokens, merges))
    ours = load_decoder(tmp_path)
    ids = ours.tokenizer.encode("the theater in the thin tan inn")
    with torch.no_grad():
        ref = model(torch.tensor([ids])).logits[0].numpy()
    got = fw.run_decoder(ours, ids, logits="all").logits
    assert np.abs(got - ref).max() <= tolerance * np.abs(ref).max()
