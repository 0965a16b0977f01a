"""attnflow rd and rd-stability: output contract, files, bad input."""
import numpy as np

from tests.cli.helpers import bad, run_json

EYE = "[[1,0],[0,1]]"


def test_rd_json_and_npz(capsys, tmp_path):
    out = tmp_path / "run.npz"
    png = tmp_path / "run.png"
    p = run_json(capsys, ["rd", "--attention", "softmax", "--d", "2", "--A", EYE, "--V", EYE, "--n", "12",
                          "--seed", "1", "--t-end", "6", "--frames", "7", "--out", str(out), "--plot", str(png)])
    for key in ("leaders", "assignment", "boolean_gap", "rank", "radius", "radius_bound"):
        assert key in p
    assert p["boolean_gap"] < 1e-8 and p["radius"] <= p["radius_bound"]
    assert set(p["leaders"]) <= set(p["hull_vertices"])
    with np.load(out) as f:
        assert f["Z"].shape == (7, 12, 2) and f["X"].shape == (7, 12, 2) and f["P"].shape == (7, 12, 12)
        assert f["times"][-1] == 6.0
        assert np.allclose(f["X"][-1], np.exp(6.0) * f["Z"][-1])
    assert png.stat().st_size > 10_000


def test_rd_l2_with_init_file_and_hyperplanes(capsys, tmp_path):
    X0 = np.random.default_rng(0).standard_normal((10, 2))
    np.save(tmp_path / "x0.npy", X0)
    p = run_json(capsys, ["rd", "--attention", "l2", "--d", "2", "--Q", EYE, "--K", EYE,
                          "--V", "[[1,0.3],[0,-0.5]]", "--init", str(tmp_path / "x0.npy"), "--t-end", "2",
                          "--out", str(tmp_path / "o.npz")])
    assert p["n"] == 10 and "hyperplanes" in p


def test_rd_stability_json(capsys, tmp_path):
    p = run_json(capsys, ["rd-stability", "--d", "2", "--A", EYE, "--V", EYE, "--n", "8", "--t-end", "0.5",
                          "--plot", str(tmp_path / "s.png")])
    assert p["ratio_below_constant"] and p["radius_never_above_bound"]
    assert p["ratio"] >= 1.0 and p["log10_constant"] > 0


def test_rd_bad_input(capsys, tmp_path):
    base = ["rd", "--attention", "softmax", "--d", "2", "--V", EYE, "--t-end", "1", "--out", str(tmp_path / "o.npz")]
    assert "A" in bad(capsys, base + ["--n", "5"])  # softmax without A
    assert "JSON" in bad(capsys, base + ["--A", "[[1,0],[0", "--n", "5"])
    assert "2 x 2" in bad(capsys, base + ["--A", "[[1,0,0],[0,1,0]]", "--n", "5"])
    bad(capsys, base + ["--A", EYE, "--n", "1"])
    bad(capsys, base + ["--A", EYE, "--init", str(tmp_path / "missing.npy")])
    np.save(tmp_path / "wrong.npy", np.zeros((4, 3)))
    bad(capsys, base + ["--A", EYE, "--init", str(tmp_path / "wrong.npy")])
    np.save(tmp_path / "nan.npy", np.full((4, 2), np.nan))
    bad(capsys, base + ["--A", EYE, "--init", str(tmp_path / "nan.npy")])
    bad(capsys, ["rd", "--attention", "softmax", "--d", "2", "--V", EYE, "--A", EYE, "--n", "4", "--t-end", "1",
                 "--out", str(tmp_path / "no" / "o.npz")])
    bad(capsys, ["rd", "--attention", "softmax", "--d", "2", "--V", EYE, "--A", EYE, "--n", "4", "--t-end", "-1",
                 "--out", str(tmp_path / "o.npz")])
    bad(capsys, ["rd-stability", "--d", "2", "--A", EYE, "--V", EYE, "--n", "4", "--t-end", "1", "--eps", "0"])


def test_rd_estimates_refuse_absurd_requests(capsys, tmp_path):
    base = ["--attention", "softmax", "--d", "2", "--V", EYE, "--A", EYE]
    out = ["--out", str(tmp_path / "o.npz")]
    assert "initial tokens in R^2 needs about" in bad(capsys, ["rd", *base, "--n", "1000000000", "--t-end", "1", *out])
    assert "would take about" in bad(capsys, ["rd", *base, "--n", "3000", "--t-end", "1e9", *out])
    assert "of memory" in bad(capsys, ["rd", *base, "--n", "100000", "--t-end", "1", *out])
    assert not (tmp_path / "o.npz").exists()
    # 3 exact transports between 5000 and 5000 atoms: 3e12 operations, refused before the two runs
    line = bad(capsys, ["--max-hours", "0.01", "rd-stability", *base, "--n", "5000", "--t-end", "0.025"])
    assert "3 optimal transport(s) between 5000 and 5000 atoms" in line


def test_rd_refuses_a_non_finite_step_count_and_a_huge_one_before_allocating(capsys, tmp_path):
    """t_end/dt = inf is one error line (was "cannot convert float infinity to integer"); a finite but huge
    step count is refused by the estimate before the set of saved steps is built (was a MemoryError)."""
    base = ["--attention", "softmax", "--d", "2", "--V", EYE, "--A", EYE, "--n", "4"]
    out = ["--out", str(tmp_path / "o.npz")]
    huge = ["--t-end", "1e308", "--dt", "1e-300"]
    assert "not a finite number of steps" in bad(capsys, ["rd", *base, *huge, *out])
    assert "not a finite number of steps" in bad(capsys, ["rd-stability", *base, *huge])
    assert "of memory" in bad(capsys, ["rd", *base, "--t-end", "1e10", "--frames", "20000000000", *out])
    assert not (tmp_path / "o.npz").exists()

