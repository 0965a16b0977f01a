"""How many BLAS threads a simulation uses, chosen before it runs and recorded in its metadata.

OpenBLAS (and MKL, OpenMP) start one thread per core and let waiting threads spin. On a machine whose cores
are busy with other processes, a GEMM split over two threads waits at every barrier for the thread that is
not running: the attention field calls its GEMMs thousands of times per evaluation, so each wait is paid
thousands of times (issue 32 measured ``simulate`` at n = 2000, d = 16 ten times slower with the default two
threads than with one on a busy 2-core machine). The rule of :func:`blas_threads_for`:

1. ``ATTNFLOW_BLAS_THREADS=N`` is obeyed; a thread count set for the libraries (``OMP_NUM_THREADS``,
   ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``) is left alone (the user chose);
2. otherwise one thread where a field evaluation is small (under :data:`THREADED_MIN_FLOPS`: barriers and
   thread wake-ups cost more than the split saves) or where the cores are not free: the threads are the cores
   this process may use minus the 1-minute load average, rounded, at least 1 (an idle machine gets all its
   cores, a busy one gets 1).

The choice is applied around the integration only (``threadpoolctl.threadpool_limits``) and recorded as
``meta["threads"]`` (:func:`thread_record`): the count, the reason and the numbers it was made from.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
from dataclasses import dataclass

from numerics.common.errors import InputError
from numerics.common.provenance import thread_environment

#: below this many floating-point operations per field evaluation (about 10 ms on one core) one thread is used
THREADED_MIN_FLOPS = 5e7
#: environment variables through which a user sets the libraries' thread counts
LIBRARY_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OVERRIDE = "ATTNFLOW_BLAS_THREADS"


@dataclass(frozen=True)
class ThreadChoice:
    """The BLAS thread count of a run (``None``: left as the libraries are), why, and what it was based on."""

    threads: int | None
    reason: str
    cores: int
    load: float
    flops: float

    def limit(self):
        """Context manager applying the choice to the BLAS libraries (a no-op for ``threads=None``)."""
        if self.threads is None:
            return contextlib.nullcontext()
        return _controller(tuple(sorted(m for m in _BLAS_MODULES if m in sys.modules))).limit(
            limits=self.threads, user_api="blas")


#: modules that load a BLAS of their own: the controller is rebuilt when one of them has been imported since
_BLAS_MODULES = ("numpy", "scipy.linalg", "numba", "torch")


@functools.lru_cache(maxsize=8)
def _controller(loaded: tuple):
    """A ``threadpoolctl.ThreadpoolController`` (scanning the loaded libraries takes about 2 ms; limiting through
    a controller 0.01 ms, which matters for the many short runs of a sweep)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the system reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def blas_threads_for(flops: float, rows: int | None = None, *, cores: int | None = None,
                     load: float | None = None) -> ThreadChoice:
    """The BLAS thread count for field evaluations of ``flops`` operations each (see the module docstring).

    ``cores`` and ``load`` default to :func:`usable_cores` and the 1-minute load average (tests pass them).
    ``rows`` (the rows of the state) is recorded only.
    """
    cores = usable_cores() if cores is None else int(cores)
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    flops = float(flops)
    raw = os.environ.get(OVERRIDE)
    if raw is not None:
        try:
            threads = int(raw)
        except ValueError:
            threads = 0
        if threads < 1:
            raise InputError(f"{OVERRIDE} must be a positive integer, got {raw!r}")
        return ThreadChoice(threads, f"{OVERRIDE}={threads}", cores, load, flops)
    given = [v for v in LIBRARY_VARIABLES if os.environ.get(v)]
    if given:
        return ThreadChoice(None, f"left as set by {', '.join(f'{v}={os.environ[v]}' for v in given)}", cores,
                            load, flops)
    if cores <= 1:
        return ThreadChoice(1, "one usable core", cores, load, flops)
    if flops < THREADED_MIN_FLOPS:
        return ThreadChoice(1, f"field evaluation of {flops:.3g} operations < {THREADED_MIN_FLOPS:.3g}: "
                               "threads would cost more than they save", cores, load, flops)
    free = max(1, min(cores, int(round(cores - load))))
    if free == 1:
        return ThreadChoice(1, f"busy machine: load average {load:.2f} on {cores} cores", cores, load, flops)
    return ThreadChoice(free, f"{free} free cores (load average {load:.2f} on {cores} cores)", cores, load, flops)


def thread_record(choice: ThreadChoice) -> dict:
    """``meta["threads"]``: the pools seen by threadpoolctl (as before), plus the choice and its reason."""
    record = thread_environment()
    record["blas_threads_chosen"] = choice.threads
    record["choice"] = {"reason": choice.reason, "usable_cores": choice.cores, "load_average": round(choice.load, 2),
                        "flops_per_evaluation": choice.flops}
    return record
