"""Simulations of self-attention dynamics on the sphere and the trajectory files they produce.

The record and its file (:class:`Trajectory`, :func:`load_initial`, :func:`load_attention_matrices`) live in
:mod:`numerics.core.record`; the one driver (:func:`simulate`, :func:`resume`) in :mod:`numerics.core.simulate`.
This module re-exports both under the names of the releases before: ``numerics.core.trajectory.simulate`` and
``resume`` are the driver's own functions (re-exports, kept for one release: import them from
:mod:`numerics.core.simulate`). The record cannot stay defined here: the driver builds a :class:`Trajectory`,
and a module that both defined the record and re-exported the driver would close an import cycle.
"""
from __future__ import annotations

from numerics.core.record import ARCH_PREFIX, Trajectory, load_attention_matrices, load_initial  # noqa: F401
from numerics.core.sampling import uniform_sphere  # noqa: F401 - re-exported (its home before)
from numerics.core.simulate import (check_simulation_cost, energy_method, evaluation_cost,  # noqa: F401
                                    initial_state, resume, simulate, simulate_keywords, with_provenance)

__all__ = ["ARCH_PREFIX", "Trajectory", "check_simulation_cost", "energy_method", "evaluation_cost",
           "initial_state", "load_attention_matrices", "load_initial", "resume", "simulate", "simulate_keywords",
           "uniform_sphere", "with_provenance"]
