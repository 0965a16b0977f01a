"""Numba's kernel cache goes to a user cache directory, never into the package's source tree (issue 43)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import numerics
from numerics.common.numba_cache import default_cache_dir, use_user_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(numerics.__file__)))


def test_a_writable_user_setting_is_kept(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "mine"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert use_user_cache(env) == str(tmp_path / "mine") and env["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")


@pytest.mark.parametrize("given", [None, "", "unwritable"])
def test_unset_or_unwritable_goes_to_the_user_cache(tmp_path, given):
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    if given == "unwritable":
        (tmp_path / "a_file").write_text("x")
        given = str(tmp_path / "a_file" / "cache")  # under a regular file: cannot be created, even by root
    if given is not None:
        env["NUMBA_CACHE_DIR"] = given
    chosen = use_user_cache(env)
    assert chosen == str(tmp_path / "xdg" / "attnflow" / "numba") == env["NUMBA_CACHE_DIR"]
    assert os.path.isdir(chosen)


def test_xdg_default_follows_the_rule(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir({}) == str(tmp_path / ".cache" / "attnflow" / "numba")
    assert default_cache_dir({"XDG_CACHE_HOME": "relative"}) == str(tmp_path / ".cache" / "attnflow" / "numba")


KERNEL = """
import numba

@numba.njit(cache=True)
def twice(x):
    return 2 * x
"""


def test_a_cached_kernel_is_written_to_the_user_cache_not_beside_its_source(tmp_path):
    """With NUMBA_CACHE_DIR unset, a cache=True kernel compiled after `import numerics` is cached under
    $XDG_CACHE_HOME/attnflow/numba and nothing is written beside the kernel's source."""
    pytest.importorskip("numba")
    src = tmp_path / "src"
    src.mkdir()
    (src / "tiny_kernel.py").write_text(textwrap.dedent(KERNEL))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"),
               PYTHONPATH=os.pathsep.join([ROOT, str(src)]), PYTHONDONTWRITEBYTECODE="1")
    code = ("import numerics, numba, os; import tiny_kernel as t; assert t.twice(3) == 6; "
            "print(numba.config.CACHE_DIR)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cache = tmp_path / "xdg" / "attnflow" / "numba"
    assert done.stdout.strip() == str(cache)
    assert any(p.suffix == ".nbi" for p in cache.rglob("*")), list(cache.rglob("*"))
    assert not (src / "__pycache__").exists()
