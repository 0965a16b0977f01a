"""attnflow kuramoto: JSON keys, plot, the sphere correspondence check and bad input."""
import os

import numpy as np
import pytest

from numerics.cli import main
from tests.cli.helpers import json_output as _json


def test_kuramoto_json(capsys):
    code, data = _json(capsys, ["kuramoto", "--model", "sa", "--n", "40", "--beta", "2", "--t-end", "1",
                                "--dt", "0.05", "--json"])
    assert code == 0
    for key in ("order_parameter", "harmonics", "max_angle_deviation", "energy", "times"):
        assert key in data
    assert len(data["order_parameter"]) == len(data["times"]) == 21
    assert data["harmonics"] >= 1
    assert data["max_angle_deviation"] < 1e-6  # rk4 at h = 0.05 over t = 1: both integrators ~1e-8
    # the deviation compares two pinned code paths, named in the note
    assert "backend direct" in data["max_angle_deviation_note"]
    assert "backend fourier" in data["max_angle_deviation_note"]
    # the order parameter of 40 uniform particles starts near 1/sqrt(40) and grows at beta = 2 (sa)
    r = np.asarray(data["order_parameter"])
    assert r[0] < 0.5 and r[-1] > r[0]


def test_kuramoto_text_and_plot(capsys, tmp_path):
    path = tmp_path / "k.png"
    code = main(["kuramoto", "--model", "usa", "--n", "30", "--beta", "1", "--t-end", "0.5", "--dt", "0.1",
                 "--plot", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and "harmonics K" in out and os.path.getsize(path) > 1000


def test_kuramoto_skips_sphere_check_for_large_n(capsys):
    code, data = _json(capsys, ["kuramoto", "--model", "sa", "--n", "2500", "--beta", "1", "--t-end", "0.2",
                                "--dt", "0.1", "--json"])
    assert code == 0 and data["max_angle_deviation"] is None and "skipped" in data["max_angle_deviation_note"]


@pytest.mark.parametrize("argv", [
    ["--n", "0", "--beta", "1", "--t-end", "1"],
    ["--n", "3", "--beta", "nan", "--t-end", "1"],
    ["--n", "3", "--beta", "1", "--t-end", "-1"],
    ["--n", "3", "--beta", "1", "--t-end", "1", "--dt", "0"],
    ["--n", "3", "--beta", "800", "--t-end", "1"],
    ["--n", "3", "--beta", "1", "--t-end", "1", "--plot", "out.txt"],
    ["--n", "x", "--beta", "1", "--t-end", "1"],
])
def test_kuramoto_bad_input(capsys, argv):
    try:
        code = main(["kuramoto", "--model", "usa", *argv])
    except SystemExit as exc:  # argparse type errors exit directly (one line, code 2)
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error:")


def test_kuramoto_noise_critical_noise_in_the_rescaled_unit(capsys):
    """usa with --time-unit rescaled integrates in t' = e^beta t with the noise D per unit of t': the printed
    threshold is e^{-beta} D_c(natural) (it was the natural-time value); natural time is unchanged."""
    from theory.noise import critical_noise

    argv = ["kuramoto", "--model", "usa", "--n", "8", "--beta", "1.5", "--t-end", "0.2", "--dt", "0.1",
            "--noise", "0.3", "--json"]
    code, natural = _json(capsys, argv)
    assert code == 0
    code, rescaled = _json(capsys, argv + ["--time-unit", "rescaled"])
    assert code == 0
    Dc = critical_noise("usa", 2, 1.5)[0]
    assert natural["prediction"]["linear_stability_threshold"] == Dc
    np.testing.assert_allclose(rescaled["prediction"]["linear_stability_threshold"], np.exp(-1.5) * Dc, rtol=1e-12)
    assert "e^-beta" in rescaled["prediction"]["equation"]
