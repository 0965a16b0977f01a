"""Ensemble throughput: one batched ``simulate`` against a loop of single calls and a batched torch RK4.

Run: OMP_NUM_THREADS=1 nice python benchmarks/bench_ensembles.py [--rounds 3] [--loop-systems 32] [--json]
(torch is needed for the third contender only: ``pip install torch==2.13.0``; without it that column says so).

Cases (the issue's): B = 1024 systems of n = 32 on S^1 and on S^2, and B = 256 systems of n = 64 in d = 16 with
8 heads (k = 2, scale 1/sqrt(k), random Q, K, V, W), ``sa`` to t = 20 with RK4 (dt = 0.05, 400 steps).

Contenders, timed interleaved in every round (the minimum over rounds is reported, in systems per CPU second:
each contender runs on one thread, and on a shared machine the process's CPU time is the fair measure; the
wall-time rates are in ``--json``):

- ``ensemble``: ``simulate(model, X0 (B, n, d), 20, solver=Solver("rk4", dt=0.05))`` (energies included);
- ``loop``: ``simulate(model, X0[b], ...)`` for the first ``--loop-systems`` members (a loop over all B would
  take minutes; systems per second do not depend on how many are looped);
- ``torch``: a float64 batched RK4 written the way the papers' authors write theirs: ``torch.bmm`` for the
  logits, ``torch.softmax``, ``torch.bmm`` for the values, the projection and a renormalisation after each step
  (no energies), one thread (``torch.set_num_threads(1)``).

Equal accuracy: the three integrate the same equations with the same RK4 steps; the largest difference of the
final states (ensemble vs loop: bitwise equal; ensemble vs torch: rounding) is printed. One core: run with
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
from numerics.core.model import Model, SaveAt, Solver  # noqa: E402
from numerics.core.trajectory import simulate, uniform_sphere  # noqa: E402

T_END, DT = 20.0, 0.05


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
        Q, K, V, W = (torch.from_numpy(np.asarray(a)) for a in (h.Q, h.K, h.V, h.W))
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loop-systems", type=int, default=32)
    ap.add_argument("--fraction", type=float, default=1.0,
                    help="run B * fraction members (systems per second barely depend on B once it is large; the "
                         "issue's sizes are fraction 1)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    solver = Solver("rk4", dt=DT, backend="direct")
    save = SaveAt(every=40)
    rows = []
    torch_ok = have_torch()
    load_before = os.getloadavg()
    for name, model, B, n, d in cases():
        B = max(1, int(round(B * args.fraction)))
        name = name if args.fraction == 1.0 else name.replace("B=", "B (issue)=") + f", run with B={B}"
        X0 = np.stack([uniform_sphere(n, d, s) for s in range(B)])
        loop = min(args.loop_systems, B)
        best = {"ensemble": np.inf, "loop": np.inf, "torch": np.inf}
        best_cpu = dict(best)
        finals = {}
        for r in range(args.rounds):
            order = ["ensemble", "loop", "torch"] if r % 2 == 0 else ["torch", "loop", "ensemble"]
            for who in order:
                start, cpu = time.perf_counter(), time.process_time()
                if who == "ensemble":
                    finals[who] = simulate(model, X0, T_END, solver=solver, save=save).X[-1]
                elif who == "loop":
                    finals[who] = np.stack([simulate(model, X0[b], T_END, solver=solver, save=save).X[-1]
                                            for b in range(loop)])
                elif torch_ok:
                    finals[who] = torch_rk4(model, X0, T_END, DT)
                else:
                    continue
                size = B if who != "loop" else loop
                best[who] = min(best[who], (time.perf_counter() - start) / size)
                best_cpu[who] = min(best_cpu[who], (time.process_time() - cpu) / size)
        wall = {f"{k}_wall_systems_per_s": (1 / v if np.isfinite(v) else None) for k, v in best.items()}
        best = best_cpu  # one thread each: CPU time is the fair measure on a shared machine (wall time is printed too)
        row = {"case": name, "B": B, "n": n, "d": d,
               "ensemble_systems_per_s": 1 / best["ensemble"], "loop_systems_per_s": 1 / best["loop"],
               "torch_systems_per_s": 1 / best["torch"] if torch_ok else None,
               "ensemble_over_loop": best["loop"] / best["ensemble"],
               "ensemble_over_torch": best["torch"] / best["ensemble"] if torch_ok else None, **wall,
               "max_diff_ensemble_loop": float(np.abs(finals["ensemble"][:loop] - finals["loop"]).max()),
               "max_diff_ensemble_torch": (float(np.abs(finals["ensemble"] - finals["torch"]).max())
                                           if torch_ok else None)}
        rows.append(row)
        if not args.json:
            torch_text = (f"torch {row['torch_systems_per_s']:8.1f}/s  ensemble/torch {row['ensemble_over_torch']:.2f}x"
                          if torch_ok else "torch not installed")
            print(f"{name:28s} ensemble {row['ensemble_systems_per_s']:8.1f}/s  loop {row['loop_systems_per_s']:7.2f}/s "
                  f" ensemble/loop {row['ensemble_over_loop']:6.1f}x  {torch_text}  "
                  f"max |diff| loop {row['max_diff_ensemble_loop']:.1e} torch "
                  f"{row['max_diff_ensemble_torch'] if row['max_diff_ensemble_torch'] is None else format(row['max_diff_ensemble_torch'], '.1e')}",
                  flush=True)
    load_after = os.getloadavg()
    out = {"rows": rows, "t_end": T_END, "dt": DT, "rounds": args.rounds, "load_average_before": load_before,
           "load_average_after": load_after, "cores": os.cpu_count(), "threads": os.environ.get("OMP_NUM_THREADS")}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
            print(f"systems per CPU second (one thread each), min over {args.rounds} interleaved rounds; wall-time "
              f"ratios in --json; load average before {load_before[0]:.1f}, after {load_after[0]:.1f} on "
              f"{os.cpu_count()} cores (shared machine: noisy)")


if __name__ == "__main__":
    main()
