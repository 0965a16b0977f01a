"""The Zarr store of a sweep: an xarray Dataset with one dimension per swept axis, written cell by cell.

Layout (Zarr format 2, consolidated metadata, opened by ``xarray.open_zarr(path)``):

- coordinates: one per axis (``beta``, ``n``, ..., ``seed`` last) and ``time`` (the saved times of every run);
- one float64 variable per observable output over the axes (``clusters``, ``one_cluster``, ...) or over the
  axes and ``time`` (``cluster_counts``, ``energy_t``, ...); NaN until the cell is done;
- per cell: ``status`` (int8: 0 pending, 1 done, 2 failed), ``error`` (the failure, one line; empty
  otherwise), ``seconds`` (wall time of the run), ``seed_entropy`` (the root seed; with the ``seed`` coordinate
  it is the cell's SeedSequence(root_seed, spawn_key=(seed,))) and ``versions`` (JSON: package versions on the
  worker that ran it);
- attributes: ``format`` (``attnflow-sweep/1``), ``spec`` (the specification, JSON), ``fixed`` (the model keys
  common to every cell), ``versions`` (the driver's), ``created``.

Every variable is chunked one cell per chunk, so writing a cell touches only that cell's chunks; the cell's
``status`` is written last, so a run interrupted in the middle of a write leaves the cell pending (it is
computed again on resume, never counted twice). The store is created in a temporary directory beside its
final path and renamed into place.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import package_versions
from numerics.sweeps.observables import check_observables
from numerics.sweeps.spec import FORMAT, SEED_AXIS, SweepSpec

PENDING, DONE, FAILED = 0, 1, 2
STATUS_NAMES = {PENDING: "pending", DONE: "done", FAILED: "failed"}
CELL_VARIABLES = ("status", "error", "seconds", "seed_entropy", "versions")
MAX_ERROR = 500


def _libraries():
    try:
        import xarray as xr
        import zarr
    except ModuleNotFoundError as exc:
        raise InputError(f"sweeps need the optional dependencies dask, distributed, zarr and xarray ({exc.name} "
                         "is missing): pip install 'attnflow[sweeps]'") from None
    return xr, zarr


def _format2() -> dict:
    """Keyword selecting Zarr format 2 (zarr-python 3 writes format 3 by default; 2.x knows only format 2)."""
    _, zarr = _libraries()
    return {"zarr_format": 2} if int(zarr.__version__.split(".")[0]) >= 3 else {}


def sweep_versions() -> dict:
    from importlib import metadata

    out = package_versions()
    for name in ("dask", "distributed", "zarr", "xarray"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def create_store(path, spec: SweepSpec) -> "SweepStore":
    """A new, empty store for ``spec`` at ``path`` (which must not exist)."""
    xr, _ = _libraries()
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists: resume it (attnflow sweep resume {path}) or choose a new path")
    if not path.parent.is_dir():
        raise InputError(f"cannot create {path}: {path.parent} is not a directory")
    outputs = check_observables(spec.observables)
    dims = spec.dims
    shape = spec.shape
    times = spec.frame_times()
    data = {}
    for out in outputs:
        if out.over_time:
            data[out.name] = (dims + ("time",), np.full(shape + (times.size,), np.nan), {"description": out.doc})
        else:
            data[out.name] = (dims, np.full(shape, np.nan), {"description": out.doc})
    data["status"] = (dims, np.zeros(shape, np.int8), {"description": "0 pending, 1 done, 2 failed"})
    data["error"] = (dims, np.full(shape, "", dtype=object), {"description": "why the cell failed (empty if not)"})
    data["seconds"] = (dims, np.full(shape, np.nan), {"description": "wall time of the run and its observables"})
    data["seed_entropy"] = (dims, np.full(shape, spec.run["root_seed"], np.int64),
                            {"description": "initial state drawn from SeedSequence(seed_entropy, spawn_key=(seed,)); "
                                            "noise (if any) seeded from spawn_key=(seed, 1)"})
    data["versions"] = (dims, np.full(shape, "", dtype=object), {"description": "package versions on the worker"})
    coords = {name: ("seed" if name == SEED_AXIS else name, np.asarray(values)) for name, values in spec.axes.items()}
    coords["time"] = ("time", times)
    fixed = {k: v for k, v in spec.model.items()}
    ds = xr.Dataset(data, coords=coords, attrs={
        "format": FORMAT, "spec": spec.to_json(), "fixed": json.dumps(fixed),
        "versions": json.dumps(sweep_versions(), sort_keys=True),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    encoding = {name: {"chunks": (1,) * len(dims) + ((times.size,) if v.dims[-1] == "time" else ())}
                for name, v in ds.data_vars.items()}
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        ds.to_zarr(str(tmp), mode="w-", consolidated=True, encoding=encoding, **_format2())
        os.rename(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot create {path}: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return open_store(path)


class SweepStore:
    """An opened, validated sweep store: the spec it was made for and cell-by-cell writes."""

    def __init__(self, path: Path, group, spec: SweepSpec):
        self.path = path
        self.group = group
        self.spec = spec
        self.outputs = check_observables(spec.observables)
        # cells whose error field is set: only those need it cleared when they succeed (one write less per cell)
        self._with_error = {tuple(int(i) for i in idx) for idx in np.argwhere(self.status() == FAILED)}

    def status(self) -> np.ndarray:
        return np.asarray(self.group["status"][...])

    def counts(self) -> dict:
        st = self.status()
        return {name: int(np.sum(st == code)) for code, name in STATUS_NAMES.items()}

    def todo(self, retry_failed: bool = False) -> list[tuple[int, ...]]:
        """Cells still to run: pending ones, and failed ones when ``retry_failed``."""
        st = self.status()
        mask = (st == PENDING) | ((st == FAILED) if retry_failed else False)
        return [tuple(int(i) for i in idx) for idx in np.argwhere(mask)]

    def errors(self) -> list[tuple[tuple[int, ...], str]]:
        st = self.status()
        err = self.group["error"]
        return [(tuple(int(i) for i in idx), str(err[tuple(idx)])) for idx in np.argwhere(st == FAILED)]

    def write_cell(self, index: tuple[int, ...], result: dict) -> None:
        """Record one cell: its outputs (or its error), timings and versions, then its status (last)."""
        g = self.group
        index = tuple(index)
        if result.get("error"):
            g["error"][index] = str(result["error"])[:MAX_ERROR]
            for out in self.outputs:  # a retried cell that fails again keeps no stale values
                g[out.name][index] = np.nan
            self._with_error.add(index)
            status = FAILED
        else:
            for out in self.outputs:
                g[out.name][index] = result["values"][out.name]
            if index in self._with_error:
                g["error"][index] = ""
                self._with_error.discard(index)
            status = DONE
        g["seconds"][index] = float(result.get("seconds", np.nan))
        g["versions"][index] = json.dumps(result.get("versions", {}), sort_keys=True)
        g["status"][index] = status

    def dataset(self):
        xr, _ = _libraries()
        return xr.open_zarr(str(self.path))


def open_store(path) -> SweepStore:
    """Open and validate an existing store; a missing, foreign or damaged store raises :class:`InputError`
    (and nothing is written)."""
    _, zarr = _libraries()
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path} is not a sweep store (no such directory)")
    try:
        # the arrays' own metadata, not the consolidated copy: a deleted variable must show as missing
        own_metadata = {"use_consolidated": False} if _format2() else {}
        group = zarr.open_group(str(path), mode="r+", **_format2(), **own_metadata)
        attrs = dict(group.attrs)
    except Exception as exc:  # zarr raises several types for a directory that is not a group
        raise InputError(f"{path} is not a Zarr store written by attnflow sweep ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    if attrs.get("format") != FORMAT:
        raise InputError(f"{path} is not an attnflow sweep store (format {attrs.get('format')!r}, "
                         f"expected {FORMAT!r})")
    try:
        spec = SweepSpec.from_dict(json.loads(attrs["spec"]))
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: the stored specification is unreadable ({exc})") from None
    except InputError as exc:
        raise InputError(f"{path}: the stored specification is invalid: {exc}") from None
    shape = spec.shape
    names = [o.name for o in check_observables(spec.observables)] + list(CELL_VARIABLES)
    try:
        arrays = {name: group[name] for name in names}
    except KeyError as exc:
        raise InputError(f"{path} is damaged: variable {exc} is missing") from None
    for name, arr in arrays.items():
        if tuple(arr.shape[:len(shape)]) != shape:
            raise InputError(f"{path} is damaged: {name} has shape {arr.shape}, the spec needs {shape}")
    try:
        status = np.asarray(arrays["status"][...])
    except Exception as exc:
        raise InputError(f"{path} is damaged: cannot read status ({type(exc).__name__})") from None
    if not np.isin(status, list(STATUS_NAMES)).all():
        raise InputError(f"{path} is damaged: status holds values other than 0, 1, 2")
    return SweepStore(path, group, spec)
