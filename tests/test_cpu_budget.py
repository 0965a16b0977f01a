"""tests/cpu_budget.py: the budget counts CPU time, not wall-clock time, and interrupts work past it."""
import time

import pytest

from tests.cpu_budget import cpu_budget


def test_waiting_uses_no_budget():
    with cpu_budget(0.2, "a sleep"):
        time.sleep(0.5)  # wall-clock time longer than the budget: not counted


def test_work_past_the_budget_is_interrupted_and_fails():
    started = time.process_time()
    with pytest.raises(pytest.fail.Exception, match="used more than 0.2 s of CPU time"):
        with cpu_budget(0.2, "a busy loop"):
            while True:
                pass
    assert time.process_time() - started < 5  # interrupted, not run to some other limit


def test_an_interruption_swallowed_by_the_code_under_test_still_fails():
    def swallowing():
        try:
            while True:
                pass
        except Exception:  # what a CLI's catch-all does; the budget's exception is not an Exception
            return 2

    with pytest.raises(pytest.fail.Exception):
        with cpu_budget(0.2, "a busy loop"):
            swallowing()
