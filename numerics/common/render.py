"""Rendering for the CLI: aligned text tables by default, one JSON object with ``--json``."""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence

import numpy as np


def fmt(value, digits: int = 6) -> str:
    """Short human form of a number, bool, list or None."""
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.{digits}g}"
    if isinstance(value, (list, tuple, np.ndarray)):
        items = list(value)
        shown = ", ".join(fmt(v, 4) for v in items[:6])
        return f"[{shown}{', ...' if len(items) > 6 else ''}]"
    return str(value)


def table(rows: Sequence[Sequence], headers: Sequence[str], max_width: int = 60) -> str:
    """An aligned plain-text table; cells longer than ``max_width`` are cut with an ellipsis."""
    cells = [[_cut(fmt(c) if not isinstance(c, str) else c, max_width) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    return "\n".join(line.rstrip() for line in out)


#: width the default text output of a command fits (wrapped or abbreviated); full detail is in --json / --verbose
TEXT_WIDTH = 100


def wrapped_table(rows: Sequence[Sequence], headers: Sequence[str], wrap: int, width: int = TEXT_WIDTH,
                  max_width: int = 48) -> str:
    """An aligned table at most ``width`` columns wide: column ``wrap`` is word-wrapped over several lines to
    fill the room the other columns leave (they are cut with an ellipsis beyond ``max_width``)."""
    import textwrap

    cells = [[fmt(c) if not isinstance(c, str) else c for c in row] for row in rows]
    cells = [[c if j == wrap else _cut(c, max_width) for j, c in enumerate(row)] for row in cells]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) if j != wrap else w for j, (w, c) in enumerate(zip(widths, row))]
    room = width - sum(w for j, w in enumerate(widths) if j != wrap) - 2 * (len(headers) - 1)
    widths[wrap] = max(12, min(room, max([len(r[wrap]) for r in cells] + [len(headers[wrap])])))
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    for row in cells:
        pieces = textwrap.wrap(row[wrap], widths[wrap]) or [""]
        pieces = [p if len(p) <= widths[wrap] else _cut(p, widths[wrap]) for p in pieces]
        for k, piece in enumerate(pieces):
            line = [(piece if j == wrap else (c if k == 0 else "")) for j, c in enumerate(row)]
            out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    return "\n".join(line.rstrip() for line in out)


def key_values(pairs: Sequence[tuple[str, object]]) -> str:
    """Two aligned columns: name, value."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k.ljust(width)}  {fmt(v) if not isinstance(v, str) else v}" for k, v in pairs)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _jsonable(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _clean(o):
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, np.ndarray):
        return _clean(o.tolist())
    if isinstance(o, (float, np.floating)):
        v = float(o)
        return v if math.isfinite(v) else None
    if isinstance(o, np.generic):
        return o.item()
    return o


#: the version of a command's JSON output when its module declares none (``JSON_SCHEMA = N`` in the command's
#: module raises it). A version changes when a key is removed or renamed or changes type; a renamed key stays
#: as an alias for one release, announced in CHANGELOG.md (tests/cli/json_keys.json pins every command's keys)
SCHEMA = 1


def schema_version(args) -> int:
    """The JSON schema version of the command that ``args`` belongs to (its module's ``JSON_SCHEMA``, else
    :data:`SCHEMA`)."""
    return int(getattr(getattr(args, "_module", None), "JSON_SCHEMA", SCHEMA))


#: keys renamed in a JSON output, old -> new: a command that passes its payload through :func:`with_aliases` still
#: writes the old key, with the new key's value, for one release (announced in CHANGELOG.md)
RENAMED_KEYS = {"critical_noise": "linear_stability_threshold"}


def with_aliases(payload: dict) -> dict:
    """``payload`` with each renamed key of :data:`RENAMED_KEYS` also under its old name (same value), so that
    scripts written against the old name keep working for one release."""
    out = dict(payload)
    for old, new in RENAMED_KEYS.items():
        if new in out and old not in out:
            out[old] = out[new]
    return out


def emit(args, payload: dict, text: str, stream=None) -> None:
    """Print ``payload`` as one JSON object if ``args.json``, else ``text``.

    The conventions every command shares are applied here: a payload naming a figure (``"plot"``) ends its text
    with ``plot written to PATH``, and every JSON object carries its ``schema`` version
    (:func:`schema_version`; scripts can check it before reading keys) and the package ``versions``
    (provenance).
    """
    stream = stream or sys.stdout
    if isinstance(payload, dict) and payload.get("plot") and "plot written to" not in text:
        text += f"\n\nplot written to {payload['plot']}"
    if isinstance(payload, dict) and "schema" not in payload:
        payload = {"schema": schema_version(args), **payload}
    if isinstance(payload, dict) and "versions" not in payload:
        from numerics.common.provenance import package_versions

        payload = {**payload, "versions": package_versions()}
    if getattr(args, "json", False):
        print(json.dumps(_clean(payload), default=_jsonable, allow_nan=False), file=stream)
    else:
        print(text, file=stream)
