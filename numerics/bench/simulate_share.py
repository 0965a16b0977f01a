"""How much of ``simulate`` is spent outside field evaluations (goal: under 10%).

``simulate`` (``rk4``, a frame and its energy saved every step) and the same number of bare field
evaluations (4 per step) are timed interleaved in one process (the order alternating between rounds); the
share outside the field is 1 - field time / simulate time, from the minima over the rounds
(``outside_share``) and as the median of the per-round pairs (``outside_share_paired_median``, robust to load
that changes between rounds), and from this process's CPU time (``time.process_time``, median of the rounds:
on one thread the least disturbed by other processes, which take the core away without adding CPU time
here). The goal counts as met when the two wall-time shares are below it. It covers the integrator's vector arithmetic, the
renormalisation, the copies of the saved frames and the energy of every frame. One BLAS thread
(threadpoolctl); the load averages (``os.getloadavg``) before and after are recorded.
"""
from __future__ import annotations

import numpy as np

from numerics.common.errors import require_int, require_real
from numerics.common.limits import check_work
from numerics.common.timing import interleaved_rounds
from numerics.core.model import Model, SaveAt, Solver
from numerics.core.trajectory import simulate, uniform_sphere

#: goal: simulate spends less than this fraction of its time outside field evaluations
OUTSIDE_TARGET = 0.10


def check_simulate_work(n: int, d: int, steps: int, repeats: int) -> None:
    """Refuse, before any work, a simulate benchmark beyond the work limit (2 contenders, 5 evaluations a step)."""
    check_work(2.0 * repeats * 5 * steps * float(n) * n * (2 * d + 8), f"a simulate benchmark with n={n}, "
                                                                       f"{repeats} repeats")


def benchmark_simulate(n: int = 2048, d: int = 3, beta: float = 1.0, steps: int = 10, dt: float = 0.05,
                       repeats: int = 3, seed: int = 0) -> dict:
    """Time ``simulate`` (rk4, ``steps`` steps, every frame saved) against 4 ``steps`` field evaluations."""
    n = require_int(n, "n", minimum=2)
    d = require_int(d, "d", minimum=2)
    steps = require_int(steps, "steps", minimum=1)
    repeats = require_int(repeats, "repeats", minimum=1)
    beta = require_real(beta, "beta")
    check_simulate_work(n, d, steps, repeats)
    model = Model("sa", beta)
    X0 = uniform_sphere(n, d, seed)
    field_fn, _ = model.vector_field(n, d, "direct")
    solver, save = Solver("rk4", dt=dt), SaveAt(every=1)

    def run_simulate():
        return simulate(model, X0, steps * dt, solver=solver, save=save)

    def run_fields():
        for _ in range(4 * steps):
            field_fn(X0)

    import os

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        load_before = os.getloadavg()
        traj = run_simulate()
        # the order alternates between rounds, so that neither side always runs first
        rounds = interleaved_rounds([run_simulate, run_fields], repeats, alternate=True)
        load_after = os.getloadavg()
    shares = [1.0 - f_w / s_w for (s_w, _), (f_w, _) in rounds]
    cpu_shares = [1.0 - f_c / s_c for (_, s_c), (_, f_c) in rounds]
    t_sim, t_field = min(s[0] for s, _ in rounds), min(f[0] for _, f in rounds)
    outside = 1.0 - t_field / t_sim
    paired = float(np.median(shares))
    cpu = float(np.median(cpu_shares))
    return {"n": n, "d": d, "beta": beta, "steps": steps, "method": "rk4", "frames": int(traj.times.size),
            "simulate_seconds": t_sim, "field_seconds": t_field, "outside_share": outside,
            "energy_seconds_last_run": float(traj.meta["timings"]["energy"]),
            "outside_share_paired_median": paired, "outside_shares_per_round": shares,
            "outside_share_cpu_median": cpu, "outside_cpu_shares_per_round": cpu_shares,
            "target": OUTSIDE_TARGET, "within_target": outside < OUTSIDE_TARGET and paired < OUTSIDE_TARGET,
            "load_average_before": list(load_before), "load_average_after": list(load_after), "threads": 1}
