"""Input and output paths of a command: outputs are checked before any work, and never clobber an input.

A command module may declare ``INPUTS`` and ``OUTPUTS`` (argparse destinations holding file paths) and
``IN_PLACE`` (pairs ``(input, output)`` allowed to name the same file, like ``simulate --resume F --out F``,
which reads the input completely first). Commands that declare nothing use the conventional names below.
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from theory.files import resolve_output

from numerics.common.errors import InputError

#: argparse destinations that name files a command writes / reads, unless the command declares its own
DEFAULT_OUTPUTS = ("out", "plot", "save")
DEFAULT_INPUTS = ("init", "matrices", "resume", "file", "heads", "mlp", "schedule", "spec")


def _flag(dest: str) -> str:
    return dest if dest in ("file", "spec") else "--" + dest.replace("_", "-")


def check_paths(args, inputs: Iterable[str], outputs: Iterable[str], in_place: Iterable[tuple[str, str]] = (),
                folders: Iterable[str] = ()):
    """Refuse, before any work, outputs that are not writable regular files and any output path that is also
    an input or another output of the same command (paths compared after resolving symlinks). ``folders`` are
    outputs that are directories by design (a Zarr store): only the collision checks apply to them."""
    allowed = {tuple(pair) for pair in in_place}
    outs = [(d, getattr(args, d)) for d in outputs if isinstance(getattr(args, d, None), str)]
    ins = [(d, getattr(args, d)) for d in inputs if isinstance(getattr(args, d, None), str)]
    resolved = {}
    for dest, path in outs:
        if dest in folders:
            resolved[dest] = os.path.realpath(path)
            continue
        try:
            resolved[dest] = resolve_output(path)
        except ValueError as exc:
            raise InputError(f"{_flag(dest)}: {exc}") from None
    for i, (a, pa) in enumerate(outs):
        for b, pb in outs[i + 1:]:
            if resolved[a] == resolved[b]:
                raise InputError(f"{_flag(a)} and {_flag(b)} name the same file {pa}: the second would "
                                 f"overwrite the first")
    for dest_in, path_in in ins:
        real_in = os.path.realpath(path_in)
        for dest_out, path_out in outs:
            if real_in == resolved[dest_out] and (dest_in, dest_out) not in allowed:
                raise InputError(f"{_flag(dest_out)} {path_out} is the input {_flag(dest_in)}: writing it would "
                                 f"destroy the input (choose another output path)")


def check_command_paths(module, args) -> None:
    """:func:`check_paths` with the command module's declarations (or the conventional names)."""
    check_paths(args, getattr(module, "INPUTS", DEFAULT_INPUTS), getattr(module, "OUTPUTS", DEFAULT_OUTPUTS),
                getattr(module, "IN_PLACE", ()), getattr(module, "FOLDERS", ()))
