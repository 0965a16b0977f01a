"""``attnflow certify CLAIM``: run one certificate and print its enclosures, their widths and the method."""
from __future__ import annotations

from numerics.common.errors import InputError
from numerics.common.render import emit, table

NAME = "certify"
ORDER = 91
HELP = "run one certified claim (ball arithmetic): enclosures, widths, sign maps and the method"


def add_arguments(p):
    p.add_argument("claim", metavar="CLAIM",
                   help="a certified claim id, e.g. certified.noise-threshold (the 'certified.' prefix may be "
                        "left out; see attnflow verify --list --only certified.)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _resolve(name: str):
    from numerics.common.verification import all_claims

    name = name.strip()
    certified = {c.id: c for c in all_claims() if c.id.startswith("certified.")}
    for key in (name, "certified." + name):
        if key in certified:
            return certified[key]
    known = ", ".join(sorted(certified))
    raise InputError(f"unknown certified claim {name!r} (known: {known})")


def _rows(certificates: dict) -> list[tuple]:
    """One row per certificate: the name, what was proved (enclosure or signs) and its size."""
    rows = []
    for name, entry in certificates.items():
        if "refused" in entry:
            rows.append((name, "REFUSED: " + entry["refused"], ""))
        elif "runs" in entry:
            runs = "; ".join(f"{r['sign']} on {r['interval']}"
                             + (f" (|f| >= {r['min_abs_bound']})" if r["min_abs_bound"] else "")
                             for r in entry["runs"])
            zeros = "; ".join(f"zero in {z['enclosure']} ({z['kind']}; signs {z['signs'][0]:+d}/{z['signs'][1]:+d} "
                              f"on {z['isolated_in']})" for z in entry["zeros"])
            rows.append((name, runs + ("; " + zeros if zeros else ""), f"{entry['pieces']} pieces"))
        elif "enclosure" in entry:
            rows.append((name, entry["enclosure"], f"width {entry['width']}"))
    return rows


def run(args) -> int:
    from numerics.common.verification import run_claim

    c = _resolve(args.claim)
    r = run_claim(c)
    res = r.result
    payload = {"id": c.id, "title": c.title, "source": c.source, "note": c.note, "status": res.status,
               "measured": res.measured, "expected": res.expected, "tolerance": res.tolerance,
               "seconds": round(r.seconds, 3), "details": res.details}
    from numerics.cli import whole_run, whole_run_text

    payload.update(whole_run())  # "seconds" is the check alone; these add start-up and imports
    text = f"{c.id}: {c.title}\n\n"
    text += table(_rows(res.details.get("certificates", {})), ["certificate", "proved", "size"], 400)
    text += f"\n\nmethod: {res.details.get('method', '-')}"
    for problem in res.details.get("problems", []):
        text += f"\nproblem: {problem}"
    if "error" in res.details:
        text += f"\nerror in the check: {res.details['error']}"
    text += f"\n\n{res.status.upper()} (check {r.seconds:.1f} s; {whole_run_text(payload)})"
    emit(args, payload, text)
    return 0 if res.status == "certified" else 1
