"""Malformed input files, one of each kind a hostile or careless user gives: shared by the reader tests
(tests/numerics/test_common_readers.py), the hostile-file CLI tests and the CLI fuzz.

Each maker writes its file into a folder and returns the path. Kinds:

- ``huge-header``: an ``.npy`` whose header declares a (10^7, 10^7) float64 array (728 TiB) over 64 bytes;
- ``huge-member``: an ``.npz`` whose members are such arrays (every key a reader may look for);
- ``corrupt-member``: an ``.npz`` whose deflated member has damaged bytes (``zlib.error`` when read);
- ``bomb``: an ``.npz`` whose members inflate 32 MiB of zeros each from ~32 KB (a compression bomb);
- ``fifo``: a named pipe (opening it for reading blocks until a writer comes);
- ``empty``: a file of zero bytes;
- ``npz-as-npy``: an ``.npz`` archive given where an ``.npy`` array is expected, ``npy-as-npz`` the reverse;
- ``truncated``: an ``.npy`` whose header declares more data than the file holds;
- ``directory``: a folder;
- ``pickled``: an object array (a pickle inside the ``.npy``).
"""
from __future__ import annotations

import io
import os
import zipfile

import numpy as np

HUGE = (10_000_000, 10_000_000)
#: array names that the readers look for (matrices, heads, MLP, schedule, trajectory)
KEYS = ("Q", "K", "V", "W", "W1", "b1", "W2", "b2", "times", "X", "energy")


def _header(shape, descr="<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def huge_header(folder, name="huge.npy"):
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        fh.write(_header(HUGE) + b"\0" * 64)
    return path


def huge_member(folder, name="huge.npz"):
    path = os.path.join(folder, name)
    with zipfile.ZipFile(path, "w") as zf:
        for key in KEYS:
            zf.writestr(f"{key}.npy", _header(HUGE) + b"\0" * 64)
    return path


def corrupt_member(folder, name="corrupt.npz"):
    path = os.path.join(folder, name)
    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: rng.random((40, 40)) for k in ("Q", "K", "V", "W")})
    raw = bytearray(buf.getvalue())
    for start in (120, 2000, 9000, 16000, 24000, 34000):  # inside each member's deflate stream
        raw[start:start + 16] = b"\xff" * 16
    with open(path, "wb") as fh:
        fh.write(bytes(raw))
    return path


def bomb(folder, name="bomb.npz", mib=32):
    path = os.path.join(folder, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key in ("V", "Q"):
            with zf.open(f"{key}.npy", "w", force_zip64=True) as member:
                member.write(_header((mib << 17,)))
                zeros = b"\0" * (1 << 20)
                for _ in range(mib):
                    member.write(zeros)
    return path


def fifo(folder, name="fifo.npz"):
    path = os.path.join(folder, name)
    os.mkfifo(path)
    return path


def empty(folder, name="empty.npy"):
    path = os.path.join(folder, name)
    open(path, "wb").close()
    return path


def npz_as_npy(folder, name="archive.npy"):
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        np.savez(fh, X=np.eye(3))
    return path


def npy_as_npz(folder, name="array.npz"):
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        np.save(fh, np.eye(3))
    return path


def truncated(folder, name="truncated.npy"):
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        fh.write(_header((1000, 3)) + b"\0" * 100)
    return path


def directory(folder, name="folder.npz"):
    path = os.path.join(folder, name)
    os.mkdir(path)
    return path


def pickled(folder, name="pickled.npy"):
    path = os.path.join(folder, name)
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return path


MAKERS = {"huge-header": huge_header, "huge-member": huge_member, "corrupt-member": corrupt_member, "bomb": bomb,
          "fifo": fifo, "empty": empty, "npz-as-npy": npz_as_npy, "npy-as-npz": npy_as_npz, "truncated": truncated,
          "directory": directory, "pickled": pickled}


def make_all(folder) -> dict[str, str]:
    """Every kind, written into ``folder`` (each under its own name); kind -> path."""
    return {kind: make(folder) for kind, make in MAKERS.items()}
