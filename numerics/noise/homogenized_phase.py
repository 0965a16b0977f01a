"""The two-token phase diagram of the random-value-matrix common noise over (interaction strength beta, d).

Two tokens with identity Q, K, V (attention ``usa`` or ``sa``) and the ``values`` common noise of strength sigma
(a = sigma^2/d, :mod:`theory.common_noise`), started at angle theta0: the fraction of pairs ending antipodal,
measured with :func:`numerics.noise.common.two_token_outcomes`, beside the scale-function probability
(:func:`numerics.noise.common.antipodal_probability`) and the derived boundary beta_c(d) of
:func:`theory.common_noise.two_token_threshold` (the claim noise.common-noise-two-token-transition's formula):
below beta_c the pair never ends antipodal, above it does with positive probability. Drawn by the gallery page
``docs/examples/plot_common_noise_two_token_phase.py``.

Verified by: tests/numerics/test_homogenized_phase.py.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from numerics.common.errors import require_choice, require_int, require_real
from numerics.noise.common import antipodal_probability, two_token_outcomes
from theory.common_noise import two_token_threshold


def boundary(d: int, sigma: float, model: str = "usa") -> float:
    """beta_c(d) of the values law: log(d/sigma^2) (usa), log(2 d/sigma^2 - 1)/2 (sa); NaN where it is undefined."""
    value = complex(sp.N(two_token_threshold("values", int(d), sp.nsimplify(sigma), model)))
    return value.real if abs(value.imag) < 1e-12 else float("nan")


def phase_grid(betas, ds, sigma: float = 2.0, model: str = "usa", theta0: float = 2.5, t: float = 30.0,
               dt: float = 0.02, samples: int = 200, seed: int = 0) -> dict:
    """Measured and predicted P(antipodal) on the grid ``ds`` x ``betas`` (rows d, columns beta), the undecided
    fractions, the standard errors and the boundary beta_c(d) per row."""
    sigma = require_real(sigma, "sigma", minimum=0.0)
    model = require_choice(model, "model", ("usa", "sa"))
    samples = require_int(samples, "samples", minimum=2)
    shape = (len(ds), len(betas))
    measured, se, undecided, predicted = (np.zeros(shape) for _ in range(4))
    for i, d in enumerate(ds):
        for j, beta in enumerate(betas):
            out = two_token_outcomes("values", int(d), sigma, float(beta), model, theta0, t, dt, samples,
                                     seed=seed + 1000 * i + j)
            measured[i, j], se[i, j], undecided[i, j] = out["antipodal"], out["se"], out["undecided"]
            predicted[i, j] = antipodal_probability("values", int(d), sigma, float(beta), model, theta0)
    return {"betas": [float(b) for b in betas], "ds": [int(d) for d in ds], "sigma": sigma, "model": model,
            "theta0": theta0, "t": t, "measured": measured, "se": se, "undecided": undecided, "predicted": predicted,
            "boundary": [boundary(d, sigma, model) for d in ds], "no_noise_limit": theta0 / math.pi}
