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
from numerics.common.readers import open_regular, parse_json, read_bytes
from numerics.decoder.config import ROPE_BASE, check_token_ids, validated_config
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
def _read_file(path: Path, required: bool = True) -> bytes | None:
    """The bytes of a checkpoint's small file (config, tokenizer, template) through the common reader: a
    missing file is named, a FIFO or a device is refused before it is opened for reading, the size is
    bounded."""
    if not os.path.lexists(path):
        if required:
            raise InputError(f"{path.parent}: checkpoint file {path.name} is missing")
        return None
    return read_bytes(path, "checkpoint file")


def _read_json(path: Path, required: bool = True) -> dict | None:
    """A checkpoint's JSON object, parsed with the common nesting bound (no RecursionError)."""
    raw = _read_file(path, required)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: not UTF-8 text ({exc.reason})") from None
    data = parse_json(text, f"checkpoint file {path}")
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
    for f in files:
        # a FIFO, a device or a directory named *.safetensors is refused before the library opens it: its open()
        # of a FIFO blocks in native code, where no signal handler (SIGTERM, Ctrl-C) can run
        open_regular(f, "safetensors file").close()
    out: dict[str, np.ndarray] = {}
    seen: dict[str, Path] = {}
    for f in files:
        try:
            with safetensors.safe_open(str(f), framework="np") as fh:
                for name in fh.keys():
                    if name in seen:  # shards partition the tensors: a repeated name is a broken checkpoint
                        raise InputError(f"{folder}: tensor {name} is in two shards, {seen[name].name} and {f.name}")
                    seen[name] = f
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


def _rope_base(c: dict, what: str) -> float:
    """The rotary base of a validated config; only the default rotary embedding is implemented."""
    params, scaling = c["rope_parameters"] or {}, c["rope_scaling"] or {}
    kind = params.get("rope_type", scaling.get("rope_type", scaling.get("type", "default")))
    if kind not in ("default", None):
        raise InputError(f"{what}: rotary scaling {kind!r} is not supported (only the default rotary embedding)")
    if "rope_theta" in params:  # the newer layout keeps the base beside the rotary type
        return float(ROPE_BASE.check(params["rope_theta"], "rope_parameters.rope_theta", what))
    return float(c["rope_theta"])


def _llama_folder(c: dict, tensors: dict, what: str) -> tuple[DecoderConfig, dict]:
    """The config and weights of a Llama-layout folder (``c``: :func:`validated_config`'s dict)."""
    d, L, H = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    Hkv = c["num_key_value_heads"] or H
    k = c["head_dim"] or d // H
    m = c["intermediate_size"]
    if H % Hkv or (c["head_dim"] is None and d % H) or k % 2:
        raise InputError(f"{what}: width {d}, {H} heads, {Hkv} key/value heads and head width {k} are inconsistent")
    if c["hidden_act"] != "silu":
        raise InputError(f"{what}: hidden_act {c['hidden_act']!r} is not supported (llama family: silu)")
    if c["mlp_bias"]:
        raise InputError(f"{what}: mlp_bias is not supported")
    t = _Named(tensors, "model.", what)
    V = c["vocab_size"]
    tied = c["tie_word_embeddings"] or not t.has("lm_head.weight")
    cfg = DecoderConfig(family="llama", d=d, layers=L, heads=H, kv_heads=Hkv, d_head=k, intermediate=m, vocab=V,
                        context=c["max_position_embeddings"], norm_eps=float(c["rms_norm_eps"]),
                        rope_base=_rope_base(c, what), tied=tied, name=what, sliding_window=c["sliding_window"])
    bias = c["attention_bias"]
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


def _gpt2_folder(c: dict, tensors: dict, what: str) -> tuple[DecoderConfig, dict]:
    """The config and weights of a GPT-2-layout folder (``c``: :func:`validated_config`'s dict)."""
    d, L, H = c["n_embd"], c["n_layer"], c["n_head"]
    if d % H:
        raise InputError(f"{what}: n_embd {d} is not a multiple of n_head {H}")
    m = c["n_inner"] or 4 * d
    act = c["activation_function"]
    if act not in GPT2_ACTIVATIONS:
        raise InputError(f"{what}: activation_function {act!r} is not supported (gpt2 family: "
                         f"{', '.join(GPT2_ACTIVATIONS)})")
    if not c["scale_attn_weights"] or c["scale_attn_by_inverse_layer_idx"]:
        raise InputError(f"{what}: only the default attention scaling 1/sqrt(k) is supported")
    t = _Named(tensors, "transformer.", what)
    V, P = c["vocab_size"], c["n_positions"]
    tied = c["tie_word_embeddings"]
    cfg = DecoderConfig(family="gpt2", d=d, layers=L, heads=H, kv_heads=H, d_head=d // H, intermediate=m,
                        vocab=V, context=P, norm_eps=float(c["layer_norm_epsilon"]), rope_base=None,
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


def _ids(value) -> tuple[int, ...]:
    """The token ids of a validated ``bos_token_id`` / ``eos_token_id`` (an int, a list of ints or None)."""
    return () if value is None else tuple(value) if isinstance(value, list) else (value,)


def read_checkpoint_folder(folder: str | os.PathLike) -> Decoder:
    """A :class:`Decoder` from a ``transformers`` checkpoint folder (module docstring)."""
    folder = Path(folder)
    what = str(folder)
    config = _read_json(folder / "config.json")
    kind = config.get("model_type")
    if kind not in LLAMA_TYPES + GPT2_TYPES:
        raise InputError(f"{what}: model_type {kind!r} is not supported; supported: {SUPPORTED}")
    family = "llama" if kind in LLAMA_TYPES else "gpt2"
    c = validated_config(config, family, what)  # every value checked before any tensor is read
    tok_raw = _read_file(folder / "tokenizer.json")
    tensors = _read_tensors(folder)
    cfg, parts = (_llama_folder if family == "llama" else _gpt2_folder)(c, tensors, what)
    check_token_ids(c, what)
    bos = _ids(c["bos_token_id"])
    codec = codec_from_json(tok_raw, what, bos_id=bos[0] if bos else None, eos_ids=_ids(c["eos_token_id"]),
                            add_bos=False, add_special=True)
    if codec.vocab_size > cfg.vocab:
        raise InputError(f"{what}: the tokenizer has {codec.vocab_size} tokens but the model only {cfg.vocab}")
    tconf = _read_json(folder / "tokenizer_config.json", required=False) or {}
    template = tconf.get("chat_template") if isinstance(tconf.get("chat_template"), str) else None
    if template is None and (folder / "chat_template.jinja").exists():
        template = _read_file(folder / "chat_template.jinja").decode("utf-8", errors="replace")
    return Decoder(config=cfg, tokenizer=codec, chat_template=template,
                   source={"format": "safetensors", "path": what, "model_type": kind,
                           "initializer_range": c["initializer_range"]}, **parts)
