"""The import rules of the layout, read from the source (no import is executed).

- ``theory/`` never imports ``numerics`` or ``attnflow`` (the symbolic layer stands alone);
- ``numerics.common`` imports no area; an area imports only ``common``, the areas below it (``ALLOWED``) and
  itself; areas never import the ``attnflow`` entry package;
- no import cycle between modules, at module level or inside functions.

Adding an area means adding it to ``ALLOWED`` with the areas it builds on.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: area -> areas it may import (besides itself and numerics.common)
ALLOWED = {
    "core": set(),
    "circle": {"core"},
    "critical": {"core"},
    "clusters": {"core"},
    "gaussian": {"core"},
    "meanfield": {"core", "circle", "rd"},
    "conjectures": {"core", "circle", "critical", "meanfield"},
    "bench": {"core", "circle", "harmonic"},
    "rd": {"core", "gaussian"},
    "noise": {"core", "circle", "meanfield", "harmonic"},
    "trained": {"core", "clusters", "gaussian"},
    "architectures": {"core", "circle", "gaussian"},
    "sweeps": {"core", "clusters", "noise"},
    "harmonic": {"core", "clusters"},
    "survey": {"core"},
    "longcontext": {"core"},
    "decoder": {"core", "clusters", "trained", "bench"},
    "certified": set(),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str | None = None) -> set[str]:
    """Absolute names of the project modules that ``path`` imports (relative imports resolved; ``name``: the
    module's name when the file lies outside the tree, as the planted files of the tests below do)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = (name or module_name(path)).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}  # "from pkg import module"
    return {name for name in found if name.split(".")[0] in ("theory", "numerics", "attnflow")}


def loaded_by_name(path: Path) -> set[str]:
    """Project modules that ``path`` loads by name: ``load_plugin("m")`` and ``importlib.import_module("m")`` with
    a constant name (plug-ins are imports too: they can close a cycle)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("load_plugin", "import_module") and node.args[0].value.split(".")[0] in ("numerics", "theory"):
                found.add(node.args[0].value)
    return found


def declared_plugins() -> set[str]:
    """The keys of numerics.core.plugins.PLUGINS, read from the source."""
    tree = ast.parse((ROOT / "numerics" / "core" / "plugins.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "PLUGINS" or \
                isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PLUGINS" for t in node.targets):
            return set(ast.literal_eval(node.value).keys())
    return set()


def project_modules() -> dict[str, Path]:
    mods = {}
    for top in ("theory", "numerics", "attnflow"):
        for path in (ROOT / top).rglob("*.py"):
            mods[module_name(path)] = path
    return mods


#: (path, mtime, size) -> (imports, loaded by name): each file is parsed once per content, so the tests that
#: plant an import (and write the file) see it, and the others do not parse the whole tree again
_PARSED: dict[tuple, tuple[set[str], set[str]]] = {}


def _parsed(path: Path, name: str) -> tuple[set[str], set[str]]:
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _PARSED:
        _PARSED[key] = (imports_of(path, name), loaded_by_name(path))
    return _PARSED[key]


def import_graph(planted: dict[str, Path] | None = None) -> nx.DiGraph:
    """The project's import graph; ``planted`` adds modules (name -> a file outside the tree), so that a test can
    plant a violation without writing into the source tree (which other test processes read at the same time)."""
    mods = {**project_modules(), **(planted or {})}
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)
    for name, path in mods.items():
        imported, by_name = _parsed(path, name)
        for target in imported:
            # "from pkg import name" names a module only when pkg.name is a module
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + ".") and target not in (
                    "numerics", "theory"):
                graph.add_edge(name, target)
        for target in by_name:
            graph.add_edge(name, target, by_name=True)
    return graph


def area_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "numerics" and len(parts) > 2 else None


def violations(graph: nx.DiGraph) -> list[str]:
    bad = []
    plugins = declared_plugins()
    for src, dst, by_name in graph.edges(data="by_name"):
        if by_name and area_of(src) == "core" and area_of(dst) != "core":
            if dst not in plugins:  # the core's only upward edges are its declared plug-ins
                bad.append(f"{src} -> {dst}: loaded by name but not declared in numerics/core/plugins.py")
            continue
        top_src, top_dst = src.split(".")[0], dst.split(".")[0]
        if top_src == "theory" and top_dst != "theory":
            bad.append(f"{src} -> {dst}: theory/ must not import {top_dst}")
        if top_src == "numerics" and top_dst == "attnflow":
            bad.append(f"{src} -> {dst}: numerics must not import the entry package")
        a, b = area_of(src), area_of(dst)
        if a is None or b is None or a == b or b == "common":
            continue
        if a == "common":
            bad.append(f"{src} -> {dst}: numerics.common imports no area")
        elif b not in ALLOWED.get(a, set()):
            bad.append(f"{src} -> {dst}: area {a} may import {sorted(ALLOWED.get(a, set())) or 'only core'}")
    return bad


def test_every_area_is_declared():
    areas = {p.name for p in (ROOT / "numerics").iterdir() if (p / "__init__.py").exists()} - {"common"}
    assert areas == set(ALLOWED), f"declare the areas' allowed imports: {sorted(areas ^ set(ALLOWED))}"


def test_layering():
    bad = violations(import_graph())
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:5])


@pytest.mark.parametrize("source, expected", [
    ("import numerics.core.field\n", ["theory/ must not import numerics"]),
    ("from numerics.circle.fourier import make_fourier_field\n", ["theory/ must not import numerics"]),
])
def test_rule_catches_theory_importing_numerics(tmp_path, monkeypatch, source, expected):
    """The checker itself can fail: a planted theory -> numerics import is reported."""
    planted = tmp_path / "_planted_violation.py"
    planted.write_text(source)
    bad = violations(import_graph({"theory._planted_violation": planted}))
    assert any(e in line for e in expected for line in bad)


def test_rule_catches_upward_area_import_and_cycles():
    """A planted upward import (core -> clusters) and a planted cycle are both reported."""
    graph = import_graph()
    graph.add_edge("numerics.core.field", "numerics.clusters.detection")
    assert any("area core may import" in line for line in violations(graph))
    graph.add_edge("numerics.clusters.detection", "numerics.core.field")
    assert list(nx.simple_cycles(graph))


def test_plugins_are_edges_of_the_graph():
    """The core's plug-ins appear in the graph (so a plug-in importing its loader is a reported cycle)."""
    graph = import_graph()
    assert graph.has_edge("numerics.core.noise_loader", "numerics.noise.sde")  # the loader of trajectory, ensemble
    assert graph.has_edge("numerics.core.model", "numerics.circle.fourier")
    assert graph.has_edge("numerics.core.noise_loader", "numerics.noise.common")  # Model(common_noise > 0)
    assert declared_plugins() == {"numerics.circle.fourier", "numerics.noise.sde", "numerics.harmonic.backend",
                                 "numerics.clusters.detection", "numerics.noise.common"}
    graph.add_edge("numerics.noise.sde", "numerics.core.trajectory")  # the cycle this test found before
    assert any("numerics.noise.sde" in c and "numerics.core.trajectory" in c for c in nx.simple_cycles(graph))
    graph.add_edge("numerics.noise.sde", "numerics.core.noise_loader")
    assert any("numerics.noise.sde" in c and "numerics.core.noise_loader" in c for c in nx.simple_cycles(graph))


def test_an_undeclared_module_loaded_by_name_is_a_violation(tmp_path):
    planted = tmp_path / "_planted_plugin.py"
    planted.write_text('import importlib\nimportlib.import_module("numerics.meanfield.pde")\n')
    bad = violations(import_graph({"numerics.core._planted_plugin": planted}))
    assert any("not declared in numerics/core/plugins.py" in line for line in bad)

