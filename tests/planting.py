"""Plant a mutant of benchmarks/mutants.py in the running process (monkeypatch), so a test can show that a check
fails on exactly the error the mutation run plants.

The module's source with the mutant applied is executed in a copy of its namespace; every module-level function
whose code changed replaces the original wherever a loaded ``numerics``/``theory`` module holds it (names
imported with ``from ... import``, and module-level tables such as a dict of steppers), and every changed method or property replaces the original on the existing
class (instances and ``isinstance`` checks keep working). monkeypatch undoes it all after the test.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutants import MUTANTS  # noqa: E402

BY_ID = {m[0]: m for m in MUTANTS}


def _code(obj):
    f = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    code = getattr(f, "__code__", None)
    return None if code is None else (code.co_code, code.co_consts, code.co_names)


def _holders(old):
    """(setter, key) pairs: module attributes and module-level dict entries (tables of steppers) holding ``old``."""
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(("numerics", "theory", "tests")):
            continue
        for attr, value in list(vars(mod).items()):
            if value is old:
                yield "attr", mod, attr
            elif isinstance(value, dict):
                for key, item in list(value.items()):
                    if item is old:
                        yield "item", value, key


def plant_mutant(monkeypatch, mutant_id: str) -> None:
    """Apply mutant ``mutant_id`` to its module in this process (undone by ``monkeypatch`` at teardown)."""
    _, path, old, new, _ = BY_ID[mutant_id]
    module = importlib.import_module(path[:-3].replace("/", "."))
    source = inspect.getsource(module)
    assert source.count(old) == 1, mutant_id
    namespace = dict(vars(module))
    exec(compile(source.replace(old, new), module.__file__, "exec"), namespace)  # noqa: S102 - our own source
    changed = 0
    for name, fresh in namespace.items():
        original = vars(module).get(name)
        if inspect.isfunction(fresh) and inspect.isfunction(original) and _code(fresh) != _code(original):
            for kind, holder, key in list(_holders(original)):
                if kind == "attr":
                    monkeypatch.setattr(holder, key, fresh)
                else:
                    monkeypatch.setitem(holder, key, fresh)
            changed += 1
        elif inspect.isclass(fresh) and inspect.isclass(original) and fresh.__module__ == module.__name__:
            for attr, value in vars(fresh).items():
                before = vars(original).get(attr)
                if (inspect.isfunction(value) or isinstance(value, property)) and before is not None \
                        and _code(value) != _code(before):
                    monkeypatch.setattr(original, attr, value)
                    changed += 1
    assert changed, f"{mutant_id}: no function or method changed"
