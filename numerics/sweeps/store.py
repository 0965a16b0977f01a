"""The Zarr store of a sweep: an xarray Dataset with one dimension per swept axis, written block by block.

Layout (Zarr format 3 with sharding, consolidated metadata, opened by ``xarray.open_zarr(path)``):

- coordinates: one per axis (``beta``, ``n``, ..., ``seed`` last) and ``time`` (the saved times of every run);
- one float64 variable per observable output over the axes (``clusters``, ``one_cluster``, ...) or over the
  axes and ``time`` (``cluster_counts``, ``energy_t``, ...); NaN until the cell is done;
- per cell: ``status`` (int8: 0 pending, 1 done, 2 failed), ``error`` (the failure, one line; empty
  otherwise), ``seconds`` (the cell's share of its block's wall time), ``seed_entropy`` (the root seed; with the
  ``seed`` coordinate it is the cell's SeedSequence(root_seed, spawn_key=(seed,))) and ``versions`` (JSON:
  package versions on the worker that ran it);
- attributes: ``format`` (``attnflow-sweep/2``), ``spec`` (the specification, JSON), ``fixed`` (the model keys
  common to every cell), ``versions`` (the driver's), ``created``, ``block`` (cells per task) and ``layout``.

**Blocks, chunks and shards.** A *block* is the set of cells one task integrates as one ensemble: a Zarr chunk
over the trailing axes that an ensemble can batch (``beta``, ``seed``, ``noise``; :func:`store_layout`). A
shard groups up to :data:`SHARD_CHUNKS` chunks into one file, so that a sweep of 1e5 cells writes a bounded
number of files (about cells / (block x 64) per variable) instead of one per cell. The store is a *template*:
every array is created with its fill value before the run (no chunk is written), and each finished block is
written as one region, its ``status`` last, by the driver alone (a single writer: shards are never written
concurrently). A run interrupted in the middle of a write leaves the block's cells pending; Zarr writes each
shard atomically (temporary file, then rename). A shard that cannot be read (damaged on disk) makes
:func:`open_store` refuse the store, untouched, unless asked to repair it: ``repair=True`` (CLI
``sweep resume --repair``) deletes the unreadable shards and marks their cells pending.

Stores of format ``attnflow-sweep/1`` (Zarr format 2, one chunk per cell; written by earlier versions) are
still opened, resumed and read; :func:`convert_store` (``attnflow sweep convert OLD NEW``) copies one into the
current layout.
"""
from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import time
import warnings
from pathlib import Path

import numpy as np

from numerics.common.errors import InputError
from numerics.common.provenance import package_versions
from numerics.sweeps.observables import check_observables
from numerics.sweeps.spec import FORMAT, LEGACY_FORMAT, SEED_AXIS, SweepSpec

PENDING, DONE, FAILED = 0, 1, 2
STATUS_NAMES = {PENDING: "pending", DONE: "done", FAILED: "failed"}
CELL_VARIABLES = ("status", "error", "seconds", "seed_entropy", "versions")
MAX_ERROR = 500
#: axes whose cells one ensemble can integrate together (the same model but for beta, the seed and the noise)
BATCH_AXES = ("beta", SEED_AXIS, "noise")
#: chunks (blocks) per shard file at most
SHARD_CHUNKS = 64


def _libraries():
    try:
        import xarray as xr
        import zarr
    except ModuleNotFoundError as exc:
        raise InputError(f"sweeps need the optional dependencies dask, distributed, zarr and xarray ({exc.name} "
                         "is missing): pip install 'attnflow[sweeps]'") from None
    return xr, zarr


def _zarr3():
    _, zarr = _libraries()
    if int(zarr.__version__.split(".")[0]) < 3:
        raise InputError(f"sweep stores need zarr >= 3 (sharding), found {zarr.__version__}: "
                         "pip install 'attnflow[sweeps]'")
    return zarr


def sweep_versions() -> dict:
    from importlib import metadata

    out = package_versions()
    for name in ("dask", "distributed", "zarr", "xarray"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def store_layout(spec: SweepSpec, block: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(chunks, shards)`` over the axes for blocks of at most ``block`` cells.

    The chunk (one block) spans the trailing axes that an ensemble batches (:data:`BATCH_AXES`), from the last
    axis backwards, until ``block`` cells are reached or another axis comes; every other axis has chunk 1. The
    shard multiplies the chunk along the axes before it (from the innermost outwards) up to
    :data:`SHARD_CHUNKS` chunks.
    """
    shape = spec.shape
    chunks = [1] * len(shape)
    room = max(1, int(block))
    for i in reversed(range(len(shape))):
        if shape[i] == 1:
            continue
        if spec.dims[i] not in BATCH_AXES or room <= 1:
            break
        chunks[i] = min(shape[i], room)
        room //= chunks[i]
        if chunks[i] < shape[i]:
            break
    shards = list(chunks)
    room = SHARD_CHUNKS
    for i in reversed(range(len(shape))):
        if room <= 1:
            break
        per_axis = math.ceil(shape[i] / chunks[i])
        if per_axis > 1:
            m = min(per_axis, room)
            shards[i] = chunks[i] * m
            room //= m
    return tuple(chunks), tuple(shards)


def blocks_of(cells, chunks) -> list[list[tuple[int, ...]]]:
    """``cells`` grouped by the chunk (block) they fall in, blocks in C order of their chunk, cells in C order."""
    groups: dict = {}
    for index in cells:
        groups.setdefault(tuple(i // c for i, c in zip(index, chunks)), []).append(tuple(index))
    return [sorted(groups[k]) for k in sorted(groups)]


def _coordinate(values):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.asarray(values)
    if all(isinstance(v, str) for v in values):
        return np.asarray(values, dtype=str)
    return np.asarray([json.dumps(v) for v in values], dtype=str)


def create_store(path, spec: SweepSpec, block: int | None = None) -> "SweepStore":
    """A new, empty store (a template: arrays and their fill values, no chunk written) for ``spec`` at ``path``
    (which must not exist), in blocks of ``block`` cells (default: :func:`numerics.sweeps.spec.SweepSpec.block`)."""
    zarr = _zarr3()
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists: resume it (attnflow sweep resume {path}) or choose a new path")
    if not path.parent.is_dir():
        raise InputError(f"cannot create {path}: {path.parent} is not a directory")
    outputs = check_observables(spec.observables)
    block = spec.block() if block is None else int(block)
    chunks, shards = store_layout(spec, block)
    dims, shape = spec.dims, spec.shape
    times = spec.frame_times()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        group = zarr.open_group(str(tmp), mode="w-", zarr_format=3)
        group.attrs.update({
            "format": FORMAT, "spec": spec.to_json(), "fixed": json.dumps(dict(spec.model)),
            "versions": json.dumps(sweep_versions(), sort_keys=True),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "block": block,
            "layout": {"chunks": list(chunks), "shards": list(shards)}})

        def variable(name, dtype, fill, over_time=False, description=""):
            extra = (times.size,) if over_time else ()
            arr = group.create_array(name, shape=shape + extra, chunks=chunks + extra, shards=shards + extra,
                                     dtype=dtype, fill_value=fill, dimension_names=dims + (("time",) if over_time else ()),
                                     attributes={"description": description})
            return arr

        for out in outputs:
            variable(out.name, "f8", np.nan, out.over_time, out.doc)
        variable("status", "i1", PENDING, description="0 pending, 1 done, 2 failed")
        variable("error", str, "", description="why the cell failed (empty if not)")
        variable("seconds", "f8", np.nan, description="the cell's share of its block's wall time")
        variable("seed_entropy", "i8", spec.run["root_seed"],
                 description="initial state drawn from SeedSequence(seed_entropy, spawn_key=(seed,)); noise (if any) "
                             "seeded from spawn_key=(seed, 1)")
        variable("versions", str, "", description="package versions on the worker")
        for name, values in list(spec.axes.items()) + [("time", list(times))]:
            coord = _coordinate(values)
            arr = group.create_array(name, shape=coord.shape, dtype=str if coord.dtype.kind == "U" else coord.dtype,
                                     dimension_names=(name,))
            arr[...] = coord
        with warnings.catch_warnings():  # consolidated metadata is not part of the Zarr 3 specification yet
            warnings.simplefilter("ignore")
            zarr.consolidate_metadata(str(tmp))
        os.rename(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot create {path}: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return open_store(path)


class SweepStore:
    """An opened, validated sweep store: the spec it was made for and block-by-block (region) writes."""

    def __init__(self, path: Path, group, spec: SweepSpec, zarr_format: int):
        self.path = path
        self.group = group
        self.spec = spec
        self.zarr_format = zarr_format
        self.outputs = check_observables(spec.observables)
        self.chunks = tuple(group["status"].chunks)
        # cells whose error field is set: only those need it cleared when they succeed (one write less per cell)
        self._with_error = {tuple(int(i) for i in idx) for idx in np.argwhere(self.status() == FAILED)}

    @property
    def block(self) -> int:
        """Cells per task (one chunk; 1 for stores of format 1)."""
        return int(math.prod(self.chunks))

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

    def blocks(self, cells) -> list[list[tuple[int, ...]]]:
        """``cells`` grouped into the store's blocks (one task and one region write each)."""
        return blocks_of(cells, self.chunks)

    def errors(self) -> list[tuple[tuple[int, ...], str]]:
        st = self.status()
        err = self.group["error"]
        return [(tuple(int(i) for i in idx), str(err[tuple(idx)])) for idx in np.argwhere(st == FAILED)]

    def write_cell(self, index: tuple[int, ...], result: dict) -> None:
        """Record one cell (a block of one)."""
        self.write_block([dict(result, index=tuple(index))])

    def write_block(self, results: list[dict]) -> None:
        """Record the cells of one block: their outputs (or errors), timings and versions as one region per
        variable, then their status (last)."""
        if not results:
            return
        indices = [tuple(r["index"]) for r in results]
        lo = np.min(indices, axis=0)
        hi = np.max(indices, axis=0) + 1
        region = tuple(slice(int(a), int(b)) for a, b in zip(lo, hi))
        local = [tuple(int(i - a) for i, a in zip(idx, lo)) for idx in indices]
        g = self.group
        whole = len(set(local)) == math.prod(b - a for a, b in zip(lo, hi))  # the results fill the region
        status = np.zeros(tuple(hi - lo), np.int8) if whole else np.asarray(g["status"][region]).copy()

        def put(name, values):
            if whole:  # nothing of the region's current contents survives: no read
                current = np.empty(tuple(hi - lo) + tuple(g[name].shape[len(lo):]),
                                   dtype=object if g[name].dtype.kind in "OUT" else g[name].dtype)
            else:
                current = np.asarray(g[name][region])
                current = current.astype(object) if current.dtype.kind in "OUT" else current.copy()
            for at, value in zip(local, values):
                current[at] = value
            g[name][region] = current

        failed = [bool(r.get("error")) for r in results]
        for out in self.outputs:
            put(out.name, [np.nan if bad else r["values"][out.name] for r, bad in zip(results, failed)])
        errors = [str(r["error"])[:MAX_ERROR] if bad else "" for r, bad in zip(results, failed)]
        if any(failed) or any(idx in self._with_error for idx in indices):
            put("error", errors)
        for idx, bad in zip(indices, failed):
            (self._with_error.add if bad else self._with_error.discard)(idx)
        put("seconds", [float(r.get("seconds", np.nan)) for r in results])
        put("versions", [json.dumps(r.get("versions", {}), sort_keys=True) for r in results])
        for at, bad in zip(local, failed):
            status[at] = FAILED if bad else DONE
        g["status"][region] = status

    def dataset(self):
        xr, _ = _libraries()
        return xr.open_zarr(str(self.path))


def _shard_regions(arr) -> list[tuple[tuple[slice, ...], tuple[int, ...]]]:
    """(region, shard grid index) of every shard (or chunk, for an array without shards) of ``arr``."""
    outer = getattr(arr, "shards", None) or arr.chunks
    grid = [range(math.ceil(s / c)) for s, c in zip(arr.shape, outer)]
    return [(tuple(slice(i * c, min(s, (i + 1) * c)) for i, c, s in zip(idx, outer, arr.shape)), idx)
            for idx in itertools.product(*grid)]


def damaged_shards(group, names) -> list[tuple[str, tuple[slice, ...], tuple[int, ...], str]]:
    """Shards that cannot be read: (variable, region, shard grid index, reason)."""
    bad = []
    for name in names:
        arr = group[name]
        for region, idx in _shard_regions(arr):
            try:
                np.asarray(arr[region])
            except Exception as exc:  # noqa: BLE001 - zarr raises codec- and format-specific types
                bad.append((name, region, idx, f"{type(exc).__name__}"))
    return bad


def _repair(path: Path, group, damaged, shape) -> None:
    """Delete the unreadable shards (they read back as fill values) and mark their cells pending."""
    for name, region, idx, _ in damaged:
        shard = path / name / "c" / Path(*map(str, idx))
        if shard.exists():
            shard.unlink()
    status = group["status"]
    for name, region, _, _ in damaged:
        cells = region[:len(shape)]
        current = np.asarray(status[cells]).copy()
        current[current == DONE] = PENDING
        current[current == FAILED] = PENDING
        status[cells] = current


def open_store(path, repair: bool = False) -> SweepStore:
    """Open and validate an existing store; a missing, foreign or damaged store raises :class:`InputError` (and
    nothing is written). With ``repair``, unreadable shards of a format-2 store are deleted and their cells
    marked pending (computed again by the resume that follows)."""
    _, zarr = _libraries()
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path} is not a sweep store (no such directory)")
    try:
        # the arrays' own metadata, not the consolidated copy: a deleted variable must show as missing
        group = zarr.open_group(str(path), mode="r+", use_consolidated=False)
        attrs = dict(group.attrs)
        zarr_format = int(group.metadata.zarr_format)
    except Exception as exc:  # zarr raises several types for a directory that is not a group
        raise InputError(f"{path} is not a Zarr store written by attnflow sweep ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    expected = FORMAT if zarr_format == 3 else LEGACY_FORMAT
    if attrs.get("format") != expected:
        raise InputError(f"{path} is not an attnflow sweep store (format {attrs.get('format')!r}, "
                         f"expected {expected!r} for a Zarr format {zarr_format} store)")
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
    if zarr_format == 3:
        damaged = damaged_shards(group, names)
        if damaged and not repair:
            name, _, idx, why = damaged[0]
            raise InputError(f"{path} is damaged: {len(damaged)} unreadable shard(s), first {name}/c/"
                             f"{'/'.join(map(str, idx))} ({why}); attnflow sweep resume {path} --repair "
                             "recomputes their cells")
        if damaged:
            _repair(path, group, damaged, shape)
    try:
        status = np.asarray(arrays["status"][...])
    except Exception as exc:
        raise InputError(f"{path} is damaged: cannot read status ({type(exc).__name__})") from None
    if not np.isin(status, list(STATUS_NAMES)).all():
        raise InputError(f"{path} is damaged: status holds values other than 0, 1, 2")
    return SweepStore(path, group, spec, zarr_format)


# -- stores of format 1 (Zarr format 2, one chunk per cell) -------------------------------------------------------
def create_legacy_store(path, spec: SweepSpec) -> SweepStore:
    """A store in the layout of format ``attnflow-sweep/1`` (Zarr format 2, one chunk per cell), as earlier
    versions wrote it: kept to test that such stores stay readable and convertible."""
    xr, _ = _libraries()
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists")
    outputs = check_observables(spec.observables)
    dims, shape, times = spec.dims, spec.shape, spec.frame_times()
    data = {}
    for out in outputs:
        extra = ("time",) if out.over_time else ()
        data[out.name] = (dims + extra, np.full(shape + ((times.size,) if out.over_time else ()), np.nan),
                          {"description": out.doc})
    data["status"] = (dims, np.zeros(shape, np.int8), {"description": "0 pending, 1 done, 2 failed"})
    data["error"] = (dims, np.full(shape, "", dtype=object), {})
    data["seconds"] = (dims, np.full(shape, np.nan), {})
    data["seed_entropy"] = (dims, np.full(shape, spec.run["root_seed"], np.int64), {})
    data["versions"] = (dims, np.full(shape, "", dtype=object), {})
    coords = {name: (name, np.asarray(values)) for name, values in spec.axes.items()}
    coords["time"] = ("time", times)
    ds = xr.Dataset(data, coords=coords, attrs={"format": LEGACY_FORMAT, "spec": spec.to_json(),
                                                "fixed": json.dumps(dict(spec.model)), "versions": "{}",
                                                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    encoding = {name: {"chunks": (1,) * len(dims) + ((times.size,) if v.dims[-1] == "time" else ())}
                for name, v in ds.data_vars.items()}
    ds.to_zarr(str(path), mode="w-", consolidated=True, encoding=encoding, zarr_format=2)
    return open_store(path)


def convert_store(source, target, block: int | None = None) -> dict:
    """Copy a store (any format) into a new store of the current format at ``target``: the same specification,
    values, errors, timings and versions; ``status`` copied last. Returns what was copied."""
    old = open_store(source)
    new = create_store(target, old.spec, block)
    names = [o.name for o in old.outputs] + ["error", "seconds", "versions"]
    for name in names:
        values = np.asarray(old.group[name][...])
        new.group[name][...] = values.astype(object) if values.dtype.kind in "OUT" else values
    new.group["status"][...] = old.status()
    return {"source": str(old.path), "source_format": old.group.attrs.get("format"), "target": str(new.path),
            "target_format": FORMAT, "cells": int(old.status().size), "counts": new.counts(),
            "block": new.block, "files": count_files(new.path)}


def count_files(path) -> int:
    """Files under ``path`` (the store's footprint on a file system)."""
    return sum(len(files) for _, _, files in os.walk(path))
