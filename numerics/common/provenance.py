"""Metadata every output carries (parameters, seed, versions) and atomic file writing."""
from __future__ import annotations

import json
import platform
import sys
import time
from importlib import metadata

from theory.files import atomic_write  # noqa: F401 - re-exported: numerics writes through it


def package_versions() -> dict[str, str]:
    """Versions of attnflow and the libraries whose numbers it depends on."""
    out = {"python": platform.python_version()}
    for name in ("attnflow", "numpy", "scipy", "sympy", "mpmath", "networkx"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


#: the reproducibility guarantee recorded with every run (measured by tests/cli/test_hostile_inputs.py)
REPRODUCIBILITY = ("bitwise identical for the same inputs and seed at a fixed BLAS thread count; between "
                   "thread counts, blocked sums are reordered and results differ at the rounding level "
                   "(~1e-15 relative per step, checked to 1e-10 after 40 RK4 steps)")


def thread_environment() -> dict:
    """The BLAS/OpenMP thread pools of this process (threadpoolctl) and the reproducibility guarantee."""
    try:
        from threadpoolctl import threadpool_info

        pools = [{"library": info.get("internal_api"), "threads": info.get("num_threads")}
                 for info in threadpool_info()]
    except Exception:  # noqa: BLE001 - provenance must never break a run
        pools = []
    return {"blas_threads": pools, "reproducibility": REPRODUCIBILITY}


def to_json(obj) -> str:
    """JSON text of metadata (sorted keys; NumPy scalars and arrays as Python numbers and lists)."""
    return json.dumps(obj, sort_keys=True, default=_default)


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


class StderrProgress:
    """Progress lines on stderr for long runs: silent for the first ``delay`` seconds, then every ``every`` s."""

    def __init__(self, label: str, delay: float = 2.0, every: float = 2.0, stream=None, unit: str = "t="):
        self.label = label
        self.unit = unit  # what ``done/total`` counts: "t=" (time) by default, e.g. "claims " for counts
        self.delay = delay
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.last = self.start
        self.shown = False

    def __call__(self, done: float, total: float) -> None:
        now = time.perf_counter()
        if now - self.start < self.delay or now - self.last < self.every:
            return
        self.last = now
        self.shown = True
        frac = done / total if total else 1.0
        elapsed = now - self.start
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        print(f"{self.label}: {100 * frac:5.1f}%  {self.unit}{done:.4g}/{total:.4g}  elapsed {elapsed:.1f}s  eta {eta:.1f}s",
              file=self.stream, flush=True)
