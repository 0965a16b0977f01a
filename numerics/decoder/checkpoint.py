"""Loading a decoder: the packaged SmolLM2, a GGUF file, or a checkpoint folder (``config.json`` + ``*.safetensors``).

:func:`load_decoder` is the one entry point (``attnflow decoder ... --model PATH``):

- no path: the packaged SmolLM2-135M-Instruct (:func:`numerics.decoder.gguf_reader.packaged_gguf_path`);
- a file: read as GGUF (:func:`numerics.decoder.gguf_reader.read_gguf`; architectures ``llama``, ``gpt2``);
- a folder: the usual layout of ``transformers`` checkpoints, ``config.json`` plus one or more
  ``*.safetensors`` files (shards are merged) and ``tokenizer.json``; optionally ``tokenizer_config.json`` (the
  chat template) or ``chat_template.jinja``. ``model_type`` ``llama`` or ``mistral`` (``LlamaForCausalLM``
  layout: ``model.layers.<l>.self_attn.q_proj.weight`` ...) or ``gpt2`` (``GPT2LMHeadModel`` layout:
  ``transformer.h.<l>.attn.c_attn.weight`` ..., whose Conv1D weights are stored (in, out) and are transposed
  here). Tensors in float32, float16 or bfloat16 are cast to float64 (bfloat16, which NumPy lacks, is widened
  from its raw bits: its bits are the high half of a float32).

Loaded models are cached per process by (resolved path, modification time, size): tests and claims load the
1 GB float64 model once. The cache holds at most :data:`CACHE_BYTES` of weights (the oldest entries leave first).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from numerics.common.errors import InputError
from numerics.decoder.gguf_reader import DEFAULT_NAME, SUPPORTED, packaged_gguf_path, read_gguf
from numerics.decoder.tokenizer import codec_from_json, require_module
from numerics.decoder.weights import BlockWeights, Decoder, DecoderConfig, frozen64

LLAMA_TYPES = ("llama", "mistral")
GPT2_TYPES = ("gpt2",)
GPT2_ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")

#: weights the per-process cache may hold (the packaged model is 1.0 GiB in float64)
CACHE_BYTES = 2.5 * 2**30
_CACHE: dict[tuple, Decoder] = {}


def load_decoder(path: str | os.PathLike | None = None) -> Decoder:
    """The decoder at ``path`` (module docstring); ``None`` is the packaged SmolLM2-135M-Instruct.

    Raises
    ------
    InputError
        Missing optional packages (names the extra), a missing, truncated or corrupt file, an unsupported
        architecture (names the supported ones), tensors of the wrong shape or with non-finite values.
    """
    src = packaged_gguf_path() if path is None else Path(path)
    try:
        st = src.stat()
        key = (str(src.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        raise InputError(f"model path does not exist: {src}") from None
    if key in _CACHE:
        return _CACHE[key]
    if src.is_dir():
        model = read_checkpoint_folder(src)
    else:
        model = read_gguf(src, name=DEFAULT_NAME if path is None else None)
    while _CACHE and sum(m.nbytes for m in _CACHE.values()) + model.nbytes > CACHE_BYTES:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = model
    return model


# -- checkpoint folders ---------------------------------------------------------------------------------------
def _read_json(path: Path, required: bool = True) -> dict | None:
    if not path.is_file():
        if required:
            raise InputError(f"{path.parent}: checkpoint file {path.name} is missing")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: must hold a JSON object")
    return data


def _bf16_tensor(path: Path, name: str) -> np.ndarray:
    """A bfloat16 tensor widened to float32 from its raw bits (safetensors layout: 8-byte header size, JSON
    header with per-tensor offsets relative to the end of the header, then the data)."""
    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
        info = header[name]
        start, stop = info["data_offsets"]
        fh.seek(8 + size + start)
        raw = np.frombuffer(fh.read(stop - start), dtype="<u2")
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(info["shape"])


def _read_tensors(folder: Path) -> dict[str, np.ndarray]:
    """Every tensor of every ``*.safetensors`` file of the folder (float64)."""
    safetensors = require_module("safetensors")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise InputError(f"{folder}: no *.safetensors file")
    out: dict[str, np.ndarray] = {}
    for f in files:
        try:
            with safetensors.safe_open(str(f), framework="np") as fh:
                for name in fh.keys():
                    dtype = fh.get_slice(name).get_dtype()
                    arr = _bf16_tensor(f, name) if dtype == "BF16" else fh.get_tensor(name)
                    out[name] = np.asarray(arr, dtype=np.float64)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types on corrupt files
            raise InputError(f"{f}: cannot read the safetensors file: {str(exc)[:160]}") from None
    return out


class _Named:
    """Tensor lookup with shape and finiteness checks and the family's name prefix stripped."""

    def __init__(self, tensors: dict, prefix: str, what: str):
        self.t = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in tensors.items()}
        self.what = what

    def has(self, name: str) -> bool:
        return name in self.t

    def get(self, name: str, shape: tuple) -> np.ndarray:
        if name not in self.t:
            raise InputError(f"{self.what}: tensor {name} is missing")
        arr = self.t[name]
        if arr.shape != shape:
            raise InputError(f"{self.what}: tensor {name} has shape {arr.shape}, expected {shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{self.what}: tensor {name} holds NaN or infinite values")
        return frozen64(arr)

    def optional(self, name: str, shape: tuple) -> np.ndarray | None:
        return self.get(name, shape) if name in self.t else None


def _cint(config: dict, key: str, what: str, default=None) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{what}: config.json {key} must be a positive integer, got {value!r}")
    return value


def _rope_base(config: dict, what: str) -> float:
    params = config.get("rope_parameters") or {}
    scaling = config.get("rope_scaling") or {}
    kind = params.get("rope_type", scaling.get("rope_type", scaling.get("type", "default")))
    if kind not in ("default", None):
        raise InputError(f"{what}: rotary scaling {kind!r} is not supported (only the default rotary embedding)")
    base = params.get("rope_theta", config.get("rope_theta", 10000.0))
    if not isinstance(base, (int, float)) or base <= 1:
        raise InputError(f"{what}: rope_theta must be a number > 1, got {base!r}")
    return float(base)


def _llama_folder(config: dict, tensors: dict, what: str) -> tuple[DecoderConfig, dict]:
    d, L, H = (_cint(config, k, what) for k in ("hidden_size", "num_hidden_layers", "num_attention_heads"))
    Hkv = _cint(config, "num_key_value_heads", what, H)
    k = _cint(config, "head_dim", what, d // H) if config.get("head_dim") is not None else d // H
    m = _cint(config, "intermediate_size", what)
    if H % Hkv or (config.get("head_dim") is None and d % H) or k % 2:
        raise InputError(f"{what}: width {d}, {H} heads, {Hkv} key/value heads and head width {k} are inconsistent")
    if config.get("hidden_act", "silu") != "silu":
        raise InputError(f"{what}: hidden_act {config.get('hidden_act')!r} is not supported (llama family: silu)")
    if config.get("mlp_bias"):
        raise InputError(f"{what}: mlp_bias is not supported")
    window = config.get("sliding_window")
    t = _Named(tensors, "model.", what)
    V = _cint(config, "vocab_size", what)
    tied = bool(config.get("tie_word_embeddings", False)) or not t.has("lm_head.weight")
    cfg = DecoderConfig(family="llama", d=d, layers=L, heads=H, kv_heads=Hkv, d_head=k, intermediate=m, vocab=V,
                        context=_cint(config, "max_position_embeddings", what),
                        norm_eps=float(config.get("rms_norm_eps", 1e-6)), rope_base=_rope_base(config, what),
                        tied=tied, name=what, sliding_window=int(window) if window else None)
    bias = bool(config.get("attention_bias", False))
    blocks = []
    for l in range(L):
        p = f"layers.{l}."
        a = p + "self_attn."
        opt = (lambda n, s: t.get(n, s)) if bias else (lambda n, s: None)
        blocks.append(BlockWeights(
            attn_norm_g=t.get(p + "input_layernorm.weight", (d,)), attn_norm_b=None,
            Wq=t.get(a + "q_proj.weight", (H * k, d)), bq=opt(a + "q_proj.bias", (H * k,)),
            Wk=t.get(a + "k_proj.weight", (Hkv * k, d)), bk=opt(a + "k_proj.bias", (Hkv * k,)),
            Wv=t.get(a + "v_proj.weight", (Hkv * k, d)), bv=opt(a + "v_proj.bias", (Hkv * k,)),
            Wo=t.get(a + "o_proj.weight", (d, H * k)), bo=opt(a + "o_proj.bias", (d,)),
            mlp_norm_g=t.get(p + "post_attention_layernorm.weight", (d,)), mlp_norm_b=None,
            W_gate=t.get(p + "mlp.gate_proj.weight", (m, d)), W_up=t.get(p + "mlp.up_proj.weight", (m, d)),
            b_up=None, W_down=t.get(p + "mlp.down_proj.weight", (d, m)), b_down=None))
    embed = t.get("embed_tokens.weight", (V, d))
    head = embed if tied else t.get("lm_head.weight", (V, d))
    return cfg, {"embed": embed, "positions": None, "blocks": tuple(blocks),
                 "final_norm_g": t.get("norm.weight", (d,)), "final_norm_b": None, "head": head}


def _gpt2_folder(config: dict, tensors: dict, what: str) -> tuple[DecoderConfig, dict]:
    d, L, H = (_cint(config, k, what) for k in ("n_embd", "n_layer", "n_head"))
    if d % H:
        raise InputError(f"{what}: n_embd {d} is not a multiple of n_head {H}")
    m = _cint(config, "n_inner", what) if config.get("n_inner") is not None else 4 * d
    act = config.get("activation_function", "gelu_new")
    if act not in GPT2_ACTIVATIONS:
        raise InputError(f"{what}: activation_function {act!r} is not supported (gpt2 family: "
                         f"{', '.join(GPT2_ACTIVATIONS)})")
    if not config.get("scale_attn_weights", True) or config.get("scale_attn_by_inverse_layer_idx", False):
        raise InputError(f"{what}: only the default attention scaling 1/sqrt(k) is supported")
    t = _Named(tensors, "transformer.", what)
    V, P = _cint(config, "vocab_size", what), _cint(config, "n_positions", what)
    tied = bool(config.get("tie_word_embeddings", True))
    cfg = DecoderConfig(family="gpt2", d=d, layers=L, heads=H, kv_heads=H, d_head=d // H, intermediate=m,
                        vocab=V, context=P, norm_eps=float(config.get("layer_norm_epsilon", 1e-5)), rope_base=None,
                        tied=tied, name=what)
    blocks = []
    for l in range(L):
        p = f"h.{l}."
        W = t.get(p + "attn.c_attn.weight", (d, 3 * d)).T          # Conv1D (in, out) -> (out, in)
        b = t.get(p + "attn.c_attn.bias", (3 * d,))
        blocks.append(BlockWeights(
            attn_norm_g=t.get(p + "ln_1.weight", (d,)), attn_norm_b=t.get(p + "ln_1.bias", (d,)),
            Wq=frozen64(W[:d]), bq=b[:d], Wk=frozen64(W[d:2 * d]), bk=b[d:2 * d], Wv=frozen64(W[2 * d:]), bv=b[2 * d:],
            Wo=frozen64(t.get(p + "attn.c_proj.weight", (d, d)).T), bo=t.get(p + "attn.c_proj.bias", (d,)),
            mlp_norm_g=t.get(p + "ln_2.weight", (d,)), mlp_norm_b=t.get(p + "ln_2.bias", (d,)), W_gate=None,
            W_up=frozen64(t.get(p + "mlp.c_fc.weight", (d, m)).T), b_up=t.get(p + "mlp.c_fc.bias", (m,)),
            W_down=frozen64(t.get(p + "mlp.c_proj.weight", (m, d)).T), b_down=t.get(p + "mlp.c_proj.bias", (d,))))
    embed = t.get("wte.weight", (V, d))
    head = embed if tied or not t.has("lm_head.weight") else t.get("lm_head.weight", (V, d))
    return cfg, {"embed": embed, "positions": t.get("wpe.weight", (P, d)), "blocks": tuple(blocks),
                 "final_norm_g": t.get("ln_f.weight", (d,)), "final_norm_b": t.get("ln_f.bias", (d,)), "head": head}


def _special_id(config: dict, key: str):
    value = config.get(key)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_checkpoint_folder(folder: str | os.PathLike) -> Decoder:
    """A :class:`Decoder` from a ``transformers`` checkpoint folder (module docstring)."""
    folder = Path(folder)
    what = str(folder)
    config = _read_json(folder / "config.json")
    kind = config.get("model_type")
    if kind not in LLAMA_TYPES + GPT2_TYPES:
        raise InputError(f"{what}: model_type {kind!r} is not supported; supported: {SUPPORTED}")
    tok_path = folder / "tokenizer.json"
    if not tok_path.is_file():
        raise InputError(f"{what}: checkpoint file tokenizer.json is missing")
    tensors = _read_tensors(folder)
    cfg, parts = (_llama_folder if kind in LLAMA_TYPES else _gpt2_folder)(config, tensors, what)
    eos = config.get("eos_token_id")
    eos_ids = tuple(e for e in (eos if isinstance(eos, list) else [eos]) if isinstance(e, int))
    codec = codec_from_json(tok_path.read_bytes(), what, bos_id=_special_id(config, "bos_token_id"),
                            eos_ids=eos_ids, add_bos=False, add_special=True)
    if codec.vocab_size > cfg.vocab:
        raise InputError(f"{what}: the tokenizer has {codec.vocab_size} tokens but the model only {cfg.vocab}")
    tconf = _read_json(folder / "tokenizer_config.json", required=False) or {}
    template = tconf.get("chat_template") if isinstance(tconf.get("chat_template"), str) else None
    if template is None and (folder / "chat_template.jinja").is_file():
        template = (folder / "chat_template.jinja").read_text(encoding="utf-8", errors="replace")
    return Decoder(config=cfg, tokenizer=codec, chat_template=template,
                   source={"format": "safetensors", "path": what, "model_type": kind}, **parts)
