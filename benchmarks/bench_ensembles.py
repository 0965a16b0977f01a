"""Ensemble throughput: one batched ``simulate`` against a loop of single calls and a batched torch RK4.

Run: OMP_NUM_THREADS=1 nice python benchmarks/bench_ensembles.py [--rounds 3] [--loop-systems 32] [--heads-t-end 1]
[--only TEXT] [--skip CONTENDER ...] [--fields] [--json]
(torch is needed for the third contender only: ``pip install torch==2.13.0``; without it that column says so).

Cases (the issue's): B = 1024 systems of n = 32 on S^1 and on S^2, and B = 256 systems of n = 64 in d = 16 with
8 heads (k = 2, scale 1/sqrt(k), random Q, K, V, W), ``sa`` to t = 20 with RK4 (dt = 0.05, 400 steps). The
8-head case runs to ``--heads-t-end`` (default 1: 20 steps; one batched evaluation of the NumPy path takes about
0.25 s there, so t = 20 takes about 400 s for that contender per round, torch about 250 s): its rates are per
run to that time (the work is linear in the number of steps: divide by 20 / t_end for t = 20).

Contenders, timed interleaved in every round (the median over rounds is reported, in systems per CPU second:
each contender runs on one thread, and on a shared machine the process's CPU time is the fair measure; the
wall-time rates are in ``--json``):

- ``ensemble``: ``simulate(model, X0 (B, n, d), 20, solver=Solver("rk4", dt=0.05, backend="direct"))``
  (energies included; every member equals its single run bit for bit);
- ``numba``: the same with ``backend="numba"`` (the compiled member kernels: one head,
  :func:`numerics.core.batch_field.member_sums`; several heads, :func:`numerics.core._member_heads.heads_field`;
  members equal single runs to rounding);
- ``loop``: ``simulate(model, X0[b], ...)`` for the first ``--loop-systems`` members (a loop over all B would
  take minutes; systems per second do not depend on how many are looped);
- ``torch``: a float64 batched RK4 written the way the papers' authors write theirs: ``torch.bmm`` for the
  logits, ``torch.softmax``, ``torch.bmm`` for the values, the projection and a renormalisation after each step
  (no energies), one thread (``torch.set_num_threads(1)``).

Equal accuracy: the four integrate the same equations with the same RK4 steps; the largest difference of the
final states (ensemble vs loop: bitwise equal; numba vs ensemble and ensemble vs torch: rounding) is printed. One core: run with
``OMP_NUM_THREADS=1`` (the script sets it before NumPy is imported when it is not set). The machine's load
average is printed with the numbers: timings on a shared machine are noisy.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from numerics.core.blocks import MultiHead  # noqa: E402
from numerics.core.fused import numba_available  # noqa: E402
from numerics.core.model import Model, SaveAt, Solver  # noqa: E402
from numerics.core.trajectory import simulate, uniform_sphere  # noqa: E402

T_END, DT = 20.0, 0.05
CONTENDERS = ("ensemble", "numba", "loop", "torch")


def cases():
    rng = np.random.default_rng(0)
    H, k, d = 8, 2, 16
    heads = MultiHead(*(rng.standard_normal((H, k, d)) / np.sqrt(d) for _ in range(4)))
    return [("S^1: B=1024, n=32, d=2", Model("sa", 4.0), 1024, 32, 2),
            ("S^2: B=1024, n=32, d=3", Model("sa", 4.0), 1024, 32, 3),
            ("d=16, 8 heads: B=256, n=64", Model("sa", 1.0, heads=heads), 256, 64, 16)]


def torch_rk4(model, X0: np.ndarray, t_end: float, dt: float):
    """The batched torch RK4 of the module docstring (returns the final states as NumPy)."""
    import torch

    torch.set_num_threads(1)
    x = torch.from_numpy(X0.copy())
    beta = model.beta
    if model.heads is None:
        def field(x):
            attn = torch.softmax(beta * torch.bmm(x, x.transpose(1, 2)), dim=-1)
            v = torch.bmm(attn, x)
            return v - (v * x).sum(-1, keepdim=True) / (x * x).sum(-1, keepdim=True) * x
    else:
        h = model.heads
        Q, K, V, W = (torch.from_numpy(np.array(a)) for a in (h.Q, h.K, h.V, h.W))  # copies: the heads are read-only
        scale = beta * h.scale

        def field(x):
            v = torch.zeros_like(x)
            for j in range(Q.shape[0]):
                q, kk = x @ Q[j].T, x @ K[j].T
                attn = torch.softmax(scale * torch.bmm(q, kk.transpose(1, 2)), dim=-1)
                v = v + (torch.bmm(attn, x) @ V[j].T) @ W[j]
            return v - (v * x).sum(-1, keepdim=True) / (x * x).sum(-1, keepdim=True) * x

    steps = int(np.ceil(t_end / dt - 1e-12))
    h = t_end / steps
    with torch.no_grad():
        for _ in range(steps):
            k1 = field(x)
            k2 = field(x + 0.5 * h * k1)
            k3 = field(x + 0.5 * h * k2)
            k4 = field(x + h * k3)
            x = x + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
            x = x / x.norm(dim=-1, keepdim=True)
    return x.numpy()


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def field_times(rounds: int, loop: int, as_json: bool) -> None:
    """``--fields``: one field evaluation per member of the 8-head case, interleaved over ``rounds`` rounds of 4
    evaluations each: the single system's field (the loop's: ``model.vector_field(n, d, "direct")[0]``, over the
    first ``loop`` members), the batch's compiled kernel (the ``numba`` contender's) and the batch's NumPy path
    (the ``ensemble`` contender's). Minimum and median of the rounds, in microseconds per member and
    evaluation (CPU time, one thread), and the ratio single/kernel of the medians."""
    from numerics.core.batch_field import make_batch_block_field

    name, model, B, n, d = next(case for case in cases() if case[1].heads is not None)
    X = np.stack([uniform_sphere(n, d, s) for s in range(B)])
    single, _ = model.vector_field(n, d, "direct")
    fields = {"single": (lambda: [single(X[b]) for b in range(loop)], loop)}
    if numba_available():
        kernel = make_batch_block_field(model.beta, model.kind, model.heads, engine="numba")
        fields["numba"] = (lambda: kernel(X), B)
    numpy_field = make_batch_block_field(model.beta, model.kind, model.heads)
    fields["ensemble"] = (lambda: numpy_field(X), B)
    for call, _ in fields.values():
        call()  # compile or warm up before timing
    times = {k: [] for k in fields}
    for r in range(rounds):
        for who in (list(fields) if r % 2 == 0 else list(reversed(fields))):
            call, size = fields[who]
            start = time.process_time()
            for _ in range(4):
                call()
            times[who].append((time.process_time() - start) / 4 / size * 1e6)
    out = {who: {"min_us": min(v), "median_us": float(np.median(v))} for who, v in times.items()}
    if "numba" in out:
        out["single_over_numba"] = out["single"]["median_us"] / out["numba"]["median_us"]
    if as_json:
        print(json.dumps({"case": name, "rounds": rounds, "per_member_evaluation": out}, indent=1))
        return
    print(f"{name}: one field evaluation per member (CPU, one thread, {rounds} interleaved rounds)")
    for who in fields:
        print(f"  {who:9s} min {out[who]['min_us']:8.1f} us   median {out[who]['median_us']:8.1f} us")
    if "numba" in out:
        print(f"  single/numba (medians) {out['single_over_numba']:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loop-systems", type=int, default=32)
    ap.add_argument("--fraction", type=float, default=1.0,
                    help="run B * fraction members (systems per second barely depend on B once it is large; the "
                         "issue's sizes are fraction 1)")
    ap.add_argument("--heads-t-end", type=float, default=1.0, help="t_end of the 8-head case (default 1)")
    ap.add_argument("--only", help="run only the cases whose name contains this text")
    ap.add_argument("--skip", nargs="*", default=[], choices=CONTENDERS,
                    help="contenders not to run (e.g. --skip ensemble torch for the 8-head case to t = 20, where "
                         "the NumPy ensemble alone takes about 330 s a round)")
    ap.add_argument("--fields", action="store_true",
                    help="time one field evaluation per member of the 8-head case instead of whole runs (single "
                         "system, compiled kernel, NumPy batch; --rounds rounds, the single field over "
                         "--loop-systems members)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.fields:
        ignored = [flag for flag, given in (("--only", args.only), ("--skip", args.skip),
                                            ("--fraction", args.fraction != 1.0),
                                            ("--heads-t-end", args.heads_t_end != 1.0)) if given]
        if ignored:
            ap.error(f"--fields times the 8-head case's field evaluations only; {', '.join(ignored)} do not apply")
        field_times(max(args.rounds, 1), max(1, min(args.loop_systems, 256)), args.json)
        return
    solver = Solver("rk4", dt=DT, backend="direct")
    numba_solver = Solver("rk4", dt=DT, backend="numba")
    save = SaveAt(every=40)
    rows = []
    torch_ok = have_torch()
    load_before = os.getloadavg()
    for name, model, B, n, d in cases():
        if args.only and args.only not in name:
            continue
        t_end = T_END if model.heads is None else args.heads_t_end
        if t_end != T_END:
            name += f", to t={t_end:g}"
        B = max(1, int(round(B * args.fraction)))
        name = name if args.fraction == 1.0 else name.replace("B=", "B (issue)=") + f", run with B={B}"
        X0 = np.stack([uniform_sphere(n, d, s) for s in range(B)])
        loop = min(args.loop_systems, B)
        numba_ok = numba_available()
        if numba_ok:  # compile (or load the cache) before any timing
            simulate(model, X0[:2], DT, solver=numba_solver)
        wall_s = {k: [] for k in CONTENDERS}
        cpu_s = {k: [] for k in CONTENDERS}
        finals = {}
        for r in range(args.rounds):
            order = list(CONTENDERS) if r % 2 == 0 else list(reversed(CONTENDERS))
            for who in order:
                if who in args.skip:
                    continue
                start, cpu = time.perf_counter(), time.process_time()
                if who in ("ensemble", "numba"):
                    if who == "numba" and not numba_ok:
                        continue
                    finals[who] = simulate(model, X0, t_end, solver=numba_solver if who == "numba" else solver,
                                           save=save).X[-1]
                elif who == "loop":
                    finals[who] = np.stack([simulate(model, X0[b], t_end, solver=solver, save=save).X[-1]
                                            for b in range(loop)])
                elif torch_ok:
                    finals[who] = torch_rk4(model, X0, t_end, DT)
                else:
                    continue
                size = B if who != "loop" else loop
                wall_s[who].append((time.perf_counter() - start) / size)
                cpu_s[who].append((time.process_time() - cpu) / size)
                print(f"  round {r + 1}/{args.rounds} {name}: {who} {cpu_s[who][-1] * size:.1f} s CPU",
                      file=sys.stderr, flush=True)

        def rate(times):  # systems per second from the median time per system (None: not run)
            return 1.0 / float(np.median(times)) if times else None

        wall = {f"{k}_wall_systems_per_s": rate(v) for k, v in wall_s.items()}
        rates = {k: rate(v) for k, v in cpu_s.items()}  # one thread each: CPU time is the fair measure here

        def ratio(a, b):  # None when either contender did not run
            return a / b if a and b else None

        def diff(a, b, rows=None):
            if a not in finals or b not in finals:
                return None
            return float(np.abs(finals[a][:rows] - finals[b]).max()) if rows else float(np.abs(finals[a] - finals[b]).max())

        row = {"case": name, "B": B, "n": n, "d": d, "t_end": t_end,
               "ensemble_systems_per_s": rates["ensemble"], "numba_systems_per_s": rates["numba"],
               "loop_systems_per_s": rates["loop"], "torch_systems_per_s": rates["torch"],
               "ensemble_over_loop": ratio(rates["ensemble"], rates["loop"]),
               "ensemble_over_torch": ratio(rates["ensemble"], rates["torch"]),
               "numba_over_loop": ratio(rates["numba"], rates["loop"]),
               "numba_over_torch": ratio(rates["numba"], rates["torch"]),
               **wall, "cpu_seconds_per_system": cpu_s,
               "max_diff_ensemble_loop": diff("ensemble", "loop", loop),
               "max_diff_numba_ensemble": diff("numba", "ensemble"),
               "max_diff_numba_loop": diff("numba", "loop", loop),
               "max_diff_ensemble_torch": diff("ensemble", "torch"),
               "max_diff_numba_torch": diff("numba", "torch")}
        rows.append(row)
        if not args.json:
            def fmt(v, spec):
                return "-" if v is None else format(v, spec)
            print(f"{name:36s} ensemble {fmt(row['ensemble_systems_per_s'], '8.2f')}/s  numba "
                  f"{fmt(row['numba_systems_per_s'], '8.2f')}/s  loop {fmt(row['loop_systems_per_s'], '7.2f')}/s  "
                  f"torch {fmt(row['torch_systems_per_s'], '8.2f')}/s  ensemble/loop {fmt(row['ensemble_over_loop'], '.1f')}x  "
                  f"ensemble/torch {fmt(row['ensemble_over_torch'], '.2f')}x  numba/loop {fmt(row['numba_over_loop'], '.1f')}x  "
                  f"numba/torch {fmt(row['numba_over_torch'], '.2f')}x  max |diff| ensemble-loop "
                  f"{fmt(row['max_diff_ensemble_loop'], '.1e')} numba-ensemble {fmt(row['max_diff_numba_ensemble'], '.1e')} "
                  f"numba-loop {fmt(row['max_diff_numba_loop'], '.1e')} ensemble-torch "
                  f"{fmt(row['max_diff_ensemble_torch'], '.1e')} numba-torch {fmt(row['max_diff_numba_torch'], '.1e')}",
                  flush=True)
    load_after = os.getloadavg()
    out = {"rows": rows, "t_end": T_END, "dt": DT, "rounds": args.rounds, "load_average_before": load_before,
           "load_average_after": load_after, "cores": os.cpu_count(), "threads": os.environ.get("OMP_NUM_THREADS")}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"systems per CPU second (one thread each), median of {args.rounds} interleaved rounds; wall-time "
              f"ratios in --json; load average before {load_before[0]:.1f}, after {load_after[0]:.1f} on "
              f"{os.cpu_count()} cores (shared machine: noisy)")


if __name__ == "__main__":
    main()
