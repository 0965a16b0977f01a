"""Systems per core-hour of the ensemble pipeline, with and without the one-cluster event (the sweeps guide's table).

Run: nice python benchmarks/bench_events_throughput.py [--repeats 2] [--json] [--cases d2,d3,heads]

Each case integrates B systems (iid uniform starts, betas geometric over [0.5, 16], the phase diagram's range) with
RK4, dt = 0.1, to t = 50, in one process with one BLAS thread, as one ensemble (``simulate`` with X0 of shape
(B, n, d), backend ``direct``: the NumPy tiles, every member bit for bit its single run), without and with
``events="one-cluster:1e-3"``, interleaved (``--repeats`` rounds; the best round of each is kept: the machine is
shared). Systems per core-hour = 3600 B / CPU seconds of the (single-threaded) process. The case with 8 heads (n = 64, d = 16, Q_h, K_h random, V_h = I,
W_h = I/8) has no event: the event refuses these heads (W_h^T V_h projects on k of the d coordinates, not c_h I), which the script records.
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

#: case -> (n, d, heads, B)
CASES = {"d2": (32, 2, 0, 256), "d3": (32, 3, 0, 256), "heads": (64, 16, 8, 16)}
T_END, DT, EPS = 50.0, 0.1, 1e-3


def model_and_start(case: str):
    from numerics.core.blocks import MultiHead
    from numerics.core.members import Members
    from numerics.core.model import Model
    from numerics.core.sampling import uniform_sphere

    n, d, heads, B = CASES[case]
    rng = np.random.default_rng(2024)
    X0 = np.stack([uniform_sphere(n, d, rng) for _ in range(B)])
    betas = np.geomspace(0.5, 16.0, B)
    if heads:
        k = d // heads
        blocks = MultiHead(Q=rng.standard_normal((heads, k, d)), K=rng.standard_normal((heads, k, d)),
                           V=np.tile(np.eye(k, d), (heads, 1, 1)), W=np.tile(np.eye(k, d), (heads, 1, 1)) / heads)
        return Model("sa", 1.0, heads=blocks), X0, Members(beta=betas)
    return Model("sa", 1.0), X0, Members(beta=betas)


def one(case: str, event: str | None) -> dict:
    from numerics.common.errors import InputError
    from numerics.core.model import SaveAt, Solver
    from numerics.core.simulate import simulate

    model, X0, members = model_and_start(case)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        traj = simulate(model, X0, T_END, solver=Solver("rk4", dt=DT, backend="direct"), save=SaveAt(every=500),
                        members=members, events=event)
    except InputError as exc:
        return {"refused": str(exc)}
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    # one thread: the process's CPU time is the core time (the wall time on a shared machine also holds waiting)
    out = {"seconds": cpu, "wall_seconds": seconds, "systems_per_core_hour": 3600.0 * X0.shape[0] / cpu,
           "B": int(X0.shape[0])}
    record = traj.meta.get("events")
    if record:
        out.update({"stopped": record["count"],
                    "member_steps_fraction": record["member_steps"] / record["member_steps_without"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    results: dict = {}
    with threadpool_limits(limits=1):
        for _ in range(args.repeats):
            for case in args.cases.split(","):
                for label, event in (("without", None), ("with", f"one-cluster:{EPS:g}")):
                    got = one(case, event)
                    best = results.setdefault(case, {}).get(label)
                    if best is None or got.get("seconds", np.inf) < best.get("seconds", np.inf):
                        results[case][label] = got
    out = {"cases": {c: {"n": CASES[c][0], "d": CASES[c][1], "heads": CASES[c][2], **r} for c, r in results.items()},
           "t_end": T_END, "dt": DT, "event": f"one-cluster:{EPS:g}", "load_average": os.getloadavg(),
           "cores": os.cpu_count()}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for case, r in out["cases"].items():
        for label in ("without", "with"):
            got = r[label]
            text = (f"refused ({got['refused']})" if "refused" in got else
                    f"{got['systems_per_core_hour']:.3g} systems/core-hour ({got['seconds']:.1f} s for B = {got['B']}"
                    + (f"; {got['stopped']} stopped, member-steps {got['member_steps_fraction']:.0%}" if "stopped" in got
                       else "") + ")")
            print(f"n={r['n']} d={r['d']} heads={r['heads'] or 1} {label} event: {text}")
    print(f"load average {out['load_average'][0]:.1f} on {out['cores']} cores (shared machine: noisy)")


if __name__ == "__main__":
    main()
