"""CLI tests of attnflow frank-wolfe, mean-field-rate, low-temperature and moderate: JSON payloads, plots, and
one-line errors for bad input (the fuzz of tests/cli/test_fuzz_cli.py covers their flags at random)."""
import pytest

from tests.cli.helpers import bad, run_json


def test_frank_wolfe_voronoi_and_nsd(capsys, tmp_path):
    p = run_json(capsys, ["frank-wolfe", "--A", "[[1,0],[0,1]]", "--polygon", "5", "--n", "12", "--layers", "30",
                          "--plot", str(tmp_path / "fw.png"), "--out", str(tmp_path / "fw.npz")])
    assert p["definiteness"] == "psd" and p["all_self_inclusive"] and p["closed_form_deviation"] <= 1e-12
    assert (tmp_path / "fw.png").stat().st_size > 1000 and (tmp_path / "fw.npz").exists()
    q = run_json(capsys, ["frank-wolfe", "--A", "[[-1,0],[0,-1]]", "--n", "15", "--layers", "80", "--step", "0.1"])
    assert q["definiteness"] == "nsd" and q["worst_ratio_per_layer"] <= q["bound_per_layer"] + 1e-12
    assert q["limit_distance_to_origin"] > 1e-6     # a fixed step does not end at the origin


def test_frank_wolfe_persistence_table(capsys):
    p = run_json(capsys, ["frank-wolfe", "--A", "[[1,0],[0,1]]", "--polygon", "4", "--n", "8", "--seed", "3",
                          "--persistence", "12,16"])
    rows = p["persistence"]
    assert len(rows) == 2 and rows[1]["escape_full"] > rows[0]["escape_full"]


@pytest.mark.parametrize("argv, message", [
    (["frank-wolfe", "--A", "[[1,0],[0,1]]", "--beta", "-1"], "beta"),
    (["frank-wolfe", "--A", "[[1,0],[0,1]]", "--step", "2"], "step"),
    (["frank-wolfe", "--A", "[[1,0,0],[0,1,0],[0,0,1]]", "--polygon", "4"], "plane"),
    (["frank-wolfe", "--A", "[[-1,0],[0,-1]]", "--polygon", "4"], "positive definite"),
    (["frank-wolfe", "--A", "[[1,0],[0,1]]", "--persistence", "10"], "polygon"),
    (["frank-wolfe", "--A", "[[1,0],[0,1]]", "--polygon", "4", "--persistence", "a,b"], "comma"),
    (["frank-wolfe", "--A", "[1,2]"], "square"),
    (["mean-field-rate", "--rho0", "1"], "rho0"),
    (["mean-field-rate", "--window", "5"], "window"),
    (["mean-field-rate", "--beta", "100"], "beta"),
    (["low-temperature", "--betas", "0.5"], "betas"),
    (["low-temperature", "--rings", "2"], "rings"),
    (["moderate", "--phase", "alignment", "--V", "[[1,0],[0,1]]"], "identity"),
    (["moderate", "--phase", "pairing", "--sizes", "[1.5, 2]", "--centres", "[0, 1]"], "whole"),
    (["moderate", "--phase", "pairing", "--sizes", "[10]", "--centres", "[0, 1]"], "same length"),
    (["moderate", "--phase", "clustering", "--n", "100000000"], "n"),
])
def test_bad_input_is_one_line(capsys, argv, message):
    assert message in bad(capsys, argv)


def test_mean_field_rate_against_ott_antonsen(capsys, tmp_path):
    p = run_json(capsys, ["mean-field-rate", "--beta", "0", "--grid", "400", "--t-end", "10",
                          "--plot", str(tmp_path / "w.png")])
    assert abs(p["fit"]["rate"] - 0.5) < 5e-3 and p["sharp_rate"] == 0.5
    assert abs(p["W2"][-1] / p["W2_ott_antonsen"][-1] - 1) < 5e-3


def test_low_temperature_table(capsys, tmp_path):
    p = run_json(capsys, ["low-temperature", "--betas", "16,64", "--rings", "30", "--plot", str(tmp_path / "l.png")])
    assert [r["beta"] for r in p["rows"]] == [16.0, 64.0]
    assert 0.9 < p["t_star_slope_in_log_beta"] < 1.1


def test_low_temperature_default_meets_its_stated_accuracy(capsys):
    # independent value: the converged t* and W_2* at beta = 16 (exact radial reduction, 7 digits; issue 43)
    p = run_json(capsys, ["low-temperature", "--betas", "16"])
    (row,) = p["rows"]
    assert p["target_met"] and p["worst_relative_error"] <= p["target_relative_error"]
    assert abs(row["t_star"] - 1.7047) <= row["t_star_error"]
    assert abs(row["W2_star"] - 0.23704) <= row["W2_star_error"]


def test_moderate_phases(capsys):
    p = run_json(capsys, ["moderate", "--phase", "pairing", "--beta", "10"])
    assert abs(p["merge_time"] / p["two_cluster_quadrature"] - 1) < 0.05
    # the merge time is read off 401 saved frames over 1.3 x the quadrature time: the printed bracket is one frame
    assert p["merge_time_resolution"] == pytest.approx(1.3 * p["two_cluster_quadrature"] / 400, rel=1e-12)
    q = run_json(capsys, ["moderate", "--phase", "alignment", "--beta", "8", "--n", "120", "--t-end", "0.5"])
    assert q["rms_distance"][-1] < q["rms_distance"][0]
    r = run_json(capsys, ["moderate", "--phase", "clustering", "--n", "800", "--beta", "8"])
    assert r["t_formed"] > 0 and r["l_max"] >= 2


def test_moderate_clustering_prints_its_discretisation_accuracy(capsys):
    # the printed error must bound the true discretisation error of the printed formation time: the reference is
    # the same run with step and frames 8x finer (its own error ~50x below the estimate; issue 43)
    from numerics.meanfield.moderate import clustering_run

    p = run_json(capsys, ["moderate", "--phase", "clustering", "--n", "800", "--beta", "8"])
    reference = clustering_run(800, 8.0, seed=0, threshold=0.1, refine=8)["t_formed"]
    assert p["t_formed_fine"] != p["t_formed"]
    assert 0 < abs(p["t_formed"] - reference) <= p["t_formed_error"] <= 1e-3


def test_mean_field_rate_prints_its_grid_accuracy(capsys):
    # the change from half the grid bounds the grid error: against the exact Ott-Antonsen W_2 at beta = 0
    p = run_json(capsys, ["mean-field-rate", "--beta", "0", "--grid", "200", "--t-end", "6"])
    change = p["grid_change"]
    assert change["coarse_grid"] == 100
    exact = p["W2_ott_antonsen"]
    error = max(abs(w / e - 1) for w, e in zip(p["W2"], exact))
    assert 0 < error <= change["W2_relative"]
