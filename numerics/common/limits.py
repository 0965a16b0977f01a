"""Resource limits: estimate the memory and the work of a request before starting it.

A request whose estimate exceeds a limit is refused at once with the estimate in the message, instead of
ending, after a long allocation, in ``MemoryError`` or running until killed. The limits are deliberately
generous for this machine class and can be raised:

- memory: :data:`DEFAULT_MEMORY_GB` GiB, or ``ATTNFLOW_MAX_MEMORY_GB`` (CLI: ``attnflow --max-memory GB ...``);
- work: :data:`DEFAULT_WORK_HOURS` hours at :data:`FLOP_RATE` floating-point operations per second, or
  ``ATTNFLOW_MAX_WORK_HOURS`` (CLI: ``attnflow --max-hours H ...``).

Estimates are orders of magnitude (the dominant arrays and the dominant O(n^2) or O(n K) sums, plus a fixed
overhead per Python-level step where that dominates), not promises.
"""
from __future__ import annotations

import math
import os

from numerics.common.errors import InputError

DEFAULT_MEMORY_GB = 16.0
DEFAULT_WORK_HOURS = 24.0
#: the rate used to turn an operation count into hours (about one core's sustained float64 throughput)
FLOP_RATE = 5e9
FLOAT = 8


def _env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{name} must be a number, got {raw!r}") from None
    if not value > 0 or not math.isfinite(value):
        raise InputError(f"{name} must be positive and finite, got {raw!r}")
    return value


def memory_limit() -> float:
    """The memory limit in bytes."""
    return _env("ATTNFLOW_MAX_MEMORY_GB", DEFAULT_MEMORY_GB) * 2**30


def work_limit() -> float:
    """The work limit in floating-point operations."""
    return _env("ATTNFLOW_MAX_WORK_HOURS", DEFAULT_WORK_HOURS) * 3600 * FLOP_RATE


def _bytes(x: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if x < 1024 or unit == "PiB":
            return f"{x:.3g} {unit}"
        x /= 1024
    return f"{x:.3g} PiB"  # pragma: no cover


def _hours(flops: float) -> str:
    seconds = flops / FLOP_RATE
    return f"{seconds / 3600:.3g} hours" if seconds >= 3600 else f"{seconds:.3g} s"


def check_memory(nbytes: float, what: str) -> None:
    """Refuse ``what`` if it needs more than :func:`memory_limit` bytes."""
    limit = memory_limit()
    if not nbytes <= limit:  # also refuses nan and inf
        raise InputError(f"{what} needs about {_bytes(nbytes)} of memory, more than the limit of {_bytes(limit)} "
                         f"(raise it with attnflow --max-memory GB or ATTNFLOW_MAX_MEMORY_GB)")


def check_work(flops: float, what: str) -> None:
    """Refuse ``what`` if its operation count would take longer than :func:`work_limit` allows."""
    limit = work_limit()
    if not flops <= limit:
        raise InputError(f"{what} would take about {_hours(flops)} (about {flops:.3g} operations), more than the "
                         f"limit of {_hours(limit)} (raise it with attnflow --max-hours H or "
                         f"ATTNFLOW_MAX_WORK_HOURS)")


#: operations charged per call of a Python-level kernel on top of its arithmetic (about 20 us at FLOP_RATE)
CALL_OVERHEAD = 1e5


def evaluation_budget(per_eval: float) -> float:
    """How many evaluations of ``per_eval`` operations (plus :data:`CALL_OVERHEAD`) the work limit allows: the
    bound of runs whose length is not known in advance (adaptive steps), enforced while they run."""
    return work_limit() / (max(float(per_eval), 0.0) + CALL_OVERHEAD)


def budget_exhausted(what: str, evaluations: float) -> InputError:
    """The error of a run that used up :func:`evaluation_budget`."""
    return InputError(f"{what} stopped after {evaluations:.3g} field evaluations: that is the work limit of "
                      f"{_hours(work_limit())} (raise it with attnflow --max-hours H or ATTNFLOW_MAX_WORK_HOURS, "
                      f"or loosen rtol / shorten t_end)")


def check_array(shape, what: str, copies: float = 1.0) -> None:
    """Refuse allocating ``copies`` float64 arrays of ``shape``."""
    size = 1.0
    for s in shape:
        size *= float(s)
    check_memory(copies * size * FLOAT, what)


#: a quotient (t_end - t0) / dt within this of a whole number counts as that number (1.0 / 0.1 = 10.000000000000002)
STEP_ROUNDING = 1e-12


def steps_of(t_end: float, dt: float, t0: float = 0.0) -> float:
    """The number N = max(1, ceil((t_end - t0) / dt - STEP_ROUNDING)) of equal fixed steps h = (t_end - t0) / N
    <= dt from t0 to t_end: the rule of every fixed-step integrator (the core's, the SDE schemes, the S^2
    Fokker-Planck solver) and of the estimates made before them. A float (not rounded) when astronomically large."""
    q = (t_end - t0) / dt
    return max(1, math.ceil(q - STEP_ROUNDING)) if q < 1e18 else q
