"""Interleaved timing: the minimum over rounds of contenders alternating within each round."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def interleaved_rounds(fns: Sequence[Callable[[], object]], repeats: int,
                       alternate: bool = False) -> list[list[tuple[float, float]]]:
    """Per round, the (wall, CPU) seconds of each function (``time.perf_counter``, ``time.process_time``).

    The functions alternate within each round, so that a change of machine load (other processes on shared
    cores) affects every side of a ratio alike; with ``alternate`` every other round runs them in reverse
    order, so that no side always runs first. Entry k of a round is function k's, whatever the order.
    """
    rounds = []
    for r in range(repeats):
        order = range(len(fns) - 1, -1, -1) if alternate and r % 2 else range(len(fns))
        times: list = [None] * len(fns)
        for k in order:
            wall, cpu = time.perf_counter(), time.process_time()
            fns[k]()
            times[k] = (time.perf_counter() - wall, time.process_time() - cpu)
        rounds.append(times)
    return rounds


def best_interleaved(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Minimum wall time (seconds) of each function over ``repeats`` interleaved rounds
    (:func:`interleaved_rounds`): the run least disturbed by other processes."""
    rounds = interleaved_rounds(fns, repeats)
    return [min(times[k][0] for times in rounds) for k in range(len(fns))]
