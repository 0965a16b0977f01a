"""``attnflow meanfield`` prints the accuracy of each measured rate (issue 43: every number from a discretisation
comes with its accuracy): the fit's standard error, the same numbers as ``--json``'s ``stderr``."""
from __future__ import annotations

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
