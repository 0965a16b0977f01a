"""attnflow works without the extra attnflow[models]; the trained-model commands then name the extra."""
import importlib
import importlib.util

import pytest

from numerics.common.errors import InputError
from numerics.trained import checkpoint as ck
from tests.cli.helpers import bad


def test_missing_package_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == ck.PACKAGE else real(name, *a))
    with pytest.raises(InputError, match=r"attnflow\[models\]"):
        ck.packaged_model_path()
    assert not ck.models_available()


def test_missing_safetensors_names_the_extra(monkeypatch, tmp_path):
    real = importlib.import_module

    def fake(name, *a):
        if name.startswith("safetensors"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *a)

    monkeypatch.setattr(ck.importlib, "import_module", fake)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(InputError, match=r"attnflow\[models\]"):
        ck.load_checkpoint(tmp_path)


def test_cli_without_the_extra(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == ck.PACKAGE else real(name, *a))
    assert "attnflow[models]" in bad(capsys, ["model", "embed", "--text", "x"])
