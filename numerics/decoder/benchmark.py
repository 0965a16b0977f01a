"""Speed and memory of the NumPy decoder: a forward pass against the bound of its matrix products.

**Time.** One forward pass of n tokens (default 512, shipped long text) through every block, float64, one BLAS
thread (threadpoolctl), no attention matrices kept, the logits of the last position. Its matrix products cost
:func:`numerics.decoder.forward.forward_flops` operations (2 n per weight entry, 4 k per causal (query, key) pair
and head, 2 d vocab for the logits); at the dgemm rate measured in the same process
(:func:`numerics.bench.field_floor.rate_contenders`, a square GEMM of size 1024, interleaved with the forward in
every round, the minimum over rounds kept) they cannot take less than ``bound_seconds``. Goal: the forward
within 2x of that bound. Timings on a shared machine are noisy: the load averages before and after are recorded.

**Memory.** The weights in float64 (:attr:`numerics.decoder.weights.Decoder.nbytes`), the peak of the memory
that Python and NumPy allocate while the model is read (:mod:`tracemalloc`, which sees NumPy's buffers; measured
only when the model is read here, i.e. not yet cached in the process) and the process's peak resident size
(``ru_maxrss``). Goal: under 1.5 GB for the loaded float64 model.
"""
from __future__ import annotations

import os
import resource
import time
import tracemalloc

import numpy as np

from numerics.common.errors import InputError, require_int
from numerics.common.limits import check_work
from numerics.common.timing import best_interleaved
from numerics.decoder.checkpoint import load_decoder
from numerics.decoder.context import long_text
from numerics.decoder.forward import forward_flops, run_decoder
from numerics.decoder.weights import Decoder

BOUND_TARGET = 2.0
MEMORY_TARGET_BYTES = 1.5e9


def load_with_memory(path=None) -> tuple[Decoder, dict]:
    """The model and the memory it took to read it (module docstring)."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    model = load_decoder(path)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    if started:
        tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    return model, {"weights_bytes": model.nbytes, "load_peak_traced_bytes": int(peak), "max_rss_bytes": int(rss),
                   "load_seconds": seconds, "target_bytes": MEMORY_TARGET_BYTES,
                   "within_target": bool(model.nbytes <= MEMORY_TARGET_BYTES)}


def check_benchmark(model: Decoder, n: int, repeats: int, text: str | None = None) -> np.ndarray:
    """Validate n and repeats, refuse a benchmark beyond the work limit before it starts; the token ids."""
    n = require_int(n, "n", 2, model.config.context)
    repeats = require_int(repeats, "repeats", 1, 100)
    check_work((repeats + 1) * (forward_flops(model.config, n) + 2.0 * 1024**3),
               f"a benchmark of {repeats} forward passes of {n} tokens")
    ids = np.asarray(model.tokenizer.encode(long_text() if text is None else text))
    if ids.size < n:
        raise InputError(f"the text has {ids.size} tokens, fewer than n = {n}")
    return ids[:n]


def benchmark_forward(model: Decoder, n: int = 512, repeats: int = 3, text: str | None = None) -> dict:
    """Time of a forward pass of n tokens against the dgemm bound (module docstring)."""
    from threadpoolctl import threadpool_limits

    from numerics.bench.field_floor import rate_contenders

    ids = check_benchmark(model, n, repeats, text)
    flops = forward_flops(model.config, n)
    with threadpool_limits(1):
        load_before = os.getloadavg()
        gemm, _, to_rates = rate_contenders()

        def forward():
            run_decoder(model, ids, attentions=False, logits="last")

        gemm(), forward()  # warm-up
        t_gemm, t_forward = best_interleaved([gemm, forward], repeats)
        load_after = os.getloadavg()
    rates = to_rates(t_gemm, 1.0)
    bound = flops / rates["gemm_flops_per_second"]
    return {"n": n, "layers": model.config.layers, "repeats": repeats, "forward_seconds": t_forward,
            "flops": flops, "gemm_flops_per_second": rates["gemm_flops_per_second"], "bound_seconds": bound,
            "bound_ratio": t_forward / bound, "target": BOUND_TARGET, "within_target": t_forward / bound <= BOUND_TARGET,
            "threads": 1, "load_average_before": list(load_before), "load_average_after": list(load_after)}
