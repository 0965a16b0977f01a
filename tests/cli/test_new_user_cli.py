"""What a new user hits first: a fast ``--help``, ``--version``, a quiet end on a closed pipe."""
import os
import subprocess
import sys

import pytest

import attnflow
from numerics.cli import EXIT_BROKEN_PIPE, build_parser, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("sympy", "scipy", "matplotlib", "networkx", "hypothesis", "mpmath")


def _python(code: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, **kw)


def test_building_the_parser_imports_no_heavy_module():
    """Every command's parser (what ``attnflow --help`` and ``attnflow CMD --help`` build) without SymPy & co."""
    code = ("import sys\nfrom numerics.cli import build_parser\nbuild_parser()\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    res = _python(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "", f"heavy modules imported while building the parser: {res.stdout.strip()}"


def test_help_of_every_command_imports_no_heavy_module():
    names = [a.dest for a in build_parser()._subparsers._group_actions[0]._choices_actions]
    assert "simulate" in names and "critical" in names
    code = ("import sys\nfrom numerics.cli import main\nbad = []\n"
            f"for name in {names!r}:\n"
            "    try:\n        main([name, '--help'])\n    except SystemExit:\n        pass\n"
            f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))")
    res = _python(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "HEAVY=", res.stdout[-300:]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"attnflow {attnflow.__version__}"


def test_closed_pipe_ends_quietly():
    """The reader closes the pipe before the command writes: exit 141, nothing on stderr (no 'error:' line)."""
    proc = subprocess.Popen([sys.executable, "-m", "numerics", "spectrum", "--d", "3", "--beta", "4"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head -0`: nobody reads
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == EXIT_BROKEN_PIPE == 141
    assert err == "", err


def test_progress_bar_on_a_terminal_and_lines_otherwise(monkeypatch):
    import io

    from numerics.common import provenance

    clock = iter(range(100))
    monkeypatch.setattr(provenance.time, "perf_counter", lambda: float(next(clock)))
    tty = io.StringIO()
    bar = provenance.StderrProgress("run", delay=0, stream=tty, tty=True)
    for k in range(1, 4):
        bar(k, 3)
    assert "\r" in tty.getvalue() and "[" in tty.getvalue() and tty.getvalue().endswith("\n")
    assert tty.getvalue().count("\n") == 1  # one line, redrawn in place
    log = io.StringIO()
    lines = provenance.StderrProgress("run", delay=0, every=0, stream=log, tty=False)
    for k in range(1, 4):
        lines(k, 3)
    assert "\r" not in log.getvalue() and log.getvalue().count("\n") >= 2
