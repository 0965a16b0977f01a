"""Helpers of the ``--kernel`` / ``--param`` command-line options shared by the commands that accept a user kernel.

The options themselves (:func:`add_kernel_arguments`) and their translation (:func:`kernel_from_args`) are defined
in :mod:`numerics.core.options` (the CLI layer, above this module).

Kernel strings go through the whitelist parser of :mod:`theory.expression_parser` (never eval, exec or
sympify); a rejected string becomes an :class:`InputError` naming the offending token, so the CLI exits 2
with one line.
"""
from __future__ import annotations

from numerics.common.errors import InputError


def kernel_parameters(assignments) -> dict[str, float]:
    """``["c=0.5", ...]`` -> ``{"c": 0.5}``, validated; repeated names are an error."""
    if not assignments:
        return {}  # without --param the parser (and SymPy, 1 s of start-up) is not needed
    from theory.expression_parser import parse_parameter_assignment

    params: dict[str, float] = {}
    for text in assignments:
        try:
            name, value = parse_parameter_assignment(text)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if name in params:
            raise InputError(f"kernel parameter {name} given twice")
        params[name] = value
    return params


def command_line_message(exc: Exception) -> str:
    """The message of a kernel error as a command-line user needs it: the API's hint names its argument
    ``params``, the command line sets parameters with ``--param``."""
    from theory.expression_parser import UNDECLARED_HINT

    return str(exc).replace(UNDECLARED_HINT, "give its value with --param NAME=VALUE")
