"""``attnflow derive``: print a symbolic derivation (text, LaTeX or JSON) and whether it verified."""
from __future__ import annotations

from numerics.common.errors import InputError, require_int
from numerics.core.names import MODELS
from numerics.core.options import add_kernel_arguments, kernel_from_args
from numerics.common.render import emit

NAME = "derive"
ORDER = 22
HELP = "print the symbolic derivation of the energy, field, gradient or Hessian and verify it"
KINDS = ("energy", "field", "gradient", "hessian")
#: derivations show explicit coordinates; above this d they are unreadable and slow
MAX_D = 6
#: the explicit Hessian is an (n d) x (n d) matrix of exponentials: d = 6 already takes about a minute
MAX_D_HESSIAN = 4


def add_arguments(p):
    p.add_argument("kind", choices=KINDS, help="what to derive")
    p.add_argument("--model", choices=MODELS, required=True, help="sa or usa")
    p.add_argument("--d", type=int, required=True,
                   help=f"ambient dimension (2..{MAX_D}; hessian 2..{MAX_D_HESSIAN})")
    add_kernel_arguments(p, "the energy, gradient and Hessian derivations (kinds energy, gradient, hessian)")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of text")
    p.add_argument("--expanded", action="store_true",
                   help="print every step and the identity in explicit coordinates (default: the structured form, "
                        "in terms of the pair kernel and its derivatives, where the derivation has one)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def derivations(kind: str, model: str, d: int, kernel=None):
    """(derivation, verify keyword arguments) pairs shown by ``attnflow derive``.

    Kernel-level derivations (every n) are verified by simplification; explicit small-n cross-checks by exact
    evaluation at rational points of the sphere (simplification is skipped there because it is slow).
    """
    import dataclasses

    from theory import energy as en
    from theory import fields
    from theory.hessian import gradient_derivation, hessian_derivation
    from theory.spec import ModelSpec

    spec = ModelSpec(model, d)
    at_points = {"points": 3, "simplify": False}
    if kernel is not None and kind == "field":
        raise InputError("derive field is written for the attention field; --kernel applies to energy, gradient "
                         "and hessian (a kernel's field is v_i = P_i((1/n) sum_j phi'(s_ij) x_j): derive gradient)")
    if kind == "energy" and kernel is not None:
        # the kernel's energy 1/(2 n^2) sum phi(s_ij): its gradient is the kernel's field (every n), the rate
        # identity dE/dt = sum of squares (every n), and that identity at explicit particles with this phi
        return [(en.gradient_structure_derivation(d, kernel), {}), (en.energy_identity_derivation(model, d, kernel), {}),
                (en.explicit_energy_identity_derivation(model, n=2, d=2, kernel=kernel), at_points)]
    if kind == "energy":
        return [(en.empirical_measure_derivation(n=2, d=d), {}), (en.energy_identity_derivation(model, d), {}),
                (en.explicit_energy_identity_derivation(model, n=2, d=2), at_points)]
    if kind == "field":
        out = [(fields.field_derivation(spec), {}), (fields.tangency_derivation(spec), {})]
        if model == "sa":
            out.append((fields.shift_invariance_derivation(spec), {}))
        return out
    if kind == "gradient":
        structure = en.gradient_structure_derivation(d, kernel)
        if model == "sa":  # the structure identity is that of usa; say how sa relates to the same energy
            structure = dataclasses.replace(structure, title=structure.title + (
                " [sa: v_i^sa = (n^2 / Z_i) grad_i E, the same energy with a per-particle rate; see the energy "
                "identity below]" if kernel is None else " [--model sa normalises each v_i by Z_i = sum_j "
                "phi'(s_ij): same directions, per-particle rates]"))
        out = [(structure, {}), (gradient_derivation(kernel, n=2, d=d), at_points)]
        if model == "sa" and kernel is None:
            out.append((en.energy_identity_derivation("sa", d), {}))
        return out
    return [(hessian_derivation(kernel, n=2, d=d), at_points)]


def run(args) -> int:
    d = require_int(args.d, "d", minimum=2)
    if d > MAX_D:
        raise InputError(f"derive shows explicit coordinates; use --d between 2 and {MAX_D}, got {d}")
    if args.kind == "hessian" and d > MAX_D_HESSIAN:
        raise InputError(f"derive hessian builds the explicit 2d x 2d Hessian; use --d between 2 and "
                         f"{MAX_D_HESSIAN}, got {d}")
    from numerics.common.provenance import StderrProgress

    items = []
    kernel = kernel_from_args(args)
    progress = StderrProgress("derive", unit="derivations ", clock="construction")  # symbolic work: seconds
    built = derivations(args.kind, args.model, d, kernel)
    for k, (der, kw) in enumerate(built, 1):
        items.append((der, der.verify(**kw)))
        progress(k, len(built))
    blocks = []
    for der, ver in items:
        if der.structured and not args.expanded:
            body = der.to_structured_latex() if args.latex else der.to_structured_text()
            body += ("\n% " if args.latex else "\n  ") + "(every step in explicit coordinates: --expanded)"
        else:
            body = der.to_latex() if args.latex else der.to_text()
        status = f"verification: {ver.status} ({ver.method}{', ' + str(ver.points) + ' points' if ver.points else ''})"
        blocks.append(body + "\n" + ("% " if args.latex else "  ") + status)
    payload = {"kind": args.kind, "model": args.model, "d": d, "kernel": None if kernel is None else str(kernel.expr),
               "derivations": [{**der.to_dict(), "verification": {"status": ver.status, "method": ver.method,
                                                                  "points": ver.points, "detail": ver.detail}}
                               for der, ver in items],
               "ok": all(ver.ok for _, ver in items)}
    emit(args, payload, "\n\n".join(blocks))
    return 0 if payload["ok"] else 1
