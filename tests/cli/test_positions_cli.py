"""CLI: ``simulate --alibi/--rope/--positions`` and ``attnflow lost-in-the-middle`` (tables, --json, --plot, one-line
errors)."""
from __future__ import annotations

import numpy as np
import pytest

from numerics.core.trajectory import Trajectory
from tests.cli.helpers import bad, run_json


def test_simulate_with_positions_saves_and_resumes(capsys, tmp_path):
    out, more = tmp_path / "p.npz", tmp_path / "q.npz"
    labels = tmp_path / "labels.txt"
    labels.write_text("0 0.5 1 1.5 2 4")
    p = run_json(capsys, ["simulate", "--model", "sa", "--n", "6", "--d", "3", "--beta", "1", "--t-end", "0.5",
                          "--alibi", "0.5", "--rope", "100", "--positions", str(labels), "--causal", "--out", str(out)])
    assert p["architecture"] == "causal mask, ALiBi lambda=0.5, RoPE base=100, 6 position labels"
    traj = Trajectory.load(out)
    assert traj.model.alibi == 0.5 and traj.model.rope == 100.0
    np.testing.assert_array_equal(traj.model.positions, [0, 0.5, 1, 1.5, 2, 4])
    q = run_json(capsys, ["simulate", "--resume", str(out), "--t-end", "1", "--out", str(more)])
    assert q["t_end"] == 1.0 and q["architecture"] == p["architecture"]


@pytest.mark.parametrize("extra, message", [
    (["--alibi", "-1"], "alibi lambda must be >= 0"),
    (["--rope", "0"], "rope base must be > 0"),
    (["--rope", "nan"], "rope base must be finite"),
    (["--positions", "LABELS"], "position labels need a position mechanism"),
    (["--alibi", "1", "--positions", "SHORT"], "3 position labels for 6 tokens"),
    (["--alibi", "1", "--positions", "/nonexistent/p.txt"], "No such file"),
    (["--alibi", "1", "--positions", "/dev/zero"], "not a regular file"),
    (["--alibi", "1", "--kernel", "exp(beta*s)"], "user kernel cannot be combined"),
    (["--alibi", "1", "--backend", "fourier", "--d", "2"], "no positions"),
])
def test_simulate_position_errors(capsys, tmp_path, extra, message):
    (tmp_path / "l.txt").write_text("0 1 2 3 4 5")
    (tmp_path / "s.txt").write_text("0 1 2")
    extra = [str(tmp_path / "l.txt") if e == "LABELS" else str(tmp_path / "s.txt") if e == "SHORT" else e
             for e in extra]
    base = ["simulate", "--model", "sa", "--n", "6", "--beta", "1", "--t-end", "0.1", "--out", str(tmp_path / "o.npz")]
    if "--d" not in extra:
        base += ["--d", "3"]
    assert message in bad(capsys, base + extra)


def test_lost_in_the_middle_command(capsys, tmp_path):
    png = tmp_path / "litm.png"
    p = run_json(capsys, ["lost-in-the-middle", "--beta", "1", "--plot", str(png)])
    assert abs(p["t_crit"] - 2.457488980328256) < 1e-12  # the authors' script's formula at lambda = 1, M = 8, 20 modes
    assert [q["u_shaped"] for q in p["profiles"]] == [True, False, False]
    assert p["profiles"][0]["right_end_slope"] > 0 > p["profiles"][2]["right_end_slope"]
    assert png.stat().st_size > 1000
    q = run_json(capsys, ["lost-in-the-middle", "--beta", "1", "--time-unit", "sa", "--times", "1.5",
                          "--particles", "24", "--runs", "3", "--bins", "3"])
    part = q["particles"]["profiles"][0]
    assert len(part["mean"]) == 3 and all(np.isfinite(part["mean"])) and all(e > 0 for e in part["stderr"])
    assert abs(q["t_crit"] - 1.0 * np.i0(1.0) * p["t_crit"]) < 1e-9  # sa time: beta I_0(beta) x paper time


@pytest.mark.parametrize("extra, message", [
    (["--alibi", "-1"], "lambda must be >= 0"),
    (["--alibi", "0"], "lambda = 0 gives t_crit = 0"),
    (["--beta", "0"], "beta must be > 0"),
    (["--window", "0"], "M must be > 0"),
    (["--modes", "1000"], "n_max must be <= 200"),
    (["--times", "1,x"], "comma-separated"),
    (["--times", "-1"], "time must be > 0"),
    (["--particles", "16"], "give --time-unit sa"),
    (["--time-unit", "sa", "--particles", "100000"], "particles must be <= 512"),
    (["--time-unit", "sa", "--particles", "512", "--runs", "10000", "--times", "500"], "would take about"),
    (["--beta", "700", "--times", "1"], "overflows"),
])
def test_lost_in_the_middle_errors(capsys, extra, message):
    args = ["lost-in-the-middle"] + (["--beta", "1"] if "--beta" not in extra else []) + extra
    assert message in bad(capsys, args)
