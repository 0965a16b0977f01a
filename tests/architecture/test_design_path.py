"""The design page's path of one simulation (docs/design.md, between ``<!-- path-start -->`` and
``<!-- path-end -->``) names functions that exist: a renamed or moved step fails here, not in a reader's hands."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "design.md"


def path_names() -> list[str]:
    text = PAGE.read_text()
    block = text.split("<!-- path-start -->", 1)[1].split("<!-- path-end -->", 1)[0]
    return sorted(set(re.findall(r"`(numerics\.[A-Za-z_.]+)`", block)))


def resolve(dotted: str):
    """The object named by ``dotted``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def test_the_path_names_enough_steps():
    assert len(path_names()) >= 12


@pytest.mark.parametrize("dotted", path_names())
def test_each_name_on_the_path_exists(dotted):
    assert resolve(dotted) is not None, dotted


def test_a_wrong_name_is_seen():
    with pytest.raises(AttributeError):
        resolve("numerics.core.simulate.Run.no_such_step")
