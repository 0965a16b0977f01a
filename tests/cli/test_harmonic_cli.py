"""The harmonic backend and benchmark suite on the command line: simulate --backend harmonic, the one-line
refusals naming the direct path, bench --suite harmonic at small sizes."""
import numpy as np

from tests.cli.helpers import bad, run_json


def test_simulate_with_the_harmonic_backend(tmp_path, capsys):
    out = str(tmp_path / "t.npz")
    payload = run_json(capsys, ["simulate", "--model", "sa", "--n", "400", "--d", "3", "--beta", "4", "--t-end", "0.2",
                                "--dt", "0.1", "--backend", "harmonic", "--out", out])
    assert payload["backend"] == "harmonic"
    from numerics.core.trajectory import Trajectory

    run = Trajectory.load(out)
    assert run.meta["backend_details"]["degree"] == 21 and run.meta["backend_details"]["tol"] == 1e-10
    assert np.all(np.diff(run.energy) > 0)


def test_harmonic_backend_refusals_name_the_direct_path(tmp_path, capsys):
    out = str(tmp_path / "t.npz")
    common = ["simulate", "--model", "sa", "--n", "50", "--beta", "1", "--t-end", "0.1", "--dt", "0.1",
              "--backend", "harmonic", "--out", out]
    assert "--backend direct" in bad(capsys, common + ["--d", "2"])
    np.savez(tmp_path / "m.npz", Q=np.diag([1.0, 2.0, 3.0]))
    assert "--backend direct" in bad(capsys, common + ["--d", "3", "--matrices", str(tmp_path / "m.npz")])
    assert "--backend direct" in bad(capsys, common + ["--d", "3", "--beta", "5000"])


def test_bench_harmonic_small(capsys, monkeypatch):
    from numerics.harmonic import bench

    monkeypatch.setattr(bench, "CROSSOVER_NS", (64, 2048))
    payload = run_json(capsys, ["bench", "--suite", "harmonic", "--harmonic-n", "3000", "--harmonic-sim-n", "600",
                                "--harmonic-t-end", "0.3", "--repeats", "1"])
    report = payload["harmonic"]
    assert [r["beta"] for r in report["large"]] == [1.0, 4.0]
    assert all(r["max_error_on_subsample"] <= 1e-10 for r in report["large"])
    assert [c["beta"] for c in report["crossover"]] == [1.0, 4.0, 9.0]
    sim = report["simulation"]
    assert sim["backend"] == "harmonic" and sim["trajectory_difference_short"] < 1e-7
    assert "harmonic-n must be >= 2" in bad(capsys, ["bench", "--suite", "harmonic", "--harmonic-n", "1"])
    assert "hours" in bad(capsys, ["bench", "--suite", "harmonic", "--harmonic-sim-n", "1000000000"])
