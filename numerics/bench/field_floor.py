"""Timing of :func:`numerics.core.field.attention_field` against an honest floor, the hardware and peers.

Five references, all measured in the same process on the same data, contenders interleaved within each round
(each also run once before, as a warm-up) and the minimum over the rounds kept (the least disturbed by other
processes):

- the **floor**: the best NumPy implementation of the same arithmetic that the project can write, i.e. the
  field's three operations without its shift column, projection or division: per tile of b rows (the field's
  cache-sized :func:`numerics.core.field.tile_rows`), a plain GEMM ``X[a:b] @ Xt`` into one b x n tile buffer
  allocated once per evaluation (not ``X @ X.T``, which NumPy turns into a symmetric rank-k update plus a
  mirroring loop, nor an n x n array), ``np.exp`` in place and a GEMM into the rows of the (n, d) result;
- the **hardware bound**: dgemm GFLOP/s (a square GEMM of size 1024) and ``np.exp`` elements/s (in place on a
  256 KiB block, in cache), measured in this process in the same interleaved rounds as the field; one field evaluation does 4 n^2 (d + 1) flops of GEMM
  and n^2 exponentials, so it cannot take less than 4 n^2 (d + 1) / gemm_rate + n^2 / exp_rate seconds;
- **peers**, only when installed (never required): JAX (``jax.jit``, float64) and PyTorch's fused
  ``scaled_dot_product_attention`` in float64, followed by the same projection;
- the field with Q = K = I given as matrices (``general``): the same numbers without the symmetric upper
  block triangle the default field uses for Q = K = I (which does half of the n^2 exponentials the bound
  counts, so that the default field may beat the bound; the bound stays the issue's definition);
- the **fused kernel** (``engine="numba"``, :mod:`numerics.core.fused`) when Numba is installed: its compile
  (or cache load) time is measured once before the timing and reported apart (``numba_compile_seconds``).

Everything runs on one core: BLAS pools are limited to one thread (threadpoolctl), the Numba kernel runs its
one-thread variant (its default) and torch is set to one thread. The 1-, 5- and 15-minute load averages (``os.getloadavg``) are recorded before and after.

Goals (issue "speed against the hardware"): the field within 1.5x the bound at d = 64 and 2x at d = 3, n = 4096.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.common.limits import check_work
from numerics.common.timing import best_interleaved
from numerics.core.field import make_field, tile_rows
from numerics.core.trajectory import uniform_sphere

#: field time / hardware bound goals at n = 4096
BOUND_TARGETS = {3: 2.0, 64: 1.5}


def make_floor(X: np.ndarray, block: int | None = None):
    """The floor of the field's arithmetic as a closure ``floor() -> (n, d)``: the field's own tile loop
    (:func:`numerics.core.field._tile_sums`: per tile of ``block`` rows ``W = X[a:b] @ Xt`` with a plain GEMM
    into a buffer, ``exp(W)`` in place, ``W @ X``) on the bare arrays, without the shift column, the symmetry,
    the division and the projection."""
    from numerics.core.field import _tile_sums

    n, d = X.shape
    b = max(1, min(n, block or tile_rows(n, d)))
    Xt = np.ascontiguousarray(X.T)

    def floor() -> np.ndarray:
        return _tile_sums(X, Xt, X, b, 1.0)

    return floor


def rate_contenders(gemm_size: int = 1024, exp_entries: int = 1 << 15):
    """``(gemm, exps, rates)``: the dgemm and exp micro-benchmarks as closures (to be interleaved with the
    field) and ``rates(t_gemm, t_exp) -> dict`` converting their times into rates."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((gemm_size, gemm_size))
    B = rng.standard_normal((gemm_size, gemm_size))
    C = np.empty((gemm_size, gemm_size))
    E = rng.uniform(-1.0, 0.0, exp_entries)
    F = np.empty_like(E)
    inner = 32

    def gemm():
        np.matmul(A, B, out=C)

    def exps():
        for _ in range(inner):
            np.exp(E, out=F)

    def rates(t_gemm: float, t_exp: float) -> dict:
        return {"gemm_flops_per_second": 2.0 * gemm_size**3 / t_gemm, "exp_per_second": inner * exp_entries / t_exp,
                "gemm_size": gemm_size, "exp_entries": exp_entries}

    return gemm, exps, rates


def hardware_rates(repeats: int = 5, gemm_size: int = 1024, exp_entries: int = 1 << 15) -> dict:
    """dgemm rate (flop/s, square GEMM of ``gemm_size``) and ``np.exp`` rate (elements/s, in place on
    ``exp_entries`` numbers, in cache), the minimum time of ``repeats`` rounds, in this process."""
    gemm, exps, rates = rate_contenders(gemm_size, exp_entries)
    gemm(), exps()
    return rates(*best_interleaved([gemm, exps], repeats))


def field_bound_seconds(n: int, d: int, rates: dict) -> float:
    """Lower bound of one field evaluation: 4 n^2 (d + 1) GEMM flops and n^2 exponentials at the measured rates."""
    return 4.0 * n * n * (d + 1) / rates["gemm_flops_per_second"] + float(n) * n / rates["exp_per_second"]


def peer_contenders(X: np.ndarray, beta: float, saved: dict | None = None) -> dict:
    """Installed peers computing the ``sa`` field of X in float64 (empty when none is installed).

    torch is set to one thread for the timing; its thread count before is recorded once in ``saved``
    (``saved["torch_threads"]``) for the caller to restore (:func:`benchmark_field` does)."""
    peers = {}
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        @jax.jit
        def jax_field(Y):
            W = jax.nn.softmax(beta * (Y @ Y.T), axis=1)
            V = W @ Y
            return V - jnp.sum(V * Y, axis=1, keepdims=True) * Y

        Xj = jnp.asarray(X)
        jax_field(Xj).block_until_ready()
        peers["jax-jit"] = lambda: jax_field(Xj).block_until_ready()
    except Exception:  # noqa: BLE001 - an absent or broken optional peer is skipped
        pass
    try:
        import torch
        import torch.nn.functional as F

        Xt = torch.from_numpy(X)[None, None]

        if saved is not None:
            saved.setdefault("torch_threads", torch.get_num_threads())
        torch.set_num_threads(1)

        def torch_field():
            with torch.no_grad():
                V = F.scaled_dot_product_attention(Xt, Xt, Xt, scale=beta)[0, 0]
                return V - (V * Xt[0, 0]).sum(1, keepdim=True) * Xt[0, 0]

        torch_field()
        peers["torch-sdpa"] = torch_field
    except Exception:  # noqa: BLE001
        pass
    return peers


#: contenders of :func:`benchmark_field` costing about one field evaluation each, at most: the field, the floor,
#: the general-QK field, the fused kernel and two peers (JAX, torch)
FIELD_CONTENDERS = 6


def check_field_work(n: int, repeats: int, dims=(3, 64)) -> tuple[int, int]:
    """Validate n and repeats and refuse, before any work, a benchmark beyond the work limit: per d, every
    contender of :func:`benchmark_field` runs once to warm up and once per repeat, i.e. (repeats + 1) times
    :data:`FIELD_CONTENDERS` field evaluations of O(n^2 (2d + 8)) plus the dgemm and exp rate contenders."""
    n = require_int(n, "n", minimum=1)
    repeats = require_int(repeats, "repeats", minimum=1)
    gemm_size, exp_entries, inner = 1024, 1 << 15, 32  # rate_contenders' defaults, as benchmark_field uses them
    rates = 2.0 * gemm_size**3 + inner * exp_entries
    per_round = sum(FIELD_CONTENDERS * float(n) * n * (2 * require_int(d, "d", minimum=2) + 8) + rates
                    for d in dims)
    check_work((repeats + 1) * per_round, f"a benchmark with n={n}, {repeats} repeats")
    return n, repeats


def benchmark_field(n: int = 4096, dims=(3, 64), beta: float = 1.0, model: str = "sa", repeats: int = 5,
                    seed: int = 0, peers: bool = True, fused: bool = True) -> list[dict]:
    """Time ``attention_field`` against the floor, the hardware bound, the fused kernel and installed peers.

    Returns one dict per d: ``field_seconds`` (NumPy path), ``floor_seconds``, ``ratio`` (field / floor),
    ``bound_seconds``, ``bound_ratio`` (field / bound), ``fused_seconds`` and ``fused_bound_ratio`` (the Numba
    kernel, None without Numba), ``best`` (the faster attnflow engine) with ``best_bound_ratio``, ``target``
    and ``within_target`` (the bound goal, met by the best engine), ``peers`` (name -> seconds),
    ``peer_ratios`` (best attnflow time / peer time: below 1 means attnflow is faster), the measured
    ``rates``, the tile rows, the thread limits and the load averages.
    """
    n, repeats = check_field_work(n, repeats, dims)
    beta = require_real(beta, "beta")
    compile_s = None
    if fused:
        from numerics.core.fused import compile_seconds, numba_available

        fused = numba_available()
        compile_s = compile_seconds() if fused else None
    saved: dict = {}
    try:
        return _timed_rows(n, dims, beta, model, repeats, seed, peers, fused, compile_s, saved)
    finally:  # torch's thread count as before the benchmark (peer_contenders set it to one)
        if "torch_threads" in saved:
            import torch

            torch.set_num_threads(saved["torch_threads"])


def _timed_rows(n, dims, beta, model, repeats, seed, peers, fused, compile_s, saved) -> list[dict]:
    """The timing rounds of :func:`benchmark_field` (one row per d), on one thread."""
    import os

    from threadpoolctl import threadpool_limits

    rows = []
    with threadpool_limits(1):
        load_before = os.getloadavg()
        gemm, exps, to_rates = rate_contenders()
        for d in dims:
            d = require_int(d, "d", minimum=2)
            X = uniform_sphere(n, d, seed)
            field_fn = make_field(d, beta, model)
            floor = make_floor(X)
            # the hardware rates are measured in the same rounds as the field, so that both see the same load
            general_fn = make_field(d, beta, model, Q=np.eye(d))  # M = I as a matrix: no symmetry used
            contenders = {"gemm": gemm, "exp": exps, "floor": floor, "field": lambda: field_fn(X),
                          "general": lambda: general_fn(X)}
            if fused:
                fused_fn = make_field(d, beta, model, engine="numba")
                contenders["fused"] = lambda: fused_fn(X)
            if peers and model == "sa":
                contenders.update(peer_contenders(X, beta, saved))
            for fn in contenders.values():  # warm-up (allocations, BLAS buffers, JIT caches)
                fn()
            times = dict(zip(contenders, best_interleaved(list(contenders.values()), repeats)))
            rates = to_rates(times.pop("gemm"), times.pop("exp"))
            field, bound = times.pop("field"), field_bound_seconds(n, d, rates)
            fused_s = times.pop("fused", None)
            general_s = times.pop("general")
            floor_s = times.pop("floor")
            best_name, best = ("numba", fused_s) if fused_s is not None and fused_s < field else ("numpy", field)
            target = BOUND_TARGETS.get(d)
            rows.append({"n": n, "d": d, "beta": beta, "model": model, "repeats": repeats,
                         "tile_rows": tile_rows(n, d), "field_seconds": field, "floor_seconds": floor_s,
                         "ratio": field / floor_s, "bound_seconds": bound, "bound_ratio": field / bound,
                         "general_seconds": general_s, "general_bound_ratio": general_s / bound,
                         "fused_seconds": fused_s, "fused_bound_ratio": None if fused_s is None else fused_s / bound,
                         "numba_compile_seconds": compile_s, "best": best_name, "best_bound_ratio": best / bound,
                         "target": target, "within_target": (best / bound <= target) if target else None,
                         "peers": times, "peer_ratios": {k: best / v for k, v in times.items()},
                         "rates": rates, "threads": 1})
        load_after = os.getloadavg()
    for r in rows:
        r["load_average_before"], r["load_average_after"] = list(load_before), list(load_after)
    return rows
