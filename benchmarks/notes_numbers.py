"""The numbers quoted in proofs_notes/ come from the code: regenerate them, or check them.

A quoted number is wrapped in a marker that names where it comes from and how much it may vary::

    max deviation <!-- measured: circle.sphere-vs-angle-quick measured ~10 -->4.1e-13<!-- end -->

``ID`` is a claim id, ``PATH`` is ``measured``, ``measured/KEY`` (a dict of measured values) or a
``/``-separated path into the claim's ``details`` (list indices are integers), and the noise is ``~F`` (agree within a factor F: rounding-level errors that move with
the platform) or ``+-A`` (absolute, e.g. ``+-0`` for exact counts). Rendered Markdown shows only the number.

The results come from ``attnflow verify --json`` (default claims) or ``attnflow verify --json --all``, cached
in ``proofs_notes/measured.json`` (only the claims that notes quote: id -> {"measured", "details", "seconds"}).

Usage::

    python benchmarks/notes_numbers.py --run            # run the quoted claims, update the cache and the notes
    python benchmarks/notes_numbers.py --run --all      # also the default=False claims that notes quote
    attnflow verify --json --all > all.json && python benchmarks/notes_numbers.py --from all.json
    python benchmarks/notes_numbers.py --check          # notes vs cache, exit 1 on disagreement

tests/test_notes_numbers.py runs ``--check`` logic and re-runs the fast quoted claims against the cache.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "proofs_notes"
CACHE = NOTES / "measured.json"

MARKER = re.compile(r"<!-- measured: (?P<id>[\w.\-]+) (?P<path>\S+) (?P<noise>~[0-9.eE+\-]+|\+-[0-9.eE+\-]+) -->"
                    r"(?P<value>[^<]*)<!-- end -->")


@dataclass(frozen=True)
class Quote:
    note: str
    claim_id: str
    path: str
    noise: str
    text: str

    @property
    def value(self) -> float:
        return float(self.text.strip())


def quotes(notes_dir: Path = NOTES) -> list[Quote]:
    """Every marked number in the notes."""
    out = []
    for note in sorted(notes_dir.glob("*.md")):
        for m in MARKER.finditer(note.read_text()):
            out.append(Quote(note.name, m["id"], m["path"], m["noise"], m["value"]))
    return out


def lookup(result: dict, path: str) -> float:
    """The number at ``path`` ('measured', 'measured/...' into a dict or list of measured values, or details/...)
    of one cached claim result."""
    if path == "measured":
        return float(result["measured"])
    node = result["details"]
    if path.startswith("measured/"):
        node, path = result["measured"], path[len("measured/"):]
    for key in path.split("/")[1:] if path.startswith("details/") else path.split("/"):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return float(node)


def agrees(quoted: float, current: float, noise: str) -> bool:
    """``~F``: within a factor F (both zero counts as agreement); ``+-A``: |quoted - current| <= A."""
    if noise.startswith("~"):
        factor = float(noise[1:])
        if quoted == current:
            return True
        if quoted <= 0 or current <= 0:
            return abs(quoted - current) <= 1e-300
        return abs(math.log(quoted / current)) <= math.log(factor)
    return abs(quoted - current) <= float(noise[2:])


def fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.2g}" if abs(value) < 1e-3 or abs(value) >= 1e6 else f"{value:.4g}"


def disagreements(cache: dict, notes_dir: Path = NOTES) -> list[str]:
    """Quotes that are missing from the cache or disagree with it beyond their noise."""
    bad = []
    for q in quotes(notes_dir):
        if q.claim_id not in cache:
            bad.append(f"{q.note}: {q.claim_id} not in the cache (run benchmarks/notes_numbers.py --run)")
            continue
        try:
            current = lookup(cache[q.claim_id], q.path)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            bad.append(f"{q.note}: {q.claim_id} {q.path}: {type(exc).__name__}: {exc}")
            continue
        if not agrees(q.value, current, q.noise):
            bad.append(f"{q.note}: {q.claim_id} {q.path} quotes {q.text.strip()}, the code gives {current:.3g} "
                       f"(noise {q.noise})")
    return bad


def rewrite(cache: dict, notes_dir: Path = NOTES) -> int:
    """Replace every quoted number by the cached value; returns the number of changed quotes."""
    changed = 0
    for note in sorted(notes_dir.glob("*.md")):
        text = note.read_text()

        def sub(m):
            nonlocal changed
            if m["id"] not in cache:
                return m[0]
            new = fmt(lookup(cache[m["id"]], m["path"]))
            changed += new != m["value"].strip()
            return m[0].replace(f"-->{m['value']}<!-- end -->", f"-->{new}<!-- end -->")

        new_text = MARKER.sub(sub, text)
        if new_text != text:
            note.write_text(new_text)
    return changed


def run_claims(ids) -> dict:
    from numerics.common.verification import all_claims, run_claim

    by_id = {c.id: c for c in all_claims()}
    out = {}
    for cid in sorted(ids):
        r = run_claim(by_id[cid])
        out[cid] = {"status": r.result.status, "measured": r.result.measured, "details": r.result.details,
                    "seconds": round(r.seconds, 2), "default": by_id[cid].default}
        print(f"{cid}: {r.result.status} {r.result.measured} ({r.seconds:.1f}s)", file=sys.stderr)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", action="store_true", help="run the quoted claims and update cache and notes")
    ap.add_argument("--all", action="store_true", help="with --run: include default=False claims")
    ap.add_argument("--from", dest="source", help="an `attnflow verify --json [--all]` output file")
    ap.add_argument("--check", action="store_true", help="only compare notes with the cache")
    ap.add_argument("--only", nargs="*", help="with --run: only these claim ids")
    args = ap.parse_args(argv)
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    if args.check:
        bad = disagreements(cache)
        print("\n".join(bad) if bad else f"{len(quotes())} quoted numbers agree with {CACHE.name}")
        return 1 if bad else 0
    wanted = {q.claim_id for q in quotes()}
    if args.source:
        checks = json.loads(Path(args.source).read_text())["checks"]
        cache.update({c["id"]: {k: c.get(k) for k in ("status", "measured", "details", "seconds")}
                      for c in checks if c["id"] in wanted})
    elif args.run:
        from numerics.common.verification import all_claims

        default = {c.id for c in all_claims() if c.default}
        cache.update(run_claims(i for i in wanted if (args.all or i in default) and (not args.only or i in args.only)))
    CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True, default=_default) + "\n")
    print(f"{rewrite(cache)} quoted numbers changed; cache {CACHE.relative_to(ROOT)}")
    return 0


def _default(obj):
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


if __name__ == "__main__":
    raise SystemExit(main())
