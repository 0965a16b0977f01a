"""Bounding a test's work by CPU time, never by wall-clock time.

A test that asserts "decided within N seconds" of wall-clock time fails on a busy machine (two pytest workers on
two shared cores stretch a 1.5 s command to a minute) although the code did nothing wrong. What such a test means
is "no long work": that is a bound on the CPU time this process spends, which load does not stretch. So

- the work is bounded by ``ITIMER_PROF`` (this process's user + system CPU time, all its threads): past the
  budget the call is interrupted and the test fails, and the CPU time used is asserted below the budget after a
  normal return as well (a handler inside the code under test could swallow the interruption);
- a call that blocks (a FIFO without writer, a lock) uses no CPU time, so a wall-clock alarm of
  :data:`HANG_SECONDS` stays as a hang guard only: generous enough that no load reaches it.

Budgets are wide (several times what an idle machine needs, at least twice for two BLAS threads): the tests ask
whether a request was refused before long work, which takes minutes or hours when it goes wrong.
"""
from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

#: wall-clock seconds after which a call counts as blocked (a hang guard, not a speed requirement)
HANG_SECONDS = 600


class _OverBudget(BaseException):
    """Raised by the timer handlers; a BaseException so that the code under test's ``except Exception`` cannot
    turn it into an ordinary error exit."""


def _raise_over_budget(signum, frame):  # noqa: ARG001
    raise _OverBudget(signum)


@contextmanager
def cpu_budget(seconds: float, what: object = "the call") -> Iterator[None]:
    """Fail the test if the block uses more than ``seconds`` of this process's CPU time or blocks for
    :data:`HANG_SECONDS` of wall-clock time.

    Parameters
    ----------
    seconds : float
        CPU-time budget (user + system, every thread of the process).
    what : object
        What the block runs, for the failure message (an argument list, a kernel string).

    Yields
    ------
    None
        The block runs with both timers armed; they are disarmed and the previous handlers restored on exit.
    """
    previous_prof = signal.signal(signal.SIGPROF, _raise_over_budget)
    previous_alarm = signal.signal(signal.SIGALRM, _raise_over_budget)
    started = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    except _OverBudget as exc:
        cause = "used more than %g s of CPU time" % seconds if exc.args[0] == signal.SIGPROF else \
            f"blocked for {HANG_SECONDS} s of wall-clock time"
        pytest.fail(f"{what} {cause}")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        signal.signal(signal.SIGPROF, previous_prof)
        signal.signal(signal.SIGALRM, previous_alarm)
    used = time.process_time() - started
    assert used < seconds, f"{what} used {used:.1f} s of CPU time (budget {seconds} s)"
