"""Modules that the core loads by name at run time: its plug-in points.

The core imports no area (docs/design.md), yet three features live in areas above it: the ``fourier`` field
backend (:mod:`numerics.circle.fourier`), the ``harmonic`` one (:mod:`numerics.harmonic.backend`) and the
stochastic integrators of ``Model(noise=D > 0)`` (:mod:`numerics.noise.sde`). The core loads them with :func:`load_plugin`, which accepts only the modules listed
in :data:`PLUGINS`; the import-rule test (tests/architecture/test_import_rules.py) reads this table and every
``load_plugin("...")`` call from the source, draws those edges in the import graph and so checks them for cycles
like any import (a plug-in may not import the module that loads it, directly or not).
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: module loaded by name -> what the core uses it for
PLUGINS = {
    "numerics.circle.fourier": "the O(n K) Fourier field backend on S^1 (Model.vector_field, backend 'fourier')",
    "numerics.harmonic.backend": "the O(n L^2) spherical-harmonic field backend on S^2 (Model.vector_field, backend "
                                 "'harmonic')",
    "numerics.clusters.detection": "the cluster counts in the panel titles of simulate --plot (and the frames it "
                                   "chooses: where the count changes)",
    "numerics.noise.sde": "the stochastic integrators of Model(noise > 0) (numerics.core.noise_loader, for "
                          "numerics.core.trajectory and numerics.core.ensemble)",
    "numerics.noise.common": "the integrators of Model(common_noise > 0), one matrix increment per system "
                             "(numerics.core.noise_loader)",
}


def load_plugin(name: str) -> ModuleType | None:
    """The plug-in module ``name`` (one of :data:`PLUGINS`), or None when it is not part of this build; an import
    error inside the module itself is raised, not hidden."""
    if name not in PLUGINS:
        raise ValueError(f"{name} is not a declared plug-in (numerics.core.plugins.PLUGINS)")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None
