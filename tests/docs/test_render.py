"""The built site renders in a real headless browser: figures present, equations typeset (docs/check_render.py)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_site_renders_in_headless_chromium(tmp_path):
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium is not installed (apt-get install -y chromium libjs-mathjax)")
    pytest.importorskip("sphinx")
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "check_render.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
