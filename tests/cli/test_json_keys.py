"""Issue 43: the top-level keys of every command's ``--json`` output are pinned (tests/cli/json_keys.json), so
that renaming, removing or adding a key is a decision (regenerate the file with
``PYTHONPATH=. python -m tests.cli.json_keys --write``, bump the command's ``JSON_SCHEMA`` when a key is removed or
renamed, keep the old key as an alias for one release and say so in CHANGELOG.md), not an accident found by
users' scripts. Every JSON object carries its ``schema`` version."""
from __future__ import annotations

import argparse
import json

import pytest

from numerics.cli import build_parser
from numerics.trained import checkpoint as ck
from tests.cli.json_keys import PINNED, RUNS, fill, make_places, observed_keys

NEEDS_MODELS = {name for name in RUNS if name.startswith("model ")}


def _commands() -> set[str]:
    """Every command and action of the parser, as RUNS names them."""
    out = set()
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                actions = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                out |= {f"{name} {a}" for group in actions for a in group.choices} if actions else {name}
    return out


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    return make_places(tmp_path_factory.mktemp("json-keys"))


def test_every_command_has_a_pinned_run():
    pinned = json.loads(PINNED.read_text())
    covered = {name.split(" (")[0] for name in RUNS}
    assert _commands() <= covered, f"commands without a run in tests/cli/json_keys.py: {_commands() - covered}"
    assert set(pinned) == set(RUNS), "regenerate tests/cli/json_keys.json (python -m tests.cli.json_keys --write)"


def test_the_keys_of_every_command_are_the_pinned_ones(places):
    """One run per command in the order of RUNS (the sweep runs build on each other); all differences at once."""
    pinned = json.loads(PINNED.read_text())
    changed = []
    for name, argv in RUNS.items():
        if name in NEEDS_MODELS and not ck.models_available():
            continue
        keys = observed_keys(fill(argv, places))
        assert "schema" in keys, name
        if keys != pinned[name]:
            added, removed = sorted(set(keys) - set(pinned[name])), sorted(set(pinned[name]) - set(keys))
            changed.append(f"{name}: added {added}, removed {removed}")
    assert not changed, ("JSON keys changed (a decision: regenerate tests/cli/json_keys.json, keep renamed keys as "
                         "aliases for one release, bump JSON_SCHEMA, announce it in CHANGELOG.md):\n"
                         + "\n".join(changed))


def test_phase_keeps_the_renamed_keys_as_aliases(places):
    """critical_noise (renamed linear_stability_threshold) and fold_pair (the old [D, r] form of fold) stay for
    one release, with the same values."""
    import contextlib
    import io

    from numerics.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(RUNS["phase"] + ["--json"]) == 0
    p = json.loads(out.getvalue())
    assert p["schema"] == 1
    assert p["critical_noise"] == p["linear_stability_threshold"]
    assert p["transition"] == "discontinuous" and p["fold_pair"] == [p["fold"]["D"], p["fold"]["r"]]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(RUNS["kuramoto"] + ["--noise", "0.25", "--json"]) == 0
    p = json.loads(out.getvalue())["prediction"]
    assert p["critical_noise"] == p["linear_stability_threshold"] == 0.5


def test_a_command_may_declare_its_own_schema_version(monkeypatch):
    from numerics.common import render
    from numerics.noise.commands import phase

    class Args:
        json = True
        _module = phase

    assert render.schema_version(Args) == render.SCHEMA == 1
    monkeypatch.setattr(phase, "JSON_SCHEMA", 2, raising=False)
    assert render.schema_version(Args) == 2
