"""Where Numba keeps its compiled kernels: a user cache directory, never the installed package's source tree.

Numba caches a ``cache=True`` kernel beside its source file (``__pycache__`` of the installed package) unless
``NUMBA_CACHE_DIR`` names another directory; an installed attnflow would then write into site-packages (or fail
there, read-only), and two installations or users would share or fight over one cache. :func:`use_user_cache`
runs when :mod:`numerics` is imported, before any module imports Numba (Numba reads the variable once, at its
own import): a ``NUMBA_CACHE_DIR`` that the user set and that is writable is kept; otherwise it is set to
``$XDG_CACHE_HOME/attnflow/numba`` (default ``~/.cache/attnflow/numba``), or, when that cannot be created, to
``attnflow-numba-<uid>`` in the temporary directory.
"""
from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLE = "NUMBA_CACHE_DIR"


def _writable_dir(path: str) -> bool:
    """True when ``path`` is (or could be created as) a directory this process can write into."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def default_cache_dir(environ: MutableMapping[str, str] = os.environ) -> str:
    """``$XDG_CACHE_HOME/attnflow/numba``, or ``~/.cache/attnflow/numba`` when XDG_CACHE_HOME is unset or not
    absolute (the XDG rule)."""
    base = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attnflow", "numba")


def use_user_cache(environ: MutableMapping[str, str] = os.environ) -> str:
    """Set ``NUMBA_CACHE_DIR`` in ``environ`` unless the user's value is a writable directory; returns it."""
    given = environ.get(VARIABLE, "")
    if given and _writable_dir(given):
        return given
    for candidate in (default_cache_dir(environ), None):
        if candidate is None:
            import tempfile

            candidate = os.path.join(tempfile.gettempdir(), f"attnflow-numba-{os.getuid()}"
                                     if hasattr(os, "getuid") else "attnflow-numba")
        if _writable_dir(candidate):
            environ[VARIABLE] = candidate
            return candidate
    return given  # nowhere writable: leave Numba to its own fallback
