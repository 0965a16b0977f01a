"""CLI: attnflow phase, simulate --noise, meanfield --noise."""
import numpy as np

from tests.cli.helpers import bad, run_json


def test_phase_json_kuramoto(capsys):
    out = run_json(capsys, ["phase", "--beta", "0", "--d", "2", "--noise", "0.25"])
    assert out["critical_noise"] == 0.5 and out["transition"] == "continuous"
    assert abs(out["branch_at"][0]["r"] - 0.831462024754257) < 1e-9


def test_phase_plot_and_particles(capsys, tmp_path):
    png = tmp_path / "phase.png"
    out = run_json(capsys, ["phase", "--beta", "3", "--noise", "1.0", "--particles", "30", "--t-end", "2",
                            "--dt", "0.05", "--plot", str(png)])
    assert out["transition"] == "discontinuous" and out["fold"][0] > out["critical_noise"]
    assert png.stat().st_size > 10_000 and len(out["particles"]) == 2


def test_phase_bad_input(capsys):
    assert "--particles needs --noise" in bad(capsys, ["phase", "--beta", "1", "--particles", "10"])
    assert "noise" in bad(capsys, ["phase", "--beta", "1", "--noise", "-1"])
    assert ".png" in bad(capsys, ["phase", "--beta", "1", "--plot", "x.txt"])


def test_simulate_noise_reproducible(capsys, tmp_path):
    outs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.npz"
        out = run_json(capsys, ["simulate", "--model", "usa", "--beta", "1", "--n", "10", "--d", "3", "--t-end",
                                "0.3", "--dt", "0.05", "--noise", "0.4", "--noise-seed", "5", "--out", str(path)])
        assert out["noise"] == 0.4 and out["noise_seed"] == 5
        outs.append(np.load(path)["X"])
    assert np.array_equal(*outs)
    assert "noise" in bad(capsys, ["simulate", "--model", "usa", "--beta", "1", "--n", "10", "--d", "3", "--t-end",
                                   "0.3", "--noise", "nan", "--out", str(tmp_path / "c.npz")])


def test_meanfield_noise(capsys):
    out = run_json(capsys, ["meanfield", "--beta", "2", "--model", "usa", "--grid", "32", "--modes", "2",
                            "--noise", "0.7", "--t-end", "40", "--amplitude", "1e-6"])
    assert out["noise"] == 0.7
    assert abs(out["measured_rates"][0] - out["predicted_rates"][0]) < 1e-4 * abs(out["predicted_rates"][0])
    assert "no growing mode" in bad(capsys, ["meanfield", "--beta", "2", "--model", "usa", "--noise", "0.9"])


def test_fokker_planck_rates_and_steady_state(capsys, tmp_path):
    out = run_json(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.3", "--L", "6", "--t-end", "20"])
    assert out["mass_drift"] < 1e-13
    for row in out["rates"][:4]:
        assert abs(row["measured_m_nonzero_max"] - row["predicted"]) < 1e-4 * max(1, abs(row["predicted"]))
        assert abs(row["measured_m_nonzero_min"] - row["predicted"]) < 1e-4 * max(1, abs(row["predicted"]))
    png = tmp_path / "fp.png"
    out = run_json(capsys, ["fokker-planck", "--beta", "1", "--noise", "0.3", "--L", "8", "--start", "clustered",
                            "--t-end", "25", "--plot", str(png)])
    assert abs(out["final_r"] - out["branch_r"]) < 1e-4 and png.stat().st_size > 10_000


def test_fokker_planck_bad_input(capsys):
    assert "--t-end" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "5"])
    assert "noise" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "nan"])
    assert "L" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.1", "--L", "1000"])
    assert "blew up" in bad(capsys, ["fokker-planck", "--beta", "2", "--noise", "0.1", "--L", "8", "--dt", "5",
                                     "--t-end", "200"])
