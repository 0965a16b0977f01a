"""Fuzzing the command line and the kernel parser with Hypothesis.

Random argument lists for every command (flags with hostile values: huge, tiny, negative, non-finite, empty,
paths to devices, directories and missing files) and random kernel strings from a grammar with nesting and
large literals. Every call must end in exit 0, 1 (a verification or conjecture outcome) or 2 (one ``error:``
line), with no traceback, within a per-call CPU-time budget (never a wall-clock limit: tests/cpu_budget.py), and
write nothing outside the run's own folder.
"""
from __future__ import annotations

import argparse
import os
import resource

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numerics.cli import build_parser, main
from tests.cli.helpers import assert_kernel_decided_fast
from tests.cpu_budget import cpu_budget

#: per-call CPU-time budget (s): a hostile value must be refused before any long work. The fixture's work limit
#: refuses what it estimates above ~4 s, and an accepted default takes ~1-2 s of CPU on an idle machine; 60 s
#: leaves room for two BLAS threads on a loaded machine and still fails a request that starts hours of work.
CALL_CPU_SECONDS = 60

#: the malformed files of tests/cli/malformed.py, by the names their makers give them
MALFORMED_NAMES = ["huge.npy", "huge.npz", "corrupt.npz", "bomb.npz", "fifo.npz", "empty.npy", "archive.npy",
                   "array.npz", "truncated.npy", "folder.npz", "pickled.npy"]

VALUES = st.sampled_from(["0", "1", "-1", "2", "3", "1e308", "-1e308", "1e-300", "nan", "inf", "-inf", "", "abc",
                          "1000000000", "0.5", "/dev/null", "/nonexistent/x.npz", ".", "[[1,0],[0,1]]", "[1e308]",
                          "((2*s)**100)**100", "exp(beta*s)", "tan(pi/2*s)", "log:1:1e9:5", "-0",
                          "pre", "mix", "ngpt",  # the --norm schemes (other values of --norm are refused)
                          "lnscale", "from-init",  # LayerNorm Scaling; --radius0 from-init (radii from --init)
                          "harmonic",
                          "per-member",  # simulate --step of an ensemble
                          # sizes that must be estimated before work, and every malformed kind of input file
                          # (tests/cli/malformed.py, made in the run's folder by the fixture)
                          "1000000000000", "log:1:1e9:1000000000", "abs(s)", *MALFORMED_NAMES])


def _flags_of(command: str, action: str | None = None) -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    if action is not None:
        sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[action]
    return [opt for a in sub._actions for opt in a.option_strings if opt.startswith("--") and opt != "--help"]


#: every command is fuzzed; those with actions get one (and their positional file), ``verify`` always a small
#: --only (the whole registry takes a minute) and ``model`` always a --checkpoint (the packaged model is slow);
#: ``decoder`` is fuzzed below on a small checkpoint (its packaged model takes longer to read than a call may)
NOT_FUZZED: set[str] = {"decoder"}
COMMANDS = sorted(set(next(a for a in build_parser()._actions if a.dest == "command").choices) - NOT_FUZZED)
ACTIONS = {"sweep": ["run", "resume", "status", "plot", "observables"], "model": ["inspect", "tokens", "iterate", "embed"],
           "conjecture": ["run", "list", "replay"]}
FILES = st.sampled_from(["traj.npz", "missing.npz", ".", "/dev/null", *MALFORMED_NAMES])


#: option values that select the S^2 harmonic backend and its benchmark suite, with random other flags
HARMONIC_STARTS = (["simulate", "--backend", "harmonic", "--out", "h.npz"], ["bench", "--suite", "harmonic"])


@st.composite
def argument_lists(draw):
    command = draw(st.sampled_from(COMMANDS))
    action = draw(st.sampled_from(ACTIONS[command])) if command in ACTIONS else None
    flags = _flags_of(command, action)
    argv = [command] + ([action] if action else [])
    if command in ("clusters", "predict-merges"):
        argv.append(draw(FILES))
    if command == "derive":
        argv.append(draw(st.sampled_from(["field", "energy", "gradient", "nope"])))
    if (command, action) in (("sweep", "run"), ("sweep", "resume"), ("sweep", "status"), ("sweep", "plot"),
                             ("conjecture", "replay")):
        argv.append(draw(FILES))
    if command == "verify":  # a handful of claims at most (--all without --only would run them all)
        argv += ["--only", draw(st.sampled_from(["core.equivariance", "nope", "", "core.equivariance,nope", ","]))]
        flags = [f for f in flags if f not in ("--only", "--all")]
    if command == "certify":  # fast certificates, unknown ids and ids of claims that are not certificates
        argv.append(draw(st.sampled_from(["circle-three-clusters", "certified.strict-saddles", "nope", "",
                                          "noise.kuramoto", "certified.", "../x", "beta-star",
                                          "critical-noise", "switch-point"])))
    if command == "model":
        argv += ["--checkpoint", draw(FILES)]
        flags = [f for f in flags if f not in ("--checkpoint", "--model")]
    for flag in (draw(st.lists(st.sampled_from(flags), max_size=6, unique=True)) if flags else []):
        argv += [flag, draw(VALUES)] if flag not in _SWITCHES else [flag]
    if command == "phase" and draw(st.booleans()):  # --beta takes a list: several hostile values at once
        argv += ["--beta", *draw(st.lists(VALUES, min_size=2, max_size=4))]
    return argv


@st.composite
def harmonic_argument_lists(draw):
    """``simulate --backend harmonic`` / ``bench --suite harmonic`` with random other flags and values."""
    argv = list(draw(st.sampled_from(HARMONIC_STARTS)))
    flags = [f for f in _flags_of(argv[0]) if f not in argv]
    for flag in draw(st.lists(st.sampled_from(flags), max_size=6, unique=True)):
        argv += [flag, draw(VALUES)]
    return argv


#: flags that take no value (given with one, the value would be an unexpected positional argument)
_SWITCHES = {opt for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
             for sub in a.choices.values() for b in sub._actions if b.nargs == 0 for opt in b.option_strings}


def _address_space() -> int:
    """This process's current virtual size in bytes (from /proc)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * resource.getpagesize()


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # a small work limit (~4 s estimated) so that legitimate but long defaults are refused like hostile values:
    # the fuzz checks that every request is decided quickly, not that long runs finish
    monkeypatch.setenv("ATTNFLOW_MAX_WORK_HOURS", "0.001")
    monkeypatch.setenv("ATTNFLOW_MAX_MEMORY_GB", "2")
    from numerics.core.trajectory import simulate
    from tests.cli import malformed

    simulate("sa", 1.0, 0.2, n=4, d=3, seed=0, dt=0.1).save("traj.npz")
    made = malformed.make_all(str(tmp_path))
    assert sorted(os.path.basename(p) for p in made.values()) == sorted(MALFORMED_NAMES)
    return tmp_path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=argument_lists())
def test_random_command_lines(folder, capsys, argv):
    _decided_fast(folder, capsys, argv)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=harmonic_argument_lists())
def test_random_harmonic_command_lines(folder, capsys, argv):
    _decided_fast(folder, capsys, argv)


def _decided_fast(folder, capsys, argv):
    """One fuzzed call: exit 0, 1 or 2 (one ``error:`` line), no traceback, within the CPU-time budget, nothing
    written outside the run's folder."""
    listing_before = set(os.listdir(folder))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + (6 << 30), hard))
    try:
        with cpu_budget(CALL_CPU_SECONDS, argv):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse usage errors: exit 2 with one line
                code = exc.code
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (argv, code, err[-300:])
    assert "Traceback" not in err, (argv, err[-500:])
    if code == 2:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, (argv, err)
    # nothing written outside the run's folder; inside it only regular files (never device replacements)
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    for name in set(os.listdir(folder)) - listing_before:
        assert not name.startswith(".attnflow-"), (argv, name)


ATOMS = st.sampled_from(["s", "beta", "pi", "1", "2", "0.5", "1e300", "9" * 40, "100", "0"])


def _kernels(children):
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*", "/", "**"]), children).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
        st.tuples(st.sampled_from(["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "abs"]),
                  children).map(lambda t: f"{t[0]}({t[1]})"),
        children.map(lambda c: f"-{c}"),
    )


@settings(max_examples=200, deadline=None)
@given(text=st.recursive(ATOMS, _kernels, max_leaves=12))
def test_random_kernel_strings_are_decided_fast(text):
    assert_kernel_decided_fast(text)


# -- attnflow decoder: every action with random flags, on a small random checkpoint ----------------------------------
def _decoder_flags(action: str) -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["decoder"]
    act = next(a for a in sub._actions if a.dest == "action").choices[action]
    return [o for a in act._actions for o in a.option_strings if o.startswith("--") and o not in ("--help", "--model")]


@st.composite
def decoder_argument_lists(draw):
    from numerics.decoder.commands.decoder import ACTIONS

    action = draw(st.sampled_from(ACTIONS))
    argv = ["decoder", action]
    for flag in draw(st.lists(st.sampled_from(_decoder_flags(action)), max_size=5, unique=True)):
        argv += [flag, draw(VALUES)]
    return argv


@pytest.fixture(scope="module")
def small_decoder(tmp_path_factory):
    pytest.importorskip("gguf")
    from tests.numerics.decoder_support import llama_weights, write_llama_gguf

    return str(write_llama_gguf(tmp_path_factory.mktemp("fuzz-decoder") / "small.gguf", llama_weights()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=decoder_argument_lists())
def test_random_decoder_command_lines(folder, capsys, small_decoder, argv):
    _decided_fast(folder, capsys, argv + ["--model", small_decoder])
