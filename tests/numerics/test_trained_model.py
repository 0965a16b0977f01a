"""The NumPy forward pass of all-MiniLM-L6-v2 and the attnflow view of its heads (numerics.trained).

Kept cheap for the default suite: one short sentence, a few layers; the checkpoint is loaded once per process.
"""
import json
import zipfile

import numpy as np
import pytest

from numerics.common.errors import InputError
from numerics.trained import checkpoint as ck
from tests.numerics.trained_support import SHORT, model, requires_models, trace  # noqa: F401 - fixtures
from numerics.trained.reference import reference_layer
from numerics.trained.texts import QUICKSTART, QUICKSTART_SIMILARITIES

pytestmark = requires_models


# -- the forward pass against what the publishers document --------------------------------------------------------
def test_quickstart_similarities_reproduce_the_published_matrix_to_its_digits(model):
    from numerics.trained.encoder import sentence_embeddings

    E = sentence_embeddings(model, QUICKSTART)
    assert np.allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-12)
    S = E @ E.T
    # printed with 4 decimals: every entry must round to the printed one
    assert np.array_equal(np.round(S, 4), np.array(QUICKSTART_SIMILARITIES)), S


def test_quickstart_check_fails_on_a_planted_error(model, monkeypatch):
    """CLS pooling instead of mean pooling (a classic mistake) breaks the printed digits."""
    from numerics.trained import encoder

    def cls_pooling(ckpt, text):
        v = encoder.run_encoder(ckpt, text).states[-1][0]
        return v / np.linalg.norm(v)

    monkeypatch.setattr(encoder, "sentence_embedding", cls_pooling)
    E = encoder.sentence_embeddings(model, QUICKSTART)
    assert not np.array_equal(np.round(E @ E.T, 4), np.array(QUICKSTART_SIMILARITIES))


def test_tokens_are_cls_wordpieces_sep(trace):
    assert trace.tokens[0] == "[CLS]" and trace.tokens[-1] == "[SEP]"
    assert trace.states.shape == (4, trace.n, 384) and trace.attentions.shape == (3, 12, trace.n, trace.n)


def test_attention_rows_sum_to_one(trace):
    P = trace.attentions
    assert P.min() >= 0
    assert np.abs(P.sum(axis=-1) - 1).max() < 1e-13


_reference_layer = reference_layer


def test_each_layer_is_the_documented_block(model, trace):
    for l in range(trace.attentions.shape[0]):
        Xn, Y, P = _reference_layer(trace.states[l], model.layer_weights[l], model.heads, model.ln_eps)
        assert np.abs(P - trace.attentions[l]).max() < 1e-13
        assert np.abs(Y - trace.sublayer[l]).max() < 1e-11 * np.abs(Y).max()
        assert np.abs(Xn - trace.states[l + 1]).max() < 1e-11 * np.abs(Xn).max()


def test_layer_check_sees_a_transposed_output_matrix(model, trace):
    import dataclasses

    w = model.layer_weights[0]
    bad = dataclasses.replace(w, Wo=w.Wo.T)
    Xn, _, _ = _reference_layer(trace.states[0], bad, model.heads, model.ln_eps)
    assert np.abs(Xn - trace.states[1]).max() > 1e-3


# -- loading any checkpoint of the architecture -------------------------------------------------------------------
def test_zip_path_is_the_packaged_model(model):
    again = ck.load_checkpoint(ck.packaged_model_path())
    from numerics.trained.encoder import sentence_embedding

    assert np.array_equal(sentence_embedding(again, SHORT), sentence_embedding(model, SHORT))


def _tiny_checkpoint(folder, d=8, H=2, m=16, L=2, seed=0):
    """A random BERT of the same architecture (real tokenizer, vocabulary size from it) in a folder."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    with zipfile.ZipFile(ck.packaged_model_path()) as z:
        (folder / "tokenizer.json").write_bytes(z.read("tokenizer.json"))
    V = 30522
    cfg = {"hidden_size": d, "num_hidden_layers": L, "num_attention_heads": H, "intermediate_size": m,
           "layer_norm_eps": 1e-12, "hidden_act": "gelu", "max_position_embeddings": 64, "type_vocab_size": 2}
    (folder / "config.json").write_text(json.dumps(cfg))
    t = {"embeddings.word_embeddings.weight": rng.standard_normal((V, d)),
         "embeddings.position_embeddings.weight": rng.standard_normal((64, d)),
         "embeddings.token_type_embeddings.weight": rng.standard_normal((2, d)),
         "embeddings.LayerNorm.weight": 1 + 0.1 * rng.standard_normal(d),
         "embeddings.LayerNorm.bias": 0.1 * rng.standard_normal(d)}
    shapes = {"Wq": (d, d), "Wk": (d, d), "Wv": (d, d), "Wo": (d, d), "W1": (m, d), "W2": (d, m), "b1": (m,)}
    for l in range(L):
        for key, name in ck.LAYER_TENSORS.items():
            t[f"encoder.layer.{l}.{name}"] = rng.standard_normal(shapes.get(key, (d,))) / np.sqrt(d)
    save_file({k: v.astype(np.float32) for k, v in t.items()}, str(folder / "model.safetensors"))
    return folder


def test_a_users_own_checkpoint_folder(tmp_path):
    from numerics.trained.encoder import run_encoder, sentence_embedding

    ckpt = ck.load_checkpoint(_tiny_checkpoint(tmp_path))
    assert (ckpt.d, ckpt.layers, ckpt.heads, ckpt.normalize) == (8, 2, 2, False)
    tr = run_encoder(ckpt, SHORT)
    assert np.abs(tr.attentions.sum(-1) - 1).max() < 1e-13
    for l in range(2):
        Xn, _, _ = _reference_layer(tr.states[l], ckpt.layer_weights[l], 2, 1e-12)
        assert np.allclose(Xn, tr.states[l + 1], rtol=0, atol=1e-11)
    assert sentence_embedding(ckpt, SHORT).shape == (8,)


def test_bad_checkpoints_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        ck.load_checkpoint(tmp_path / "nope")
    (tmp_path / "junk.zip").write_text("not a zip")
    with pytest.raises(InputError, match="zip"):
        ck.load_checkpoint(tmp_path / "junk.zip")
    (tmp_path / "m").mkdir()
    folder = _tiny_checkpoint(tmp_path / "m")
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "hidden_size": 12, "num_attention_heads": 3}))
    with pytest.raises(InputError, match="shape"):
        ck.load_checkpoint(folder)
    (folder / "config.json").write_text(json.dumps({**cfg, "hidden_act": "relu"}))
    with pytest.raises(InputError, match="hidden_act"):
        ck.load_checkpoint(folder)
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "tokenizer.json").unlink()
    with pytest.raises(InputError, match="tokenizer.json"):
        ck.load_checkpoint(folder)


def test_missing_extra_is_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == ck.PACKAGE else real(name, *a))
    with pytest.raises(InputError, match=r"attnflow\[models\]"):
        ck.packaged_model_path()


def test_text_inputs_are_checked(model):
    from numerics.trained.encoder import run_encoder

    with pytest.raises(InputError):
        run_encoder(model, "   ")
    with pytest.raises(InputError):
        run_encoder(model, SHORT, layers=7)
    long = " ".join(["word"] * 400)
    tokens, ids = model.tokenize(long)
    assert len(ids) == 256 and tokens[-1] == "[SEP]"


@pytest.mark.slow
def test_against_transformers_and_sentence_transformers(model, tmp_path):
    """Independent implementation (PyTorch, float32): hidden states, attentions and embeddings agree to float32."""
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers")
    transformers = pytest.importorskip("transformers")
    from numerics.trained.encoder import run_encoder, sentence_embeddings

    with zipfile.ZipFile(ck.packaged_model_path()) as z:
        z.extractall(tmp_path)
    texts = list(QUICKSTART) + ["Transformers move tokens on the sphere, and clusters emerge with depth."]
    E_st = st.SentenceTransformer(str(tmp_path), device="cpu").encode(texts)
    assert np.abs(sentence_embeddings(model, texts) - E_st).max() < 1e-6
    tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    bert = transformers.AutoModel.from_pretrained(str(tmp_path), attn_implementation="eager")
    inputs = tok(texts[-1], return_tensors="pt")
    with torch.no_grad():
        out = bert(**inputs, output_hidden_states=True, output_attentions=True)
    tr = run_encoder(model, texts[-1])
    assert inputs["input_ids"][0].tolist() == tr.ids.tolist()
    for l in range(7):
        assert np.abs(out.hidden_states[l][0].numpy() - tr.states[l]).max() < 1e-5
    for l in range(6):
        assert np.abs(out.attentions[l][0].numpy() - tr.attentions[l]).max() < 1e-5
