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


def test_field_work_estimate_counts_every_contender_and_the_warm_up(monkeypatch):
    """check_field_work costs (repeats + 1) rounds (a warm-up and the repeats) of the six field-like contenders
    (field, floor, general QK, fused, two peers) and the dgemm/exp rate contenders, for every d."""
    from numerics.bench import field_floor

    seen = []
    monkeypatch.setattr(field_floor, "check_work", lambda flops, what: seen.append(flops))
    assert field_floor.check_field_work(1000, 4, dims=(3, 64)) == (1000, 4)
    fields = sum(1000.0**2 * (2 * d + 8) for d in (3, 64))
    assert seen[0] >= 5 * 6 * fields + 5 * 2 * 2.0 * 1024**3


def _fake_module(name, **attrs):
    import types

    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def test_benchmark_field_restores_torch_threads_and_reports_rates_per_d(monkeypatch, capsys):
    """torch is set to one thread for the timing and set back afterwards; the bench JSON records the hardware
    rates of every d (they are measured in each d's rounds). threadpoolctl and torch are stand-ins here."""
    import contextlib
    import sys

    from numerics.bench.field_floor import benchmark_field
    from tests.cli.helpers import run_json

    threads = {"n": 7, "calls": []}

    def set_num_threads(k):
        threads["calls"].append(k)
        threads["n"] = k

    def sdpa(*args, **kwargs):
        raise RuntimeError("stand-in torch: no attention")  # the peer is skipped, as a broken install would be

    functional = _fake_module("torch.nn.functional", scaled_dot_product_attention=sdpa)
    nn = _fake_module("torch.nn", functional=functional)
    torch = _fake_module("torch", nn=nn, from_numpy=np.asarray, get_num_threads=lambda: threads["n"],
                         set_num_threads=set_num_threads)
    for name, module in (("torch", torch), ("torch.nn", nn), ("torch.nn.functional", functional)):
        monkeypatch.setitem(sys.modules, name, module)
    try:
        import threadpoolctl  # noqa: F401
    except ModuleNotFoundError:
        monkeypatch.setitem(sys.modules, "threadpoolctl",
                            _fake_module("threadpoolctl", threadpool_limits=lambda k: contextlib.nullcontext()))
    rows = benchmark_field(n=16, dims=(3,), repeats=1, fused=False)
    assert threads["calls"] == [1, 7] and threads["n"] == 7 and rows[0]["peers"] == {}
    payload = run_json(capsys, ["bench", "--suite", "field", "--n", "16", "--repeats", "1"])
    assert [h["d"] for h in payload["hardware"]] == [3, 64]
    assert [{k: v for k, v in h.items() if k != "d"} for h in payload["hardware"]] == \
        [r["rates"] for r in payload["results"]]


def test_interleaved_rounds_alternate_the_order_and_keep_each_functions_slot():
    """Entry k of a round is function k's time whatever the order it ran in; alternate reverses every other round
    (the simulate suite's pairing relies on both); best_interleaved is the minimum over the rounds."""
    from numerics.common.timing import best_interleaved, interleaved_rounds

    calls = []
    fns = [lambda: calls.append("a"), lambda: calls.append("b")]
    rounds = interleaved_rounds(fns, 3, alternate=True)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert len(rounds) == 3 and all(len(r) == 2 and all(w >= 0 and c >= 0 for w, c in r) for r in rounds)
    calls.clear()
    interleaved_rounds(fns, 2)
    assert calls == ["a", "b", "a", "b"]
    import time

    slow, fast = (lambda: time.sleep(0.02)), (lambda: None)
    t_slow, t_fast = best_interleaved([slow, fast], 2)
    assert t_slow >= 0.02 > t_fast  # each function keeps its own slot
    slots = interleaved_rounds([slow, fast], 2, alternate=True)  # the reversed round too
    assert all(r[0][0] >= 0.02 > r[1][0] for r in slots)
