"""The claim registry behind ``attnflow verify``.

Each claim from the literature that attnflow checks is registered once with :func:`claim`, with its source
(paper id and topic) and its note in ``proofs_notes/``. A check is a function of no arguments returning a
frozen :class:`CheckResult`; it never prints. Each area keeps its claims in ``numerics/<area>/claims.py``;
they are discovered automatically.
"""
from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from numerics.common.areas import area_modules

#: ``certified``: the statement was proved in rigorous ball arithmetic (numerics.certified; no float in the chain)
STATUSES = ("passed", "failed", "inconclusive", "certified")


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: measured value, expected value and the tolerance that separates them.

    ``status`` is ``passed``, ``failed`` or ``inconclusive`` (the data do not decide a conjecture-level claim), or
    ``certified`` (proved in ball arithmetic: ``details`` holds the enclosures and the method).
    ``measured``/``expected``/``tolerance`` are numbers or short strings; ``details`` holds everything else a
    reader needs to reproduce the check (parameters, seeds, per-case values).
    """

    claim_id: str
    status: str
    measured: Any
    expected: Any
    tolerance: Any
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


@dataclass(frozen=True)
class Claim:
    """A registered claim: id, one-line title, source, note path and the check function."""

    id: str
    title: str
    source: str
    note: str
    check: Callable[[], CheckResult]
    default: bool = True


_REGISTRY: dict[str, Claim] = {}


def claim(id: str, title: str, source: str, note: str, default: bool = True):
    """Decorator registering ``check`` under ``id``. ``note`` is a path relative to ``proofs_notes/``.

    ``default=False`` keeps a claim out of the default ``attnflow verify`` run (slow experiments); it still
    runs with ``--only`` or ``--all``.
    """

    def register(check: Callable[[], CheckResult]):
        if id in _REGISTRY and _REGISTRY[id].check.__qualname__ != check.__qualname__:
            raise ValueError(f"claim id registered twice: {id}")
        _REGISTRY[id] = Claim(id, title, source, note, check, default)
        return check

    return register


def _discover() -> None:
    for name in area_modules("claims"):
        importlib.import_module(name)


def all_claims() -> list[Claim]:
    """Every registered claim, sorted by id (claim modules are imported on first use)."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda c: c.id)


def select_claims(only: Iterable[str] | None = None, include_all: bool = False) -> list[Claim]:
    """The claims to run: ``only`` (ids or id prefixes ending in '.'), else the default set (or all)."""
    claims = all_claims()
    if not only:
        return [c for c in claims if include_all or c.default]
    chosen = []
    for key in only:
        match = [c for c in claims if c.id == key or (key.endswith(".") and c.id.startswith(key))]
        if not match:
            raise KeyError(key)
        chosen += [c for c in match if c not in chosen]
    return chosen


@dataclass(frozen=True)
class ClaimRun:
    claim: Claim
    result: CheckResult
    seconds: float


def run_claim(c: Claim) -> ClaimRun:
    """Run one check, timing it. An exception inside a check is a failed check, with the error in details."""
    start = time.perf_counter()
    try:
        result = c.check()
    except Exception as exc:  # a crashing check must be reported as a failure, not abort the report
        result = CheckResult(c.id, "failed", None, None, None, {"error": f"{type(exc).__name__}: {exc}"})
    return ClaimRun(c, result, time.perf_counter() - start)


# -- helpers for writing checks ------------------------------------------------------------------------------
def within(claim_id: str, measured: float, expected: float, tolerance: float, details: dict | None = None,
           relative: bool = False) -> CheckResult:
    """``passed`` when |measured - expected| <= tolerance (times |expected| if ``relative``)."""
    bound = tolerance * abs(expected) if relative else tolerance
    ok = math.isfinite(measured) and abs(measured - expected) <= bound
    return CheckResult(claim_id, "passed" if ok else "failed", float(measured), float(expected),
                       f"{'rel ' if relative else ''}{tolerance:.3g}", details or {})


def at_most(claim_id: str, measured: float, bound: float, details: dict | None = None,
            expected: Any = 0.0) -> CheckResult:
    """``passed`` when the measured error is finite and at most ``bound``."""
    ok = math.isfinite(measured) and measured <= bound
    return CheckResult(claim_id, "passed" if ok else "failed", float(measured), expected, f"<= {bound:.3g}",
                       details or {})
