"""conjecture run/replay as a user runs them: user modules, no .hypothesis/ in the cwd, progress."""
import json
import os
import textwrap

import pytest

from numerics.cli import main
from numerics.common.errors import InputError
from numerics.conjectures.catalogue import replay
from numerics.conjectures.framework import load_conjectures
from tests.cli.helpers import bad, run_json

USER_MODULE = textwrap.dedent('''
    """A user's conjecture: every integer in [0, 100] is below 30 (false; the minimal counterexample is 30)."""
    from hypothesis import strategies as st

    from numerics.conjectures.framework import Conjecture, Verdict

    def outcome(inputs):
        return {"value": inputs["k"]}

    def predicate(inputs, outcome):
        return Verdict(outcome["value"] < 30, f"value {outcome['value']}")

    SMALL = Conjecture(id="user-small", title="every k is below 30", source="a user", note="none",
                       inputs=st.fixed_dictionaries({"k": st.integers(0, 100)}), outcome=outcome,
                       predicate=predicate, expected="counterexample", max_examples=50)
''')


@pytest.fixture
def user_module(tmp_path):
    path = tmp_path / "my_conjectures.py"
    path.write_text(USER_MODULE)
    return path


def test_run_and_replay_a_user_conjecture(tmp_path, capsys, monkeypatch, user_module):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    saved = tmp_path / "cx.json"
    payload = run_json(capsys, ["conjecture", "run", "user-small", "--module", str(user_module), "--save", str(saved)])
    assert payload["status"] == "counterexample"
    assert payload["counterexample"]["inputs"]["k"] == 30  # shrunk to the minimal one
    assert os.listdir(work) == [], f"left in the working directory: {os.listdir(work)}"
    data = json.loads(saved.read_text())
    assert data["defined_in"]["file"] == str(user_module)
    # replay without the module: one clear error naming the module to pass
    line = bad(capsys, ["conjecture", "replay", str(saved)])
    assert "--module" in line and str(user_module) in line
    # with the module (CLI and library)
    assert main(["conjecture", "replay", str(saved), "--module", str(user_module), "--json"]) == 0  # reproduced
    again = json.loads(capsys.readouterr().out)
    assert again["reproduced"] is True
    res = replay(saved, conjectures=load_conjectures(user_module).values())
    assert res.reproduced and res.id == "user-small"
    assert replay(saved, module=str(user_module)).reproduced


def test_hypothesis_db_goes_where_asked(tmp_path, capsys, monkeypatch, user_module):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    db = tmp_path / "hdb"
    run_json(capsys, ["conjecture", "run", "user-small", "--module", str(user_module), "--hypothesis-db", str(db)])
    assert os.listdir(work) == []
    assert db.is_dir()


def test_load_conjectures_errors(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(InputError, match="defines no Conjecture"):
        load_conjectures(empty)
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InputError, match="boom"):
        load_conjectures(broken)
    with pytest.raises(InputError, match="does not exist"):
        load_conjectures(tmp_path / "missing.py")


def test_library_run_writes_nothing_in_the_cwd(tmp_path, monkeypatch):
    """Conjecture.run with the default settings leaves no .hypothesis/ folder where the user works."""
    from numerics.conjectures.catalogue import get_conjecture

    monkeypatch.chdir(tmp_path)
    result = get_conjecture("crmb-convex-spurious").run(max_examples=2, seed=0)
    assert result.status in ("counterexample", "no-counterexample-found", "inconclusive")
    assert os.listdir(tmp_path) == []


NEVER_FAILS = USER_MODULE.replace('outcome["value"] < 30', 'outcome["value"] < 1000').replace("max_examples=50",
                                                                                                 "max_examples=150")


def test_search_in_a_fresh_process_writes_nothing_in_the_cwd(tmp_path):
    """Hypothesis's default storage is ./.hypothesis (fixed when it is imported, so only a fresh process shows
    it): 150 examples draw local constants (p = 0.05 per draw), which Hypothesis caches there."""
    import subprocess
    import sys

    module = tmp_path / "never_fails.py"
    module.write_text(NEVER_FAILS)
    work = tmp_path / "work"
    work.mkdir()
    code = ("from numerics.conjectures.framework import load_conjectures\n"
            f"c = load_conjectures({str(module)!r})['user-small']\n"
            "print(c.run(seed=0).status)")
    res = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(
                             os.path.abspath(__file__))))})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "no-counterexample-found"
    assert os.listdir(work) == [], os.listdir(work)
