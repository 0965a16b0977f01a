"""Benchmarks of the mean-field area (issue 5). Run: python benchmarks/bench_meanfield.py [--quick]

Targets from the issue: the S^1 PDE with 1024 grid points to t = 50 at beta = 10 in under 10 s; `metastable`
with n = 1e5 on S^1 in under a minute per seed. Prints one line per case (wall time and what was reached).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from numerics.meanfield.metastable import metastable_run  # noqa: E402
from numerics.meanfield.pde import solve_continuity_circle  # noqa: E402
from theory.meanfield import growth_rate_function  # noqa: E402


def bench_pde(model: str, time_unit: str) -> None:
    growth_rate_function(model, 2, time_unit)  # code generation once, outside the timing
    solve_continuity_circle(10.0, model, grid=64, t_end=0.01, time_unit=time_unit)
    start = time.perf_counter()
    h = solve_continuity_circle(10.0, model, grid=1024, t_end=50.0, amplitude=1e-6, seed=0, time_unit=time_unit)
    wall = time.perf_counter() - start
    print(f"pde   model={model:3s} unit={time_unit:9s} grid=1024 beta=10 t_end=50: {wall:6.2f} s  "
          f"stopped={h.stopped} at t={h.t_reached:.4g}  rhs evaluations={h.meta['steps_rhs_evaluations']}  "
          f"mass drift={h.max_mass_drift:.1e}  min rho={h.min_density.min():.3g}")


def bench_metastable(n: int, beta: float) -> None:
    metastable_run(beta, "sa", 200, 0)  # warm-up (code generation)
    start = time.perf_counter()
    r = metastable_run(beta, "sa", n, 0)
    wall = time.perf_counter() - start
    print(f"metastable sa n={n} beta={beta} seed=0: {wall:6.2f} s  clusters={r.observed} "
          f"dominant mode={r.dominant_mode} t_observed={r.t_observed:.3g}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="n = 2e4 instead of 1e5 for metastable")
    args = p.parse_args()
    bench_pde("sa", "natural")
    bench_pde("usa", "rescaled")
    bench_metastable(20_000 if args.quick else 100_000, 8.22)


if __name__ == "__main__":
    main()
