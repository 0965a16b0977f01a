"""The stochastic integrators of ``Model(noise > 0)``, loaded by name for single runs
(:mod:`numerics.core.trajectory`) and ensembles (:mod:`numerics.core.ensemble`): one loader, one set of checks."""
from __future__ import annotations

from numerics.common.errors import InputError


def noise_scheme(solver, save):
    """``(sde, scheme)``: :mod:`numerics.noise.sde` (loaded by name: a plug-in like the Fourier backend; the core
    imports no area) and the scheme of ``solver.method``, with the checks of every noisy run (single systems
    and ensembles: :mod:`numerics.core.ensemble`)."""
    from numerics.core.plugins import load_plugin

    sde = load_plugin("numerics.noise.sde")
    if sde is None:
        raise InputError("noise > 0 needs numerics.noise, which is not part of this build")
    if solver.method not in sde.FROM_SOLVER_METHOD:
        raise InputError(f"with noise, use method layer (Euler-Maruyama) or rk4 (weak order 2), got {solver.method}")
    if save.times is not None:
        raise InputError("with noise, save frames with save_every (explicit save times are not supported)")
    return sde, sde.FROM_SOLVER_METHOD[solver.method]


def common_noise_scheme(solver, save):
    """``(common, scheme)``: :mod:`numerics.noise.common` (loaded by name, like :func:`noise_scheme`) and the
    scheme of ``solver.method`` for ``Model(common_noise > 0)``, with the same checks."""
    from numerics.core.plugins import load_plugin

    common = load_plugin("numerics.noise.common")
    if common is None:
        raise InputError("common noise needs numerics.noise, which is not part of this build")
    if solver.method not in common.FROM_SOLVER_METHOD:
        raise InputError(f"with common noise, use method layer (projected Euler-Maruyama) or rk4 (stochastic Heun), "
                         f"got {solver.method}")
    if save.times is not None:
        raise InputError("with common noise, save frames with save_every (explicit save times are not supported)")
    return common, common.FROM_SOLVER_METHOD[solver.method]
