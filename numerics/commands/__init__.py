"""CLI subcommands, one module each, discovered by :mod:`numerics.cli`.

A command module defines ``NAME`` (the subcommand), ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; it parses, calls the library API and renders (no mathematics here).
"""
