"""Reading the files that commands take (``.npz``, ``.npy``, ``.json``): every failure is one InputError line.

A truncated or empty archive, an ``.npy`` where an ``.npz`` is expected, pickled object arrays, wrong dtypes,
non-finite values and deeply nested JSON are all reported as "invalid file" errors (CLI exit 2), never as
tracebacks, and nothing is executed or unpickled.
"""
from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from numerics.common.errors import InputError

#: the largest JSON file read (bytes) and its deepest nesting
MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 64


def read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path``, fully read (so a truncated archive fails here, not later)."""
    _require_file(path, what)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read {what} {path}: invalid file ({_reason(exc)})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise InputError(f"cannot read {what} {path}: invalid file (an .npy array, not an .npz archive)")
    try:
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError, RuntimeError) as exc:
        raise InputError(f"cannot read {what} {path}: invalid file ({_reason(exc)})") from None


def read_npy(path, what: str) -> np.ndarray:
    """The array of the ``.npy`` at ``path`` (an ``.npz`` archive is refused with a clear message)."""
    _require_file(path, what)
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read {what} {path}: invalid file ({_reason(exc)})") from None
    if isinstance(arr, np.lib.npyio.NpzFile):
        arr.close()
        raise InputError(f"cannot read {what} {path}: invalid file (an .npz archive, not an .npy array)")
    return arr


def read_json(path, what: str):
    """The JSON document at ``path`` (at most :data:`MAX_JSON_BYTES`, nesting at most :data:`MAX_JSON_DEPTH`)."""
    _require_file(path, what)
    if os.path.getsize(path) > MAX_JSON_BYTES:
        raise InputError(f"cannot read {what} {path}: invalid file (larger than {MAX_JSON_BYTES >> 20} MiB)")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} {path}: invalid file ({_reason(exc)})") from None
    return parse_json(text, f"{what} {path}")


def parse_json(text: str, what: str, kind: str = "file"):
    """``json.loads`` with the nesting bound checked before parsing (no RecursionError); errors name ``what``
    and call the text an invalid ``kind`` ("file", or "value" for a command-line flag)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:  # a linear scan: brackets outside strings
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                raise InputError(f"cannot read {what}: invalid {kind} (JSON nested deeper than {MAX_JSON_DEPTH} levels)")
        elif ch in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise InputError(f"cannot read {what}: invalid {kind} (not valid JSON: {_reason(exc)})") from None


def _require_file(path, what: str) -> None:
    if not os.path.exists(path):
        raise InputError(f"cannot read {what} {path}: No such file or directory")
    if not os.path.isfile(path):
        raise InputError(f"cannot read {what} {path}: invalid file (not a regular file)")


def _reason(exc: BaseException) -> str:
    if "pickle" in str(exc):
        return "it holds pickled Python objects, which attnflow never loads"
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__


def json_array(text: str | None, name: str) -> np.ndarray | None:
    """A command-line JSON array (``--A "[[1, 0], [0, 1]]"``) as a float array; ``None`` stays ``None``.

    Parsed as data (``json.loads``, never evaluated), with the nesting bound of :func:`parse_json`; a value that
    is not a numeric, rectangular array is one :class:`InputError` line naming the flag.
    """
    if text is None:
        return None
    value = parse_json(text, f"--{name}", kind="value")
    if not isinstance(value, list):
        raise InputError(f"--{name} must be a JSON array, got {text!r}")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"--{name} must be a numeric (rectangular) JSON array, got {text!r}") from None
