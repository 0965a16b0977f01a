"""Parameter sweeps: a specification (TOML or Python) run cell by cell on Dask into a Zarr store.

Modules: :mod:`~numerics.sweeps.spec` (the specification), :mod:`~numerics.sweeps.observables` (the registry of
recorded quantities), :mod:`~numerics.sweeps.store` (the Zarr/xarray store), :mod:`~numerics.sweeps.runner`
(schedulers, seeds, resume), :mod:`~numerics.sweeps.plotting` (phase diagrams and curves with bands). The
guide is ``docs/guide/sweeps.md``.
"""
