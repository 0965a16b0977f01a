"""The values of a checkpoint's ``config.json`` (and a GGUF file's constants), checked by type and range.

One table per family (:data:`LLAMA_KEYS`, :data:`GPT2_KEYS`) lists every key the readers use with its rule
(:class:`Rule`) and its default; :func:`validated_config` checks them all before any tensor is interpreted and
returns the values with the defaults filled in. Keys the readers do not use are ignored (``transformers`` writes
dozens). Why each rule is strict:

- JSON types are not coerced: ``"tie_word_embeddings": "no"`` is a non-empty string, which Python's ``bool``
  reads as true (the checkpoint's own output head would be ignored), and ``"hidden_size": "32"`` is not a size;
- floats must be finite and within a range that keeps the arithmetic meaningful: a negative or NaN epsilon
  makes the RMSNorm's square root NaN, 1e308 makes every normalised state 0, an infinite rotary base makes
  every inverse frequency 0 or NaN;
- token ids must be integers inside the vocabulary: a float ``eos_token_id`` would never match a token, so
  generation would never stop at the end of the sequence.

Every failure is one :class:`InputError` line naming the file's key and the rule it breaks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from numerics.common.errors import InputError

#: the largest size (width, layers, heads, vocabulary, context) a config may declare; tensors must match anyway
MAX_SIZE = 1 << 31
#: normalisation epsilons lie in (0, MAX_EPS]: real checkpoints use 1e-12 .. 1e-5
MAX_EPS = 0.1
#: rotary bases lie in (1, MAX_ROPE_BASE]: real checkpoints use 1e4 .. 1e8
MAX_ROPE_BASE = 1e12


@dataclass(frozen=True)
class Rule:
    """How one config value is checked.

    Attributes
    ----------
    kind : {"size", "real", "bool", "str", "ids", "object"}
        ``size``: an integer in [1, MAX_SIZE]; ``real``: a finite number in (low, high]; ``bool``: a JSON
        boolean; ``str``: a string; ``ids``: a token id or a non-empty list of ids (integers >= 0); ``object``: a
        JSON object whose ``rope_type`` / ``type``, if present, are strings.
    low, high : float
        Bounds of a ``real`` (low excluded, high included).
    nullable : bool
        Whether JSON ``null`` is allowed (it then means "use the default").
    """

    kind: str
    low: float = 0.0
    high: float = math.inf
    nullable: bool = False

    def check(self, value, key: str, what: str, source: str = "config.json"):
        """``value`` if it follows this rule, else :class:`InputError` naming ``key`` of ``source``."""
        if value is None and self.nullable:
            return None
        fail = (lambda rule: InputError(f"{what}: {source} {key} must be {rule}, got {_short(value)}"))
        if self.kind == "size":
            if not _is_int(value) or not 1 <= value <= MAX_SIZE:
                raise fail(f"a positive integer (at most {MAX_SIZE})")
        elif self.kind == "real":
            if not _is_number(value) or not math.isfinite(value) or not self.low < value <= self.high:
                raise fail(f"a finite number in ({self.low:g}, {self.high:g}]")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise fail("true or false (a JSON boolean)")
        elif self.kind == "str":
            if not isinstance(value, str):
                raise fail("a string")
        elif self.kind == "ids":
            ids = value if isinstance(value, list) else [value]
            if not ids or not all(_is_int(i) and i >= 0 for i in ids):
                raise fail("a token id (an integer >= 0) or a non-empty list of them")
        elif self.kind == "object":
            if not isinstance(value, dict):
                raise fail("a JSON object or null")
            for sub in ("rope_type", "type"):
                if sub in value and not isinstance(value[sub], str):
                    raise InputError(f"{what}: {source} {key}.{sub} must be a string, got {_short(value[sub])}")
        else:  # pragma: no cover - a table entry with a misspelt kind
            raise ValueError(f"unknown rule kind {self.kind!r}")
        return value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


SIZE, OPTIONAL_SIZE = Rule("size"), Rule("size", nullable=True)
EPS = Rule("real", 0.0, MAX_EPS)
ROPE_BASE = Rule("real", 1.0, MAX_ROPE_BASE)
FLAG, TEXT = Rule("bool"), Rule("str")
IDS = Rule("ids", nullable=True)
OBJECT = Rule("object", nullable=True)
#: the standard deviation of the initialisation (only read by ``decoder tokens --init random``)
INIT_STD = Rule("real", 0.0, 1.0, nullable=True)

#: a required key has the default ``REQUIRED``
REQUIRED = object()

#: key -> (rule, default) of the ``llama`` / ``mistral`` family (LlamaForCausalLM's config)
LLAMA_KEYS = {
    "hidden_size": (SIZE, REQUIRED), "num_hidden_layers": (SIZE, REQUIRED), "num_attention_heads": (SIZE, REQUIRED),
    "num_key_value_heads": (OPTIONAL_SIZE, None), "head_dim": (OPTIONAL_SIZE, None),
    "intermediate_size": (SIZE, REQUIRED), "vocab_size": (SIZE, REQUIRED), "max_position_embeddings": (SIZE, REQUIRED),
    "rms_norm_eps": (EPS, 1e-6), "rope_theta": (ROPE_BASE, 10000.0), "rope_scaling": (OBJECT, None),
    "rope_parameters": (OBJECT, None), "hidden_act": (TEXT, "silu"), "mlp_bias": (FLAG, False),
    "attention_bias": (FLAG, False), "tie_word_embeddings": (FLAG, False), "sliding_window": (OPTIONAL_SIZE, None),
    "bos_token_id": (IDS, None), "eos_token_id": (IDS, None), "initializer_range": (INIT_STD, None),
}
#: key -> (rule, default) of the ``gpt2`` family (GPT2LMHeadModel's config)
GPT2_KEYS = {
    "n_embd": (SIZE, REQUIRED), "n_layer": (SIZE, REQUIRED), "n_head": (SIZE, REQUIRED),
    "n_inner": (OPTIONAL_SIZE, None),
    "n_positions": (SIZE, REQUIRED), "vocab_size": (SIZE, REQUIRED), "layer_norm_epsilon": (EPS, 1e-5),
    "activation_function": (TEXT, "gelu_new"), "scale_attn_weights": (FLAG, True),
    "scale_attn_by_inverse_layer_idx": (FLAG, False), "tie_word_embeddings": (FLAG, True),
    "bos_token_id": (IDS, None), "eos_token_id": (IDS, None), "initializer_range": (INIT_STD, None),
}
TABLES = {"llama": LLAMA_KEYS, "gpt2": GPT2_KEYS}


def validated_config(config: dict, family: str, what: str) -> dict:
    """Every key of ``family``'s table checked (module docstring) and filled with its default when absent or
    null; token ids are also checked against ``vocab_size``.

    Parameters
    ----------
    config : dict
        The parsed ``config.json``.
    family : {"llama", "gpt2"}
    what : str
        The checkpoint, for messages.

    Returns
    -------
    dict
        key -> value for every key of the table (token ids as given: an int or a list; their range against
        the vocabulary is :func:`check_token_ids`).

    Raises
    ------
    InputError
        A missing required key, or a value of the wrong type or out of range (one line naming the key).
    """
    out = {}
    for key, (rule, default) in TABLES[family].items():
        value = config.get(key)
        if value is None:
            if default is REQUIRED:
                raise InputError(f"{what}: config.json {key} must be a positive integer, got None")
            out[key] = default
            continue
        out[key] = rule.check(value, key, what)
    return out


def check_token_ids(c: dict, what: str) -> None:
    """The special token ids of a validated config lie inside its vocabulary (checked after the tensors, whose
    shapes name a wrong ``vocab_size`` more precisely)."""
    vocab = c["vocab_size"]
    for key in ("bos_token_id", "eos_token_id"):
        ids = c[key] if isinstance(c[key], list) else [c[key]]
        bad = [i for i in ids if i is not None and i >= vocab]
        if bad:
            raise InputError(f"{what}: config.json {key} {bad[0]} lies outside the vocabulary of {vocab} tokens")


def check_constants(norm_eps: float, rope_base: float | None, what: str, eps_key: str, base_key: str,
                    source: str = "metadata") -> None:
    """The rules of :data:`EPS` and :data:`ROPE_BASE` for constants read elsewhere (GGUF metadata)."""
    EPS.check(norm_eps, eps_key, what, source)
    if rope_base is not None:
        ROPE_BASE.check(rope_base, base_key, what, source)
