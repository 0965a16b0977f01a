"""Input and output paths of every command, in one place: outputs are checked before any work, and never
clobber an input.

Every option that names a file or a folder is classified here, by its argparse destination (:data:`ROLES`),
with per-command exceptions (:data:`COMMAND_ROLES`, keyed by the command path such as ``"sweep run"``):

- ``IN``: a file or folder the command reads;
- ``OUT``: a file the command writes (checked to be a writable regular file);
- ``OUT_DIR``: a folder the command creates (a Zarr store, a cache): only the collision checks apply;
- ``NOT_PATH``: an option that looks like a path but is not one (``simulate --model sa``).

Before any work, :func:`check_command_paths` refuses an output that is an input (paths compared after resolving
symlinks), an output inside an input folder (``sweep plot STORE --plot STORE/zarr.json`` would write a PNG over
the store's metadata), and two outputs naming the same file. The only allowed pairs are in :data:`IN_PLACE`
(``simulate --resume F --out F`` reads the input completely before writing). ``tests/cli/test_paths_guard.py``
walks every subcommand's parser and fails on an option that looks like a path and is not classified here, so a
new command cannot forget one.

A command module may still declare ``INPUTS``, ``OUTPUTS``, ``FOLDERS`` and ``IN_PLACE``: they classify only the
destinations that the tables here do not name (the test checks that they agree with the tables).
"""
from __future__ import annotations

import os
from collections.abc import Iterable

from theory.files import resolve_output

from numerics.common.errors import InputError

IN, OUT, OUT_DIR, NOT_PATH = "in", "out", "out-dir", "not-a-path"

#: the role of an argparse destination in every command, unless :data:`COMMAND_ROLES` says otherwise
ROLES = {
    # inputs
    "init": IN, "init2": IN, "matrices": IN, "heads": IN, "mlp": IN, "schedule": IN, "positions": IN,
    "resume": IN, "file": IN, "spec": IN, "store": IN, "model": IN, "module": IN,
    # outputs
    "out": OUT, "plot": OUT, "save": OUT,
    # folders a command creates or fills (a cache kept across runs)
    "hypothesis_db": OUT_DIR,
}

#: exceptions by command path (``"NAME"`` or ``"NAME ACTION"``)
COMMAND_ROLES = {
    "simulate": {"model": NOT_PATH},       # the model kind (sa, usa)
    "critical": {"config": NOT_PATH},      # a structured configuration's name ('file' reads --file)
    "sweep run": {"store": OUT_DIR},       # the store the run creates (it must not exist)
    "sweep convert": {"out": OUT_DIR},     # the new store (it must not exist)
}

#: ``(input, output)`` destinations allowed to name the same file, by command path
IN_PLACE = {
    # --resume F --out F continues a run in place: the input is read completely before the output is written
    "simulate": {("resume", "out")},
}


def _flag(dest: str, flags: dict) -> str:
    return flags.get(dest) or "--" + dest.replace("_", "-")


def role_of(command: str, dest: str, module=None) -> str | None:
    """The role (:data:`IN`, :data:`OUT`, :data:`OUT_DIR`, :data:`NOT_PATH`) of option ``dest`` of ``command``
    (a command path such as ``"sweep run"``), or None when it is not classified (not a path)."""
    head = command.split(" ")[0]
    for key in (command, head):
        if dest in COMMAND_ROLES.get(key, {}):
            return COMMAND_ROLES[key][dest]
    if dest in ROLES or module is None:
        return ROLES.get(dest)
    for attr, role in (("FOLDERS", OUT_DIR), ("OUTPUTS", OUT), ("INPUTS", IN)):
        if dest in getattr(module, attr, ()):
            return role
    return None


def _values(value) -> list[str]:
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, (list, tuple)):
        return [os.fspath(v) for v in value if isinstance(v, (str, os.PathLike))]
    return []


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_paths(args, inputs: Iterable[str], outputs: Iterable[str], in_place: Iterable[tuple[str, str]] = (),
                folders: Iterable[str] = (), flags: dict | None = None) -> None:
    """Refuse, before any work, outputs that are not writable regular files, any output path that is also an
    input, lies inside an input folder, or is another output of the same command (paths compared after
    resolving symlinks). ``folders`` are outputs that are directories by design (a Zarr store): only the
    collision checks apply to them. ``flags`` spells the destinations in messages (default ``--dest``)."""
    allowed = {tuple(pair) for pair in in_place}
    flag = {d: _flag(d, flags or {}) for d in set(inputs) | set(outputs)}
    outs = [(d, v) for d in outputs for v in _values(getattr(args, d, None))]
    ins = [(d, v) for d in inputs for v in _values(getattr(args, d, None))]
    resolved = {}
    for dest, path in outs:
        if dest in folders:
            resolved[(dest, path)] = os.path.realpath(path)
            continue
        try:
            resolved[(dest, path)] = resolve_output(path)
        except ValueError as exc:
            raise InputError(f"{flag[dest]}: {exc}") from None
    for i, (a, pa) in enumerate(outs):
        for b, pb in outs[i + 1:]:
            if resolved[(a, pa)] == resolved[(b, pb)]:
                raise InputError(f"{flag[a]} and {flag[b]} name the same file {pa}: the second would "
                                 f"overwrite the first")
    for dest_in, path_in in ins:
        real_in = os.path.realpath(path_in)
        folder = os.path.isdir(real_in)
        for dest_out, path_out in outs:
            real_out = resolved[(dest_out, path_out)]
            if (dest_in, dest_out) in allowed and real_in == real_out:
                continue
            if real_in == real_out:
                raise InputError(f"{flag[dest_out]} {path_out} is the input {flag[dest_in]}: writing it would "
                                 f"destroy the input (choose another output path)")
            if folder and _inside(real_out, real_in):
                raise InputError(f"{flag[dest_out]} {path_out} is inside the {dest_in.replace('_', ' ')} folder "
                                 f"{path_in} (the input {flag[dest_in]}): writing it would change the input "
                                 f"(choose a path outside it)")


def classify(command: str, dests: Iterable[str], module=None) -> dict[str, list[str]]:
    """The destinations among ``dests`` by role: ``{"in": [...], "out": [...], "out-dir": [...]}``."""
    out: dict[str, list[str]] = {IN: [], OUT: [], OUT_DIR: []}
    for dest in dests:
        role = role_of(command, dest, module)
        if role in out:
            out[role].append(dest)
    return out


def check_command_paths(module, args, command: str | None = None) -> None:
    """:func:`check_paths` for the command path ``command`` (default: the module's ``NAME``), its options
    classified by :func:`role_of`."""
    command = command or getattr(args, "_command", None) or getattr(module, "NAME", "")
    dests = [d for d in vars(args) if not d.startswith("_")]
    roles = classify(command, dests, module)
    in_place = set(IN_PLACE.get(command, set())) | set(IN_PLACE.get(command.split(" ")[0], set()))
    in_place |= {tuple(p) for p in getattr(module, "IN_PLACE", ())}
    check_paths(args, roles[IN], roles[OUT] + roles[OUT_DIR], in_place, roles[OUT_DIR],
                getattr(args, "_flags", None))
