"""CLI: attnflow clusters and attnflow predict-merges (in-process, exit codes, JSON keys, bad input)."""
import re

import numpy as np
import pytest

from numerics.cli import main
from numerics.core.trajectory import simulate
from tests.cli.helpers import json_output as run_json


@pytest.fixture(scope="module")
def traj_file(tmp_path_factory):
    angles = np.array([0.0, 0.02, 0.9, 0.93, 2.4, 2.41])
    X0 = np.column_stack([np.cos(angles), np.sin(angles)])
    traj = simulate("sa", 6.0, 300.0, X0=X0, method="adaptive",
                    save_times=np.concatenate([[0.0], np.geomspace(0.1, 300.0, 50)]), rtol=1e-9, atol=1e-11)
    path = tmp_path_factory.mktemp("clusters") / "traj.npz"
    traj.save(path)
    return str(path)


def test_clusters_json(capsys, traj_file):
    code, data = run_json(capsys, ["clusters", traj_file, "--json"])
    assert code == 0
    for key in ("times", "counts", "merges", "pairwise", "violations", "staircase", "eps"):
        assert key in data
    assert data["counts"][0] == 6 and data["counts"][-1] == 1
    for m in data["merges"]:
        assert set(m) >= {"time", "clusters", "sizes", "new"}
        assert len(m["clusters"]) == len(m["sizes"])
    assert data["pairwise"] is True and data["violations"] == []


def test_clusters_refine_and_plot(capsys, traj_file, tmp_path):
    png = tmp_path / "c.png"
    code, data = run_json(capsys, ["clusters", traj_file, "--eps", "0.05", "--refine", "--time-rtol", "1e-4",
                                   "--plot", str(png), "--json"])
    assert code == 0 and data["refined"] and png.stat().st_size > 1000
    assert data["counts"][0] == 3  # the three pairs are within 0.05 from the start
    assert [sorted(m["sizes"]) for m in data["merges"]] == [[2.0, 2.0], [2.0, 4.0]]
    for m in data["merges"]:
        lo, hi = m["bracket"]
        assert hi - lo <= 1e-9 + 1e-4 * hi
    plateaus = data["staircase"]["plateaus"]
    two = [p for p in plateaus if p["count"] == 2]
    assert len(two) == 1 and two[0]["predicted"] == pytest.approx((4 / 6) ** 2 + (2 / 6) ** 2)
    # cross term (2 * 4 * 2 / 36) e^{-6 (1 - cos 1.5)} ~ 1.2e-3 bounds the excess of the height
    assert 0 <= two[0]["height"] - two[0]["predicted"] <= 1.5e-3


def test_clusters_text(capsys, traj_file):
    """The text table says what the JSON says, and the merges happen in the order the start dictates: the three
    close pairs (separations 0.01, 0.02, 0.03 rad) first, closest first, then the pairs of pairs."""
    code, data = run_json(capsys, ["clusters", traj_file, "--json"])
    assert code == 0
    assert main(["clusters", traj_file]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^merge events\s+5$", out, re.M) and re.search(r"^clusters first/last\s+6 / 1$", out, re.M)
    rows = re.findall(r"^(\S+)\s+\S+\s+\[(\d+), (\d+)\]\s+\[(\S+), (\S+)\]\s+\d+$", out, re.M)
    assert len(rows) == len(data["merges"]) == 5
    for row, merge in zip(rows, data["merges"]):
        assert float(row[0]) == pytest.approx(merge["time"], rel=1e-5)
        assert [int(row[1]), int(row[2])] == merge["clusters"]
        assert [float(row[3]), float(row[4])] == merge["sizes"]
    assert [m["clusters"] for m in data["merges"][:3]] == [[4, 5], [0, 1], [2, 3]]
    assert [sorted(m["sizes"]) for m in data["merges"][3:]] == [[2.0, 2.0], [2.0, 4.0]]


def test_predict_merges(capsys, traj_file):
    code, data = run_json(capsys, ["predict-merges", traj_file, "--at", "0.1", "--eps", "0.05", "--json"])
    assert code == 0
    assert set(data) >= {"at", "clusters", "predicted", "comparison", "order_agrees"}
    assert data["clusters"]["sizes"] == [2.0, 2.0, 2.0]
    assert data["order_agrees"] is True
    # observed times are saved frames (log grid, 16% apart) while predictions are located to 1e-6: the
    # predicted time must not exceed the observed frame and lie within one frame interval before it
    for row in data["comparison"]:
        assert 0.8 < row["ratio"] <= 1.0 + 1e-6
    assert main(["predict-merges", traj_file, "--at", "0.1", "--eps", "0.05"]) == 0
    assert "predicted t" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["clusters", "{f}", "--eps", "-1"], "eps"),
    (["clusters", "/nonexistent/x.npz"], "x.npz"),
    (["predict-merges", "{f}", "--at", "1e9"], "--at"),
    (["predict-merges", "{f}", "--at", "5", "--horizon", "1"], "--horizon"),
])
def test_bad_input_exit_2(capsys, traj_file, argv, match):
    code = main([a.replace("{f}", traj_file) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error:") and match in err[0]


def test_missing_required_option_exits_2(capsys, traj_file):
    with pytest.raises(SystemExit) as info:  # argparse errors exit through the CLI's parser (code 2)
        main(["predict-merges", traj_file])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--at" in err[0]
