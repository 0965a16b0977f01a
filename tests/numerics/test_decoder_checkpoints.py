"""Checkpoints that users bring: Llama- and GPT-2-family folders (config.json + safetensors) and GGUF files.

The tests write small random checkpoints themselves (tests/numerics/decoder_support.py). The GGUF files hold the
same weights in llama.cpp's layout (query/key rows interleaved, GPT-2's query/key/value fused), so the folder
reader and the GGUF reader must give the same logits; each model's layer maps must be the documented block.
"""
import json
import struct

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.decoder.checkpoint import load_decoder, read_checkpoint_folder
from numerics.decoder.forward import run_decoder
from numerics.decoder.gguf_reader import read_gguf
from numerics.decoder.reference_block import reference_block
from tests.numerics.decoder_support import (byte_vocabulary, gpt2_config, gpt2_weights, llama_config, llama_weights,
                                            requires_readers, tiny, write_folder, write_llama_gguf)  # noqa: F401

pytestmark = requires_readers
TEXT = "the theater in the thin tan inn"


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_folder_and_gguf_of_the_same_weights_give_the_same_logits(tiny, family):
    a, b = load_decoder(tiny[family]), load_decoder(tiny[family + ".gguf"])
    assert a.config.family == b.config.family == family
    ids = a.tokenizer.encode(TEXT)
    assert ids == b.tokenizer.encode(TEXT)            # tokenizer.json and GGUF metadata agree
    La = run_decoder(a, ids, logits="all").logits
    Lb = run_decoder(b, ids, logits="all").logits
    assert np.abs(La - Lb).max() <= 1e-12 * np.abs(La).max()


@pytest.mark.parametrize("path", ["llama", "gpt2", "llama.gguf", "gpt2.gguf"])
def test_layer_maps_of_user_checkpoints_are_the_documented_block(tiny, path):
    model = load_decoder(tiny[path])
    tr = run_decoder(model, model.tokenizer.encode(TEXT), logits="none")
    for l in range(model.config.layers):
        Xn, Xm, P = reference_block(tr.states[l], model.blocks[l], model.config)
        assert np.abs(Xn - tr.states[l + 1]).max() < 1e-12 * np.abs(Xn).max()
        assert np.abs(Xm - tr.mid[l]).max() < 1e-12 * np.abs(Xm).max()
        assert np.abs(P - tr.attentions[l]).max() < 1e-14
    iu = np.triu_indices(tr.n, 1)
    assert np.all(tr.attentions[..., iu[0], iu[1]] == 0) and np.abs(tr.attentions.sum(-1) - 1).max() < 1e-14


def test_gguf_reader_undoes_the_rotary_row_permutation(tiny):
    """The GGUF stores interleaved rows; read back they are the folder's rotate-half rows."""
    a, b = load_decoder(tiny["llama"]), load_decoder(tiny["llama.gguf"])
    assert np.array_equal(a.blocks[1].Wq, b.blocks[1].Wq) and np.array_equal(a.blocks[1].Wk, b.blocks[1].Wk)


def test_gpt2_conv1d_weights_are_transposed(tiny):
    m = load_decoder(tiny["gpt2"])
    w = gpt2_weights()
    assert np.allclose(m.blocks[0].Wq, w["transformer.h.0.attn.c_attn.weight"][:, :32].T, atol=1e-7)
    assert np.allclose(m.blocks[0].W_down, w["transformer.h.0.mlp.c_proj.weight"].T, atol=1e-7)
    assert m.config.tied and m.head is m.embed


def test_generation_and_chat_template_on_a_user_checkpoint(tiny):
    from numerics.decoder.generation import greedy_generate

    m = load_decoder(tiny["llama.gguf"])
    g = greedy_generate(m, "the tin", 5, chat=True, stop_at_eos=False)
    assert g.prompt == "<s>user: the tin</s><s>assistant:" and len(g.tokens) == 5
    assert m.tokenizer.encode("<s>")[-1] == len(byte_vocabulary()[0]) - 2


def test_bfloat16_tensors_are_widened_exactly(tmp_path):
    """A bf16 tensor (NumPy has no bf16) written by hand in the safetensors layout."""
    from numerics.decoder.checkpoint import _bf16_tensor

    x = np.array([[1.0, -2.5, 3.140625], [0.0, 1e-3, -7.0]], dtype=np.float32)
    bits = (x.view(np.uint32) >> 16).astype("<u2")            # truncation: these values are exact in bf16
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, bits.nbytes]}}).encode()
    path = tmp_path / "w.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bits.tobytes())
    assert np.array_equal(_bf16_tensor(path, "w"), (bits.astype(np.uint32) << 16).view(np.float32).reshape(2, 3))
    assert np.allclose(_bf16_tensor(path, "w"), x, rtol=1e-2)


def test_quantised_gguf_tensors_are_dequantised_by_the_reader(tmp_path):
    import gguf
    from gguf.quants import quantize

    w = llama_weights(seed=3)
    path = write_llama_gguf(tmp_path / "q.gguf", w)
    # rewrite one tensor quantised to Q8_0 (blocks of 32: scale d = max|x|/127, rounding error <= d/2)
    reader = gguf.GGUFReader(str(path))
    writer = gguf.GGUFWriter(str(tmp_path / "q8.gguf"), "llama")
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = field.contents()
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif vtype == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif vtype == gguf.GGUFValueType.FLOAT32:
            writer.add_float32(key, value)
        else:
            writer.add_uint32(key, value)
    for t in reader.tensors:
        data = np.array(t.data).reshape(tuple(reversed([int(s) for s in t.shape])))
        if t.name == "blk.0.ffn_up.weight":
            writer.add_tensor(t.name, quantize(data, gguf.GGMLQuantizationType.Q8_0),
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(t.name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    model = read_gguf(tmp_path / "q8.gguf")
    exact = w["model.layers.0.mlp.up_proj.weight"]
    blocks = np.abs(exact.astype(np.float32)).reshape(exact.shape[0], -1, 32).max(axis=2) / 127
    err = np.abs(model.blocks[0].W_up - exact.astype(np.float32)).reshape(exact.shape[0], -1, 32).max(axis=2)
    assert model.source["quantisation"]["Q8_0"] == 1
    # d is stored in fp16 (relative rounding 2^-11, times up to 127 levels): |error| <= d/2 + 127 d 2^-11
    assert np.all(err <= (0.5 + 127 * 2.0**-11) * blocks * (1 + 1e-6)) and err.max() > 0


# -- what is refused, with one line --------------------------------------------------------------------------------
def test_missing_and_truncated_gguf_files(tmp_path, tiny):
    with pytest.raises(InputError, match="does not exist"):
        load_decoder(tmp_path / "none.gguf")
    raw = tiny["llama.gguf"].read_bytes()
    for cut in (10, len(raw) // 2, len(raw) - 100):
        bad = tmp_path / f"cut{cut}.gguf"
        bad.write_bytes(raw[:cut])
        with pytest.raises(InputError, match="GGUF"):
            load_decoder(bad)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(InputError, match="not a readable GGUF"):
        load_decoder(junk)


def test_other_architectures_are_refused_naming_the_supported_ones(tmp_path, tiny):
    V = len(byte_vocabulary()[0])
    bert = write_folder(tmp_path / "bert", {**llama_config(V), "model_type": "bert"}, llama_weights())
    with pytest.raises(InputError, match="model_type 'bert' is not supported; supported: .*llama.*gpt2"):
        load_decoder(bert)
    arch = write_llama_gguf(tmp_path / "falcon.gguf", llama_weights(), architecture="falcon")
    with pytest.raises(InputError, match="architecture 'falcon' is not supported; supported:"):
        load_decoder(arch)


@pytest.mark.parametrize("change, fragment", [
    ({"hidden_act": "gelu"}, "hidden_act"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "rotary scaling 'yarn'"),
    ({"num_key_value_heads": 3}, "inconsistent"),
    ({"hidden_size": "32"}, "hidden_size must be a positive integer"),
    ({"vocab_size": 10}, "shape"),
])
def test_bad_llama_configs(tmp_path, change, fragment):
    V = len(byte_vocabulary()[0])
    folder = write_folder(tmp_path / "m", {**llama_config(V), **change}, llama_weights())
    with pytest.raises(InputError, match=fragment):
        read_checkpoint_folder(folder)


def test_bad_tensors_and_files(tmp_path):
    V = len(byte_vocabulary()[0])
    w = llama_weights()
    w["model.layers.1.mlp.up_proj.weight"][0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        read_checkpoint_folder(write_folder(tmp_path / "nan", llama_config(V), w))
    w = llama_weights()
    del w["model.norm.weight"]
    with pytest.raises(InputError, match="model.norm.weight|norm.weight is missing"):
        read_checkpoint_folder(write_folder(tmp_path / "missing", llama_config(V), w))
    folder = write_folder(tmp_path / "notok", llama_config(V), llama_weights())
    (folder / "tokenizer.json").unlink()
    with pytest.raises(InputError, match="tokenizer.json is missing"):
        read_checkpoint_folder(folder)
    folder = write_folder(tmp_path / "badjson", llama_config(V), llama_weights())
    (folder / "config.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        read_checkpoint_folder(folder)
    folder = write_folder(tmp_path / "badst", llama_config(V), llama_weights())
    (folder / "model.safetensors").write_bytes(b"\x00" * 40)
    with pytest.raises(InputError, match="safetensors"):
        read_checkpoint_folder(folder)


def test_mistral_window_limits_the_context(tmp_path):
    V = len(byte_vocabulary()[0])
    folder = write_folder(tmp_path / "mistral", {**llama_config(V), "model_type": "mistral", "sliding_window": 8},
                          llama_weights())
    m = read_checkpoint_folder(folder)
    run_decoder(m, np.arange(8))
    with pytest.raises(InputError, match="context of 8 tokens"):
        run_decoder(m, np.arange(9))


def test_token_ids_are_checked(tiny):
    m = load_decoder(tiny["gpt2"])
    for ids, fragment in (([], "non-empty"), ([0, m.config.vocab], "lie in"), ([0.5, 1.0], "integers"),
                          (np.arange(65) % 10, "context of 64")):
        with pytest.raises(InputError, match=fragment):
            run_decoder(m, ids)


def test_the_gpt2_writer_and_reader_agree_on_the_config(tiny):
    m = load_decoder(tiny["gpt2.gguf"])
    c = gpt2_config(len(byte_vocabulary()[0]))
    assert (m.config.d, m.config.layers, m.config.heads, m.config.context) == (c["n_embd"], c["n_layer"], c["n_head"],
                                                                                c["n_positions"])
