"""Write the generated pages of the documentation site (called by ``docs/conf.py`` on every build).

Everything here is derived from the code, so that the site cannot drift from it:

- :func:`claims_page` from the claim registry, with the last recorded measurements;
- :func:`errata_page` from the ``Disagreement with the source`` sections of the notes (``numerics.common.errata``);
- :func:`cli_page` from the argparse parsers of ``numerics.cli.build_parser``;
- :func:`api_pages` from ``attnflow._EXPORTS`` (the public names, grouped by module) and the ``theory`` modules;
- :func:`note_stubs`, one page per ``proofs_notes/*.md`` including the note where it lives.
"""
from __future__ import annotations

import argparse
import json
import pkgutil
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
ROOT = DOCS.parent
NOTES = ROOT / "proofs_notes"
MEASURED = DOCS / "claims_measured.json"


def _write(path: Path, text: str) -> None:
    """Write ``text`` only when it changed (keeps Sphinx's incremental builds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _cell(value, width: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(str(text).split())
    if len(text) > width:
        text = text[:width - 3] + "..."
    return text.replace("|", "\\|").replace("`", "'")


#: width of the value cells of the claims table: the status and the numbers come first and stay narrow, so they
#: are on screen without scrolling (the statement and the source follow, wrapped)
VALUE_CELL = 40


def claims_page() -> str:
    """The claim registry as a MyST page: id, statement, source, note, default/slow and the last measured value."""
    from numerics.common.verification import all_claims

    measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {"results": {}}
    results = measured.get("results", {})
    lines = [
        "# Claim registry",
        "",
        "Generated from the registry (`numerics.common.verification.all_claims`) at every build. "
        "`attnflow verify` runs the default claims, `attnflow verify --all` adds the slow ones, "
        "`attnflow verify --only ID --json` prints one claim's full details.",
        "",
        f"The last recorded values come from `{MEASURED.relative_to(ROOT)}`, written by "
        "`python docs/tools/measure_claims.py` "
        f"({measured.get('command', 'no recorded run')}; {measured.get('date', 'date unknown')}). "
        "A claim without a recorded value was not part of that run (the slow claims unless `--all`).",
        "",
        "| id | status | measured | expected | tolerance | run | statement | source | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in sorted(all_claims(), key=lambda c: c.id):
        r = results.get(c.id)
        note = NOTES / c.note
        note_link = f"[{c.note}](notes/{note.stem}.md)" if note.exists() else _cell(c.note)
        if r:
            cols = [f"`{c.id}`", _cell(r.get("status", "")).upper()] + [_cell(r.get(k, ""), VALUE_CELL)
                                                                          for k in ("measured", "expected", "tolerance")]
        else:
            cols = [f"`{c.id}`", "not recorded", "", "", ""]
        cols += ["default" if c.default else "slow", _cell(c.title), _cell(c.source), note_link]
        lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


def errata_page() -> str:
    """Every place where attnflow disagrees with a published statement: one entry per ``Disagreement with the
    source`` entry of a note (``numerics.common.errata``), with the claim that shows it and the command."""
    from numerics.common.errata import collect

    errata = collect(NOTES)
    lines = [
        "# Errata",
        "",
        "Where attnflow's computation disagrees with a published statement: a constant or a sign that does not "
        "reproduce, a statement that holds only to leading order or only in a range the source does not state. "
        "Generated at every build from the `## Disagreement with the source` sections of the proof notes "
        "(format: [verification guide](../guide/verification.md)); each entry names the claim that shows it and "
        "the command that reproduces it. Disagreements with the authors' public code (not with their published "
        "statements) are on the [Other codes](../other_codes.md) page.",
        "",
        "| # | disagreement | source | claim |",
        "|---|---|---|---|",
    ]
    for k, e in enumerate(errata, 1):
        lines.append(f"| {k} | {{ref}}`{_cell(e.title)} <erratum-{k}>` | {_cell(e.source)} | `{e.claim_id}` |")
    for k, e in enumerate(errata, 1):
        stem = Path(e.note).stem
        lines += ["", f"(erratum-{k})=", f"## {k}. {e.title}", "",
                  f"- **Source:** {e.source}", f"- **Published:** {e.published}", f"- **attnflow:** {e.attnflow}",
                  f"- **Claim:** `{e.claim_id}` (note: [{e.note}](notes/{stem}.md))",
                  f"- **Reproduce:** `{e.command}`"]
    return "\n".join(lines) + "\n"


def _help(parser: argparse.ArgumentParser) -> str:
    old = parser.formatter_class
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
    try:
        return parser.format_help()
    finally:
        parser.formatter_class = old


def cli_page() -> str:
    """Every ``attnflow`` subcommand's help text, from ``numerics.cli.build_parser``."""
    from numerics.cli import build_parser

    parser = build_parser()
    lines = ["# Command-line reference", "",
             "Generated from the argparse parsers (`numerics.cli.build_parser`) at every build. "
             "`python -m numerics ...` is the same as `attnflow ...`. Every command prints a table by default and "
             "one JSON object with `--json`; bad input prints one `error: ...` line and exits 2.", "",
             "```text", _help(parser).rstrip(), "```", ""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in sorted(sub.choices):
        lines += [f"## attnflow {name}", "", "```text", _help(sub.choices[name]).rstrip(), "```", ""]
    return "\n".join(lines)


def _theory_modules() -> list[str]:
    import theory

    return sorted(f"theory.{m.name}" for m in pkgutil.iter_modules(theory.__path__) if not m.name.startswith("_"))


def summary(module: str) -> str:
    """The first sentence of a module's docstring, on one line, made safe as reStructuredText text (the API
    index lists each module with it; a bare list of about 100 module names did not say what any of them holds)."""
    import importlib
    import inspect

    doc = inspect.getdoc(importlib.import_module(module)) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    parts = re.split(r"(``.*?``|:\w+:`[^`]*`)", text)  # literals and roles stay as written
    out = []
    for k, part in enumerate(parts):
        if k % 2:
            out.append(part)
            continue
        cut = re.search(r"(?<=[a-z0-9)\]'])\.(\s|$)", part)
        part = part[:cut.start() + 1] if cut else part
        part = part.replace("`", "")
        # markup that would open an unclosed emphasis, a substitution or a reference in a one-line summary
        part = re.sub(r"([*|])", r"\\\1", part)
        out.append(re.sub(r"(\w)_(?=\W|$)", r"\1\\_", part))
        if cut:
            break
    return "".join(out).strip() or "(no docstring)"


def api_pages() -> dict[str, str]:
    """One reStructuredText page per module: the public ``attnflow`` names it provides, or a ``theory`` module."""
    import inspect
    import importlib

    import attnflow

    pages: dict[str, str] = {}
    index = ["API reference", "=============", "",
             "``import attnflow as af`` gives every public name below (re-exported lazily from the module that "
             "defines it, listed in ``attnflow._EXPORTS``); ``af.theory`` is the symbolic layer. Generated from the "
             "docstrings at every build.", "",
             ".. toctree::", "   :maxdepth: 1", "   :hidden:", "   :caption: attnflow (numerical layer)", ""]
    listing = ["attnflow (numerical layer)", "--------------------------", ""]
    for module in sorted(attnflow._EXPORTS):
        names = sorted(attnflow._EXPORTS[module], key=str.lower)
        mod = importlib.import_module(module)
        body = [module, "=" * len(module), "", f".. currentmodule:: {module}", "",
                f".. automodule:: {module}", "   :no-members:", "",
                "Public names (also ``attnflow.<name>``): " + ", ".join(f":obj:`{n}`" for n in names) + ".", ""]
        for n in names:
            obj = getattr(mod, n)
            if inspect.isclass(obj):
                body += [f".. autoclass:: {n}", ""]
            elif callable(obj):
                body += [f".. autofunction:: {n}", ""]
            else:
                body += [f".. autodata:: {n}", "   :annotation:", ""]
        pages[module] = "\n".join(body)
        index.append(f"   {module}")
        listing.append(f"- :doc:`{module}` -- {summary(module)}")
    index += ["", ".. toctree::", "   :maxdepth: 1", "   :hidden:", "   :caption: theory (symbolic layer)", ""]
    listing += ["", "theory (symbolic layer)", "-----------------------", ""]
    for module in _theory_modules():
        pages[module] = "\n".join([module, "=" * len(module), "", f".. automodule:: {module}",
                                   "   :members:", "   :no-undoc-members:", ""])
        index.append(f"   {module}")
        listing.append(f"- :doc:`{module}` -- {summary(module)}")
    pages["index"] = "\n".join(index + [""] + listing) + "\n"
    return pages


def note_stubs() -> dict[str, str]:
    """One page per note, including ``proofs_notes/<name>.md`` (the notes stay where they are)."""
    stubs = {}
    names = sorted(p.stem for p in NOTES.glob("*.md"))
    for name in names:
        stubs[name] = f"```{{include}} ../../../proofs_notes/{name}.md\n```\n"
    areas: dict[str, list[str]] = {}
    for name in names:
        areas.setdefault(name.split("-")[0], []).append(name)
    index = ["# Proof notes", "",
             "One note per claim or derivation (statement, source, derivation steps, the exact check, the measured "
             "numbers, how the check was shown to fail). They live in `proofs_notes/` in the repository and are "
             "rendered here.", ""]
    for area, members in sorted(areas.items()):
        index += [f"## {area}", "", "```{toctree}", ":maxdepth: 1", ""] + members + ["```", ""]
    stubs["index"] = "\n".join(index)
    return stubs


def write_all(out: Path) -> None:
    """Write every generated page under ``out`` (``docs/_generated``)."""
    _write(out / "claims.md", claims_page())
    _write(out / "errata.md", errata_page())
    _write(out / "cli.md", cli_page())
    pages = {out / "api" / f"{name}.rst": text for name, text in api_pages().items()}
    pages.update({out / "notes" / f"{name}.md": text for name, text in note_stubs().items()})
    for path, text in pages.items():
        _write(path, text)
    # pages of modules or notes that no longer exist (a module moved): stale, and autodoc fails on them
    for folder, suffix in (("api", ".rst"), ("notes", ".md")):
        for path in (out / folder).glob(f"*{suffix}"):
            if path not in pages:
                path.unlink()
