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


def emit(args, payload: dict, text: str, stream=None) -> None:
    """Print ``payload`` as one JSON object if ``args.json``, else ``text``."""
    stream = stream or sys.stdout
    if getattr(args, "json", False):
        print(json.dumps(_clean(payload), default=_jsonable, allow_nan=False), file=stream)
    else:
        print(text, file=stream)
