"""Atomic file writing (standard library only, so that both layers can use it).

Outputs are written to a temporary file in the target's directory and renamed into place, so a reader never
sees a half-written file and an interrupted run never leaves one behind (docs/conventions.md, house style 12).
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable


def _umask() -> int:
    """The process umask (read by setting it and restoring it at once: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, writer: Callable[[str], None], suffix: str = "") -> str:
    """Call ``writer(tmp_path)`` on a temporary file in the target's directory, then rename it into place.

    The file gets the permissions of a file created by ``open(path, "w")``: 0666 minus the process umask
    (``tempfile.mkstemp`` creates 0600 files, so the mode is set explicitly before the rename).

    Raises ``OSError`` if the directory does not exist or is not writable (callers turn it into a user error).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise OSError(f"directory does not exist: {directory}")
    fd, tmp = tempfile.mkstemp(prefix=".attnflow-", suffix=suffix or os.path.splitext(path)[1], dir=directory)
    os.close(fd)
    try:
        writer(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
