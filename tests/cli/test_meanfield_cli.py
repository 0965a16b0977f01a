"""CLI: attnflow spectrum / meanfield / metastable (in-process)."""
import json
import os
import re

import numpy as np
import pytest

from numerics.cli import main
from tests.cli.helpers import bad as _bad


def _json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_spectrum_json_and_plot(capsys, tmp_path):
    png = tmp_path / "s.png"
    p = _json(capsys, ["spectrum", "--d", "2", "--beta", "5", "--json", "--plot", str(png)])
    assert {"rates", "l_max", "runner_up", "ratio", "switch_points", "near_tie"} <= p.keys()
    assert p["l_max"] == 3 and p["runner_up"] == 4
    assert p["rates"][0] == pytest.approx(0.178677, rel=1e-5)   # index 0 is l = 1: I_1(5)/(5 I_0(5))
    assert p["ratio"] == pytest.approx(p["rates"][2] / p["rates"][3])
    assert [s["to"] for s in p["switch_points"]] == [2, 3, 4]
    assert os.path.getsize(png) > 1000


def test_spectrum_text_and_lmax(capsys):
    """The text table's rates and labels equal an independent quadrature of the Funk-Hecke integral."""
    from numerics.meanfield.claims import quadrature_rates

    assert main(["spectrum", "--d", "3", "--beta", "10", "--model", "usa", "--lmax", "5"]) == 0
    out = capsys.readouterr().out
    rows = {int(m.group(1)): (float(m.group(2)), m.group(3) or "")
            for m in re.finditer(r"^(\d)\s+([0-9.e+-]+)\s*(l_max|runner-up)?\s*$", out, re.M)}
    reference = quadrature_rates(3, 10.0, 5)["usa"]
    assert sorted(rows) == [1, 2, 3, 4, 5]
    for l, (rate, _) in rows.items():
        # the table prints 6 significant digits; quadrature and closed form agree to 1e-10
        assert rate == pytest.approx(reference[l - 1], rel=1e-5), l
    labels = {label: l for l, (_, label) in rows.items() if label}
    top = np.argsort(reference)[::-1] + 1
    assert labels == {"l_max": top[0], "runner-up": top[1]}
    assert re.search(rf"^l_max\s+{top[0]}$", out, re.M) and re.search(rf"^runner_up\s+{top[1]}$", out, re.M)


@pytest.mark.parametrize("argv", [["spectrum", "--d", "1", "--beta", "2"],
                                  ["spectrum", "--d", "2", "--beta", "nan"],
                                  ["spectrum", "--d", "2", "--beta", "2", "--lmax", "0"],
                                  ["spectrum", "--d", "2", "--beta", "2", "--plot", "x.txt"]])
def test_spectrum_bad_input(capsys, argv):
    _bad(capsys, argv)


def test_missing_required_argument_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["spectrum", "--d", "2"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().startswith("error:")


def test_meanfield_json_and_plot(capsys, tmp_path):
    png = tmp_path / "m.png"
    p = _json(capsys, ["meanfield", "--beta", "5", "--grid", "128", "--modes", "6", "--json", "--plot", str(png)])
    assert {"dominant_mode", "measured_rates", "predicted_rates", "window", "stopped", "max_mass_drift"} <= p.keys()
    assert p["dominant_mode"] == 3 == p["predicted_dominant_mode"]
    assert p["measured_rates"][2] == pytest.approx(p["predicted_rates"][2], rel=0.01)
    assert os.path.getsize(png) > 1000


@pytest.mark.parametrize("argv", [["meanfield", "--beta", "5", "--grid", "7"],
                                  ["meanfield", "--beta", "5", "--amplitude", "0.5"],
                                  ["meanfield", "--beta", "5", "--amplitude", "-1"],
                                  ["meanfield", "--beta", "5", "--t-end", "-1", "--grid", "64"],
                                  ["meanfield", "--beta", "5", "--threshold", "1e-9", "--grid", "64"]])
def test_meanfield_bad_input(capsys, argv):
    _bad(capsys, argv)


def test_metastable_json(capsys):
    p = _json(capsys, ["metastable", "--beta", "2.1", "--n", "1000", "--seeds", "2", "--json"])
    assert {"predicted", "observed", "dominant_modes", "fraction_matching"} <= p.keys()
    assert p["predicted"] == 2 and len(p["observed"]) == 2 and len(p["dominant_modes"]) == 2


@pytest.mark.parametrize("argv", [["metastable", "--beta", "2", "--n", "1000", "--d", "3"],
                                  ["metastable", "--beta", "-2", "--n", "1000"],
                                  ["metastable", "--beta", "2", "--n", "10"],
                                  ["metastable", "--beta", "2", "--n", "1000", "--seeds", "0"]])
def test_metastable_bad_input(capsys, argv):
    _bad(capsys, argv)
