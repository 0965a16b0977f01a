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
shard atomically (temporary file, then rename). A shard that cannot be read (damaged on disk), or that is gone
although ``status`` says its cells were written (:func:`missing_shards`), makes :func:`open_store` refuse the
store, untouched, unless asked to repair it: ``repair=True`` (CLI ``sweep resume --repair``) deletes the
unreadable shards and marks the cells of the damaged and missing ones pending.

Stores of format ``attnflow-sweep/1`` (Zarr format 2, one chunk per cell; written by earlier versions) are
still opened, resumed and read; :func:`convert_store` (``attnflow sweep convert OLD NEW``) copies one into the
current layout.
"""
from __future__ import annotations

import contextlib
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
from numerics.sweeps.observables import DECISION_TIME, Output, check_observables, registered
from numerics.sweeps.spec import FORMAT, LEGACY_FORMAT, SEED_AXIS, SweepSpec

PENDING, DONE, FAILED = 0, 1, 2
STATUS_NAMES = {PENDING: "pending", DONE: "done", FAILED: "failed"}
CELL_VARIABLES = ("status", "error", "seconds", "seed_entropy", "versions")
MAX_ERROR = 500
#: axes whose cells one ensemble can integrate together (the same model but for beta, the seed and the noise)
BATCH_AXES = ("beta", SEED_AXIS, "noise")
#: chunks (blocks) per shard file at most
SHARD_CHUNKS = 64
#: store attribute: every block is written whole, fill values included (Zarr's ``write_empty_chunks``), so a
#: shard holding a done cell always exists and a missing one is a loss (stores without it: outputs unchecked)
COMPLETE_SHARDS = "complete_shards"


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


def create_store(path, spec: SweepSpec, block: int | None = None, outputs: list[Output] | None = None
                 ) -> "SweepStore":
    """A new, empty store (a template: arrays and their fill values, no chunk written) for ``spec`` at ``path``
    (which must not exist), in blocks of ``block`` cells (default: :func:`numerics.sweeps.spec.SweepSpec.block`);
    ``outputs`` (default: those of the spec's observables) as read from another store by ``convert``."""
    zarr = _zarr3()
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists: resume it (attnflow sweep resume {path}) or choose a new path")
    if not path.parent.is_dir():
        raise InputError(f"cannot create {path}: {path.parent} is not a directory")
    outputs = spec_outputs(spec) if outputs is None else outputs
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
            "layout": {"chunks": list(chunks), "shards": list(shards)}, COMPLETE_SHARDS: True})

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

    def __init__(self, path: Path, group, spec: SweepSpec, zarr_format: int, outputs: list[Output]):
        self.path = path
        self.group = group
        self.spec = spec
        self.zarr_format = zarr_format
        self.outputs = outputs
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
        _, zarr = _libraries()
        with zarr.config.set({"array.write_empty_chunks": True}):  # an all-NaN block still gets its shard
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


def _shard_file(path: Path, group, name: str, idx) -> Path:
    """The file of shard (or, without sharding, chunk) ``idx`` of variable ``name``: ``c/i/j/k`` in Zarr
    format 3, ``i.j.k`` in format 2 (stores of format ``attnflow-sweep/1``)."""
    return path / name / group[name].metadata.encode_chunk_key(tuple(int(i) for i in idx))


def missing_shards(path: Path, group, outputs, status: np.ndarray, complete: bool
                   ) -> list[tuple[str, tuple[slice, ...], tuple[int, ...], str]]:
    """Shards that a store's ``status`` says were written but that are gone from disk (deleted by hand, lost
    by a copy): (variable, region, shard grid index, "missing"). A written block writes ``seconds`` and
    ``versions`` (always), ``error`` (when a cell failed) and, in stores with :data:`COMPLETE_SHARDS`, every
    output of its done cells. (A lost ``status`` shard reads as pending cells, which a resume runs again, as
    after a driver interrupted between a block's outputs and its status.)"""
    ndim = status.ndim
    need = {"seconds": (DONE, FAILED), "versions": (DONE, FAILED), "error": (FAILED,)}
    if complete:
        need.update({name: (DONE,) for name in outputs})
    lost = []
    for name, codes in need.items():
        for region, idx in _shard_regions(group[name]):
            if not _shard_file(path, group, name, idx).exists() and np.isin(status[region[:ndim]], codes).any():
                lost.append((name, region, idx, "missing: its cells are recorded as written"))
    return lost


def _repair(path: Path, group, damaged, shape) -> None:
    """Delete the unreadable shards (they read back as fill values) and mark the cells of every damaged or
    missing shard pending."""
    _, zarr = _libraries()
    for name, region, idx, _ in damaged:
        shard = _shard_file(path, group, name, idx)
        if shard.exists():
            shard.unlink()
    status = zarr.open_array(str(path / "status"), mode="r+", config={"write_empty_chunks": True})
    for name, region, _, _ in damaged:
        cells = region[:len(shape)]
        current = np.asarray(status[cells]).copy()
        current[current == DONE] = PENDING
        current[current == FAILED] = PENDING
        status[cells] = current


#: the lock file of a store being run (inside the store; holds the pid and the host of the process running it)
LOCK_NAME = "attnflow.lock"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):  # another user's process; a pid no process can have
        return pid > 0
    return True


def _holder(fd: int) -> tuple[int, str] | None:
    """The (pid, host) written in an open lock file, or None when it holds none (new, or unreadable)."""
    from numerics.common.readers import parse_json

    try:
        os.lseek(fd, 0, os.SEEK_SET)
        holder = parse_json(os.read(fd, 4096).decode(), "lock file")
        return int(holder["pid"]), str(holder["host"])
    except (InputError, OSError, KeyError, TypeError, ValueError, UnicodeDecodeError):
        return None


def _acquire(lock: Path, path) -> int:
    """An open descriptor of ``lock`` holding its exclusive ``flock``; one line if another process holds it."""
    import fcntl

    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"cannot lock {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            who = f"process {holder[0]} on {holder[1]}" if holder else "another process"
            raise InputError(f"{path} is being run by {who} (lock {lock}): wait for it to finish") from None
        try:  # the holder may have removed the file between our open and our lock: lock the file that is there
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


@contextlib.contextmanager
def store_lock(path):
    """Hold the store's lock while it is run: ``STORE/attnflow.lock`` holds the pid and host of the process
    running it, under an exclusive ``flock`` (which the kernel releases when that process ends, however it
    ends). A second run of the same store is refused with one line naming the running process. A lock file
    left by a process that was killed (its lock released, its pid still written) is reported on stderr as
    stale and taken over: the resume after a killed driver just works. The file is removed at the end."""
    import socket
    import sys

    lock = Path(path) / LOCK_NAME
    fd = _acquire(lock, path)
    try:
        stale = _holder(fd)
        if stale is not None:
            alive = " (a pid now running something else)" if stale[1] == socket.gethostname() and \
                _process_alive(stale[0]) else ""
            print(f"sweep: stale lock of process {stale[0]} on {stale[1]}{alive}, which no longer runs this "
                  f"store: taken over", file=sys.stderr)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode())
        yield lock
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()  # still holding the flock: a process waiting on this file sees it gone and retries
        os.close(fd)


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
    spec = stored_spec(path, attrs)
    shape = spec.shape
    outputs = stored_outputs(group, spec)
    names = [o.name for o in outputs] + list(CELL_VARIABLES)
    try:
        arrays = {name: group[name] for name in names}
    except KeyError as exc:
        raise InputError(f"{path} is damaged: variable {exc} is missing") from None
    for name, arr in arrays.items():
        if tuple(arr.shape[:len(shape)]) != shape:
            raise InputError(f"{path} is damaged: {name} has shape {arr.shape}, the spec needs {shape}")
    # format 1 (one file per cell) is checked for missing chunks only: reading every chunk would cost a read per
    # cell and variable
    damaged = damaged_shards(group, names) if zarr_format == 3 else []
    if not any(name == "status" for name, *_ in damaged):
        status = _read_status(path, arrays["status"])
        damaged += missing_shards(path, group, [o.name for o in outputs], status, bool(attrs.get(COMPLETE_SHARDS)))
    if damaged and not repair:
        name, _, idx, why = damaged[0]
        kinds = " or ".join(sorted({"missing" if w.startswith("missing") else "unreadable" for *_, w in damaged}))
        where = _shard_file(path, group, name, idx).relative_to(path).as_posix()
        raise InputError(f"{path} is damaged: {len(damaged)} {kinds} shard(s), first {where} ({why}); "
                         f"attnflow sweep resume {path} --repair recomputes their cells")
    if damaged:
        _repair(path, group, damaged, shape)
    _read_status(path, arrays["status"])
    return SweepStore(path, group, spec, zarr_format, outputs)


def _read_status(path, arr) -> np.ndarray:
    """The ``status`` of every cell, validated (0, 1 or 2): the one reader of status, for every command."""
    try:
        status = np.asarray(arr[...])
    except Exception as exc:  # noqa: BLE001 - zarr raises codec- and format-specific types
        raise InputError(f"{path} is damaged: cannot read status ({type(exc).__name__})") from None
    if not np.isin(status, list(STATUS_NAMES)).all():
        raise InputError(f"{path} is damaged: status holds values other than 0, 1, 2")
    return status


def stored_spec(path, attrs: dict) -> SweepSpec:
    """The specification stored in a store's attributes, read as data: bounded JSON (no RecursionError), and no
    module it names imported (``[run] imports`` runs only when the store is resumed)."""
    from numerics.common.readers import parse_json

    text = attrs.get("spec")
    if not isinstance(text, str):
        raise InputError(f"{path}: the stored specification is unreadable (no spec attribute)")
    try:
        tables = parse_json(text, "the stored specification", kind="JSON")
        return SweepSpec.from_dict(tables, imports=False)
    except InputError as exc:
        raise InputError(f"{path}: the stored specification is invalid: {exc}") from None


def _decision_outputs(spec: SweepSpec) -> list[Output]:
    return [DECISION_TIME] if spec.run.get("stop_when_decided") else []


def spec_outputs(spec: SweepSpec) -> list[Output]:
    """The variables the observables of ``spec`` record, and ``decision_time`` when its runs stop once decided."""
    return check_observables(spec.observables) + _decision_outputs(spec)


def stored_outputs(group, spec: SweepSpec) -> list[Output]:
    """The recorded outputs of a store: those of the spec's registered observables, and the store's other
    variables for observables registered by user modules (which reading a store does not import)."""
    known = {k: v for k, v in spec.observables.items() if k in registered()}
    outputs = check_observables(known) + _decision_outputs(spec)
    if len(known) == len(spec.observables):
        return outputs
    taken = {o.name for o in outputs} | set(CELL_VARIABLES) | set(spec.dims) | {"time"}
    ndim = len(spec.dims)
    for name in sorted(n for n, _ in group.arrays() if n not in taken):
        arr = group[name]
        outputs.append(Output(name, str(arr.attrs.get("description", "")), over_time=arr.ndim > ndim))
    return outputs


# -- stores of format 1 (Zarr format 2, one chunk per cell) -------------------------------------------------------
def create_legacy_store(path, spec: SweepSpec) -> SweepStore:
    """A store in the layout of format ``attnflow-sweep/1`` (Zarr format 2, one chunk per cell), as earlier
    versions wrote it: kept to test that such stores stay readable and convertible."""
    xr, _ = _libraries()
    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists")
    outputs = spec_outputs(spec)
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
    new = create_store(target, old.spec, block, old.outputs)
    names = [o.name for o in old.outputs] + ["error", "seconds", "versions"]
    _, zarr = _libraries()
    with zarr.config.set({"array.write_empty_chunks": True}):  # every shard written, as by a run (COMPLETE_SHARDS)
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
