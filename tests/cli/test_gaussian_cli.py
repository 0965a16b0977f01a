"""attnflow gaussian: JSON keys, blow-up reporting, particles, plot and bad input (exit 2, one error line)."""
import json

import numpy as np
import pytest

from numerics.cli import main

BASE = ["gaussian", "--d", "2", "--V", "[[1,0],[0,1]]", "--mean", "[0.5,-0.3]", "--cov", "[[1,0.3],[0.3,0.6]]"]


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_softmax_blowup_json(capsys):
    code, out, _ = _run(capsys, BASE + ["--attention", "softmax", "--A", "[[1,0],[0,0.5]]", "--t-end", "5",
                                        "--json"])
    assert code == 0
    payload = json.loads(out)
    assert {"mean", "cov", "blowup_time", "status"} <= payload.keys()
    assert payload["status"] == "blow-up"
    # closed form: t* = 1 / (2 lambda_max(Sigma0^{1/2} A Sigma0^{1/2}))
    R = np.linalg.cholesky(np.array([[1, 0.3], [0.3, 0.6]]))
    lam = np.linalg.eigvalsh(R.T @ np.diag([1, 0.5]) @ R)[-1]
    assert payload["blowup_time"] == pytest.approx(1 / (2 * lam), rel=1e-6)
    assert payload["time"] <= payload["blowup_time"]


def test_sinkhorn_particles_json(capsys):
    code, out, _ = _run(capsys, BASE + ["--attention", "sinkhorn", "--A", "[[0.8,0.3],[-0.2,0.5]]",
                                        "--t-end", "0.1", "--particles", "300", "--seed", "2", "--json"])
    assert code == 0
    payload = json.loads(out)
    assert payload["blowup_time"] is None
    p = payload["particles"]
    assert {"n", "mean", "cov", "max_deviation_in_standard_errors", "verdict", "reasoning"} <= p.keys()
    assert p["n"] == 300
    # t = 0.1 with 300 tokens: the prediction moves by only ~1-2 SE, so agreement is no evidence
    assert p["motion_in_standard_errors"] < 8 and p["verdict"] == "uninformative", p
    assert p["max_deviation_in_standard_errors"] <= 4
    np.testing.assert_allclose(payload["mean"], np.array([0.5, -0.3]) * np.exp(0.1), rtol=1e-8)  # V = I


def test_l2_text_and_plot(capsys, tmp_path):
    png = tmp_path / "ellipses.png"
    code, out, _ = _run(capsys, BASE + ["--attention", "l2", "--Q", "[[1,0],[0,1]]", "--K", "[[0.5,0],[0,0.5]]",
                                        "--t-end", "0.2", "--particles", "200", "--plot", str(png)])
    assert code == 0
    assert "blowup_time" in out and "none" in out
    assert "verdict" in out and "why" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("extra", [
    ["--attention", "softmax", "--A", "[[1,0],[0,1]]", "--cov", "[[1,0.5],[0.2,1]]"],      # not symmetric
    ["--attention", "softmax", "--A", "[[1,0],[0,1]]", "--cov", "[[1,2],[2,1]]"],          # not PD
    ["--attention", "softmax", "--A", "[[1,0,0],[0,1,0],[0,0,1]]"],                        # wrong shape
    ["--attention", "softmax", "--A", "[[1,0],[0,NaN]]"],                                  # non-finite
    ["--attention", "softmax", "--A", "[[1,0],[0,1]"],                                     # malformed JSON
    ["--attention", "softmax", "--A", "__import__('os')"],                                 # not data
    ["--attention", "l2", "--A", "[[1,0],[0,1]]"],                                         # l2 needs Q, K
    ["--attention", "softmax", "--A", "[[1,0],[0,1]]", "--mean", "[1,2,3]"],               # mean shape
    ["--attention", "softmax", "--A", "[[1,0],[0,1]]", "--particles", "1"],                # too few
])
def test_bad_input_exits_2_with_one_error_line(capsys, extra):
    argv = BASE + ["--t-end", "0.1"] + extra
    code, _out, err = _run(capsys, argv)
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error:")
