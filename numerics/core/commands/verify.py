"""``attnflow verify``: run the claim registry and print measured vs expected values."""
from __future__ import annotations

from numerics.common.errors import InputError
from numerics.common.provenance import StderrProgress
from numerics.common.render import emit, table

NAME = "verify"
ORDER = 90
HELP = "run the registered claims from the literature and report measured vs expected"


def add_arguments(p):
    p.add_argument("--only", help="comma-separated claim ids (or prefixes ending in '.', e.g. 'core.')")
    p.add_argument("--all", action="store_true", help="include slow claims that the default run leaves out")
    p.add_argument("--list", action="store_true", help="list the claims without running them")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    from numerics.common.verification import run_claim, select_claims

    only = [s.strip() for s in args.only.split(",") if s.strip()] if args.only else None
    try:
        claims = select_claims(only, include_all=args.all)
    except KeyError as exc:
        raise InputError(f"unknown claim id {exc.args[0]!r} (see attnflow verify --list)") from None
    if args.list:
        rows = [(c.id, c.title, c.source, "default" if c.default else "slow") for c in claims]
        payload = {"claims": [{"id": c.id, "title": c.title, "source": c.source, "note": c.note,
                               "default": c.default} for c in claims]}
        emit(args, payload, table(rows, ["id", "claim", "source", "run"]))
        return 0
    runs = []
    progress = StderrProgress("verify", unit="claims ", clock="construction")  # silent for the first 2 s
    for k, c in enumerate(claims, 1):
        runs.append(run_claim(c))
        progress(k, len(claims))
    checks = [{"id": r.claim.id, "title": r.claim.title, "source": r.claim.source, "status": r.result.status,
               "measured": r.result.measured, "expected": r.result.expected, "tolerance": r.result.tolerance,
               "seconds": round(r.seconds, 3), "note": r.claim.note, "details": r.result.details} for r in runs]
    summary = {s: sum(1 for c in checks if c["status"] == s) for s in ("passed", "failed", "inconclusive")}
    rows = [(c["id"], c["title"], c["source"], c["measured"], c["expected"], c["tolerance"], c["status"].upper(),
             f"{c['seconds']:.1f}s") for c in checks]
    text = table(rows, ["id", "claim", "source", "measured", "expected", "tolerance", "status", "time"], 48)
    text += (f"\n\n{summary['passed']} passed, {summary['failed']} failed, {summary['inconclusive']} inconclusive"
             f" ({sum(r.seconds for r in runs):.1f}s)")
    failed = [c for c in checks if c["status"] == "failed"]
    for c in failed:
        text += f"\nFAILED {c['id']}: {c['details']}"
    emit(args, {"checks": checks, "summary": summary}, text)
    return 1 if summary["failed"] else 0
