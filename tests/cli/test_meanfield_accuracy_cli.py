"""``attnflow meanfield`` and ``metastable`` print the accuracy of the numbers they measure (issue 43: every
number from a discretisation comes with its accuracy): the fit's standard error of each rate (``--json``'s
``stderr``), and the frame spacing that resolves the end of the linear phase."""
from __future__ import annotations

import pytest

from numerics.cli import main
from tests.cli.helpers import run_json

ARGV = ["meanfield", "--beta", "2", "--model", "usa", "--grid", "32", "--modes", "2", "--t-end", "0.5"]


def test_meanfield_prints_the_fit_error_of_each_rate(capsys):
    payload = run_json(capsys, ARGV)
    assert main(ARGV) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("mode "))
    assert lines[head].split() == ["mode", "measured", "predicted", "rel.", "error", "fit", "std.", "error"]
    rows = [line.split() for line in lines[head + 2:] if line.strip()]
    assert [int(r[0]) for r in rows] == payload["modes"]
    for row, err, rate in zip(rows, payload["stderr"], payload["measured_rates"]):
        assert float(row[1]) == float(f"{rate:.6g}") and float(row[4]) == float(f"{err:.6g}")


def test_metastable_prints_the_resolution_of_the_linear_phase_end(capsys):
    """t linear end is a saved frame: each one is a whole number of frame spacings, and the text says the spacing."""
    argv = ["metastable", "--beta", "2.1", "--n", "1000", "--seeds", "2"]
    payload = run_json(capsys, argv)
    frame = payload["t_linear_end_resolution"]
    assert 0 < frame < max(payload["t_linear_end"])
    for t in payload["t_linear_end"]:
        assert abs(t / frame - round(t / frame)) < 1e-9
    # independently: the run saves 4 frames per count frame (metastable_run's default 12) on [0, t_observed]
    import inspect

    from numerics.meanfield.metastable import metastable_run

    frames = inspect.signature(metastable_run).parameters["frames"].default
    assert frame == pytest.approx(payload["t_observed"][0] / (4 * frames), rel=1e-12)
    assert main(argv) == 0
    assert f"frames every {frame:.3g}" in capsys.readouterr().out
