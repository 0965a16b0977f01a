"""Architectures: the whole transformer block on the sphere (several heads, MLP, depth schedules, causal masks).

The model features live in :mod:`numerics.core.blocks` (fields of :class:`numerics.core.model.Model`); this area
holds the analyses built on them (causal two-token merge times, the discrete deep map, mixed-kernel heads,
multi-head Gaussian solutions) and their claims.
"""
