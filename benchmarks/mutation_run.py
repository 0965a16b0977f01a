"""Mutation run: can `attnflow verify` and pytest fail on planted mathematical errors?

For each mutant of benchmarks/mutants.py, one at a time: export the commit ``--rev`` (default HEAD, resolved
when the mutant starts; recorded per mutant) to a scratch directory (the checkout is never modified), apply
the mutant, then

- run the default claims of ``attnflow verify`` in the scratch copy, stopping at the first ``failed`` claim
  (a mutant is *killed by verify* when at least one default claim fails; ``inconclusive`` does not count);
- run the mutated area's tests (``mutants.tests_for``: tests/numerics and tests/theory of the area) with ``pytest -x -m 'not slow'``
  (*killed by pytest* when pytest exits non-zero).

Usage::

    python benchmarks/mutation_run.py --out mutation.json            # every mutant (about 1 h on a loaded core)
    python benchmarks/mutation_run.py --only gauss-se-double field-transpose-A --out part.json
    python benchmarks/mutation_run.py --merge base.json part.json --out mutation.json   # later entries win
    python benchmarks/mutation_run.py --areas                         # per-area scores of the recorded results

The scores (killed / total for each runner) and the survivors are printed and written as JSON; the results
are reported in proofs_notes/verification-power.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutants import MUTANTS, tests_for  # noqa: E402

_VERIFY = r"""
import inspect, re, sys
from numerics.common.verification import select_claims, run_claim
prefix, stem = sys.argv[1], sys.argv[2]
claims = select_claims()
word = re.compile(r"\b" + re.escape(stem) + r"\b")
texts = {}
def mentions(c):
    path = inspect.getsourcefile(c.check)
    if path not in texts:
        texts[path] = bool(word.search(open(path).read()))
    return texts[path]
# the order only decides how soon a kill is found, never whether: the claims of the area first, then those whose
# module names the mutated module, then the rest
claims.sort(key=lambda c: (not c.id.startswith(prefix), not mentions(c), c.id))
for c in claims:
    r = run_claim(c).result
    if r.status == "failed":
        print("KILLED-BY", c.id, r.measured, (r.details or {}).get("error", ""))
        sys.exit(1)
print("SURVIVED")
"""

def _copy_tree(dest: Path, rev: str) -> str:
    """Export commit ``rev`` of the checkout into ``dest`` (never the working tree: half-edited files would
    kill mutants spuriously); returns the full commit hash."""
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def apply(tree: Path, mutant) -> None:
    """Apply one mutant in ``tree`` (ValueError unless ``old`` occurs exactly once)."""
    mid, path, old, new, _ = mutant
    text = (tree / path).read_text()
    if text.count(old) != 1:
        raise ValueError(f"mutant {mid}: pattern found {text.count(old)} times in {path}")
    (tree / path).write_text(text.replace(old, new))


def _run(cmd, cwd, timeout):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        out = (p.stdout + p.stderr).strip().splitlines()
        return p.returncode, out[-3:] if out else [], time.perf_counter() - start
    except subprocess.TimeoutExpired:
        return "timeout", [], time.perf_counter() - start


def run_mutant(mutant, timeout: float, rev: str = "HEAD") -> dict:
    from mutants import _FILE_AREA
    mid, path, *_ = mutant
    with tempfile.TemporaryDirectory(prefix=f"mut-{mid}-") as tmp:
        tree = Path(tmp)
        commit = _copy_tree(tree, rev)
        apply(tree, mutant)
        area = _FILE_AREA[path]
        # the claims of the mutated file's area (prefix "<area>.") run first, then those whose module names the
        # mutated module; the run stops at the first failure
        code, vout, vsec = _run([sys.executable, "-c", _VERIFY, area + ".", Path(path).stem], tree, timeout)
        pcode, pout, psec = _run([sys.executable, "-m", "pytest", "-x", "-q", "-m", "not slow", "-p",
                                  "no:cacheprovider", *tests_for(path)], tree, timeout)
    return {"id": mid, "file": path, "what": mutant[4], "commit": commit,
            "verify_killed": code != 0, "verify_output": vout, "verify_seconds": round(vsec, 1),
            "pytest_killed": pcode != 0, "pytest_output": pout, "pytest_seconds": round(psec, 1)}


def scores(results: list[dict]) -> dict:
    """Kills and survivors per runner; a verify kill marked stale (:func:`mark_stale`) counts for neither."""
    n = len(results)
    counts = [_counts(r) for r in results]
    return {"mutants": n,
            "verify_killed": sum(v for v, _, _ in counts),
            "pytest_killed": sum(p for _, p, _ in counts),
            "verify_score": sum(v for v, _, _ in counts) / n if n else None,
            "pytest_score": sum(p for _, p, _ in counts) / n if n else None,
            "verify_survivors": [r["id"] for r, (v, _, s) in zip(results, counts) if not (v or s)],
            "pytest_survivors": [r["id"] for r in results if not r["pytest_killed"]],
            "verify_stale": [r["id"] for r, (_, _, s) in zip(results, counts) if s]}


def area_of(result: dict) -> str:
    """The area of a result: that of its mutated file (``mutants._FILE_AREA``), the key of its pytest subset."""
    from mutants import _FILE_AREA
    return _FILE_AREA[result["file"]]


def killed_by(result: dict) -> str:
    """The default claim that failed on the mutant ('' for a survivor or a kill by the timeout)."""
    return next((line.split()[1] for line in result["verify_output"] if line.startswith("KILLED-BY")), "")


#: claims that lost cases to a claim outside the default run, with the commit that moved them: a kill by such a
#: claim recorded on a commit before that one may have come from a case that is gone (the several-head kernel's
#: cases moved to core.ensemble-members-heads, --all, in issue 44)
STALE_BEFORE = {"core.ensemble-members": "c864f60"}


def verify_stale(result: dict, default_ids: set[str]) -> str | None:
    """Why a recorded verify kill is no evidence about the current default run, or None if it still is.

    Parameters
    ----------
    result : dict
        One result of :func:`run_mutant`.
    default_ids : set of str
        The ids of the current default claims.

    Returns
    -------
    str or None
        A one-line reason when the killing claim has left the default run, or when it is listed in
        :data:`STALE_BEFORE` and the result's commit does not contain the change that moved its cases out.
    """
    by = killed_by(result) if result["verify_killed"] else ""
    if not by:
        return None
    if by not in default_ids:
        return f"killed by {by}, no longer a default claim (--all)"
    since = STALE_BEFORE.get(by)
    if since and subprocess.run(["git", "merge-base", "--is-ancestor", since, result["commit"]], cwd=ROOT,
                                capture_output=True).returncode != 0:
        return f"killed by {by} before {since} moved cases out of it"
    return None


def mark_stale(results: list[dict]) -> None:
    """Set each result's ``verify_stale`` (:func:`verify_stale` against the current registry's default claims)."""
    if str(ROOT) not in sys.path:  # the checkout's registry, not an installed copy's
        sys.path.insert(0, str(ROOT))
    from numerics.common.verification import all_claims

    default_ids = {c.id for c in all_claims() if c.default}
    for r in results:
        r["verify_stale"] = verify_stale(r, default_ids)


def _counts(r: dict) -> tuple[bool, bool, bool]:
    """(verify kill that still counts, pytest kill, verify verdict stale) of one result."""
    stale = bool(r.get("verify_stale"))
    return r["verify_killed"] and not stale, r["pytest_killed"], stale


def area_table(results: list[dict]) -> str:
    """Markdown table of the scores per area: mutants run, killed by verify, by pytest, by either, the survivors
    of both runners (their ids) and the stale verify verdicts; a last row sums the areas.

    A verify kill marked stale (``verify_stale``, set by :func:`mark_stale` when results are merged) counts
    neither as a kill nor as a survival: the mutant needs a rerun.

    Parameters
    ----------
    results : list of dict
        Results as written by :func:`run_mutant` (``benchmarks/mutation_results.json``'s ``"results"``).

    Returns
    -------
    str
        The table, one line per area in alphabetical order, generated so that no score is typed by hand
        (proofs_notes/verification-power.md quotes it; tests/test_mutation_table.py compares the two).
    """
    by_area: dict[str, list[dict]] = {}
    for r in results:
        by_area.setdefault(area_of(r), []).append(r)
    lines = ["| area | mutants | killed by verify | killed by pytest | killed by either | survivors of both "
             "| verify verdict stale |", "|---|---|---|---|---|---|---|"]

    def row(name: str, rs: list[dict], ids: bool) -> str:
        c = [_counts(r) for r in rs]
        both = [r["id"] for r, (v, p, s) in zip(rs, c) if not (v or p or s)]
        stale = [r["id"] for r, (_, _, s) in zip(rs, c) if s]
        either = sum(v or p for v, p, _ in c)

        def cell(names: list[str]) -> str:
            return (", ".join(f"`{i}`" for i in names) or "none") if ids else str(len(names))

        return (f"| {name} | {len(rs)} | {sum(v for v, _, _ in c)} | {sum(p for _, p, _ in c)} | {either} | "
                f"{cell(both)} | {cell(stale)} |")

    lines += [row(a, by_area[a], True) for a in sorted(by_area)]
    lines.append(row("**all**", results, False))
    return "\n".join(lines)


def survivor_list(results: list[dict]) -> str:
    """Markdown list of the mutants that survive a runner (``id`` (area): which) or whose verify kill is stale."""
    out = []
    for r in results:
        v, p, s = _counts(r)
        if s:
            out.append(f"- `{r['id']}` ({area_of(r)}): verify verdict stale")
        elif not (v and p):
            which = " and ".join(k for k, killed in (("verify", v), ("pytest", p)) if not killed)
            out.append(f"- `{r['id']}` ({area_of(r)}): survives {which}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="mutant ids (default: all)")
    ap.add_argument("--out", default="mutation.json")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per runner and mutant")
    ap.add_argument("--merge", nargs="*", help="merge result files (later files win) instead of running")
    ap.add_argument("--rev", default="HEAD", help="commit to mutate (read when each mutant starts)")
    ap.add_argument("--check", action="store_true", help="only check that every mutant applies")
    ap.add_argument("--table", action="store_true", help="print a Markdown table of the results")
    ap.add_argument("--areas", nargs="?", const=str(ROOT / "benchmarks" / "mutation_results.json"),
                    metavar="RESULTS", help="print the per-area scores and the survivors of a results file "
                    "(default benchmarks/mutation_results.json) and exit")
    args = ap.parse_args(argv)
    if args.areas:
        results = json.loads(Path(args.areas).read_text())["results"]
        print(area_table(results) + "\n\n" + survivor_list(results))
        return 0
    if args.check:
        for m in MUTANTS:
            apply_check = (ROOT / m[1]).read_text().count(m[2])
            if apply_check != 1:
                print(f"{m[0]}: pattern found {apply_check} times in {m[1]}")
                return 1
        print(f"{len(MUTANTS)} mutants apply")
        return 0
    if args.merge:
        by_id = {}
        for name in args.merge:
            for r in json.loads(Path(name).read_text())["results"]:
                by_id[r["id"]] = r
        order = [m[0] for m in MUTANTS]
        results = [by_id[i] for i in order if i in by_id]
        mark_stale(results)
    else:
        chosen = [m for m in MUTANTS if not args.only or m[0] in args.only]
        results = []
        for k, m in enumerate(chosen, 1):
            r = run_mutant(m, args.timeout, args.rev)
            results.append(r)
            print(f"[{k}/{len(chosen)}] {m[0]}: verify {'killed' if r['verify_killed'] else 'SURVIVED'} "
                  f"({r['verify_seconds']}s), pytest {'killed' if r['pytest_killed'] else 'SURVIVED'} "
                  f"({r['pytest_seconds']}s)", file=sys.stderr, flush=True)
            Path(args.out).write_text(json.dumps({"scores": scores(results), "results": results}, indent=1))
    summary = scores(results)
    Path(args.out).write_text(json.dumps({"scores": summary, "results": results}, indent=1))
    print(json.dumps(summary, indent=1))
    if args.table:
        print("| mutant | file | what | verify | killed by | pytest | commit |\n|---|---|---|---|---|---|---|")
        for r in results:
            by = next((line.split()[1] for line in r["verify_output"] if line.startswith("KILLED-BY")), "")
            print(f"| {r['id']} | {r['file']} | {r['what']} | {'killed' if r['verify_killed'] else 'SURVIVED'} | "
                  f"{by} | {'killed' if r['pytest_killed'] else 'SURVIVED'} | {r['commit'][:8]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
