"""The ``attnflow`` command line: parse, call the library, render. One module per subcommand, kept in the
``commands/`` folder of its area (``numerics/<area>/commands/<name>.py``) and discovered here.

Exit codes: 0 success, 1 a verification failed, 2 bad input (one line on stderr starting with ``error:``),
130 interrupted, 141 (= 128 + SIGPIPE, what ``cat`` or ``yes`` return) when the reader of the output closed the
pipe (``attnflow spectrum ... | head -1``): the command stops quietly, without a message.

Building the parser imports no heavy module (SymPy, SciPy, matplotlib, NetworkX, Hypothesis): each command
imports what it needs inside ``run``, so ``attnflow --help`` and ``attnflow COMMAND --help`` answer at once.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from numerics.common.areas import area_modules
from numerics.common.errors import InputError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2 (no usage dump)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        print(f"error: {self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def _commands():
    """Every command module: ``numerics.<area>.commands.<name>`` defining ``NAME``, ``HELP``,
    ``add_arguments(parser)`` and ``run(args) -> int`` (``ORDER`` sorts the help listing)."""
    mods = [importlib.import_module(name) for name in area_modules("commands", package=True)]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: getattr(m, "ORDER", 50))


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("attnflow")
    except metadata.PackageNotFoundError:  # a source tree that was not installed
        return "0+unknown"


#: exit code when the reader closed the output pipe (128 + SIGPIPE, the shell convention)
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests capture it): nothing to silence
        pass


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="attnflow", description="Verify the mathematics of transformers as interacting "
                     "particle systems: derive, generate code, simulate, check claims from the literature.")
    parser.add_argument("--version", action="version", version=f"attnflow {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in _commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None) -> int:
    # Figures are drawn off-screen; chosen here (the CLI), never at library import.
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args._run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        # OSError: unwritable output, missing file. ValueError here is a validation the API raised.
        msg = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"error: {msg.splitlines()[0] if msg else type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
