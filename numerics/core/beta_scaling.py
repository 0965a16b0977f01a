r"""An inverse temperature that grows with the context length: ``Model(beta_scaling="log", gamma=G)``.

``beta_scaling="fixed"`` (the default) is the model of every earlier release: ``beta`` as given.
``beta_scaling="log"`` sets :math:`\beta_n = \gamma \log n` (natural logarithm) with :math:`n` the number of tokens of
the state the model is applied to (arXiv 2510.05554, "critical attention scaling"; the convention is in
docs/conventions.md, "Long contexts"). The model then has no :math:`\beta` of its own (``Model.beta`` is None) and every
layer that needs one asks :meth:`numerics.core.model.Model.effective_beta` (or works on
:meth:`~numerics.core.model.Model.at_context_length`, the fixed-beta model at that n): the field, the energies of saved
frames, resumed runs, merge-time refinement. Where no n exists (a mean-field computation, the symbolic ``ModelSpec``)
the request is refused with a one-line error.

This module holds the validation and the rule itself; the CLI options (``--beta-scaling``, ``--gamma``) and their
translation are in :mod:`numerics.core.options` (the CLI layer, above this module), so that each command hooks in
with a line or two.
"""
from __future__ import annotations

import math

from numerics.common.errors import InputError, require_choice, require_int, require_real

#: ``fixed``: ``beta`` as given; ``log``: :math:`\beta = \gamma \log n`
BETA_SCALINGS = ("fixed", "log")


def check_scaling(beta, beta_scaling, gamma) -> tuple[float | None, str, float | None]:
    """Validated (beta, beta_scaling, gamma): ``fixed`` needs a real beta and no gamma; ``log`` needs
    gamma > 0 (finite) and no beta."""
    scaling = require_choice(beta_scaling, "beta_scaling", BETA_SCALINGS)
    if scaling == "fixed":
        if gamma is not None:
            raise InputError("gamma applies to beta_scaling='log' (beta = gamma log n); "
                             "with a fixed beta, give beta only")
        if beta is None:
            raise InputError("the model needs beta (or beta_scaling='log' with gamma > 0)")
        return require_real(beta, "beta"), scaling, None
    if beta is not None:
        raise InputError(f"give either beta or beta_scaling='log' with gamma (beta = gamma log n), not both "
                         f"(got beta={beta!r})")
    if gamma is None:
        raise InputError("beta_scaling='log' needs gamma > 0 (beta = gamma log n)")
    return None, scaling, require_real(gamma, "gamma", minimum=0.0, strict_minimum=True)


def effective_beta(beta, beta_scaling: str, gamma, n, what: str = "this computation") -> float:
    """The beta used with n tokens: ``beta`` (fixed) or gamma log n (log); refuses a log-scaled model when
    ``n`` is None (``what`` names the computation that has no number of tokens)."""
    if beta_scaling == "fixed":
        return beta
    if n is None:
        raise InputError(f"beta_scaling='log' sets beta = gamma log n from the number of tokens n, and {what} "
                         f"has none; use a fixed beta")
    n = require_int(n, "n (tokens)", minimum=1)
    return gamma * math.log(n)


def scaling_meta(beta_scaling: str, gamma) -> dict:
    """The metadata keys of a scaled beta (empty for a fixed beta, so that old files stay bit for bit)."""
    return {} if beta_scaling == "fixed" else {"beta_scaling": beta_scaling, "gamma": gamma}
