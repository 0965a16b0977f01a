"""The areas of :mod:`numerics`: one subpackage each, a vertical slice of code, claims and commands.

An area ``numerics/<area>/`` may hold ``claims.py`` (its claims for ``attnflow verify``) and a ``commands/``
package (its ``attnflow`` subcommands, one module each). Adding an area is adding one folder: the registry and
the CLI find its claims and commands here, with no central list to edit.
"""
from __future__ import annotations

import pkgutil
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def area_names() -> list[str]:
    """The area subpackages of :mod:`numerics`, sorted (``common`` holds shared services, not an area)."""
    return sorted(info.name for info in pkgutil.iter_modules([str(_ROOT)]) if info.ispkg and info.name != "common")


def area_modules(kind: str, package: bool = False) -> list[str]:
    """Dotted names of every area's ``kind`` module (``claims``) or, with ``package``, of the modules inside
    every area's ``kind`` package (``commands``)."""
    names = []
    for area in area_names():
        folder = _ROOT / area
        if package:
            if (folder / kind / "__init__.py").exists():
                names += [f"numerics.{area}.{kind}.{info.name}"
                          for info in pkgutil.iter_modules([str(folder / kind)]) if not info.ispkg]
        elif (folder / f"{kind}.py").exists():
            names.append(f"numerics.{area}.{kind}")
    return names
