"""Text to token ids and back for a decoder, and its chat template.

:class:`TextCodec` wraps a :class:`tokenizers.Tokenizer` with the ids the forward pass needs (beginning and end
of sequence, whether a beginning token is prepended). It is built either from a ``tokenizer.json`` (checkpoint
folders) or from the metadata of a GGUF file (:func:`codec_from_gguf_metadata`): a byte-level BPE model
(``tokenizer.ggml.model = "gpt2"``) with the vocabulary ``tokenizer.ggml.tokens``, the merges
``tokenizer.ggml.merges``, the control tokens (``token_type`` 3) as special tokens, and the pre-tokenizer named
by ``tokenizer.ggml.pre``:

- ``gpt2`` / ``default``: the GPT-2 split (contractions, letters, numbers, other symbols, spaces) then bytes;
- ``smollm`` (also ``starcoder``, ``refact``, ``codeshell``): every digit split off first, then the GPT-2 split
  (llama.cpp's pre-tokenizer table for these names; the SmolLM2 tokenizer isolates digits).

The chat template is the Jinja template stored with the model, rendered in a sandbox (jinja2's
``ImmutableSandboxedEnvironment``, as ``transformers`` does) with ``messages = [{"role": "user", "content":
prompt}]`` and ``add_generation_prompt = True``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from numerics.common.errors import InputError

EXTRA_HINT = "pip install 'attnflow[models]'"
#: tokenizer.ggml.pre values this reader builds (the others are refused by name)
GGUF_PRE_TOKENIZERS = ("gpt2", "default", "smollm", "starcoder", "refact", "codeshell")
CONTROL_TOKEN = 3  #: llama.cpp's token_type of control tokens


def require_module(module: str):
    """Import an optional dependency or raise :class:`InputError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        raise InputError(f"reading a decoder model needs the optional package {module!r}: {EXTRA_HINT}") from None


def require_text(text, what: str = "text") -> str:
    """``text`` as a non-empty string that encodes to UTF-8 (command lines with invalid bytes carry lone
    surrogates, which are refused here instead of failing inside the tokenizer)."""
    if not isinstance(text, str):
        raise InputError(f"{what} must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError(f"{what} is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what} is not valid UTF-8 text (position {exc.start})") from None
    return text


@dataclass(frozen=True, eq=False)
class TextCodec:
    """A tokenizer with the model's special ids.

    Attributes
    ----------
    tokenizer : tokenizers.Tokenizer
    bos_id : int or None
        Beginning-of-sequence id.
    eos_ids : tuple of int
        Ids that end a generation.
    add_bos : bool
        Whether :meth:`encode` prepends ``bos_id`` (a GGUF file's own setting).
    add_special : bool
        Whether the tokenizer's own post-processor adds its special tokens (``tokenizer.json`` of a checkpoint
        folder, which knows whether its model wants a beginning token).
    """

    tokenizer: Any
    bos_id: int | None
    eos_ids: tuple
    add_bos: bool
    add_special: bool = False

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token strings such as ``<|im_start|>`` become their ids)."""
        ids = list(self.tokenizer.encode(require_text(text), add_special_tokens=self.add_special).ids)
        if self.add_bos and self.bos_id is not None:
            ids = [self.bos_id] + ids
        if not ids:
            raise InputError("the text gives no tokens")
        return ids

    def decode(self, ids) -> str:
        """Text of ``ids`` (special tokens left out)."""
        return self.tokenizer.decode([int(i) for i in ids], skip_special_tokens=True)

    def pieces(self, ids) -> list[str]:
        """Each token on its own as readable text (special tokens shown by name)."""
        return [self.tokenizer.decode([int(i)], skip_special_tokens=False) for i in ids]

    @property
    def vocab_size(self) -> int:
        return int(self.tokenizer.get_vocab_size(with_added_tokens=True))


def codec_from_json(raw: bytes, what: str, bos_id=None, eos_ids=(), add_bos: bool = False,
                    add_special: bool = True) -> TextCodec:
    """A :class:`TextCodec` from the bytes of a ``tokenizer.json``."""
    tk = require_module("tokenizers")
    try:
        tok = tk.Tokenizer.from_str(raw.decode("utf-8"))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises its own exception types
        raise InputError(f"{what}: cannot read tokenizer.json: {str(exc).splitlines()[0][:200]}") from None
    tok.no_truncation()
    tok.no_padding()
    return TextCodec(tok, bos_id, tuple(eos_ids), add_bos, add_special)


def codec_from_gguf_metadata(meta: dict, what: str) -> TextCodec:
    """A :class:`TextCodec` from GGUF tokenizer metadata (module docstring); ``meta`` maps keys to values."""
    tk = require_module("tokenizers")
    model = meta.get("tokenizer.ggml.model")
    if model != "gpt2":
        raise InputError(f"{what}: tokenizer model {model!r} is not supported (only the byte-level BPE 'gpt2')")
    pre = meta.get("tokenizer.ggml.pre", "default")
    if pre not in GGUF_PRE_TOKENIZERS:
        raise InputError(f"{what}: pre-tokenizer {pre!r} is not supported (supported: "
                         f"{', '.join(GGUF_PRE_TOKENIZERS)})")
    tokens = meta.get("tokenizer.ggml.tokens")
    merges = meta.get("tokenizer.ggml.merges")
    if not tokens or merges is None:
        raise InputError(f"{what}: the tokenizer vocabulary or merges are missing from the metadata")
    vocab = {t: i for i, t in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise InputError(f"{what}: the tokenizer vocabulary has repeated entries")
    pairs = []
    for m in merges:
        a, sep, b = m.partition(" ")
        if not sep:
            raise InputError(f"{what}: malformed BPE merge {m!r}")
        pairs.append((a, b))
    try:
        tok = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=pairs, fuse_unk=False))
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{what}: cannot build the BPE tokenizer: {str(exc)[:200]}") from None
    byte_level = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in ("gpt2", "default"):
        tok.pre_tokenizer = byte_level
    else:
        tok.pre_tokenizer = tk.pre_tokenizers.Sequence([tk.pre_tokenizers.Digits(individual_digits=True), byte_level])
    tok.decoder = tk.decoders.ByteLevel()
    types = meta.get("tokenizer.ggml.token_type") or []
    control = [tokens[i] for i, t in enumerate(types) if t == CONTROL_TOKEN]
    tok.add_special_tokens([tk.AddedToken(t, special=True, normalized=False) for t in control])
    bos = meta.get("tokenizer.ggml.bos_token_id")
    eos = meta.get("tokenizer.ggml.eos_token_id")
    return TextCodec(tok, None if bos is None else int(bos), () if eos is None else (int(eos),),
                     bool(meta.get("tokenizer.ggml.add_bos_token", False)))


def apply_chat_template(template: str | None, prompt: str, bos: str = "", eos: str = "") -> str:
    """The text the model sees for one user message under its chat template (module docstring)."""
    if not template:
        raise InputError("this model has no chat template; run without --chat")
    prompt = require_text(prompt, "prompt")
    jinja = require_module("jinja2.sandbox")
    env = jinja.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    try:
        return env.from_string(template).render(messages=[{"role": "user", "content": prompt}],
                                                add_generation_prompt=True, bos_token=bos, eos_token=eos)
    except Exception as exc:  # noqa: BLE001 - a template is user data: any failure is an input error
        raise InputError(f"the model's chat template does not render: {str(exc)[:200]}") from None
