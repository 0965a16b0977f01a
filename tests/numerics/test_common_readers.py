"""The shared readers of numerics.common.readers: valid files read exactly as NumPy reads them, every malformed
kind (tests/cli/malformed.py) is one InputError decided from the header, the archive's directory or fstat,
before anything large is allocated or any read blocks."""
from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from numerics.common.errors import InputError
from numerics.common.readers import (Fields, ListOf, check_metadata, read_json, read_npy, read_npz, read_text,
                                     read_zip_member)
from tests.cli import malformed
from tests.cpu_budget import cpu_budget

DTYPES = st.sampled_from(["<f8", ">f8", "<f4", "<i8", "<c16", "|b1", "<u2"])


@settings(max_examples=40, deadline=None)
@given(arr=hnp.arrays(DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)),
       fortran=st.booleans(), compressed=st.booleans())
def test_valid_arrays_read_back_exactly(tmp_path_factory, arr, fortran, compressed):
    folder = tmp_path_factory.mktemp("ok")
    arr = np.asfortranarray(arr) if fortran else arr
    np.save(folder / "a.npy", arr)
    got = read_npy(folder / "a.npy", "test array")
    assert got.dtype == arr.dtype and got.shape == arr.shape and np.array_equal(got, arr, equal_nan=True)
    (np.savez_compressed if compressed else np.savez)(folder / "b.npz", A=arr, B=np.arange(3))
    both = read_npz(folder / "b.npz", "test archive")
    assert set(both) == {"A", "B"} and np.array_equal(both["A"], arr, equal_nan=True)


def test_large_float_members_are_not_mistaken_for_bombs(tmp_path):
    arr = np.random.default_rng(0).standard_normal((600, 600))  # 2.9 MB, compresses < 2:1
    np.savez_compressed(tmp_path / "big.npz", X=arr)
    assert np.array_equal(read_npz(tmp_path / "big.npz", "x")["X"], arr)
    np.savez_compressed(tmp_path / "zeros.npz", X=np.zeros((300, 300)))  # 720 KB of zeros: small, exempt
    assert read_npz(tmp_path / "zeros.npz", "x")["X"].shape == (300, 300)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return malformed.make_all(str(tmp_path_factory.mktemp("bad")))


@pytest.mark.parametrize("reader, kind, fragment", [
    (read_npy, "huge-header", "header shape (10000000, 10000000)"),
    (read_npz, "huge-member", "memory"),
    (read_npz, "corrupt-member", "invalid file"),
    (read_npz, "bomb", "compression bomb"),
    (read_npy, "fifo", "not a regular file: a FIFO"),
    (read_npz, "fifo", "not a regular file: a FIFO"),
    (read_npy, "empty", "the file is empty"),
    (read_npz, "empty", "the file is empty"),
    (read_npy, "npz-as-npy", "an .npz archive, not an .npy array"),
    (read_npz, "npy-as-npz", "an .npy array, not an .npz archive"),
    (read_npy, "truncated", "holds 100 bytes of data"),
    (read_npy, "directory", "not a regular file: a directory"),
    (read_npz, "directory", "not a regular file: a directory"),
    (read_npy, "pickled", "pickled"),
    (read_json, "fifo", "a FIFO"),
    (read_text, "bomb", "not UTF-8"),
])
def test_each_malformed_kind_is_one_input_error(files, reader, kind, fragment):
    # a blocking read (a FIFO) trips the budget's wall-clock hang guard; a bomb inflated in full, its CPU budget
    with cpu_budget(20, f"{reader.__name__} on {kind}"):
        with pytest.raises(InputError) as info:
            reader(files[kind], "test file")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_huge_headers_are_refused_before_allocating(files, monkeypatch):
    def no_alloc(*args, **kwargs):
        raise AssertionError("allocated")

    monkeypatch.setattr(np, "empty", no_alloc)
    with pytest.raises(InputError, match="memory"):
        read_npy(files["huge-header"], "x")
    with pytest.raises(InputError, match="memory"):
        read_npz(files["huge-member"], "x")


def test_a_member_whose_directory_lies_about_its_size_is_invalid(tmp_path):
    """The header of the member declares more data than the archive's directory: refused before reading."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (1000,)})
    with zipfile.ZipFile(tmp_path / "lie.npz", "w") as zf:
        zf.writestr("X.npy", buf.getvalue() + b"\0" * 80)
    with pytest.raises(InputError, match="the file holds 80 bytes of data"):
        read_npz(tmp_path / "lie.npz", "x")


def test_zip_members_are_bounded(tmp_path, files):
    with zipfile.ZipFile(files["bomb"]) as zf:
        with pytest.raises(InputError, match="compression bomb"):
            read_zip_member(zf, "V.npy", "checkpoint file")
    with zipfile.ZipFile(tmp_path / "ok.zip", "w") as zf:
        zf.writestr("a.txt", "hello")
    with zipfile.ZipFile(tmp_path / "ok.zip") as zf:
        assert read_zip_member(zf, "a.txt", "x") == b"hello"
        with pytest.raises(InputError, match="larger than"):
            read_zip_member(zf, "a.txt", "x", max_bytes=2)


SCHEMA = Fields({"a": ("number",), "b": (str, None), "c": Fields({"x": (int,)}, required=("x",)),
                 "d": ListOf((bool,)), "e": Fields({"y": (int,)}, required=("y",), unless="z")},
                required=("a",), nullable=False)


@pytest.mark.parametrize("meta, fragment", [
    ([], "meta must be a JSON object"),
    ({}, "meta lacks a"),
    ({"a": True}, "meta.a must be a number, got true"),
    ({"a": 1, "b": 3}, "meta.b must be a string or null"),
    ({"a": 1, "c": {}}, "meta.c lacks x"),
    ({"a": 1, "c": [1]}, "meta.c must be a JSON object"),
    ({"a": 1, "d": [True, 1]}, "meta.d[1] must be true/false"),
    ({"a": 1, "e": {}}, "meta.e lacks y"),
])
def test_metadata_of_the_wrong_type_names_its_key(meta, fragment):
    with pytest.raises(InputError, match=None) as info:
        check_metadata(meta, SCHEMA, "trajectory t.npz")
    assert fragment in str(info.value), str(info.value)


def test_valid_metadata_passes():
    check_metadata({"a": 1.5, "b": None, "c": {"x": 2}, "d": [True], "e": {"z": 1}, "other": [1]}, SCHEMA, "t")


def test_a_symlink_to_a_fifo_is_refused(tmp_path, files):
    os.symlink(files["fifo"], tmp_path / "link.npy")
    with pytest.raises(InputError, match="FIFO"):
        read_npy(tmp_path / "link.npy", "x")
