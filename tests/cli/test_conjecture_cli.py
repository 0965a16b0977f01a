"""attnflow conjecture list / run / replay: exit codes, JSON keys, bad input."""
import json

import pytest

from numerics.cli import main
from numerics.conjectures.catalogue import get_conjecture
from numerics.conjectures.framework import ConjectureResult, save_counterexample
from numerics.critical.configurations import circle_clusters


def _json(capsys):
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_list(capsys):
    assert main(["conjecture", "list"]) == 0
    text = capsys.readouterr().out
    assert main(["conjecture", "list", "--json"]) == 0
    listed = _json(capsys)["conjectures"]
    from numerics.conjectures.catalogue import catalogue, literature_expectation

    cat = catalogue()
    assert [c["id"] for c in listed] == list(cat)          # every entry, in catalogue order
    for row in listed:
        c = cat[row["id"]]
        # one text row per entry with its expectation and budget as the catalogue has them
        line = next(ln for ln in text.splitlines() if ln.startswith(row["id"] + " "))
        assert line.split()[-2:] == [c.expected, str(c.max_examples)], line
    assert cat["landscape"].expected == literature_expectation(-1.0, 1.0) == "counterexample"


def test_run_json_keys(capsys):
    assert main(["conjecture", "run", "s1-sync-negative-beta", "--budget", "3", "--seed", "1", "--json"]) == 0
    payload = _json(capsys)
    assert {"id", "status", "examples_tried", "counterexample", "seconds"} <= set(payload)
    assert payload["id"] == "s1-sync-negative-beta"
    # [-2/3, -0.16) is PRY's open range: three equal clusters are degenerate at -2/3 and a local minimum or
    # saddle above it, so no counterexample in 3 examples, all decided or undecided, counted
    assert payload["status"] == "no-counterexample-found", payload
    assert 1 <= payload["examples_tried"] <= 3 and payload["decided"] + payload["undecided"] == payload["examples_tried"]


def test_run_with_a_user_kernel_and_save_then_replay(tmp_path, capsys):
    path = tmp_path / "cx.json"
    code = main(["conjecture", "run", "landscape", "--beta-range", "-1.6", "-0.8", "--budget", "30", "--seed", "0",
                 "--save", str(path), "--json"])
    assert code == 0
    payload = _json(capsys)
    assert payload["status"] == "counterexample" and payload["saved_to"] == str(path)
    assert main(["conjecture", "replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert "reproduced" in text and "yes" in text
    assert main(["conjecture", "run", "landscape", "--kernel", "exp(beta*s) + c*s**3", "--param", "c=0.5",
                 "--beta-range", "0.2", "0.5", "--budget", "2", "--json"]) == 0
    assert _json(capsys)["id"] == "landscape"


def test_replay_of_a_known_counterexample(tmp_path, capsys):
    conj = get_conjecture("s1-no-spurious-maxima")
    inputs = {"beta": -1.2, "X0": circle_clusters(2, masses=[1, 1, 1])}
    outcome, verdict = conj.check(inputs)
    result = ConjectureResult(conj.id, "counterexample", 1, 1, 0,
                              {"inputs": inputs, "outcome": outcome, "verdict": {"holds": verdict.holds,
                                                                                 "detail": verdict.detail}},
                              0.1, 0, {"max_examples": 1})
    path = save_counterexample(tmp_path / "three.json", conj, result)
    assert main(["conjecture", "replay", path, "--json"]) == 0
    payload = _json(capsys)
    assert payload["reproduced"] is True and payload["holds"] is False and payload["id"] == "s1-no-spurious-maxima"
    # the same file with beta moved above -2/3 no longer fails: replay says so with exit code 1
    data = json.loads(open(path).read())
    data["inputs"]["beta"] = -0.5
    open(path, "w").write(json.dumps(data))
    assert main(["conjecture", "replay", path]) == 1
    assert "reproduced     no" in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["conjecture", "run", "nope"], "unknown conjecture id"),
    (["conjecture", "run", "s1-sync-negative-beta", "--budget", "0"], "--budget"),
    (["conjecture", "run", "landscape", "--kernel", "__import__('os').system('true')"], "'__import__'"),
    (["conjecture", "run", "landscape", "--kernel", "s.__class__"], "'.'"),
    (["conjecture", "run", "landscape", "--param", "c=1"], "--param needs --kernel"),
    (["conjecture", "run", "landscape", "--kernel", "c*s", "--param", "c=abc"], "parameter c"),
    (["conjecture", "run", "s1-sync-negative-beta", "--kernel", "s"], "apply to the 'landscape'"),
    (["conjecture", "replay", "/nonexistent/cx.json"], "No such file"),
])
def test_bad_input_exits_2_with_one_error_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and fragment in err


def test_replay_of_a_non_counterexample_file(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "something else"}')
    assert main(["conjecture", "replay", str(bad)]) == 2
    assert "not an attnflow counterexample file" in capsys.readouterr().err


def test_text_output_names_the_start_and_the_critical_point_and_no_literature_for_user_kernels(tmp_path, capsys):
    """inputs.X0 is the drawn start; the counterexample is the critical point (outcome.X): both named as such.
    A user kernel has no literature result, so the text does not say 'open' (an open problem) for it."""
    path = tmp_path / "cx.json"
    assert main(["conjecture", "run", "landscape", "--kernel", "exp(beta*s) - 0.8*s**4", "--beta-range", "0", "1",
                 "--budget", "10", "--save", str(path)]) == 0
    rows = dict(line.split("  ", 1) for line in capsys.readouterr().out.splitlines() if "  " in line)
    rows = {k.strip(): v.strip() for k, v in rows.items()}
    assert rows["literature expects"] == "- (user kernel)"
    saved = json.loads(path.read_text())
    start, point = saved["inputs"]["X0"]["ndarray"], saved["outcome"]["X"]["ndarray"]  # keys kept for replay
    assert rows["drawn start X0"] == f"shape ({len(start)}, {len(start[0])}) (inputs.X0)"
    assert rows["critical point"] == f"{len(point)} points in R^{len(point[0])} (outcome.X)"
    assert len(point) == 3 != len(start)  # the triangle, found from the symmetric scan, not the drawn start
    assert main(["conjecture", "run", "landscape", "--beta-range", "-0.5", "-0.2", "--budget", "2"]) == 0
    assert "literature expects   open" in capsys.readouterr().out  # the PRY gap is an open problem: kept
