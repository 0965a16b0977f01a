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
    p.add_argument("--norm-scale", type=float, help="--norm sqrt: depth scale tau > 0 of the branch factor "
                   "(1 + t/tau)^(-1/2) (default 1)")
    p.add_argument("--radius0", type=float, help="initial radius of every token (> 0; pre, peri, sqrt; default 1)")
    p.add_argument("--centering", action="store_true", default=None,
                   help="LayerNorm with centring (subtract the coordinate mean) instead of RMSNorm (default off)")


def norm_from_args(args) -> dict:
    """The ``Model`` keywords given on the command line (absent options keep the Model defaults)."""
    out = {}
    for key in NORM_OPTIONS:
        value = getattr(args, key, None)
        if value is not None:
            out[key] = value
    return out


def norm_summary(trajectory) -> dict:
    """Rows of the simulate summary for a scheme with radii (empty for the sphere flow)."""
    if trajectory.radius is None:
        return {}
    r = trajectory.radius[-1]
    return {"norm": trajectory.meta.get("norm"), "centering": trajectory.meta.get("centering"),
            "final_radius_min": float(r.min()), "final_radius_max": float(r.max())}
