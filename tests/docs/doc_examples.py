"""Extract and run the examples shown in the documentation, so that it cannot drift from the code.

Two block kinds are run (fenced code blocks in README.md, docs/**/*.md and proofs_notes/*.md):

- ```` ```pycon ````: a doctest (``>>> `` / ``... `` prompts, expected output below);
- ```` ```console ````: command lines starting with ``$ `` (a trailing ``\\`` continues a command), each followed by
  its expected output (stdout and stderr together, as a terminal shows them).

Blocks of one file run in order in one temporary working directory (and, for pycon, one namespace), so a block
may use a file or a name made by an earlier one. Comments on the lines just before a block change how it runs:

- ``<!-- tolerance: X -->``: relative tolerance X for the numbers of that block (default 1e-6);
- ``<!-- rounding: Y -->``: numbers of that block both at most Y in magnitude match (default ``ABS_FLOOR``): for
  rounding-level measurements amplified by a method, e.g. a central difference with step 1e-5 whose error of
  ~1e-10 moves with the CPU's vector instructions (NumPy's AVX-512 and AVX2 ``exp`` round differently);
- ``<!-- skip-test: reason -->``: not run (say why);
- ``<!-- slow-test: reason -->``: run only by the slow test (``pytest -m slow``).

Comparison (:func:`outputs_match`): outputs are split into tokens (numbers, words, punctuation; whitespace and the
width of ``----`` table rules do not matter, so a number that prints one digit longer does not break a table).
Numbers match within the relative tolerance, or when both are below ``ABS_FLOOR`` in magnitude (round-off level
values such as 2.2e-16, which differ between BLAS builds). ``...`` in the expected output matches any run of
tokens (doctest's ELLIPSIS), and a word cut by a table cell (``withou...``) matches any cut of it or the whole
word (the cut moves with the other columns' widths). Lines about timings (``seconds``, ``s/it``, ``it/s``, ``ETA``, ``elapsed``)
are left out on both sides, and a duration (a number followed by ``s`` or ``ms``, e.g. a
table cell ``5.6s``) is compared as a placeholder, whatever its value; in JSON lines, keys named ``seconds`` (or ending in
``_seconds``) are left out and the rest is compared value by value.
"""
from __future__ import annotations

import doctest
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RTOL = 1e-6
ABS_FLOOR = 1e-13
COMMAND_TIMEOUT = 600

_DIRECTIVE = re.compile(r"<!--\s*(tolerance|rounding|skip-test|slow-test)\s*:\s*(.*?)\s*-->")
_TOKEN = re.compile(r"-{2,}|\.\.\.|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[A-Za-z_][\w.]*|\S")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_TIMING = re.compile(r"(?i)\bseconds?\b|\bs/it\b|\bit/s\b|\beta\b|\belapsed\b")
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*(?:ms|s)\b")


@dataclass
class Block:
    """One runnable example: where it is, its kind, its text and the directives before it."""

    path: Path
    line: int  # 1-based line of the opening fence
    kind: str  # "pycon" or "console"
    text: str
    rtol: float = DEFAULT_RTOL
    floor: float = ABS_FLOOR
    skip: str | None = None
    slow: str | None = None

    @property
    def where(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"


@dataclass
class Mismatch:
    where: str
    what: str
    expected: str
    got: str

    def __str__(self) -> str:
        return (f"{self.where}: {self.what}\n--- expected\n{self.expected.rstrip()}\n--- got\n{self.got.rstrip()}\n")


@dataclass
class FileRun:
    mismatches: list[Mismatch] = field(default_factory=list)
    ran: int = 0
    skipped: int = 0


def documentation_files() -> list[Path]:
    """README.md, docs/**/*.md (not the build or generated pages) and proofs_notes/*.md."""
    docs = [p for p in sorted((ROOT / "docs").rglob("*.md"))
            if not any(part in ("_build", "_generated", "auto_examples") for part in p.relative_to(ROOT).parts)]
    return [ROOT / "README.md", *docs, *sorted((ROOT / "proofs_notes").glob("*.md"))]


def extract_blocks(path: Path, text: str | None = None) -> list[Block]:
    """The pycon and console blocks of one Markdown file, with their directives."""
    lines = (path.read_text() if text is None else text).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
            info = stripped[len(fence):].strip().split()
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence):
                end += 1
            if info and info[0] in ("pycon", "console"):
                block = Block(path, i + 1, info[0], "\n".join(lines[i + 1:end]) + "\n")
                j = i - 1
                while j >= 0 and lines[j].strip().startswith("<!--"):
                    for key, value in _DIRECTIVE.findall(lines[j]):
                        if key == "tolerance":
                            block.rtol = float(value.split()[0])
                        elif key == "rounding":
                            block.floor = float(value.split()[0])
                        elif key == "skip-test":
                            block.skip = value or "no reason given"
                        else:
                            block.slow = value or "no reason given"
                    j -= 1
                blocks.append(block)
            i = end + 1
        else:
            i += 1
    return blocks


# ---------------------------------------------------------------- comparison

def _is_timing(line: str) -> bool:
    return bool(_TIMING.search(line))


def _drop_timing_keys(obj):
    if isinstance(obj, dict):
        return {k: _drop_timing_keys(v) for k, v in obj.items()
                if not (k in ("seconds", "timings") or k.endswith("_seconds"))}
    if isinstance(obj, list):
        return [_drop_timing_keys(v) for v in obj]
    return obj


def _numbers_close(a: float, b: float, rtol: float, floor: float = ABS_FLOOR) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if max(abs(a), abs(b)) <= floor:
        return True
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def _json_match(want, got, rtol: float, floor: float = ABS_FLOOR) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return _numbers_close(float(want), float(got), rtol, floor)
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_json_match(want[k], got[k], rtol, floor) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_json_match(w, g, rtol, floor) for w, g in zip(want, got))
    return want == got


def _as_json(line: str):
    s = line.strip()
    if not (s.startswith("{") or s.startswith("[")):
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


def _tokens(lines: list[str]) -> list[str]:
    # a duration such as "5.6s" or "184.4 ms" (a table cell) becomes one placeholder token on both sides
    return [t for line in lines for t in _TOKEN.findall(_DURATION.sub(" <duration> ", line))]


def _token_match(want: list[str], got: list[str], rtol: float, floor: float = ABS_FLOOR) -> bool:
    """Match token lists; ``...`` in ``want`` matches any run of tokens (iterative, with backtracking)."""
    memo: dict[tuple[int, int], bool] = {}

    def same(w: str, g: str) -> bool:
        if w == g:
            return True
        if len(w) > 3 and w.endswith("..."):
            # a table cell cut to fit the terminal ("points withou..."): where it is cut depends on the widths
            # of the other columns (a time of 17.8s takes one character more than 1.8s), so a cut word matches
            # any cut of the same word, or the whole word
            stem = w[:-3]
            if g.endswith("..."):
                return stem.startswith(g[:-3]) or g[:-3].startswith(stem)
            return g.startswith(stem)
        if _NUMBER.match(w) and _NUMBER.match(g):
            return _numbers_close(float(w), float(g), rtol, floor)
        return set(w) == {"-"} and set(g) == {"-"}  # table rules of any width

    def match(i: int, j: int) -> bool:
        while i < len(want) and want[i] != "...":
            if j >= len(got) or not same(want[i], got[j]):
                return False
            i, j = i + 1, j + 1
        if i == len(want):
            return j == len(got)
        key = (i, j)
        if key not in memo:
            memo[key] = any(match(i + 1, k) for k in range(j, len(got) + 1))
        return memo[key]

    return match(0, 0)


def outputs_match(want: str, got: str, rtol: float = DEFAULT_RTOL, floor: float = ABS_FLOOR) -> bool:
    """Whether output ``got`` matches the documented ``want`` (see the module docstring for the rules)."""
    want_lines = [ln for ln in want.splitlines() if ln.strip()]
    got_lines = [ln for ln in got.splitlines() if ln.strip()]
    # JSON lines: compared structurally (without timing keys); every other line by tokens.
    want_json = [(k, _as_json(ln)) for k, ln in enumerate(want_lines)]
    got_json = [(k, _as_json(ln)) for k, ln in enumerate(got_lines)]
    wj = [_drop_timing_keys(o) for _, o in want_json if o is not None]
    gj = [_drop_timing_keys(o) for _, o in got_json if o is not None]
    if len(wj) != len(gj):
        # an excerpt of a JSON line (with ...) is not JSON: compare the JSON output as text, by tokens
        wt = [ln for ln in want_lines if not _is_timing(ln)]
        gt = [json.dumps(_drop_timing_keys(o)) if o is not None else ln for (_, o), ln in zip(got_json, got_lines)
              if o is not None or not _is_timing(ln)]
        return _token_match(_tokens(wt), _tokens(gt), rtol, floor)
    if not all(_json_match(w, g, rtol, floor) for w, g in zip(wj, gj)):
        return False
    wt = [ln for (_, o), ln in zip(want_json, want_lines) if o is None and not _is_timing(ln)]
    gt = [ln for (_, o), ln in zip(got_json, got_lines) if o is None and not _is_timing(ln)]
    return _token_match(_tokens(wt), _tokens(gt), rtol, floor)


# ---------------------------------------------------------------- running

def parse_console(text: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    pairs: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            pairs.append((command, []))
        elif pairs:
            pairs[-1][1].append(line)
        i += 1
    return [(c, "\n".join(out)) for c, out in pairs]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "100"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_console(block: Block, workdir: Path) -> list[Mismatch]:
    out = []
    for command, want in parse_console(block.text):
        proc = subprocess.run(["bash", "-c", command], cwd=workdir, env=_environment(), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT)
        if not outputs_match(want, proc.stdout, block.rtol, block.floor):
            out.append(Mismatch(block.where, f"$ {command}  (rtol {block.rtol:g}, rounding {block.floor:g})", want,
                                proc.stdout))
    return out


class _Checker(doctest.OutputChecker):
    def __init__(self, rtol: float):
        self.rtol = rtol

    def check_output(self, want, got, optionflags):
        return super().check_output(want, got, optionflags) or outputs_match(want, got, self.rtol)


def run_pycon(block: Block, globs: dict) -> list[Mismatch]:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.text, globs, block.where, str(block.path), block.line)
    runner = doctest.DocTestRunner(checker=_Checker(block.rtol),
                                   optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures: list[Mismatch] = []

    def report_failure(out, test, example, got):
        failures.append(Mismatch(f"{block.where} (+{example.lineno})", f">>> {example.source.strip()}",
                                 example.want, got))

    def report_unexpected_exception(out, test, example, exc_info):
        failures.append(Mismatch(f"{block.where} (+{example.lineno})", f">>> {example.source.strip()}",
                                 example.want, f"{exc_info[0].__name__}: {exc_info[1]}"))

    runner.report_failure = report_failure
    runner.report_unexpected_exception = report_unexpected_exception
    runner.run(test, out=lambda s: None, clear_globs=False)
    globs.update(test.globs)  # DocTest copies its globals: carry the names to the next block
    return failures


def run_file(path: Path, workdir: Path, include_slow: bool = False, text: str | None = None) -> FileRun:
    """Run every block of one file in order in ``workdir``; the slow blocks only when ``include_slow``."""
    result = FileRun()
    globs: dict = {"__name__": "__doc_examples__"}
    old = Path.cwd()
    os.chdir(workdir)
    try:
        for block in extract_blocks(path, text):
            if block.skip or (block.slow and not include_slow):
                result.skipped += 1
                continue
            result.ran += 1
            if block.kind == "console":
                result.mismatches += run_console(block, workdir)
            else:
                result.mismatches += run_pycon(block, globs)
    finally:
        os.chdir(old)
    return result
