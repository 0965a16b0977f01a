"""The documentation-example runner can fail: planted wrong outputs, numbers, keys and directives."""
from __future__ import annotations

from pathlib import Path

from tests.docs.doc_examples import ROOT, extract_blocks, outputs_match, parse_console, run_file


def test_numbers_within_the_default_relative_tolerance_only():
    assert outputs_match("energy 0.212657150", "energy 0.2126571503")
    assert not outputs_match("energy 0.2126", "energy 0.2127")            # 5e-4 relative
    assert not outputs_match("x 1.0", "x 1.00001")                        # 1e-5 > 1e-6
    assert outputs_match("x 1.0", "x 1.00001", rtol=1e-4)
    assert outputs_match("err 2.2e-16", "err 4.4e-16")                    # both at round-off level
    assert not outputs_match("err 2.2e-10", "err 4.4e-10")


def test_words_order_and_missing_lines_are_compared():
    assert not outputs_match("status passed", "status failed")
    assert not outputs_match("a\nb", "a")
    assert not outputs_match("a 1 2", "a 2 1")
    # column alignment and table rules do not matter
    assert outputs_match("n   d\n--  --\n4   3", "n  d\n-  -\n4  3")


def test_timings_are_left_out_but_nothing_else():
    assert outputs_match("frames 201\nseconds 0.39", "frames 201\nseconds 12.5")
    assert outputs_match("core.x  PASSED  5.6s", "core.x PASSED 0.4s")
    assert not outputs_match("core.x  PASSED  5.6s", "core.x FAILED 5.6s")
    assert outputs_match('{"a": 1, "seconds": 0.3}', '{"a": 1.0, "seconds": 7.0}')
    assert not outputs_match('{"a": 1, "seconds": 0.3}', '{"a": 2, "seconds": 0.3}')
    assert not outputs_match('{"a": 1}', '{"a": 1, "b": null}')          # a new key is a difference


def test_ellipsis_matches_any_run_of_tokens():
    assert outputs_match("start\n...\nend", "start\nx 1\ny 2\nend")
    assert not outputs_match("start\n...\nend", "start\nx 1\ny 2\nfinish")
    assert outputs_match('{"out": "a", ...,\n "b": 2, ...}', '{"out": "a", "x": 1, "b": 2, "c": 3}')


def test_a_cut_table_cell_matches_any_cut_of_the_same_word():
    """A slow run widens the time column by one character and cuts the next cell one character earlier (the slow
    suite failed on docs/guide/critical.md this way: "withou..." documented, "witho..." printed)."""
    want = "critical.strict-saddles-d3  PASSED  0  0  0 non-sync critical points withou...  0.1s"
    assert outputs_match(want, want.replace("withou...  0.1s", "witho...  2.5s"))
    assert outputs_match(want, want.replace("withou...", "without"))
    assert outputs_match(want, want.replace("withou...", "withoutx..."))
    assert not outputs_match(want, want.replace("withou...", "within..."))
    assert not outputs_match(want, want.replace("withou...", "witho"))


def test_console_commands_and_continuations():
    pairs = parse_console("$ echo a \\\n   b\na b\n$ echo c\nc\n")
    assert pairs == [("echo a  b", "a b"), ("echo c", "c")]


def test_a_planted_wrong_example_fails_and_directives_apply(tmp_path):
    page = "\n".join([
        "```console", "$ echo 1.5", "1.6", "```",                                   # wrong output
        "<!-- tolerance: 0.1 -->", "```console", "$ echo 1.5", "1.6", "```",        # loosened: passes
        "<!-- skip-test: planted -->", "```console", "$ false", "never", "```",     # skipped
        "<!-- slow-test: planted -->", "```pycon", ">>> 1 + 1", "3", "```",          # slow only
        "```pycon", ">>> x = 2", ">>> x * 0.5", "1.0", "```",
        "```pycon", ">>> x + 1", "4", "```",                                        # names persist; wrong
    ]) + "\n"
    path = tmp_path / "page.md"
    path.write_text(page)
    blocks = extract_blocks(path)
    assert [b.rtol for b in blocks][:2] == [1e-6, 0.1]
    assert blocks[2].skip == "planted" and blocks[3].slow == "planted"
    fast = run_file(path, tmp_path, text=page)
    assert (fast.ran, fast.skipped) == (4, 2)
    assert [m.what.split("  ")[0] for m in fast.mismatches] == ["$ echo 1.5", ">>> x + 1"]
    slow = run_file(path, tmp_path, include_slow=True, text=page)
    assert len(slow.mismatches) == 3                                                # 1 + 1 is not 3


def test_the_rounding_directive_matches_small_numbers_only(tmp_path):
    """``<!-- rounding: Y -->``: numbers both at most Y match (a rounding-level measurement that moves with the
    CPU); larger numbers, and small ones without the directive, are still compared."""
    assert not outputs_match("err 5.077e-10 of 1e-06", "err 1.687e-10 of 1e-06")
    assert outputs_match("err 5.077e-10 of 1e-06", "err 1.687e-10 of 1e-06", floor=1e-8)
    assert not outputs_match("err 5.077e-10 of 1e-06", "err 1.687e-10 of 1e-05", floor=1e-8)
    assert not outputs_match("err 5.077e-07", "err 1.687e-07", floor=1e-8)
    assert outputs_match('{"err": 5.077e-10}', '{"err": 1.687e-10}', floor=1e-8)
    page = "\n".join(["<!-- rounding: 1e-8 -->", "```console", "$ echo 1.687e-10 2", "5.077e-10 2", "```",
                      "<!-- rounding: 1e-8 -->", "```console", "$ echo 1.687e-10 2", "5.077e-10 3", "```"]) + "\n"
    path = tmp_path / "page.md"
    path.write_text(page)
    assert [b.floor for b in extract_blocks(path)] == [1e-8, 1e-8]
    assert [m.what.split("  ")[0] for m in run_file(path, tmp_path, text=page).mismatches] == ["$ echo 1.687e-10 2"]


def test_the_documentation_has_runnable_examples():
    readme = extract_blocks(ROOT / "README.md")
    guide = [b for p in sorted((ROOT / "docs" / "guide").glob("*.md")) for b in extract_blocks(p)]
    assert readme and len(guide) >= 10
    assert all(b.skip is None or b.skip.strip() for b in guide)                    # every skip gives a reason
