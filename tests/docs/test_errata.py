"""The errata page: every `## Disagreement with the source` entry of a note parses, names a registered claim whose
note it sits in, and gives a command the CLI accepts; the checks fail on planted faults."""
import importlib.util
import shlex
from pathlib import Path

import pytest

from numerics.common.errata import ErrataFormatError, collect, parse_note, problems
from numerics.common.verification import all_claims

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT / "proofs_notes"

GOOD = """# x
## Disagreement with the source
### A title
- **Source:** a paper
- **Published:** something
- **attnflow:** something else,
  on two lines
- **Claim:** `clusters.two-cluster-merge-time`
- **Reproduce:** `attnflow verify --only clusters.two-cluster-merge-time --json`

## Next section
"""


def _registry() -> dict:
    return {c.id: c.note for c in all_claims()}


def _generate():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "tools" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_erratum_is_tied_to_its_registered_claim():
    errata = collect(NOTES)
    assert problems(errata, _registry()) == []
    ids = {e.claim_id for e in errata}
    # the known disagreements (issue 28) are all on the page
    assert {"clusters.two-cluster-merge-time", "noise.threshold-particles", "conjecture.equiangular-ode",
            "survey.mean-shift", "meanfield.metastable-count", "circle.energy-order-parameters"} <= ids


def test_every_reproduce_command_parses():
    from numerics.cli import build_parser

    parser = build_parser()
    for e in collect(NOTES):
        words = shlex.split(e.command)
        if words[0] == "attnflow":
            parser.parse_args(words[1:])  # SystemExit (a failed test) on an unknown command or option
        else:
            assert (ROOT / words[1]).is_file(), e


def test_parse_reads_fields_and_continuations():
    (e,) = parse_note(GOOD, "good.md")
    assert e.title == "A title" and e.attnflow == "something else, on two lines"
    assert e.claim_id == "clusters.two-cluster-merge-time" and e.command.startswith("attnflow verify")
    assert parse_note("# no section\n", "x.md") == []


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace("- **Published:** something\n", ""), "missing field"),
    (GOOD.replace("**Claim:** `clusters.two-cluster-merge-time`", "**Claim:** clusters.two-cluster-merge-time"),
     "code span"),
    (GOOD.replace("### A title\n", ""), "before the first"),
    (GOOD.replace("**Source:**", "**Origin:**"), "unknown field"),
])
def test_malformed_entries_are_rejected(broken, message):
    with pytest.raises(ErrataFormatError, match=message):
        parse_note(broken, "bad.md")


def test_an_erratum_without_a_registered_claim_fails():
    (e,) = parse_note(GOOD.replace("clusters.two-cluster-merge-time", "clusters.no-such-claim"), "x.md")
    assert any("not registered" in p for p in problems([e], _registry()))


def test_an_erratum_outside_its_claims_note_fails():
    (e,) = parse_note(GOOD, "circle-fourier-field.md")
    assert any("has its note in" in p for p in problems([e], _registry()))


def test_a_verify_command_must_name_the_claim():
    (e,) = parse_note(GOOD.replace("--only clusters.two-cluster-merge-time", "--only core.codegen"),
                      "clusters-two-cluster-merge-time.md")
    assert any("does not name the claim" in p for p in problems([e], _registry()))


def test_errata_page_lists_every_erratum():
    page = _generate().errata_page()
    errata = collect(NOTES)
    for k, e in enumerate(errata, 1):
        assert f"## {k}. {e.title}" in page and f"`{e.command}`" in page
