"""The Conjecture object: budgeted Hypothesis search, shrinking, statuses, atomic save and exact replay."""
import json
import time

import numpy as np
import pytest
from hypothesis import strategies as st

from numerics.conjectures.catalogue import replay
from numerics.conjectures.framework import Conjecture, Verdict, decode, encode, load_counterexample
from numerics.common.errors import InputError


def _toy(threshold=50, **kw):
    """'x**2 < threshold**2 for every x': false, minimal counterexample x = threshold."""
    inputs = st.fixed_dictionaries({"x": st.integers(0, 10_000), "v": st.just(np.arange(3.0) / 7)})
    return Conjecture(id="toy", title="x < threshold", source="test", note="none.md", inputs=inputs,
                      outcome=lambda i: {"y": i["x"] ** 2, "v": i["v"] * 2},
                      predicate=lambda i, o: Verdict(o["y"] < threshold**2, f"x = {i['x']}"), **kw)


def test_counterexample_is_shrunk_to_the_minimal_one_and_replays(tmp_path):
    path = tmp_path / "cx.json"
    result = _toy().run(max_examples=200, seed=3, save=str(path))
    assert result.status == "counterexample"
    assert result.counterexample["inputs"]["x"] == 50          # Hypothesis shrinks integers to the boundary
    assert result.saved_to == str(path) and path.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".attnflow-")]  # atomic: no leftovers
    payload = json.loads(path.read_text())
    assert payload["id"] == "toy" and payload["seed"] == 3 and "numpy" in payload["versions"]
    loaded = load_counterexample(path)
    np.testing.assert_array_equal(loaded["inputs"]["v"], np.arange(3.0) / 7)  # exact float round trip
    again = replay(path, {"toy": _toy()})
    assert again.reproduced and again.verdict.holds is False
    fixed = replay(path, {"toy": _toy(threshold=51)})           # a corrected conjecture no longer fails
    assert not fixed.reproduced


def test_true_conjecture_uses_the_budget_and_is_deterministic():
    r1 = _toy(threshold=10**6).run(max_examples=30, seed=1)
    r2 = _toy(threshold=10**6).run(max_examples=30, seed=1)
    assert r1.status == "no-counterexample-found" and r1.counterexample is None
    assert 20 <= r1.examples_tried <= 30 and r1.decided == r1.examples_tried
    assert r1.examples_tried == r2.examples_tried


def test_undecided_examples_make_the_result_inconclusive():
    c = Conjecture(id="undecided", title="", source="", note="", inputs=st.integers(0, 100).map(lambda x: {"x": x}),
                   outcome=lambda i: {}, predicate=lambda i, o: Verdict(None if i["x"] % 4 else True, "unsure: why"))
    r = c.run(max_examples=40, seed=0)
    assert r.status == "inconclusive" and r.undecided > r.decided and r.undecided_reasons == {"unsure": r.undecided}


def test_numerical_failures_are_undecided_not_errors():
    def outcome(i):
        raise InputError("overflow at beta=1e9")

    c = Conjecture(id="boom", title="", source="", note="", inputs=st.just({"x": 1}), outcome=outcome,
                   predicate=lambda i, o: Verdict(True, ""))
    r = c.run(max_examples=5)
    assert r.status == "inconclusive" and r.decided == 0


def test_time_budget_stops_evaluation():
    def slow(i):
        time.sleep(0.05)
        return {}

    c = Conjecture(id="slow", title="", source="", note="", inputs=st.integers(0, 10**6).map(lambda x: {"x": x}),
                   outcome=slow, predicate=lambda i, o: Verdict(True, ""))
    r = c.run(max_examples=1000, seconds=0.3, seed=0)
    assert 1 <= r.examples_tried <= 12 and r.status == "no-counterexample-found"


def test_bad_budget_and_bad_files(tmp_path):
    with pytest.raises(InputError):
        _toy().run(max_examples=0)
    with pytest.raises(InputError):
        _toy().run(max_examples=5, seconds=-1)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not a counterexample file"):
        load_counterexample(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="not an attnflow counterexample file"):
        load_counterexample(bad)


def test_encoding_round_trip():
    obj = {"a": np.eye(2), "b": [np.float64(1.5), float("inf")], "c": {"d": np.int64(3)}}
    back = decode(json.loads(json.dumps(encode(obj))))
    np.testing.assert_array_equal(back["a"], np.eye(2))
    assert back["b"] == [1.5, float("inf")] and back["c"] == {"d": 3}
