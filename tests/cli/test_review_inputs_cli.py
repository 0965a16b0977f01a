"""Issue 43, the reviewer's command lines on the numeric commands: each is one ``error:`` line, exit 2, no
traceback, decided in seconds (lists with empty items, lists and counts of absurd size, values that overflow or
underflow, JSON booleans given as numbers). The decoder's and the checkpoints' cases are in test_decoder_cli.py
and test_trained_cli.py.
"""
from __future__ import annotations

import time

import pytest

from numerics.common.errors import InputError
from numerics.common.readers import MAX_LIST_ITEMS, comma_list, json_array
from tests.cli.helpers import bad, run_json

EYE = "[[1,0],[0,1]]"
RDS = ["rd-stability", "--d", "2", "--A", EYE, "--V", EYE, "--n", "4", "--t-end", "0.5", "--search"]
HUGE = "1000000000000"
MANY_BETAS = ",".join(["16"] * 100_000)

CASES = [
    (["lost-in-the-middle", "--beta", "1", "--times", "1,,2"], "--times has an empty item (item 2 of 3"),
    (["lost-in-the-middle", "--beta", "1", "--times", "1,2,"], "--times has an empty item (item 3 of 3"),
    (["frank-wolfe", "--A", "[[true, 0], [0, 1]]"], "--A must hold numbers, not true/false"),
    (["frank-wolfe", "--A", "[[1, 0], [0, false]]", "--json"], "--A must hold numbers, not true/false"),
    (["frank-wolfe", "--A", "[[1e308, 0], [0, 1e308]]", "--json"], "beyond float64's range"),
    (["frank-wolfe", "--A", "[[1e300, 1e300], [1e300, 1e300]]", "--json"], "beyond float64's range"),
    (["frank-wolfe", "--A", EYE, "--polygon", "4", "--persistence", "2,,3"], "--persistence has an empty item"),
    (["mean-field-rate", "--t-end", "1e-320"], "no spread of times"),
    (["mean-field-rate", "--window", "1,,2"], "--window has an empty item"),
    (["low-temperature", "--betas", "1,,2"], "--betas has an empty item (item 2 of 3"),
    (["low-temperature", "--betas", "1"], "--betas value must be > 1.0"),
    (["low-temperature", "--betas", MANY_BETAS], "--betas takes at most 1000 comma-separated values, got 100000"),
    (["low-temperature", "--betas", ""], "--betas holds no value"),
    (["masked-meanfield", "--beta", "1", "--compare", "40,,80"], "--compare has an empty item (item 2 of 3"),
    (["critical", "--config", "clusters", "--masses", "2,,1", "--d", "3", "--beta", "1"],
     "--masses has an empty item (item 2 of 3"),
    (["metastable", "--beta", "1", "--n", "100", "--seeds", "100000"], "seeds must be <= 1000"),
    (["metastable", "--beta", "1", "--n", "100", "--seeds", HUGE], "seeds must be <= 1000"),
    (RDS + ["--search-n", HUGE], "adversarial search"),
    (RDS + ["--search-evals", HUGE], "adversarial search"),
    (RDS + ["--search-starts", HUGE], "adversarial search"),
]


@pytest.mark.parametrize("argv, fragment", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_the_reviewers_command_lines_are_one_line_errors(capsys, argv, fragment):
    start = time.perf_counter()
    line = bad(capsys, argv)
    assert fragment in line, line
    assert time.perf_counter() - start < 10


def test_the_search_is_sized_before_the_main_run(capsys, monkeypatch):
    """An absurd --search is refused before the stability run (which may itself be long)."""
    from numerics.rd import stability

    def never(*a, **k):
        raise AssertionError("the main run started before the search was sized")

    monkeypatch.setattr(stability, "stability_ratios", never)
    assert "adversarial search" in bad(capsys, RDS + ["--search-starts", HUGE])


def test_sane_values_still_run(capsys):
    out = run_json(capsys, ["frank-wolfe", "--A", "[[1e100, 0], [0, 1e100]]", "--n", "5", "--layers", "3"])
    assert None not in out["eigenvalues_sym_A"] and out["definiteness"] == "psd"
    out = run_json(capsys, ["low-temperature", "--betas", " 16 , 32 ", "--rings", "8"])
    assert [r["beta"] for r in out["rows"]] == [16.0, 32.0]


# -- the one parser of comma lists and of JSON arrays -------------------------------------------------------------
def test_comma_list_refuses_empty_items_and_absurd_sizes_in_one_place():
    assert comma_list("1, 2 ,3", "--x") == [1.0, 2.0, 3.0]
    assert comma_list("4,5", "--x", int) == [4, 5]
    for text, fragment in (("", "holds no value"), ("  ", "holds no value"), (",", "empty item (item 1 of 2"),
                           ("1,,2", "empty item (item 2 of 3"), ("1,2,", "empty item (item 3 of 3"),
                           ("1,x", "comma-separated numbers"), ("1.5", "comma-separated integers")):
        kind = int if text == "1.5" else float
        with pytest.raises(InputError, match=fragment.replace("(", r"\(")):
            comma_list(text, "--x", kind)
    comma_list(",".join(["1"] * MAX_LIST_ITEMS), "--x")
    with pytest.raises(InputError, match=f"at most {MAX_LIST_ITEMS}"):
        comma_list(",".join(["1"] * (MAX_LIST_ITEMS + 1)), "--x")
    start = time.perf_counter()
    with pytest.raises(InputError, match="at most"):
        comma_list("1," * 10**7, "--x")  # refused from the count of commas, before 10^7 conversions
    assert time.perf_counter() - start < 1


def test_json_array_refuses_booleans_at_any_depth():
    assert json_array("[[1, 0.5], [2, 3]]", "A").tolist() == [[1.0, 0.5], [2.0, 3.0]]
    for text in ("[true]", "[[1, 2], [3, false]]", "[[[true]]]"):
        with pytest.raises(InputError, match="not true/false"):
            json_array(text, "A")
