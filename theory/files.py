"""Atomic file writing (standard library only, so that both layers can use it).

Outputs are written to a temporary file in the target's directory and renamed into place, so a reader never
sees a half-written file and an interrupted run never leaves one behind (docs/conventions.md, house style 12).
An output path that exists must be a regular file (a symlink is followed to its target): devices, FIFOs and
directories are refused, never replaced by a regular file.
"""
from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable


class OutputPathError(ValueError):
    """An output path that attnflow refuses to write (not a regular file, missing directory)."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def resolve_output(path: str | os.PathLike) -> str:
    """The file that writing ``path`` would replace (symlinks followed), checked to be writable in place.

    Raises :class:`OutputPathError` (one line) when ``path`` exists and is not a regular file, or when its
    directory does not exist.
    """
    path = os.fspath(path)
    target = os.path.realpath(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputPathError(f"cannot write {path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        shown = path if target == os.path.abspath(path) else f"{path} (-> {target})"
        raise OutputPathError(f"refusing to write {shown}: it exists and is {_kind(mode)}, not a regular file")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise OutputPathError(f"cannot write {path}: directory {directory} does not exist or is not writable")
    if not os.access(directory, os.W_OK):
        raise OutputPathError(f"cannot write {path}: directory {directory} does not exist or is not writable")
    return target


def _umask() -> int:
    """The process umask (read by setting it and restoring it at once: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, writer: Callable[[str], None], suffix: str = "") -> str:
    """Call ``writer(tmp_path)`` on a temporary file in the target's directory, then rename it into place.

    The target is ``path`` with symlinks followed (:func:`resolve_output`; a symlink stays a symlink). The
    temporary file is removed if ``writer`` fails or the process is interrupted (any ``BaseException``,
    including the CLI's SIGTERM and SIGINT handling). Returns ``path``.
    The file gets the permissions of a file created by ``open(path, "w")``: 0666 minus the process umask
    (``tempfile.mkstemp`` creates 0600 files, so the mode is set explicitly before the rename).
    """
    target = resolve_output(path)
    fd, tmp = tempfile.mkstemp(prefix=".attnflow-", suffix=suffix or os.path.splitext(target)[1],
                               dir=os.path.dirname(target))
    os.close(fd)
    try:
        writer(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return os.fspath(path)
