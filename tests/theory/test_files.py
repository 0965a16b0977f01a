"""theory.files.atomic_write: the written file respects the umask like open(path, "w") would."""
import os
import stat

import pytest

from theory.files import atomic_write


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_write_respects_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        target = tmp_path / "out.txt"
        atomic_write(target, lambda tmp: open(tmp, "w").write("x"))
        with open(tmp_path / "plain.txt", "w") as fh:  # what a plain open() gives under the same umask
            fh.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~mask
    assert stat.S_IMODE(os.stat(target).st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain.txt").st_mode)
    assert set(os.listdir(tmp_path)) == {"out.txt", "plain.txt"}  # no temporary file left behind
