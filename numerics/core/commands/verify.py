"""``attnflow verify``: run the claim registry and print measured vs expected values."""
from __future__ import annotations

import os
import sys
import time

from numerics.common.errors import InputError
from numerics.common.heartbeat import Heartbeat
from numerics.common.render import emit, table, wrapped_table

NAME = "verify"
ORDER = 90
HELP = "run the registered claims from the literature and report measured vs expected"
#: exit codes: 0 no claim failed (inconclusive ones allowed, unless --strict), 1 a claim failed or, under
#: --strict, was inconclusive (the CLI's codes are 0, 1, 2: the last line and --json say which), 2 bad input,
#: 130 interrupted (Ctrl-C)
EXIT_INCONCLUSIVE = 1
#: reason given for an inconclusive result whose details name none (the data did not decide the claim)
UNDECIDED = "the data did not decide"


def add_arguments(p):
    p.add_argument("--only", help="comma-separated claim ids (or prefixes ending in '.', e.g. 'core.')")
    p.add_argument("--all", action="store_true", help="include slow claims that the default run leaves out")
    p.add_argument("--list", action="store_true",
                   help="list the claims without running them (all of them: slow ones are marked 'slow')")
    p.add_argument("--verbose", action="store_true",
                   help="wide table with titles and sources, and the details of every check")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--strict", action="store_true",
                   help=f"exit {EXIT_INCONCLUSIVE} when any claim is inconclusive (default: only failures exit "
                        "non-zero)")


def run(args) -> int:
    from numerics.common.verification import run_claim, select_claims

    only = [s.strip() for s in args.only.split(",") if s.strip()] if args.only is not None else None
    if only is not None and not only:  # "--only ," or "--only ''" named nothing: not the whole default run
        raise InputError(f"--only names no claim id, got {args.only!r} (see attnflow verify --list)")
    try:
        claims = select_claims(only, include_all=args.all or (args.list and not only))
    except KeyError as exc:
        raise InputError(f"unknown claim id {exc.args[0]!r} (see attnflow verify --list)") from None
    if args.list:
        payload = {"claims": [{"id": c.id, "title": c.title, "source": c.source, "note": c.note,
                               "default": c.default} for c in claims]}
        if args.verbose:
            text = table([(c.id, c.title, c.source, "default" if c.default else "slow") for c in claims],
                         ["id", "claim", "source", "run"], 200)
        else:
            text = wrapped_table([(c.id, "default" if c.default else "slow", c.title) for c in claims],
                                 ["id", "run", "claim"], wrap=2)
        slow = sum(not c.default for c in claims)
        text += (f"\n\n{len(claims)} claims, {slow} slow (left out of the default run; "
                 "run them with --all or --only ID)")
        emit(args, payload, text)
        return 0
    runs, cpu = [], []
    interrupted = False
    threads = claim_threads()
    started = time.perf_counter()
    try:
        for k, c in enumerate(claims, 1):
            # a line every 30 s of a long claim; BLAS at the chosen thread count (claim_threads)
            with Heartbeat("verify", f"{c.id} ({k}/{len(claims)})"), threads.limit():
                cpu_started = time.process_time()
                runs.append(run_claim(c))
                # CPU time too: on a loaded machine the wall-clock time says more about the load than the claim
                cpu.append(time.process_time() - cpu_started)
            # each result as it finishes (stderr: the table and --json stay on stdout)
            print(f"verify: [{k}/{len(claims)}] {c.id} {runs[-1].result.status.upper()} in {runs[-1].seconds:.1f}s "
                  f"(elapsed {time.perf_counter() - started:.0f}s)", file=sys.stderr, flush=True)
    except KeyboardInterrupt:  # Ctrl-C: report what finished, then exit 130
        interrupted = True
    checks = [{"id": r.claim.id, "title": r.claim.title, "source": r.claim.source, "status": r.result.status,
               "measured": r.result.measured, "expected": r.result.expected, "tolerance": r.result.tolerance,
               "seconds": round(r.seconds, 3), "cpu_seconds": round(t, 3), "note": r.claim.note,
               "details": r.result.details} for r, t in zip(runs, cpu)]
    summary = {s: sum(1 for c in checks if c["status"] == s) for s in ("passed", "failed", "inconclusive")}
    summary["certified"] = sum(1 for c in checks if c["status"] == "certified")
    if args.verbose:
        rows = [(c["id"], c["title"], c["source"], c["measured"], c["expected"], c["tolerance"],
                 c["status"].upper(), f"{c['seconds']:.1f}s") for c in checks]
        text = table(rows, ["id", "claim", "source", "measured", "expected", "tolerance", "status", "time"], 200)
        text += "".join(f"\n\n{c['id']}: {c['details']}" for c in checks)
    else:
        from numerics.common.render import TEXT_WIDTH

        fixed = [max([len(c["id"]) for c in checks] + [2]), max([len(c["status"]) for c in checks] + [6]),
                 max([len(f"{c['seconds']:.1f}s") for c in checks] + [4])]
        keys = ("measured", "expected", "tolerance")
        natural = [max([len(_short(c[k], 10**6)) for c in checks] + [len(k)]) for k in keys]
        room = _share(TEXT_WIDTH - sum(fixed) - 2 * 5, natural)  # the value columns share what is left
        rows = [(c["id"], c["status"].upper(), *(_short(c[k], w) for k, w in zip(keys, room)),
                 f"{c['seconds']:.1f}s") for c in checks]
        text = table(rows, ["id", "status", "measured", "expected", "tolerance", "time"], 60)
    text += (f"\n\n{summary['passed']} passed, {summary['failed']} failed, {summary['inconclusive']} inconclusive"
             + (f", {summary['certified']} certified" if summary["certified"] else "")
             + f" ({sum(r.seconds for r in runs):.1f}s)")
    failed = [c for c in checks if c["status"] == "failed"]
    for c in failed:
        text += "\n" + _cut_line(f"FAILED {c['id']}: {c['details']}")
    if not args.verbose:
        text += "\n(titles, sources and details: --verbose or --json)"
    payload = {"checks": checks, "summary": summary,
               "threads": {"blas_threads": threads.threads, "reason": threads.reason}}
    if interrupted:
        text += (f"\ninterrupted (Ctrl-C) after {len(runs)} of {len(claims)} claims: the results above are the "
                 f"finished ones\n" + _cut_line(f"not run: {', '.join(c.id for c in claims[len(runs):])}"))
        payload["interrupted"] = {"finished": len(runs), "selected": len(claims),
                                  "not_run": [c.id for c in claims[len(runs):]]}
    groups = inconclusive_reasons(checks)
    payload["inconclusive"] = {"count": summary["inconclusive"], "strict": bool(args.strict),
                               "reasons": [{"reason": r, "count": len(ids), "claims": ids} for r, ids in groups]}
    # the last line of every run: what was not checked, and why (a skipped area must not read as a pass)
    text += "\n" + inconclusive_line(summary["inconclusive"], groups, strict=args.strict)
    emit(args, payload, text)
    if interrupted:
        return 130
    if summary["failed"]:
        return 1
    return EXIT_INCONCLUSIVE if args.strict and summary["inconclusive"] else 0


def inconclusive_reasons(checks: list[dict]) -> list[tuple[str, list[str]]]:
    """Group the inconclusive checks by reason, most frequent first.

    Parameters
    ----------
    checks : list of dict
        The ``checks`` entries of the verify payload (``id``, ``status``, ``details``).

    Returns
    -------
    list of (str, list of str)
        (reason, claim ids). The reason is the text of ``details["reason"]`` up to its first colon (the rest is
        an install hint, the same for a whole area), or :data:`UNDECIDED` when the details give none.
    """
    groups: dict[str, list[str]] = {}
    for c in checks:
        if c["status"] != "inconclusive":
            continue
        details = c.get("details")
        reason = details.get("reason") if isinstance(details, dict) else None
        key = str(reason).split(":")[0].strip() if reason else UNDECIDED
        groups.setdefault(key or UNDECIDED, []).append(c["id"])
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def inconclusive_line(count: int, groups: list[tuple[str, list[str]]], *, strict: bool) -> str:
    """One line: how many claims were inconclusive and why (grouped), and whether that fails the run."""
    if not count:
        return "inconclusive: none"
    why = "; ".join(f"{len(ids)} {reason}" for reason, ids in groups)
    tail = f", not checked (--strict: exit {EXIT_INCONCLUSIVE})" if strict else ", not checked (--strict fails on them)"
    # not cut to the 100 columns of the table: the reasons are the point of this line
    return f"inconclusive: {count} ({why})" + tail


def claim_threads():
    """The BLAS thread count the claims run with: one, unless the user chose (``ATTNFLOW_BLAS_THREADS``, or a
    library's own variable such as ``OPENBLAS_NUM_THREADS``, as :func:`numerics.core.threads.blas_threads_for`).

    Returns
    -------
    numerics.core.threads.ThreadChoice
        The count (``None``: left as the libraries are) and why.

    Notes
    -----
    The claims solve small problems (matrices of a few hundred rows at most), one after another. Split over
    threads, such a GEMM, SVD or eigensolver waits at every barrier, and OpenBLAS's waiting threads spin: on a
    busy 2-core machine ``trained.head-blowup-time`` (24 SVDs and eigensolves of 384 x 384 matrices) used
    28.6 s of CPU time with the default two threads and 2.8 s with one.
    """
    import dataclasses

    from numerics.core.threads import OVERRIDE, blas_threads_for

    choice = blas_threads_for(0.0)   # no work estimate: the library variables and the override decide, else 1
    if choice.threads == 1 and OVERRIDE not in os.environ:
        choice = dataclasses.replace(choice, reason="claims are small problems: one BLAS thread (set "
                                                    f"{OVERRIDE} to change)")
    return choice


def _short(value, width: int) -> str:
    """A measured/expected/tolerance cell in at most ``width`` characters (full values: --json, --verbose)."""
    from numerics.common.render import fmt

    text = fmt(value, 4) if not isinstance(value, str) else value
    return text if len(text) <= width else text[: width - 3] + "..."


def _cut_line(text: str) -> str:
    from numerics.common.render import TEXT_WIDTH

    text = " ".join(str(text).split())
    return text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 3] + "..."


def _share(total: int, natural: list[int], minimum: int = 9) -> list[int]:
    """Widths for columns that want ``natural`` characters within ``total``: narrow columns keep their width,
    the others share the rest equally (water filling)."""
    widths = [0] * len(natural)
    left, todo = total, sorted(range(len(natural)), key=lambda j: natural[j])
    while todo:
        fair = max(minimum, left // len(todo))
        j = todo.pop(0)
        widths[j] = min(natural[j], fair)
        left -= widths[j]
    return widths
