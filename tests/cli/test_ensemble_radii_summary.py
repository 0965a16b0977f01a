"""The batch summary of ``attnflow simulate --batch`` reports the radii of a normalisation scheme like the single
run: ``norm``, ``centering``, ``final_radius_min``/``max`` over every member, and each member's own final radii
(member b's equal to the single run of seed --seed + b)."""
from __future__ import annotations


from numerics.core.trajectory import Trajectory
from tests.cli.helpers import run_json

BASE = ["simulate", "--model", "sa", "--n", "5", "--d", "3", "--beta", "1", "--t-end", "0.5"]


def test_batch_summary_has_the_single_runs_radii(tmp_path, capsys):
    out, one = str(tmp_path / "b.npz"), str(tmp_path / "one.npz")
    batch = run_json(capsys, BASE + ["--batch", "2", "--norm", "pre", "--radius0", "2", "--out", out])
    single = run_json(capsys, BASE + ["--seed", "1", "--norm", "pre", "--radius0", "2", "--out", one])
    radius = Trajectory.load(out).radius[-1]
    assert batch["norm"] == single["norm"] == "pre" and batch["centering"] == single["centering"]
    assert batch["final_radius_min"] == float(radius.min()) and batch["final_radius_max"] == float(radius.max())
    member = batch["members"][1]
    assert member["final_radius_min"] == single["final_radius_min"]
    assert member["final_radius_max"] == single["final_radius_max"]
    assert member["final_radius_min"] < member["final_radius_max"]
    assert all(m["final_radius_min"] == float(radius[b].min()) for b, m in enumerate(batch["members"]))


def test_batch_summary_on_the_sphere_has_no_radii(tmp_path, capsys):
    batch = run_json(capsys, BASE + ["--batch", "2", "--out", str(tmp_path / "s.npz")])
    assert "norm" not in batch and "final_radius_min" not in batch
    assert all("final_radius_min" not in m for m in batch["members"])
