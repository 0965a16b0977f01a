"""Command-line options of the normalisation schemes (``attnflow simulate --norm ...``), without heavy imports."""
from __future__ import annotations

from numerics.core.norms import DESCRIPTIONS, NORMS

#: the options' attribute names (``simulate --resume`` refuses them: a resumed run keeps its saved scheme)
NORM_OPTIONS = ("norm", "norm_alpha", "norm_switch", "norm_scale", "radius0", "centering")


def add_norm_arguments(p) -> None:
    """--norm and the parameters of the schemes (every default stated in its help)."""
    p.add_argument("--norm", choices=NORMS, help="normalisation scheme (default post, the sphere flow): "
                   + "; ".join(f"{k}: {v}" for k, v in DESCRIPTIONS.items()))
    p.add_argument("--norm-alpha", type=float, help="--norm ngpt: step size alpha > 0 (default 1)")
    p.add_argument("--norm-switch", type=float, help="--norm mix: time T > 0 of the switch from post-LN to "
                   "pre-LN (required for mix)")
    p.add_argument("--norm-scale", type=float, help="--norm sqrt, lnscale: depth scale tau > 0 of the factor "
                   "(1 + t/tau)^(-1/2) (layer l = 1 + t/tau; default 1)")
    p.add_argument("--radius0", type=parse_radius0, metavar="R|from-init",
                   help="initial radius of every token (> 0; pre, peri, sqrt, lnscale; default 1), or 'from-init': "
                        "each token's radius is the norm of its row in --init (the rows need not be unit vectors; "
                        "the directions are the rows divided by their norms)")
    p.add_argument("--centering", action="store_true", default=None,
                   help="LayerNorm with centring (subtract the coordinate mean) instead of RMSNorm (default off)")


#: ``--radius0 from-init``: the radii are the row norms of the --init file
FROM_INIT = "from-init"


def parse_radius0(text: str):
    """``--radius0``: a number (validated by the Model: > 0, finite) or the word ``from-init``."""
    import argparse

    if str(text).strip() == FROM_INIT:
        return FROM_INIT
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or '{FROM_INIT}', got {text!r}") from None


def initial_with_radii(path):
    """``(X0, radii)`` of ``--init FILE --radius0 from-init``: the rows of the ``.npy`` divided by their norms, and
    those norms (each > 0 and finite; validated again by the Model: <= RADIUS_MAX)."""
    import numpy as np

    from numerics.common.errors import InputError, require_finite_array, require_points, unit_rows
    from numerics.common.readers import read_npy

    where = f"init file {path}"
    raw = require_finite_array(read_npy(path, "initial condition"), where, ndim=2)
    if raw.shape[0] < 1 or raw.shape[1] < 2:
        require_points(raw, where)  # the same one-line error as any --init of the wrong shape
    U, norms = unit_rows(raw, axis=1)  # never overflows (rows up to 1e308) nor underflows
    if np.any(norms == 0):
        raise InputError(f"{where} row {int(np.argmin(norms))} is zero: it has no direction and no radius > 0")
    return require_points(U, where), norms


def norm_from_args(args, radii=None) -> dict:
    """The ``Model`` keywords given on the command line (absent options keep the Model defaults); ``radii``
    replaces ``--radius0 from-init`` (the row norms of --init, :func:`initial_with_radii`)."""
    from numerics.common.errors import InputError

    out = {}
    for key in NORM_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            out[key] = value
    if out.get("radius0") == FROM_INIT:
        if radii is None:
            raise InputError(f"--radius0 {FROM_INIT} takes the radii from the rows of --init FILE.npy: give --init "
                             "(a single run, not a batch)")
        out["radius0"] = radii
    return out


def refuse_batch_norm(args) -> None:
    """One-line error for normalisation options on a batch (--batch, --betas, --seeds): ensembles run the sphere
    flow only (``simulate`` refuses ``Model.norm`` for X0 of shape (B, n, d) too); ``--norm post`` is allowed."""
    from numerics.common.errors import InputError

    given = [f"--{k.replace('_', '-')}" for k in NORM_OPTIONS if getattr(args, k, None) is not None
             and not (k == "norm" and getattr(args, k) == "post")]
    if given:
        raise InputError(f"batches (--batch, --betas, --seeds) run the sphere flow only: {', '.join(given)} "
                         "is not supported there; run the members one by one")


def norm_summary(trajectory) -> dict:
    """Rows of the simulate summary for a scheme with radii (empty for the sphere flow)."""
    if trajectory.radius is None:
        return {}
    r = trajectory.radius[-1]
    return {"norm": trajectory.meta.get("norm"), "centering": trajectory.meta.get("centering"),
            "final_radius_min": float(r.min()), "final_radius_max": float(r.max())}
