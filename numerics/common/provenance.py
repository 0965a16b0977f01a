"""Metadata every output carries (parameters, seed, versions) and atomic file writing."""
from __future__ import annotations

import functools
import json
import platform
import sys
import time
from importlib import metadata

from theory.files import atomic_write  # noqa: F401 - re-exported: numerics writes through it


def package_versions() -> dict[str, str]:
    """Versions of attnflow and the libraries whose numbers it depends on (a fresh dict each call)."""
    return dict(_package_versions())


@functools.lru_cache(maxsize=1)
def _package_versions() -> dict[str, str]:
    """Looked up once per process: importlib.metadata costs about 3 ms a package, more than a small run."""
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
    """Progress of a long run on stderr, silent for the first ``delay`` seconds.

    ``progress(done, total)`` is called as the run advances. When the stream is a terminal a one-line bar is
    redrawn in place (at most every 0.2 s; finished by a newline when ``done >= total``); otherwise (a log file,
    a pipe) a plain line is printed every ``every`` seconds. The clock starts at the first call (so a progress
    object created before a setup phase does not report the setup as elapsed time), or at construction with
    ``clock="construction"``. ``unit`` names what ``done/total`` counts ("t=" for time, "frames " etc.).
    """

    BAR = 24

    def __init__(self, label: str, delay: float = 2.0, every: float = 2.0, stream=None, unit: str = "t=",
                 clock: str = "first-call", tty: bool | None = None):
        self.label = label
        self.unit = unit
        self.delay = delay
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        if tty is None:
            try:
                tty = bool(self.stream.isatty())
            except (AttributeError, ValueError):
                tty = False
        self.tty = tty
        self.start = time.perf_counter() if clock == "construction" else None
        self.last = self.start
        self.shown = False
        self._open_line = False

    def __call__(self, done: float, total: float) -> None:
        now = time.perf_counter()
        if self.start is None:
            self.start = self.last = now
        finished = total and done >= total
        interval = 0.2 if self.tty else self.every
        if now - self.start < self.delay or (now - self.last < interval and not (finished and self._open_line)):
            return
        self.last = now
        self.shown = True
        frac = min(1.0, done / total) if total else 1.0
        elapsed = now - self.start
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        # an eta beyond a million seconds is an order of magnitude, not a countdown (t_end = 1e308 gave 300 digits)
        eta_text = f"{eta:.1f}s" if not eta > 1e6 else f"{eta:.2g}s"
        counts = f"{self.unit}{done:.4g}/{total:.4g}  elapsed {elapsed:.1f}s  eta {eta_text}"
        if self.tty:
            filled = int(round(self.BAR * frac))
            bar = "#" * filled + "-" * (self.BAR - filled)
            end = "\n" if finished else ""
            print(f"\r{self.label}: [{bar}] {100 * frac:5.1f}%  {counts}\033[K", end=end, file=self.stream,
                  flush=True)
            self._open_line = not finished
        else:
            print(f"{self.label}: {100 * frac:5.1f}%  {counts}", file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """One line on stderr now (for example the estimated cost of a step that cannot report progress)."""
        if self._open_line:
            print(file=self.stream)
            self._open_line = False
        print(f"{self.label}: {text}", file=self.stream, flush=True)
