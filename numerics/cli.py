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
import signal
import sys
import threading
import time
import warnings

#: wall-clock time (epoch seconds) at which this module was imported: the whole run's start when the process
#: start cannot be read (see :func:`process_start`). Taken before the command modules are imported.
IMPORTED_AT = time.time()

from numerics.common.areas import area_modules
from numerics.common.errors import InputError
from numerics.common.paths import check_command_paths


def process_start() -> float:
    """Wall-clock time (epoch seconds) at which this process started, so that reported times include the
    interpreter's start-up and the imports (a command's own timer starts after them: ``certify`` measured 1.8 s of
    a 46 s process). Read from /proc on Linux (start time in clock ticks after boot); elsewhere, or if /proc
    cannot be read, the time this module was imported (:data:`IMPORTED_AT`)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # the command name, in parentheses, may hold spaces
        with open("/proc/stat") as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith("btime "))
        started = boot + float(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat; 20th after the name
    except (OSError, ValueError, IndexError, StopIteration, AttributeError):
        return IMPORTED_AT
    # a start after the import would be a clock or /proc oddity: the import is a sure upper bound
    return min(started, IMPORTED_AT)


def whole_run() -> dict:
    """The whole process so far: ``process_seconds`` (wall time since the process started, :func:`process_start`)
    and ``process_cpu_seconds`` (CPU time of the process, all threads, :func:`time.process_time`).

    Returns
    -------
    dict
        The two numbers, rounded to 10 ms.
    """
    return {"process_seconds": round(time.time() - process_start(), 2),
            "process_cpu_seconds": round(time.process_time(), 2)}


def whole_run_text(run: dict) -> str:
    """``"whole run 46.2 s wall, 12.1 s CPU"`` for the text output of a command that reports its time."""
    return f"whole run {run['process_seconds']:.1f} s wall, {run['process_cpu_seconds']:.1f} s CPU"


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
    parser.add_argument("--max-memory", type=float, metavar="GB",
                        help="refuse requests estimated to need more memory than this (default 16 GiB; "
                             "also ATTNFLOW_MAX_MEMORY_GB)")
    parser.add_argument("--max-hours", type=float, metavar="H",
                        help="refuse requests estimated to take longer than this (default 24 h; also "
                             "ATTNFLOW_MAX_WORK_HOURS)")
    parser.add_argument("--version", action="version", version=f"attnflow {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in _commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                           usage=getattr(mod, "USAGE", None))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run, _module=mod)
        name_commands(p, mod.NAME)
        state_defaults(p)
    return parser


def leaf_parsers(parser: argparse.ArgumentParser, name: str):
    """``(command path, parser)`` of every parser that runs a command under ``parser`` (``"sweep run"``, ...)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield name, parser
    for action in subs:
        for sub_name, sub in action.choices.items():
            yield from leaf_parsers(sub, f"{name} {sub_name}")


def name_commands(parser: argparse.ArgumentParser, name: str) -> None:
    """Record on each command's parser its path (``_command``) and how each destination is spelled
    (``_flags``: its first option string, or its name for a positional): :func:`numerics.common.paths.
    check_command_paths` classifies the options by them and names them in its messages."""
    for path, leaf in leaf_parsers(parser, name):
        leaf.set_defaults(_command=path, _flags={a.dest: (a.option_strings or [a.dest])[0] for a in leaf._actions})


def _in_required_group(parser, action) -> bool:
    """True for an option of an argument group whose title says its options are required (simulate's model)."""
    return any(action in group._group_actions and "required" in (group.title or "")
               for group in parser._action_groups[2:])


def state_defaults(parser: argparse.ArgumentParser) -> None:
    """Every option's help states its default: an option whose help does not say it gets "(default: X)" from
    the parser (``none`` when unset; flags and required options are left alone). Sub-actions included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                state_defaults(sub)
            continue
        if not action.option_strings or action.nargs == 0 or action.required or action.help == argparse.SUPPRESS:
            continue
        if "default" in (action.help or "").lower() or _in_required_group(parser, action):
            continue
        value = action.default
        shown = "none" if value in (None, [], ()) else (" ".join(map(str, value)) if isinstance(value, (list, tuple))
                                                         else str(value))
        action.help = f"{action.help or ''} (default: {shown.replace('%', '%%')})".lstrip()


class Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks and the atomic writer clean up."""


def _on_sigterm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise Terminated()


def _interrupted(code: int, what: str) -> int:
    print(f"error: interrupted by {what}; temporary files were removed and outputs that were not yet "
          f"renamed into place are unchanged", file=sys.stderr)
    return code


def main(argv=None) -> int:
    # Figures are drawn off-screen; chosen here (the CLI), never at library import.
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = build_parser()
    args = parser.parse_args(argv)
    for flag, value in (("--max-memory", args.max_memory), ("--max-hours", args.max_hours)):
        if value is not None and not (0 < value < float("inf")):
            print(f"error: {flag} must be a positive number, got {value:g}", file=sys.stderr)
            return 2
    limits = {"ATTNFLOW_MAX_MEMORY_GB": args.max_memory, "ATTNFLOW_MAX_WORK_HOURS": args.max_hours}
    saved_env = {k: os.environ.get(k) for k in limits}
    for key, value in limits.items():
        if value is not None:
            os.environ[key] = repr(value)  # read (and validated) by numerics.common.limits
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_command_paths(args._module, args)
            code = args._run(args)
            sys.stdout.flush()
        _replay_warnings(caught)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except InputError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (OSError, ValueError, OverflowError, TypeError) as exc:
        # OSError: unwritable output, missing file. ValueError here is a validation the API raised.
        # OverflowError/TypeError: a value the validators let through; still one line and exit 2.
        msg = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"error: {_one_line(msg) or type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted(130, "SIGINT")
    except Terminated:
        return _interrupted(143, "SIGTERM")
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return int(code or 0)


def _one_line(message) -> str:
    text = str(message).strip()
    return text.splitlines()[0] if text else ""


def _replay_warnings(caught) -> None:
    """Warnings of a successful run, one line each, whole (a library's message may span lines: SciPy's
    "... as measured by the\n  improvement from the last ten iterations." was cut at the first), with its
    category and origin (a failed run prints only its ``error:`` line)."""
    seen = set()
    for w in caught:
        origin = "/".join(str(w.filename).replace(os.sep, "/").split("/")[-2:])
        line = f"warning: {' '.join(str(w.message).split())} ({w.category.__name__}, {origin}:{w.lineno})"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
