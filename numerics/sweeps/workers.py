"""How many processes a local sweep may start: at most one single-threaded worker per available core.

A sweep's cells are independent single-threaded simulations, so the throughput of a local cluster stops growing
at one worker per core; more workers only time-share the cores (each cell slower, every worker a full Python
process with its own memory, more start-up time). A request for more local workers than the cores this process
may run on (``os.sched_getaffinity``, which respects container and ``taskset`` limits) is therefore refused
before any worker starts, with the number of cores in the message. A ``tcp://`` scheduler brings its own
workers and is not checked.
"""
from __future__ import annotations

import os

from numerics.common.errors import InputError, require_int


def available_cores() -> int:
    """The cores this process may run on (affinity mask where the platform has one, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_local_workers(workers, scheduler: str = "local") -> int:
    """``workers`` validated: an integer >= 1 and, for the ``local`` scheduler, at most :func:`available_cores`."""
    workers = require_int(workers, "workers", minimum=1)
    cores = available_cores()
    if scheduler == "local" and workers > cores:
        raise InputError(f"--workers {workers} asks for more local processes than the {cores} cores available: each "
                         f"worker runs one single-threaded cell, so more workers than cores only share the cores "
                         f"(slower cells, more memory); use --workers {cores} or fewer, or a tcp:// scheduler "
                         f"whose cluster has more cores")
    return workers
