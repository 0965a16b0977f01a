"""Every time the README and the guides state ("takes about 33 s", "~1 s", "(about 11 s)") is measured.

A stated time is a promise to a reader planning their hour; it goes stale silently when a default or a claim
changes. :data:`TIMINGS` lists each one with how to measure it: a command line, a registered claim (its
``cpu_seconds`` from ``attnflow verify --json``) or the console block that a ``slow-test`` comment times. The
measurement is **CPU time** (user + system of the child processes, ``resource.RUSAGE_CHILDREN``), which load does
not stretch (:mod:`tests.cpu_budget`), and it must lie within a factor :data:`FACTOR` of the stated time (for
"< N s", below ``FACTOR * N``). Times that are not a command's cost on this machine (the install's downloads, a
benchmark recorded with its own machine state, a part of a command) are listed in :data:`NOT_MEASURED` with the
reason. ``test_every_stated_time_is_listed`` (default suite, instant) fails on a stated time in neither list, so a
new one must be given its measurement; the measurements run with ``pytest -m slow``.
"""
from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.doc_examples import _environment, extract_blocks, parse_console

ROOT = Path(__file__).resolve().parents[2]
#: a measured CPU time must lie within this factor of the stated time (either way)
FACTOR = 3.0
#: how a stated time is written: "about 33 s", "~1.5 s", "< 0.5 s", "about 1 minute"
STATED = re.compile(r"(about|~|<)\s?(\d+(?:\.\d+)?)\s?(s|seconds|minutes?|min)\b")
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "guide").glob("*.md"))]


@dataclass(frozen=True)
class Timing:
    """A stated time: the page, the exact phrase that states it, and what to run (``how`` and ``target``)."""

    page: str
    phrase: str
    how: str       # "command" (target: argv), "claims" (target: claim ids, CPU summed), "block" (target: None)
    target: tuple = ()

    @property
    def seconds(self) -> float:
        m = STATED.search(self.phrase)
        value = float(m.group(2))
        return value * 60 if m.group(3).startswith("min") else value

    @property
    def upper_only(self) -> bool:
        return STATED.search(self.phrase).group(1) == "<"


def _certified(phrase_tail: str, *ids: str) -> Timing:
    return Timing("docs/guide/certified.md", phrase_tail, "claims", tuple(f"certified.{i}" for i in ids))


TIMINGS: list[Timing] = [
    Timing("README.md", "`attnflow verify` about 65 s of CPU time", "command", ("verify",)),
    Timing("docs/guide/meanfield.md", "`metastable` with n = 1e5 takes about 7 s of CPU time per seed", "command",
           ("metastable", "--model", "sa", "--n", "100000", "--beta", "8.22", "--seeds", "1")),
    Timing("docs/guide/circle.md", "circle.sphere-vs-angle (`--all`, ~5 s of CPU)", "claims", ("circle.sphere-vs-angle",)),
    Timing("docs/guide/circle.md", "circle.anisotropic-log-n (`--all`, ~40 s)", "claims", ("circle.anisotropic-log-n",)),
    # the certified claims' table (one row each; the phrase is the end of the row)
    _certified("root: bracket by doubling, uniqueness, Newton | ~0.2 s |", "noise-threshold"),
    _certified("| value enclosures | <0.1 s |", "critical-noise"),
    _certified("(252 numbers) | value enclosures | ~0.5 s |", "growth-rates"),
    _certified("| roots | ~1 s |", "switch-points"),
    _certified("[-4, 2]$ | sign maps | ~0.3 s |", "circle-three-clusters"),
    _certified("$(0, 20]$ | sign maps | ~0.6 s |", "circle-polygons"),
    _certified("there | sign maps | ~0.5 s |", "strict-saddles"),
    _certified("| exact rationals; 60 roots | ~0.6 s |", "longcontext-critical-gamma"),
    _certified("| exact rationals, Sturm counts | ~0.6 s |", "longcontext-critical-limit"),
    _certified("| SymPy identity, enclosures | ~0.3 s |", "longcontext-poisson-constant"),
    _certified("Schauder-Tychonoff | ~1.6 s |", "noise-first-order"),
    _certified("| Krawczyk on the extended system | ~1.3 s |", "noise-fold"),
    _certified("| root + sign pieces | ~0.6 s |", "landau-quartic"),
    # slow-test comments: the time of the console block that follows each
    Timing("docs/guide/clusters.md", "refined merge brackets (about 3 s of CPU time)", "block"),
    Timing("docs/guide/core.md", "runs the eleven core claims, the slow ones too (about 17 s of CPU time)", "block"),
    Timing("docs/guide/critical.md", "runs four claims (about 11 s)", "block"),
    Timing("docs/guide/decoder.md", "reads the 1 GB model in a new process (about 15 s)", "block"),
    Timing("docs/guide/meanfield.md", "5000 particles, two seeds (about 2 s of CPU time", "block"),
    Timing("docs/guide/noise.md", "eleven betas, two modes (about 10 s)", "block"),
    Timing("docs/guide/rd.md", "three stiff integrations (about 1 s of CPU time", "block"),
]

#: stated times that are not the CPU cost of a command on this machine: (page, phrase) -> why not measured
NOT_MEASURED: dict[tuple[str, str], str] = {
    ("docs/guide/gpu.md", "would take about 2.5 s of kernel time"): "an estimate on paper (pair evaluations over a "
                                                                      "rate), not a run on this machine",
    ("README.md", "the install about 3.5 minutes"): "pip's downloads: network time, not this package's work",
    ("README.md", "about 1 minute of wall time on a free"): "the wall time of the run whose CPU time is measured",
    ("README.md", "about 6 minutes while other jobs"): "the wall time of the same run on a busy machine",
    ("README.md", "`pytest -n 2` about 5 minutes"): "the whole test suite: a test cannot run the suite it is in",
    ("docs/guide/circle.md", "(about 5 s at n = 16384"): "an extrapolation (by n^2) inside a recorded benchmark",
    ("docs/guide/core.md", "compile (about 4 s after install"): "a part of a command (Numba's first compile), "
                                                                 "measured by tests/numerics/test_numba_cache*",
    ("docs/guide/core.md", "on-disk cache in about 0.5 s"): "a part of a command (loading Numba's cache)",
    ("docs/guide/core.md", "(target < 1 s, met: yes"): "a benchmark's printed target, compared by the page's "
                                                       "example test",
    ("docs/guide/ensembles.md", "ensemble takes about 330 s a round"): "a benchmark recorded with its machine "
                                                                        "state (load average given)",
    ("docs/guide/ensembles.md", "the NumPy path, about 0.1 s each"): "a part of a recorded benchmark",
    ("docs/guide/harmonic.md", "(about 0.13 s per transform"): "a part of a recorded benchmark (one transform)",
    ("docs/guide/meanfield.md", "target: < 60 s)"): "the goal the 33 s beside it was held to (that one is "
                                                     "measured)",
    ("docs/guide/meanfield.md", "t = 50, < 10 s)"): "a benchmark target, printed by benchmarks/bench_meanfield.py",
    ("docs/guide/sweeps.md", "estimated at about 26 min"): "an estimate of a run that was not made (the reason "
                                                           "it was not)",
    ("docs/guide/sweeps.md", "(about 300 s for $10^5$)"): "ten times a recorded benchmark's time (the work is "
                                                          "linear in the cells)",
}


def _flat(text: str) -> str:
    """The page as one line (a stated time may be broken across two lines of the source)."""
    return re.sub(r"\s*\n\s*", " ", text)


def unlisted_times(timings, not_measured: dict, root: Path = ROOT, pages=None) -> list[str]:
    """Every stated time on ``pages`` (under ``root``) that no phrase of ``timings`` or ``not_measured`` covers
    (a phrase covers the stated times inside it; the page is read as one line, so a time broken across two source
    lines is still found)."""
    listed = [(t.page, t.phrase) for t in timings] + list(not_measured)
    out = []
    for page in PAGES if pages is None else pages:
        flat = _flat((root / page).read_text())
        spans = [(m.start(), m.start() + len(phrase)) for p, phrase in listed if p == page
                 for m in re.finditer(re.escape(phrase), flat)]
        for m in STATED.finditer(flat):
            if not any(a <= m.start() and m.end() <= b for a, b in spans):
                out.append(f"{page}: ...{flat[max(0, m.start() - 60):m.end() + 20]}...")
    return out


def test_every_stated_time_is_listed():
    """Each stated time on the pages is measured (TIMINGS) or says why not (NOT_MEASURED), and each listed phrase
    is still on its page (a changed number or a removed sentence fails here, not silently)."""
    for page, phrase in [(t.page, t.phrase) for t in TIMINGS] + list(NOT_MEASURED):
        assert phrase in _flat((ROOT / page).read_text()), f"{page} no longer says {phrase!r}"
    missing = unlisted_times(TIMINGS, NOT_MEASURED)
    assert not missing, "stated times without a measurement or a reason:\n" + "\n".join(missing)


def test_the_listing_check_can_fail(tmp_path):
    """A new stated time fails the listing check, one listed phrase covers only the times inside it, and a time
    broken across two lines is still found."""
    (tmp_path / "page.md").write_text("`attnflow phase` takes about 12 s.\nboth about 2 s and ~3 s, then about\n"
                                      "4 s.\n")
    timings = [Timing("page.md", "both about 2 s", "command", ("phase",))]
    missing = unlisted_times(timings, {}, tmp_path, ["page.md"])
    assert len(missing) == 3 and "takes about 12 s" in missing[0] and "~3 s" in missing[1] \
        and "then about 4 s" in missing[2]
    assert unlisted_times(timings, {("page.md", "takes about 12 s"): "r", ("page.md", "~3 s"): "r",
                                    ("page.md", "about 4 s"): "r"}, tmp_path, ["page.md"]) == []
    assert Timing("p", "about 1 minute of CPU", "command").seconds == 60.0
    assert Timing("p", "| <0.5 s |", "claims").upper_only


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], cwd: Path) -> tuple[float, str]:
    """Run one shell command or argv in ``cwd``; return (its CPU seconds, its stdout)."""
    before = _children_cpu()
    proc = subprocess.run(args, cwd=cwd, env=_environment(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, timeout=3600)
    return _children_cpu() - before, proc.stdout


def measure(t: Timing, workdir: Path) -> float:
    """The CPU seconds of what ``t`` states the time of."""
    attnflow = [sys.executable, "-m", "numerics"]
    if t.how == "command":
        return _run(attnflow + list(t.target), workdir)[0]
    if t.how == "claims":
        _, out = _run(attnflow + ["verify", "--only", ",".join(t.target), "--json"], workdir)
        checks = json.loads(out)["checks"]
        assert sorted(c["id"] for c in checks) == sorted(t.target), out[:500]
        return sum(c["cpu_seconds"] for c in checks)
    blocks = [b for b in extract_blocks(ROOT / t.page) if b.slow and t.phrase in b.slow]
    assert len(blocks) == 1, f"{t.page}: no single slow block for {t.phrase!r}"
    if blocks[0].kind == "pycon":  # the session's source lines as one script (its outputs are not needed)
        code = "\n".join(line[4:] for line in blocks[0].text.splitlines() if line.startswith((">>> ", "... ")))
        return _run([sys.executable, "-c", code], workdir)[0]
    return sum(_run(["bash", "-c", command], workdir)[0] for command, _ in parse_console(blocks[0].text))


@pytest.mark.slow
@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: f"{Path(t.page).stem}:{t.phrase[:40]}")
def test_stated_time_matches_the_measured_cpu_time(timing, tmp_path):
    if "decoder.md" in timing.page:
        from numerics.decoder.gguf_reader import packaged_available

        if not packaged_available():
            pytest.skip("the packaged decoder weights are not installed")
    used = measure(timing, tmp_path)
    stated = timing.seconds
    if timing.upper_only:
        assert used <= FACTOR * stated, f"{timing.page}: {timing.phrase!r} but {used:.2f} s of CPU"
    else:
        assert stated / FACTOR <= used <= FACTOR * stated, f"{timing.page}: {timing.phrase!r} but {used:.2f} s of CPU"
