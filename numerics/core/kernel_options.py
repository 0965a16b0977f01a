"""The ``--kernel`` / ``--param`` command-line options shared by the commands that accept a user kernel.

Kernel strings go through the whitelist parser of :mod:`theory.expression_parser` (never eval, exec or
sympify); a rejected string becomes an :class:`InputError` naming the offending token, so the CLI exits 2
with one line.
"""
from __future__ import annotations

from numerics.common.errors import InputError


def add_kernel_arguments(parser, what: str = "the interaction") -> None:
    parser.add_argument("--kernel", metavar="EXPR",
                        help=f"pair kernel phi(s), s = <x, y>, for {what}, e.g. \"exp(beta*s) + c*s**3\" "
                             "(default: the attention kernel (e^{beta s} - 1)/beta)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="value of a kernel parameter (repeatable)")


def kernel_parameters(assignments) -> dict[str, float]:
    """``["c=0.5", ...]`` -> ``{"c": 0.5}``, validated; repeated names are an error."""
    from theory.expression_parser import parse_parameter_assignment

    params: dict[str, float] = {}
    for text in assignments or []:
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


def kernel_from_args(args, check: bool = True):
    """The PairKernel of ``--kernel``/``--param``, or None when no kernel string was given.

    With ``check`` (the default) the kernel is also checked on [-1, 1] before any work
    (:func:`numerics.core.kernel_field.check_kernel_on_interval`) at the command's ``--beta`` (beta = 1 for
    the symbolic commands, which have none) and for its ``--model``.
    """
    params = kernel_parameters(getattr(args, "param", None))
    text = getattr(args, "kernel", None)
    if text is None:
        if params:
            raise InputError("--param needs --kernel")
        return None
    from theory.expression_parser import parse_kernel

    try:
        kernel = parse_kernel(text, params)
    except ValueError as exc:
        raise InputError(command_line_message(exc)) from None
    if check:
        from numerics.core.kernel_field import check_kernel_on_interval

        beta = getattr(args, "beta", None)
        check_kernel_on_interval(kernel, 1.0 if beta is None else beta, getattr(args, "model", None))
    return kernel
