"""Helpers of the command-line options of the normalisation schemes (``attnflow simulate --norm ...``), without
heavy imports.

The options (:func:`add_norm_arguments`) and their translation (:func:`norm_from_args`) are defined with the other
groups of a simulation in :mod:`numerics.core.options` (the CLI layer, above this module). A batch (``--batch``,
``--betas``, ``--seeds``) builds its Model the same way and runs every scheme (each member carries its radii).
"""
from __future__ import annotations


#: the options' attribute names (``simulate --resume`` refuses them: a resumed run keeps its saved scheme)
NORM_OPTIONS = ("norm", "norm_alpha", "norm_switch", "norm_scale", "radius0", "centering")


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


def norm_summary(trajectory) -> dict:
    """Rows of the simulate summary for a scheme with radii (empty for the sphere flow)."""
    if trajectory.radius is None:
        return {}
    r = trajectory.radius[-1]
    return {"norm": trajectory.meta.get("norm"), "centering": trajectory.meta.get("centering"),
            "final_radius_min": float(r.min()), "final_radius_max": float(r.max())}
