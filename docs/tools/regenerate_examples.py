"""Regenerate the expected output of the ``console`` examples of Markdown pages from what the code prints now.

    python docs/tools/regenerate_examples.py docs/guide/core.md [more pages ...]

Each console block of a page runs in one temporary folder per page, in order (as the test runner
``tests/docs/doc_examples.py`` runs them), and its expected output is replaced by the real one. Blocks marked
``skip-test`` are left alone. Read the diff before committing: a changed number must be explained by a change in
the code, never accepted blindly. ``pycon`` blocks are not rewritten (their mismatches are listed).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.docs.doc_examples import (COMMAND_TIMEOUT, _environment, extract_blocks,  # noqa: E402
                                     outputs_match, parse_console, run_pycon)


def regenerate(path: Path) -> int:
    lines = path.read_text().splitlines()
    changed = 0
    globs: dict = {"__name__": "__doc_examples__"}
    replacements = []
    with tempfile.TemporaryDirectory() as work:
        for block in extract_blocks(path):
            if block.skip:
                continue
            if block.kind == "pycon":
                for mismatch in run_pycon(block, globs):
                    print(f"pycon mismatch (fix by hand): {mismatch}", file=sys.stderr)
                continue
            new, stale = [], False
            for command, want in parse_console(block.text):
                proc = subprocess.run(["bash", "-c", command], cwd=work, env=_environment(),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, timeout=COMMAND_TIMEOUT)
                stale |= not outputs_match(want, proc.stdout, block.rtol, block.floor)  # timings alone never count
                new += [f"$ {command}", *proc.stdout.rstrip("\n").splitlines()]
            if stale:
                replacements.append((block.line, block.line + len(block.text.splitlines()), new))
    for start, end, new in reversed(replacements):  # from the bottom: earlier line numbers stay valid
        lines[start:end] = new
        changed += 1
    if changed:
        path.write_text("\n".join(lines) + "\n")
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}: {regenerate(Path(name))} block(s) regenerated")
