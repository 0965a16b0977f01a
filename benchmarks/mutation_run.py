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
import sys
from numerics.common.verification import select_claims, run_claim
first = sys.argv[1:]
claims = select_claims()
claims.sort(key=lambda c: (not any(c.id.startswith(p) for p in first), c.id))
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
        # the claims of the mutated file's area (prefix "<area>.") run first; the run stops at the first failure
        code, vout, vsec = _run([sys.executable, "-c", _VERIFY, area + "."], tree, timeout)
        pcode, pout, psec = _run([sys.executable, "-m", "pytest", "-x", "-q", "-m", "not slow", "-p",
                                  "no:cacheprovider", *tests_for(path)], tree, timeout)
    return {"id": mid, "file": path, "what": mutant[4], "commit": commit,
            "verify_killed": code != 0, "verify_output": vout, "verify_seconds": round(vsec, 1),
            "pytest_killed": pcode != 0, "pytest_output": pout, "pytest_seconds": round(psec, 1)}


def scores(results: list[dict]) -> dict:
    n = len(results)
    return {"mutants": n,
            "verify_killed": sum(r["verify_killed"] for r in results),
            "pytest_killed": sum(r["pytest_killed"] for r in results),
            "verify_score": sum(r["verify_killed"] for r in results) / n if n else None,
            "pytest_score": sum(r["pytest_killed"] for r in results) / n if n else None,
            "verify_survivors": [r["id"] for r in results if not r["verify_killed"]],
            "pytest_survivors": [r["id"] for r in results if not r["pytest_killed"]]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="mutant ids (default: all)")
    ap.add_argument("--out", default="mutation.json")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per runner and mutant")
    ap.add_argument("--merge", nargs="*", help="merge result files (later files win) instead of running")
    ap.add_argument("--rev", default="HEAD", help="commit to mutate (read when each mutant starts)")
    ap.add_argument("--check", action="store_true", help="only check that every mutant applies")
    ap.add_argument("--table", action="store_true", help="print a Markdown table of the results")
    args = ap.parse_args(argv)
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
