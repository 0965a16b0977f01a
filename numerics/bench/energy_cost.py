"""What the standalone energy costs against one field evaluation (issue "phase diagrams", goal: at most half).

``interaction_energy(X, beta)`` (the pair sum of :mod:`numerics.core.energy`: upper block triangle, one GEMM,
one expm1 and two sums per pair term formed) and ``make_field(d, beta)(X)`` (the default NumPy field, Q = K = I:
also the upper block triangle, GEMM, exp and two GEMMs per term formed) are timed interleaved in one process,
the order alternating between rounds, at each (n, d). Reported: the minima over the rounds and their ratio, the
median of the per-round ratios (robust to load that changes between rounds) and the ratio of the minimal CPU times
(``*_ratio_cpu``: this process's time, which other processes' load does not stretch). With Numba installed the
compiled energy (``interaction_energy(X, beta, backend="numba")``, :mod:`numerics.core._energy_kernels`: one
expm1 per unordered pair, column tiles) is a third contender in the same rounds (``compiled_*`` keys; None without Numba). One BLAS thread
(threadpoolctl); the load averages before and after are recorded. A benchmark, not a test: the goal is reported
as met or not, never asserted.
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.common.limits import check_work
from numerics.common.timing import interleaved_rounds

#: the sizes of the energy suite (n, d)
ENERGY_SIZES = tuple((n, d) for d in (3, 16, 64) for n in (256, 1024, 4096))
#: goal: the energy costs at most this fraction of a field evaluation
ENERGY_TARGET = 0.5
#: pair terms timed per call group: small n repeats the call so that one timing lasts a few milliseconds
TERMS_PER_TIMING = 4_000_000


def check_energy_work(sizes, repeats: int) -> None:
    """Refuse, before any work, an energy benchmark beyond the work limit (two contenders, n^2 (d + 8) each)."""
    work = sum(3.0 * repeats * _calls(n) * float(n) * n * (2 * d + 8) for n, d in sizes)
    check_work(work, f"an energy benchmark of {len(sizes)} sizes with {repeats} repeats")


def _calls(n: int) -> int:
    return max(1, TERMS_PER_TIMING // (n * n))


def benchmark_energy(sizes=ENERGY_SIZES, repeats: int = 5, beta: float = 1.0, seed: int = 0) -> list[dict]:
    """Time the standalone energy against one field evaluation at each (n, d) of ``sizes`` (see the module)."""
    from threadpoolctl import threadpool_limits

    from numerics.core.field import energy_block, interaction_energy, make_field
    from numerics.core.sampling import uniform_sphere

    compiled = importlib.util.find_spec("numba") is not None

    repeats = require_int(repeats, "repeats", minimum=1)
    beta = require_real(beta, "beta")
    sizes = [(require_int(n, "n", minimum=2), require_int(d, "d", minimum=2)) for n, d in sizes]
    check_energy_work(sizes, repeats)
    rows = []
    with threadpool_limits(1):
        for n, d in sizes:
            X = uniform_sphere(n, d, seed)
            field = make_field(d, beta)
            calls = _calls(n)

            def energy_calls():
                for _ in range(calls):
                    interaction_energy(X, beta)

            def field_calls():
                for _ in range(calls):
                    field(X)

            def compiled_calls():
                for _ in range(calls):
                    interaction_energy(X, beta, backend="numba")

            contenders = [energy_calls, field_calls] + ([compiled_calls] if compiled else [])
            for fn in contenders:  # warm-up: buffers, caches, lazy imports, the kernel's compilation
                fn()
            load_before = os.getloadavg()
            rounds = interleaved_rounds(contenders, repeats, alternate=True)
            load_after = os.getloadavg()
            energy = [r[0][0] / calls for r in rounds]
            fields = [r[1][0] / calls for r in rounds]
            ratio = min(energy) / min(fields)
            # CPU time of this process (time.process_time): what another process's load does not add (it still
            # shares the caches), the steadier side of a loaded machine's ratios
            field_cpu = min(r[1][1] for r in rounds)
            if compiled:
                comp = [r[2][0] / calls for r in rounds]
                extra = {"compiled_seconds": min(comp), "compiled_ratio": min(comp) / min(fields),
                         "compiled_ratio_median": float(np.median([c / f for c, f in zip(comp, fields)])),
                         "compiled_ratio_cpu": min(r[2][1] for r in rounds) / field_cpu,
                         "compiled_within_target": min(comp) / min(fields) <= ENERGY_TARGET}
            else:
                extra = dict.fromkeys(("compiled_seconds", "compiled_ratio", "compiled_ratio_median",
                                       "compiled_ratio_cpu", "compiled_within_target"))
            rows.append({"n": n, "d": d, "beta": beta, "block": energy_block(n, d), "calls_per_timing": calls,
                         "energy_seconds": min(energy), "field_seconds": min(fields),
                         "energy_seconds_median": float(np.median(energy)),
                         "field_seconds_median": float(np.median(fields)),
                         "ratio": ratio, "ratio_median": float(np.median([e / f for e, f in zip(energy, fields)])),
                         "ratio_cpu": min(r[0][1] for r in rounds) / field_cpu,
                         "target": ENERGY_TARGET, "within_target": ratio <= ENERGY_TARGET,
                         "load_average_before": list(load_before), "load_average_after": list(load_after),
                         "threads": 1, **extra})
    return rows
