"""A heartbeat on stderr for work that cannot report its own progress (one claim of ``attnflow verify`` may run
for minutes inside SciPy): every ``every`` seconds one line says what is still running and for how long.

The lines contain the word "elapsed" (the documentation's example runner leaves such timing lines out).
"""
from __future__ import annotations

import sys
import threading
import time

#: seconds between two heartbeat lines
HEARTBEAT_SECONDS = 30.0


class Heartbeat:
    """``with Heartbeat("verify", "claim core.codegen"):`` prints ``verify: still running claim core.codegen,
    elapsed 30s`` every ``every`` seconds until the block ends (nothing for work shorter than ``every``)."""

    def __init__(self, label: str, what: str, every: float | None = None, stream=None):
        self.label, self.what = label, what
        self.every = HEARTBEAT_SECONDS if every is None else every
        self.stream = stream if stream is not None else sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat {what}", daemon=True)
        self.beats = 0

    def _beat(self) -> None:
        start = time.perf_counter()
        while not self._stop.wait(self.every):
            self.beats += 1
            try:
                print(f"{self.label}: still running {self.what}, elapsed {time.perf_counter() - start:.0f}s",
                      file=self.stream, flush=True)
            except (OSError, ValueError):  # the stream was closed (a pipe reader went away): stop quietly
                return

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
