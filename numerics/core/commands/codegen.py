"""``attnflow codegen``: write the generated NumPy module (field, energy) of a model to a .py file."""
from __future__ import annotations

import os

from numerics.common.errors import InputError, require_int
from numerics.common.limits import FLOP_RATE, check_memory, check_work
from numerics.core.names import MODELS
from numerics.core.options import add_kernel_arguments, kernel_from_args
from numerics.common.render import emit, key_values

NAME = "codegen"
ORDER = 24
HELP = "write the generated NumPy module defining field(X, beta) and energy(X, beta)"


def add_arguments(p):
    p.add_argument("--model", choices=MODELS, required=True, help="sa or usa")
    p.add_argument("--d", type=int, required=True, help="ambient dimension")
    p.add_argument("--out", required=True, help="output .py file")
    p.add_argument("--matrices", metavar="FILE.npz", help="attention matrices: arrays Q, K and/or V (d x d; "
                   "missing ones are the identity)")
    add_kernel_arguments(p, "the generated energy and field (Q = K = V = I)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


#: cost of one entry of the d x d SymPy matrices Q, K, V that the generated module is derived from, measured
#: on the 2-core development machine (d = 300: 28 s, 0.23 GB; d = 1000: 309 s, 1.5 GB; both grow as d^2)
SYMPY_ENTRY_SECONDS = 3e-4
SYMPY_ENTRY_BYTES = 1.5e3


def check_codegen_size(d: int) -> None:
    """Refuse, before SymPy builds anything, a dimension whose d^2 symbolic entries exceed the limits."""
    check_memory(d * d * SYMPY_ENTRY_BYTES, f"generating the module at d={d} ({d * d:.3g} symbolic matrix entries)")
    check_work(d * d * SYMPY_ENTRY_SECONDS * FLOP_RATE, f"generating the module at d={d}")


def run(args) -> int:
    from theory.codegen import generate_model, write_model_module
    from theory.spec import ModelSpec

    d = require_int(args.d, "d", minimum=2)
    check_codegen_size(d)
    if not args.out.endswith(".py"):
        raise InputError(f"--out must name a .py file, got {args.out!r}")
    directory = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise InputError(f"cannot write {args.out}: directory {directory} does not exist or is not writable")
    mats = {}
    if args.matrices:
        from numerics.core.trajectory import load_attention_matrices

        mats = {k: v.tolist() for k, v in load_attention_matrices(args.matrices, d).items()}
    kernel = kernel_from_args(args)
    if kernel is not None and mats:
        raise InputError("--kernel acts on <x_i, x_j> directly: it cannot be combined with --matrices")
    spec = ModelSpec(args.model, d, kernel=kernel, **mats)
    gen = generate_model(spec)
    try:
        write_model_module(spec, args.out)
    except OSError as exc:
        raise InputError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    functions = ["field(X, beta, time_unit='natural', block=None) -> (n, d)", "energy(X, beta) -> float",
                 "riemannian_gradient(X, beta) -> (n, d)", "riemannian_hessian_vector(X, beta, U) -> (n, d)",
                 "pair_energy(s, beta)", "pair_weight(s, beta)", "pair_curvature(s, beta)", "weight(s, beta, c)",
                 "attention_matrices(beta)"]
    payload = {"out": args.out, "model": args.model, "d": d, "kernel": None if kernel is None else str(kernel.expr),
               "key": gen.key, "lines": gen.source.count("\n"),
               "functions": functions}
    text = key_values([("out", args.out), ("model", args.model), ("d", d), ("derivation key", gen.key),
                       ("lines", payload["lines"]), ("functions", ", ".join(f.split("(")[0] for f in functions))])
    emit(args, payload, text)
    return 0
