"""Interleaved timing: the minimum over rounds of contenders alternating within each round."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def best_interleaved(fns: Sequence[Callable[[], object]], repeats: int,
                     clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Minimum wall time (seconds; ``clock=time.process_time`` for this process's CPU time) of each function
    over ``repeats`` rounds.

    The functions alternate within each round, so that a change of machine load (other processes on shared
    cores) affects every side of a ratio alike; the minimum is the run least disturbed by other processes.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = clock()
            fn()
            best[k] = min(best[k], clock() - start)
    return best
