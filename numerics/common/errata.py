"""Errata: the places where attnflow's computation disagrees with a published statement, read from the notes.

Each erratum lives in the ``proofs_notes/`` note of the claim that shows it, in a section headed exactly
``## Disagreement with the source``. The section holds one or more entries, each a ``###`` heading (a one-line
title) followed by five bullet fields::

    ## Disagreement with the source
    ### The two-cluster merge time is leading order only
    - **Source:** GKPR arXiv 2410.06833, two-cluster merge time (Laplace asymptotics)
    - **Published:** $T \\approx e^{\\beta(1-\\cos\\theta_0)}/(2\\beta\\sin^2\\theta_0)$
    - **attnflow:** relative error $2\\cos\\theta_0/(\\beta\\sin^2\\theta_0)$: 35 % at $\\beta = 10$
    - **Claim:** `clusters.two-cluster-merge-time`
    - **Reproduce:** `attnflow verify --only clusters.two-cluster-merge-time --json`

A field may continue on the following lines (indented); unindented prose after the fields is not part of the
entry. ``docs/tools/generate.py`` turns every entry into the
errata page of the documentation site; ``tests/docs/test_errata.py`` fails when an entry is malformed, names a
claim that is not registered, sits in a note that is not that claim's note, or gives an ``attnflow`` command
that the CLI's parser rejects. Keeping the text in the notes (not in the registry) lets every workstream add an
erratum by editing only its own note.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SECTION = "## Disagreement with the source"
#: the bullet fields of an entry, in the order they are written
FIELDS = ("Source", "Published", "attnflow", "Claim", "Reproduce")
_FIELD = re.compile(r"^- \*\*(?P<key>[^*]+):\*\*\s*(?P<value>.*)$")
_CODE = re.compile(r"`([^`]+)`")


class ErrataFormatError(ValueError):
    """A ``Disagreement with the source`` section that does not follow the format (the message says where)."""


@dataclass(frozen=True)
class Erratum:
    """One disagreement: the note it lives in, its title, the five fields (``claim_id`` and ``command`` are the
    code spans of the ``Claim`` and ``Reproduce`` fields)."""

    note: str
    title: str
    source: str
    published: str
    attnflow: str
    claim_id: str
    command: str


def _section(text: str) -> list[str] | None:
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    except StopIteration:
        return None
    body = []
    for line in lines[start + 1:]:
        if line.startswith("## ") or line.startswith("# "):
            break
        body.append(line)
    return body


def _entry(note: str, title: str, lines: list[str]) -> Erratum:
    fields: dict[str, str] = {}
    key = None
    for line in lines:
        m = _FIELD.match(line.strip()) if not line.startswith("  ") else None
        if m:
            key = m["key"].strip()
            if key not in FIELDS:
                raise ErrataFormatError(f"{note}: erratum {title!r}: unknown field {key!r} (fields: {', '.join(FIELDS)})")
            if key in fields:
                raise ErrataFormatError(f"{note}: erratum {title!r}: field {key!r} given twice")
            fields[key] = m["value"].strip()
        elif line.strip():
            if key is None:
                raise ErrataFormatError(f"{note}: erratum {title!r}: text before the first field: {line.strip()!r}")
            if key and line[:1].isspace():
                fields[key] += " " + line.strip()
            else:
                key = ""  # prose after the fields (not indented): not part of the erratum
    missing = [k for k in FIELDS if not fields.get(k)]
    if missing:
        raise ErrataFormatError(f"{note}: erratum {title!r}: missing field(s) {', '.join(missing)}")
    codes = {k: _CODE.findall(fields[k]) for k in ("Claim", "Reproduce")}
    for k, found in codes.items():
        if len(found) != 1:
            raise ErrataFormatError(f"{note}: erratum {title!r}: the {k} field needs exactly one `code span`, "
                                    f"found {len(found)}")
    return Erratum(note, title, fields["Source"], fields["Published"], fields["attnflow"], codes["Claim"][0].strip(),
                   codes["Reproduce"][0].strip())


def parse_note(text: str, note: str) -> list[Erratum]:
    """The errata of one note (``note`` is its file name, for messages); [] if it has no such section."""
    body = _section(text)
    if body is None:
        return []
    entries: list[tuple[str, list[str]]] = []
    for line in body:
        if line.startswith("### "):
            entries.append((line[4:].strip(), []))
        elif entries:
            entries[-1][1].append(line)
        elif line.strip():
            raise ErrataFormatError(f"{note}: text before the first '### title' of the section: {line.strip()!r}")
    if not entries:
        raise ErrataFormatError(f"{note}: the section {SECTION!r} has no '### title' entry")
    return [_entry(note, title, lines) for title, lines in entries]


def collect(notes_dir: Path) -> list[Erratum]:
    """Every erratum of every note under ``notes_dir``, sorted by claim id then note."""
    out: list[Erratum] = []
    for path in sorted(Path(notes_dir).glob("*.md")):
        out += parse_note(path.read_text(), path.name)
    return sorted(out, key=lambda e: (e.claim_id, e.note, e.title))


def problems(errata: list[Erratum], claims: dict[str, str]) -> list[str]:
    """What is wrong with ``errata`` given the registry ``claims`` (id -> note file name): an unregistered claim,
    an erratum outside its claim's note, a reproduce command that is neither ``attnflow ...`` nor ``python ...``
    or that does not name the claim when it is an ``attnflow verify`` command."""
    out = []
    for e in errata:
        where = f"{e.note}: erratum {e.title!r}"
        if e.claim_id not in claims:
            out.append(f"{where}: claim {e.claim_id!r} is not registered")
        elif claims[e.claim_id] != e.note:
            out.append(f"{where}: claim {e.claim_id!r} has its note in {claims[e.claim_id]}, not here")
        words = e.command.split()
        if not words or words[0] not in ("attnflow", "python"):
            out.append(f"{where}: the reproduce command must start with 'attnflow' or 'python': {e.command!r}")
        elif words[:2] == ["attnflow", "verify"] and e.claim_id not in words:
            out.append(f"{where}: the verify command does not name the claim {e.claim_id!r}")
    return out
