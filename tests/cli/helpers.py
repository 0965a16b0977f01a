"""Shared helpers of the CLI tests: run ``attnflow`` in-process and check its output contract.

``--json`` prints exactly one JSON object; bad input exits 2 with exactly one stderr line starting ``error:``
and no traceback.
"""
import json

from numerics.cli import main


def json_output(capsys, argv):
    """Run ``attnflow argv`` (which must ask for JSON); return (exit code, the one JSON object printed)."""
    code = main(argv)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return code, json.loads(lines[0])


def run_json(capsys, argv):
    """Run ``attnflow argv --json``, require exit 0, return the JSON object."""
    code, payload = json_output(capsys, argv + ["--json"])
    assert code == 0, payload
    return payload


def bad(capsys, argv):
    """Run ``attnflow argv``, require exit 2 and one ``error:`` line on stderr; return that line."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors (unknown choice, bad int) exit 2 from the parser
        code = exc.code
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (out, err)
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    assert "Traceback" not in err
    return lines[0]


def assert_kernel_decided_fast(text: str, seconds: float = 5.0) -> None:
    """``parse_kernel(text)`` returns or raises one ``kernel: ...`` line, within ``seconds`` of CPU time (a few
    milliseconds on an idle machine; the cases this guards against took minutes)."""
    from tests.cpu_budget import cpu_budget
    from theory.expression_parser import parse_kernel

    with cpu_budget(seconds, f"parse_kernel({text!r})"):
        try:
            parse_kernel(text)
        except ValueError as exc:
            assert str(exc).startswith("kernel:") and "\n" not in str(exc), str(exc)
