"""Reading the files that commands take (``.npz``, ``.npy``, ``.json``, text): every failure is one InputError line.

Every reader validates before it allocates or blocks:

- the path must be a regular file: a FIFO, a device, a socket or a directory is refused at once (the file is
  opened without blocking and checked with ``fstat`` before any byte is read);
- an ``.npy`` array (alone or as a member of an ``.npz`` archive) is read from its header first: its dtype (no
  pickled objects), its shape and its size in bytes are checked against the memory limit
  (:func:`numerics.common.limits.check_memory`) and against the bytes the file (or the archive member) really
  holds, before the array is allocated; the data are then read into the allocated array, at most the declared
  number of bytes;
- an ``.npz`` archive's members are decompressed in bounded chunks, at most their declared size, and a member
  that expands more than :data:`MAX_COMPRESSION_RATIO` times (a compression bomb; float data compress less
  than 2:1) is refused from the archive's directory, before anything is decompressed; a corrupted member
  (``zlib.error``, a CRC mismatch) is an invalid file;
- an empty file, an ``.npz`` archive where an ``.npy`` array is expected (and the reverse), a truncated file,
  non-UTF-8 or deeply nested JSON are "invalid file" errors.

All are reported as one :class:`InputError` line (CLI exit 2), never as tracebacks, and nothing is executed or
unpickled.
"""
from __future__ import annotations

import errno
import io
import json
import math
import os
import stat
import zipfile
import zlib

import numpy as np

from numerics.common.errors import InputError
from numerics.common.limits import check_memory

#: the largest JSON or text file read (bytes) and the deepest JSON nesting
MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 64
#: an archive member may expand at most this many times (deflate reaches ~1000:1 only on constant data; float64
#: arrays compress less than 2:1); members of at most :data:`SMALL_MEMBER` bytes are exempt
MAX_COMPRESSION_RATIO = 100
SMALL_MEMBER = 1 << 20
#: the bytes read at a time from a file or an archive member
CHUNK = 1 << 22
#: magic numbers of the two NumPy formats
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
#: errors of the file, the zip layer or zlib that mean "this file is not what it claims to be"
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError, RuntimeError,
                NotImplementedError, UnicodeDecodeError, TypeError, SyntaxError)


def _invalid(what: str, path, reason: str) -> InputError:
    return InputError(f"cannot read {what} {path}: invalid file ({reason})")


def open_regular(path, what: str):
    """``path`` opened for binary reading, if it is a regular file (symbolic links are followed).

    A missing path, a directory, a FIFO, a device or a socket is refused at once: the file is opened with
    ``O_NONBLOCK`` (so opening a FIFO never waits for a writer) and checked with ``fstat`` before any read.
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(f"cannot read {what} {path}: No such file or directory") from None
    except (OSError, TypeError, ValueError) as exc:
        reason = "a directory" if getattr(exc, "errno", None) == errno.EISDIR else _reason(exc)
        raise InputError(f"cannot read {what} {path}: invalid file (not a regular file: {reason})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"cannot read {what} {path}: invalid file (not a regular file: {_kind(mode)})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def _file_kind(head: bytes) -> str:
    if not head:
        return "empty"
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head.startswith(_ZIP_MAGIC):
        return "npz"
    return "other"


def _read_header(fh, what: str, path):
    """(shape, fortran_order, dtype) of the ``.npy`` stream ``fh`` positioned at its magic string."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    else:  # (3, 0): a UTF-8 header; NumPy's reader is private
        from numpy.lib import _format_impl

        shape, fortran, dtype = _format_impl._read_array_header(fh, version)
    if dtype.hasobject:
        raise _invalid(what, path, "it holds pickled Python objects, which attnflow never loads")
    return shape, fortran, dtype


def _read_array(fh, available: int, what: str, path, checked: list[int]) -> np.ndarray:
    """The array of the ``.npy`` stream ``fh``: its header is validated and its size checked against the memory
    limit (with the bytes of the arrays already read, ``checked``) and against ``available`` (the bytes after
    the magic string that the file or the archive member holds) before anything is allocated."""
    start = fh.tell() if fh.seekable() else None
    shape, fortran, dtype = _read_header(fh, what, path)
    header_bytes = (fh.tell() - start) if start is not None else None
    if any(s < 0 for s in shape):
        raise _invalid(what, path, f"the header declares a negative shape {shape}")
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    check_memory(float(min(nbytes + sum(checked), 2**1000)),
                 f"reading {what} {path} (header shape {_short_shape(shape)}, dtype {dtype})")
    data_bytes = available - header_bytes if header_bytes is not None else None
    if data_bytes is not None and data_bytes != nbytes:
        raise _invalid(what, path, f"the header declares shape {_short_shape(shape)} of {dtype} ({nbytes} bytes) but the file "
                                   f"holds {max(data_bytes, 0)} bytes of data")
    arr = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
    view = memoryview(arr.reshape(-1, order="A").view(np.uint8)) if count else memoryview(b"")
    done = 0
    while done < nbytes:
        got = fh.readinto(view[done: min(nbytes, done + CHUNK)])
        if not got:
            raise _invalid(what, path, f"truncated: the header declares {nbytes} bytes of data, the file holds {done}")
        done += got
    if fh.read(1):
        raise _invalid(what, path, f"the file holds more data than its header declares (shape {_short_shape(shape)})")
    checked.append(nbytes)
    return arr


def _short_shape(shape) -> str:
    text = str(tuple(shape))
    return text if len(text) <= 60 else text[:57] + "..."


_KIND_NAMES = {"npy": "an .npy array", "npz": "an .npz archive"}
_MISSING_MAGIC = {"npy": "no NumPy magic string", "npz": "no zip signature"}


def _expect_kind(fh, want: str, what: str, path) -> None:
    """Refuse, from its first bytes, a file that is empty or not of kind ``want``; rewind it."""
    kind = _file_kind(fh.read(6))
    if kind == "empty":
        raise _invalid(what, path, "the file is empty")
    if kind != want:
        raise _invalid(what, path, f"{_KIND_NAMES[kind]}, not {_KIND_NAMES[want]}" if kind in _KIND_NAMES
                       else f"not {_KIND_NAMES[want]}: {_MISSING_MAGIC[want]}")
    fh.seek(0)


def read_npy(path, what: str) -> np.ndarray:
    """The array of the ``.npy`` at ``path`` (an ``.npz`` archive is refused with a clear message)."""
    with open_regular(path, what) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            _expect_kind(fh, "npy", what, path)
            return _read_array(fh, size, what, path, [])
        except InputError:
            raise
        except (*_READ_ERRORS, MemoryError) as exc:
            raise _invalid(what, path, _reason(exc)) from None


def read_npz(path, what: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path``, fully read (so a truncated archive fails here, not later).

    Members are refused from the archive's directory when their declared size would exceed the memory limit
    or expands more than :data:`MAX_COMPRESSION_RATIO` times; each is then read from its header
    (:func:`read_npy`'s checks) with at most its declared size decompressed.
    """
    with open_regular(path, what) as fh:
        try:
            _expect_kind(fh, "npz", what, path)
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                _check_members(infos, what, path)
                out, checked = {}, []
                for info in infos:
                    key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                    with zf.open(info) as member:
                        if _file_kind(member.read(6)) != "npy":
                            raise _invalid(what, path, f"member {info.filename!r} is not an .npy array")
                    with zf.open(info) as member:
                        out[key] = _read_array(_Counted(member), info.file_size, what, path, checked)
                return out
        except InputError:
            raise
        except (*_READ_ERRORS, MemoryError) as exc:
            raise _invalid(what, path, _reason(exc)) from None


def _check_members(infos, what: str, path) -> None:
    """Refuse an archive from its directory: the declared sizes against the memory limit and the ratio bound."""
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise _invalid(what, path, f"member {info.filename!r} is encrypted")
        total += info.file_size
        ratio_ok = info.file_size <= max(SMALL_MEMBER, MAX_COMPRESSION_RATIO * info.compress_size)
        if not ratio_ok:
            raise _invalid(what, path, f"member {info.filename!r} would expand from {info.compress_size} to "
                                       f"{info.file_size} bytes, more than {MAX_COMPRESSION_RATIO} times (a "
                                       f"compression bomb?)")
    check_memory(float(total), f"reading {what} {path} ({len(infos)} members of {total} bytes declared)")


class _Counted(io.RawIOBase):
    """A read-only stream that knows how many bytes were read (zip members cannot ``tell`` reliably)."""

    def __init__(self, raw):
        self.raw, self.pos = raw, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def readinto(self, buf):
        data = self.raw.read(len(buf))
        buf[: len(data)] = data
        self.pos += len(data)
        return len(data)

    def read(self, size=-1):
        data = self.raw.read(size)
        self.pos += len(data)
        return data


def read_bytes(path, what: str, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, refused when larger than ``max_bytes``.

    The read asks for the file's actual size (plus one byte, to see a file that grew), never for ``max_bytes``:
    ``fh.read(n)`` allocates its buffer of ``n`` bytes up front, so asking for a limit of gigabytes fails with
    ``MemoryError`` under a memory cap even for a file of a few bytes.
    """
    with open_regular(path, what) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise _invalid(what, path, f"larger than {_size_text(max_bytes)}")
        try:
            parts = [fh.read(size + 1)]
            got = len(parts[0])
            while got > size and got <= max_bytes:  # the file grew after fstat: read on in bounded chunks
                more = fh.read(min(CHUNK, max_bytes + 1 - got))
                if not more:
                    break
                parts.append(more)
                got += len(more)
        except OSError as exc:
            raise _invalid(what, path, _reason(exc)) from None
    if got > max_bytes:
        raise _invalid(what, path, f"larger than {_size_text(max_bytes)}")
    return b"".join(parts)


def _size_text(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes} bytes"


def read_text(path, what: str, max_bytes: int = MAX_JSON_BYTES) -> str:
    """The UTF-8 text of the regular file at ``path`` (at most ``max_bytes``)."""
    try:
        return read_bytes(path, what, max_bytes).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(what, path, f"not UTF-8 text: {_reason(exc)}") from None


def read_zip_member(zf: zipfile.ZipFile, name: str, what: str, max_bytes: int | None = None) -> bytes:
    """The bytes of member ``name`` of an open archive, bounded like :func:`read_npz`'s members (``KeyError``
    when it is missing): the declared size against the memory limit (and ``max_bytes``) and the ratio bound,
    then at most the declared size decompressed."""
    info = zf.getinfo(name)
    _check_members([info], what, name)
    if max_bytes is not None and info.file_size > max_bytes:
        raise _invalid(what, name, f"larger than {max_bytes >> 20} MiB")
    try:
        with zf.open(info) as fh:
            data = fh.read(info.file_size + 1)
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
        raise _invalid(what, name, _reason(exc)) from None
    if len(data) != info.file_size:
        raise _invalid(what, name, "the member's size does not match the archive's directory")
    return data


def read_json(path, what: str):
    """The JSON document at ``path`` (at most :data:`MAX_JSON_BYTES`, nesting at most :data:`MAX_JSON_DEPTH`)."""
    return parse_json(read_text(path, what), f"{what} {path}")


def parse_json(text: str, what: str, kind: str = "file"):
    """``json.loads`` with the nesting bound checked before parsing (no RecursionError); errors name ``what``
    and call the text an invalid ``kind`` ("file", or "value" for a command-line flag)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:  # a linear scan: brackets outside strings
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_JSON_DEPTH:
                raise InputError(f"cannot read {what}: invalid {kind} (JSON nested deeper than {MAX_JSON_DEPTH} levels)")
        elif ch in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise InputError(f"cannot read {what}: invalid {kind} (not valid JSON: {_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "it needs more memory than this machine has"
    if "pickle" in str(exc):
        return "it holds pickled Python objects, which attnflow never loads"
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__


def json_array(text: str | None, name: str) -> np.ndarray | None:
    """A command-line JSON array (``--A "[[1, 0], [0, 1]]"``) as a float array; ``None`` stays ``None``.

    Parsed as data (``json.loads``, never evaluated), with the nesting bound of :func:`parse_json`; a value that
    is not a numeric, rectangular array is one :class:`InputError` line naming the flag.
    """
    if text is None:
        return None
    value = parse_json(text, f"--{name}", kind="value")
    if not isinstance(value, list):
        raise InputError(f"--{name} must be a JSON array, got {text!r}")
    if _holds_bool(value):  # NumPy reads true as 1.0: a typo would silently become a number
        raise InputError(f"--{name} must hold numbers, not true/false, got {_json_short(value)}")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"--{name} must be a numeric (rectangular) JSON array, got {text!r}") from None


#: the most items a comma-separated command-line list may hold (each item is usually a whole run: a list this long
#: is a typo or an attack, and parsing a megabyte of items is itself seconds of work)
MAX_LIST_ITEMS = 1000


def comma_list(text, option: str, kind=float, max_items: int = MAX_LIST_ITEMS) -> list:
    """The items of a comma-separated command-line value (``--betas 16,64,256``), each converted by ``kind``.

    The one parser of such lists: an empty item (``1,,2``, a trailing comma) is refused naming its position
    instead of being dropped silently, and a list of more than ``max_items`` items is refused from a count of
    the commas, before any item is converted or any work is sized from it. Surrounding spaces are allowed.

    Raises
    ------
    InputError
        No item, an empty item, too many items, or an item that ``kind`` does not accept.
    """
    raw = "" if text is None else str(text)
    count = raw.count(",") + 1
    if count > max_items:
        raise InputError(f"{option} takes at most {max_items} comma-separated values, got {count}")
    items = [item.strip() for item in raw.split(",")]
    if items == [""]:
        raise InputError(f"{option} holds no value")
    for k, item in enumerate(items):
        if not item:
            raise InputError(f"{option} has an empty item (item {k + 1} of {len(items)} in {_json_short(raw)})")
    out = []
    for item in items:
        try:
            out.append(kind(item))
        except (TypeError, ValueError, OverflowError):
            noun = "integers" if kind is int else "numbers"
            raise InputError(f"{option} must be comma-separated {noun}, got {_json_short(raw)} "
                             f"(item {item!r})") from None
    return out


def _holds_bool(value) -> bool:
    """Whether a parsed JSON value (nested lists, at most :data:`MAX_JSON_DEPTH` deep) holds a boolean."""
    if isinstance(value, bool):
        return True
    return isinstance(value, list) and any(_holds_bool(v) for v in value)


# -- metadata read from files: types checked before use ---------------------------------------------------------
#: a schema entry: a tuple of allowed JSON types (``None`` for null, ``"number"`` for int/float but not bool), or a
#: :class:`Fields` for a nested object, or a :class:`ListOf` for a list of such entries
class Fields(dict):
    """A JSON object's schema: key -> entry; keys listed in ``required`` must be present (unless the key
    ``unless`` is: another form of the same object)."""

    def __init__(self, entries: dict, required: tuple[str, ...] = (), nullable: bool = True,
                 unless: str | None = None):
        super().__init__(entries)
        self.required, self.nullable, self.unless = required, nullable, unless


class ListOf:
    """A JSON list whose items follow ``item``."""

    def __init__(self, item, nullable: bool = True):
        self.item, self.nullable = item, nullable


_TYPE_NAMES = {None: "null", "number": "a number", str: "a string", bool: "true/false", int: "an integer",
               list: "a list", dict: "an object"}


def _type_ok(value, allowed) -> bool:
    for t in allowed:
        if t is None and value is None:
            return True
        if t == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if t is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t in (str, bool, list, dict) and isinstance(value, t):
            return True
    return False


def check_metadata(value, schema, where: str, path: str = "meta") -> None:
    """Check the JSON ``value`` read from a file against ``schema`` before it is used; a value of the wrong type
    or a missing required key is one :class:`InputError` naming the key (``where``: the file), instead of an
    ``AttributeError`` or ``KeyError`` later, or a silently wrong reading (``bool([1])`` is true)."""
    if isinstance(schema, Fields):
        if value is None and schema.nullable:
            return
        if not isinstance(value, dict):
            raise InputError(f"invalid {where}: {path} must be a JSON object, got {_json_short(value)}")
        missing = [] if schema.unless in value else [k for k in schema.required if k not in value]
        if missing:
            raise InputError(f"invalid {where}: {path} lacks {', '.join(missing)}")
        for key, entry in schema.items():
            if key in value:
                check_metadata(value[key], entry, where, f"{path}.{key}")
    elif isinstance(schema, ListOf):
        if value is None and schema.nullable:
            return
        if not isinstance(value, list):
            raise InputError(f"invalid {where}: {path} must be a JSON list, got {_json_short(value)}")
        for k, item in enumerate(value):
            check_metadata(item, schema.item, where, f"{path}[{k}]")
    elif not _type_ok(value, schema):
        names = " or ".join(_TYPE_NAMES.get(t, str(t)) for t in schema)
        raise InputError(f"invalid {where}: {path} must be {names}, got {_json_short(value)}")


def _json_short(value) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
