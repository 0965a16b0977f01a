"""The benchmark machinery (not its timings): the floor computes the field's arithmetic, the reports are complete."""
import numpy as np

from numerics.bench.adaptive_evals import benchmark_adaptive
from numerics.bench.field_floor import field_bound_seconds, hardware_rates, make_floor
from numerics.bench.simulate_share import benchmark_simulate
from numerics.core.trajectory import uniform_sphere


def test_floor_is_exp_gram_times_x():
    X = uniform_sphere(50, 3, 0)
    want = np.exp(X @ X.T) @ X
    got = make_floor(X, block=7)()
    assert np.max(np.abs(got - want)) <= 1e-13 * np.max(np.abs(want))


def test_hardware_rates_and_bound():
    rates = hardware_rates(repeats=1, gemm_size=64, exp_entries=1024)
    assert rates["gemm_flops_per_second"] > 0 and rates["exp_per_second"] > 0
    bound = field_bound_seconds(100, 3, {"gemm_flops_per_second": 1.6e5, "exp_per_second": 1e4})
    assert abs(bound - 2.0) < 1e-12  # 4 n^2 (d+1) / gemm rate + n^2 / exp rate: 1 s + 1 s


def test_simulate_and_adaptive_reports():
    r = benchmark_simulate(n=32, d=3, steps=2, repeats=1)
    assert r["frames"] == 3 and r["simulate_seconds"] > 0 and isinstance(r["within_target"], bool)
    report = benchmark_adaptive(n=6, t_end=2.0, tolerances=(1e-6, 1e-8))
    assert set(report["runs"]) == {"adaptive", "dp5", "dop853", "scipy-dop853"}
    assert [r["method_used"] for r in report["runs"]["adaptive"]] == ["dop853", "dop853"]
    for runs in report["runs"].values():
        assert all(run["evaluations"] > 0 and run["error"] < 1e-4 for run in runs)
