"""``attnflow certify CLAIM``: run one certificate and print its enclosures, their widths and the method;
``attnflow certify THRESHOLD --d D [--beta B | --l L]``: certify one threshold at the user's own parameters
(:mod:`numerics.certified.thresholds`)."""
from __future__ import annotations

import time

from numerics.common.errors import InputError
from numerics.common.render import emit, table

NAME = "certify"
ORDER = 91
HELP = ("run one certified claim, or certify a threshold (beta-star, critical-noise, switch-point) at your own "
        "d and beta (ball arithmetic): enclosures, widths and the method")


def add_arguments(p):
    from numerics.certified.thresholds import MAX_BETA, MAX_D, THRESHOLDS

    names = ", ".join(f"{t.name} ({t.symbol}: {t.statement})" for t in THRESHOLDS.values())
    p.add_argument("claim", metavar="CLAIM|THRESHOLD",
                   help="a certified claim id, e.g. certified.noise-threshold (the 'certified.' prefix may be "
                        "left out; see attnflow verify --list --only certified.), or a threshold to certify at "
                        f"--d (and --beta or --l): {names}. Examples: attnflow certify beta-star --d 7; "
                        "attnflow certify critical-noise --d 4 --beta 3/2; attnflow certify switch-point --d 3 --l 2")
    p.add_argument("--d", type=int, default=None,
                   help=f"THRESHOLD only: the dimension of the ambient space, an integer in [2, {MAX_D}]")
    p.add_argument("--beta", default=None,
                   help=f"critical-noise only: the inverse temperature, an exact rational in (0, {MAX_BETA}] "
                        "such as 2, 0.25 or 3/2 (read exactly: no float enters the certificate)")
    p.add_argument("--l", type=int, default=None,
                   help="switch-point only: the degree l of the switch lambda_{l+1} = lambda_l (default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _resolve(name: str):
    from numerics.certified.thresholds import THRESHOLDS
    from numerics.common.verification import all_claims

    name = name.strip()
    certified = {c.id: c for c in all_claims() if c.id.startswith("certified.")}
    for key in (name, "certified." + name):
        if key in certified:
            return certified[key]
    known = ", ".join(sorted(certified))
    raise InputError(f"unknown certified claim {name!r} (known: {known}; thresholds with --d: "
                     f"{', '.join(THRESHOLDS)})")


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


def _threshold_rows(entry: dict) -> list[tuple]:
    """The one certificate of a threshold, one fact a row (what was proved, then how it was checked)."""
    if "refused" in entry:
        return [("refused", entry["refused"])]
    rows = [("enclosure", entry["enclosure"]), ("midpoint", entry["midpoint"]), ("width", entry["width"])]
    if "unique in" in entry:
        signs, slope = entry["signs at the bracket ends"], entry["f' on the bracket"]
        rows += [("unique in", f"{entry['unique in']} (signs {signs[0]:+d}/{signs[1]:+d} at its ends; "
                               f"f' on it {slope})"),
                 ("steps", f"{entry['bisections']} bisections, {entry['newton steps']} Newton steps")]
    rows.append(("mpmath (50 digits)", f"{entry['mpmath (50 digits)']} "
                                       f"({'inside' if entry['contains reference'] else 'OUTSIDE'} the enclosure)"))
    return rows


def _run_threshold(args) -> int:
    from numerics.certified.thresholds import THRESHOLDS, certify_threshold, label, resolve
    from numerics.cli import whole_run, whole_run_text

    t, params = resolve(args.claim, args.d, args.beta, args.l)  # bad input fails here, before any work
    t0 = time.perf_counter()
    res = certify_threshold(t.name, args.d, args.beta, args.l)
    seconds = time.perf_counter() - t0
    key = label(t, params)
    entry = res.details.get("certificates", {}).get(key, {})
    payload = {"threshold": t.name, "symbol": t.symbol, "statement": t.statement, "d": params["d"],
               "beta": str(params["beta"]) if "beta" in params else None, "l": params.get("l"),
               "certificate": key, "enclosure": entry.get("enclosure"), "midpoint": entry.get("midpoint"),
               "width": entry.get("width"), "reference": entry.get("mpmath (50 digits)"),
               "contains_reference": entry.get("contains reference"), "status": res.status,
               "method": res.details.get("method"), "problems": res.details.get("problems", []),
               "seconds": round(seconds, 3), "details": entry}
    payload.update(whole_run())
    text = f"{key}: {THRESHOLDS[t.name].statement}\n\n"
    text += table(_threshold_rows(entry), ["", "certified"], 400)
    text += f"\n\nmethod: {res.details.get('method', '-')}"
    for problem in payload["problems"]:
        text += f"\nproblem: {problem}"
    text += f"\n\n{res.status.upper()} (check {seconds:.1f} s; {whole_run_text(payload)})"
    emit(args, payload, text)
    return 0 if res.status == "certified" else 1


def run(args) -> int:
    from numerics.certified.thresholds import THRESHOLDS
    from numerics.common.verification import run_claim

    if args.claim.strip() in THRESHOLDS:
        return _run_threshold(args)
    given = [f"--{k}" for k in ("d", "beta", "l") if getattr(args, k) is not None]
    if given:
        try:
            _resolve(args.claim)
        except InputError:  # neither a claim nor a threshold: name the thresholds, which is what --d asks for
            raise InputError(f"unknown threshold {args.claim.strip()!r} (known: {', '.join(THRESHOLDS)})") from None
        verb = "applies" if len(given) == 1 else "apply"
        raise InputError(f"{' and '.join(given)} {verb} to a threshold ({', '.join(THRESHOLDS)}), not to the "
                         f"claim {args.claim.strip()!r}")
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
