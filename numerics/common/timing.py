"""Interleaved timing: the minimum over rounds of contenders alternating within each round."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def best_interleaved(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Minimum wall time (seconds) of each function over ``repeats`` rounds.

    The functions alternate within each round, so that a change of machine load (other processes on shared
    cores) affects every side of a ratio alike; the minimum is the run least disturbed by other processes.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - start)
    return best
