"""Every input guarded against every output, in one place (numerics.common.paths; issue 43, data loss).

The reviewer's command lines: an output equal to an input, or inside an input folder, is refused with one
``error:`` line and exit 2 before any work, and the input keeps its bytes and its modification time. A walk over
every subcommand's parser fails on an option that looks like a path and is not classified, so that a new
command cannot forget to declare one.
"""
from __future__ import annotations

import argparse
import os
import re

import numpy as np
import pytest

from numerics.cli import build_parser, leaf_parsers
from numerics.common import paths
from tests.cli.helpers import bad

SIM = ["simulate", "--model", "sa", "--n", "4", "--d", "2", "--beta", "1", "--t-end", "0.1"]


def _fingerprint(path):
    if os.path.isdir(path):
        return {os.path.relpath(os.path.join(root, f), path): _fingerprint(os.path.join(root, f))
                for root, _, files in os.walk(path) for f in files}
    st = os.stat(path)
    with open(path, "rb") as fh:
        return fh.read(), st.st_mtime_ns, st.st_size


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one = np.ones((1, 2, 2))
    np.savez("H.npz", Q=one, K=one, V=one, W=one)
    np.savez("M.npz", W1=np.ones((3, 2)), b1=np.ones(3), W2=np.ones((2, 3)), b2=np.ones(2))
    np.savez("S.npz", times=np.array([0.0]), Q=one[None], K=one[None], V=one[None], W=one[None])
    os.mkdir("store.zarr")
    with open("store.zarr/zarr.json", "w") as fh:
        fh.write('{"zarr_format": 3, "node_type": "group"}')
    return tmp_path


CASES = [
    (SIM + ["--heads", "H.npz", "--out", "H.npz"], "H.npz", "is the input --heads"),
    (SIM + ["--mlp", "M.npz", "--out", "M.npz"], "M.npz", "is the input --mlp"),
    (SIM + ["--schedule", "S.npz", "--out", "S.npz"], "S.npz", "is the input --schedule"),
    (SIM + ["--heads", "H.npz", "--out", "o.npz", "--plot", "H.npz"], "H.npz", "--plot H.npz is the input --heads"),
    (SIM + ["--heads", "H.npz", "--out", "o.npz", "--plot", "./H.npz"], "H.npz", "is the input --heads"),
    (["sweep", "plot", "store.zarr", "--x", "beta", "--value", "clusters", "--plot", "store.zarr/zarr.json"],
     "store.zarr", "inside the store folder"),
    (["sweep", "plot", "store.zarr", "--x", "beta", "--value", "clusters", "--plot", "store.zarr/new.png"],
     "store.zarr", "inside the store folder"),
    (["sweep", "convert", "store.zarr", "--out", "store.zarr/new.zarr"], "store.zarr", "inside the store folder"),
    (["sweep", "convert", "store.zarr", "--out", "store.zarr"], "store.zarr", "is the input store"),
    (["clusters", "H.npz", "--plot", "H.npz"], "H.npz", "is the input file"),
]


@pytest.mark.parametrize("argv, victim, message", CASES, ids=[" ".join(c[0][-4:]) for c in CASES])
def test_output_over_an_input_is_refused_untouched(inputs, capsys, argv, victim, message):
    before = _fingerprint(victim)
    line = bad(capsys, argv)
    assert message in line, line
    assert _fingerprint(victim) == before
    assert sorted(os.listdir(inputs)) == sorted(["H.npz", "M.npz", "S.npz", "store.zarr"])


def test_resume_in_place_stays_allowed(tmp_path, monkeypatch, capsys):
    from numerics.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(SIM + ["--out", "t.npz"]) == 0
    assert main(["simulate", "--resume", "t.npz", "--t-end", "0.2", "--out", "t.npz"]) == 0
    capsys.readouterr()


#: what makes an option look like a path: its metavar, or its help naming a file, a folder or a file type
_PATHLIKE_METAVAR = re.compile(r"\b(FILE|PATH|DIR|OUT|OLD|NEW)\b|\.(zarr|npz|npy|png|json|py|toml)\b")
_PATHLIKE_HELP = re.compile(r"\bfile\b|\bfolder\b|\bdirectory\b|\bstore\b|\bpath\b|\bTOML\b|"
                            r"\.(npz|npy|png|json|py|toml|gguf|zarr)\b", re.IGNORECASE)


def _options():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        module = p.get_default("_module")
        for command, leaf in leaf_parsers(p, name):
            for action in leaf._actions:
                if action.nargs == 0 or action.dest in ("help", "version") or action.type not in (None, str):
                    continue
                yield command, module, action


def _pathlike(action) -> bool:
    help_text = (action.help or "").split("(default")[0]
    return bool(_PATHLIKE_METAVAR.search(str(action.metavar or "")) or _PATHLIKE_HELP.search(help_text))


def test_every_path_option_is_classified():
    """A new option that names a file must be declared in numerics.common.paths (or marked not a path)."""
    missing = [f"{command} {action.dest}" for command, module, action in _options()
               if _pathlike(action) and paths.role_of(command, action.dest, module) is None]
    assert not missing, f"classify these options in numerics/common/paths.py: {missing}"


def test_the_walk_sees_the_known_path_options():
    """The walk itself can see: the options of the reviewer's command lines are found and classified."""
    seen = {(c, a.dest): paths.role_of(c, a.dest, m) for c, m, a in _options() if _pathlike(a)}
    for key, role in [(("simulate", "heads"), paths.IN), (("simulate", "mlp"), paths.IN),
                      (("simulate", "schedule"), paths.IN), (("simulate", "plot"), paths.OUT),
                      (("sweep plot", "store"), paths.IN), (("sweep plot", "out"), paths.OUT),
                      (("sweep run", "store"), paths.OUT_DIR), (("sweep convert", "out"), paths.OUT_DIR)]:
        assert seen.get(key) == role, (key, seen.get(key))


def test_module_declarations_agree_with_the_tables():
    """What a command module still declares (INPUTS, OUTPUTS, FOLDERS) says the same as numerics.common.paths."""
    wrong = []
    for command, module, action in _options():
        for attr, role in (("INPUTS", paths.IN), ("OUTPUTS", paths.OUT), ("FOLDERS", paths.OUT_DIR)):
            if action.dest in getattr(module, attr, ()) and paths.role_of(command, action.dest) not in (role, None):
                wrong.append((command, action.dest, attr, paths.role_of(command, action.dest)))
    assert not wrong, wrong


def test_every_classified_destination_exists():
    """No stale entry: every destination named in the tables is an option of some command."""
    dests = {(c, a.dest) for c, _, a in _options()}
    assert set(paths.ROLES) <= {d for _, d in dests}, set(paths.ROLES) - {d for _, d in dests}
    for command, roles in paths.COMMAND_ROLES.items():
        for dest in roles:
            assert (command, dest) in dests or any(c.startswith(command + " ") and d == dest for c, d in dests), \
                (command, dest)
