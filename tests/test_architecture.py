"""The import graph of farm/, kernels/ and dashboard/: no cycles, and arrows only in the allowed directions.

Every import counts, those inside functions too (a lazy import is still a dependency), and so does a module
named in a string: any "module:attribute" path ("farm.measure.gpu:GpuMeasurer", imported by name later) and
the argument of importlib.import_module / __import__, an f-string (f"kernels.{name}.stages") naming every
module it can match. (A logger's name, "farm.sweep", is not an import.) docs/layout.md draws the same rooms
and arrows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("farm", "kernels", "dashboard")
SUBPACKAGES = ("farm.measure", "farm.cluster", "farm.data", "farm.analysis")

# What each room may import besides itself. The order is the house's: each room lists only rooms above it
# in this table, so the rooms themselves cannot form a cycle (test_the_rules_themselves_point_one_way).
ALLOWED: dict[str, set[str]] = {
    "kernels": set(),  # the catalog: imports nothing from farm/
    "farm": set(),  # the package itself (its version)
    "farm.cells": {"kernels"},
    "farm.data": {"farm", "farm.cells", "kernels"},
    "farm.measure": {"farm", "farm.cells", "farm.data", "kernels"},
    "farm.plan": {"farm", "farm.cells", "farm.data", "farm.measure", "kernels"},
    "farm.cluster": {"farm", "farm.cells", "farm.data", "farm.measure", "farm.plan", "kernels"},
    # Analysis reads datasets and uses measure's statistics (the noise of a row is stopping.relative_noise)
    # and, for crosscheck, its measurer; it never reaches the cluster.
    "farm.analysis": {"farm", "farm.cells", "farm.data", "farm.measure", "kernels"},
    "farm.sweep": {"farm", "farm.cells", "farm.data", "farm.measure", "farm.plan", "farm.cluster", "kernels"},
    # `farm simulate`: the sweep driver on stand-in workers, a sibling of farm.sweep that cli can start.
    "farm.simulate": {
        "farm",
        "farm.cells",
        "farm.data",
        "farm.measure",
        "farm.plan",
        "farm.cluster",
        "farm.sweep",
        "kernels",
    },
    # `farm sweep`, `farm bench` and `farm profile` are the sweep's driver (farm.sweep.main, drive).
    "farm.cli": {
        "farm",
        "farm.cells",
        "farm.data",
        "farm.measure",
        "farm.plan",
        "farm.analysis",
        "farm.simulate",
        "farm.sweep",
        "kernels",
    },
    "farm.__main__": {"farm.cli"},
    # The dashboard reads datasets through farm.data, their analyses through farm.analysis, and the
    # catalog (stage names, ladder order, tuning configurations) from kernels.
    "dashboard": {"farm.data", "farm.analysis", "kernels"},
}


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under the packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


IMPORTERS = ("import_module", "__import__")


def named_in_strings(node: ast.AST, mods: dict[str, Path]) -> set[str]:
    """The modules named by a "module:attribute" string, or by the first argument of an importer call (a string,
    or an f-string whose formatted parts each stand for one part of a dotted name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
        name = node.value.partition(":")[0]
        return {name} if name in mods else set()
    if not (
        isinstance(node, ast.Call)
        and node.args
        and getattr(node.func, "attr", getattr(node.func, "id", None)) in IMPORTERS
    ):
        return set()
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value} & set(mods)
    if isinstance(arg, ast.JoinedStr):
        pattern = "".join(
            re.escape(str(v.value)) if isinstance(v, ast.Constant) else r"[A-Za-z_]\w*" for v in arg.values
        )
        return {m for m in mods if re.fullmatch(pattern, m)}
    return set()


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the packages it imports, anywhere in its body, or names in a string."""
    mods = modules(root)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Constant, ast.Call)):
                graph[name] |= named_in_strings(node, mods) - {name}
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]  # a submodule, or a name in `base`
            else:
                continue
            graph[name] |= {t for t in map(known, targets) if t and t != name}
    return graph


def room(module: str) -> str:
    for sub in SUBPACKAGES:
        if module == sub or module.startswith(sub + "."):
            return sub
    top = module.split(".")[0]
    return module if top == "farm" else top


def forbidden(graph: dict[str, set[str]]) -> list[str]:
    """'a -> b (room -> room)' for every import whose direction the rules do not allow."""
    return [
        f"{a} -> {b} ({room(a)} -> {room(b)})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if room(b) != room(a) and room(b) not in ALLOWED[room(a)]
    ]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def cycle_edges(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    members = set(component)
    return [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]


def test_no_import_cycles():
    graph = import_graph(ROOT)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join("  " + ", ".join(cycle_edges(graph, c)) for c in found)


def test_arrows_point_one_way():
    bad = forbidden(import_graph(ROOT))
    assert not bad, "imports against the layout (docs/layout.md):\n" + "\n".join("  " + e for e in bad)


def test_every_module_is_in_a_room():
    assert {room(m) for m in import_graph(ROOT)} <= set(ALLOWED)


def test_the_rules_themselves_point_one_way():
    order = list(ALLOWED)
    for r, allowed in ALLOWED.items():
        assert all(order.index(a) < order.index(r) for a in allowed), r


# The checker itself, on graphs and trees made to break the rules.


def test_a_cycle_is_found_and_named():
    graph = {
        "farm.data.rows": {"farm.data.schema"},
        "farm.data.schema": {"farm.data.dataset"},
        "farm.data.dataset": {"farm.data.rows"},
        "farm.cells": set(),
    }
    assert cycles(graph) == [["farm.data.dataset", "farm.data.rows", "farm.data.schema"]]
    assert "farm.data.dataset -> farm.data.rows" in cycle_edges(graph, cycles(graph)[0])


def test_a_forbidden_direction_is_named():
    graph = {
        "kernels.baselines": {"farm.measure.extra_baselines", "kernels.registry"},
        "kernels.registry": set(),
        "farm.measure.extra_baselines": {"kernels.registry"},
        "dashboard.analysis": {"farm.measure.throttle", "farm.data.dataset"},
        "farm.measure.throttle": set(),
        "farm.data.dataset": set(),
        "farm.cluster.worker": {"farm.analysis.profile"},
        "farm.analysis.profile": set(),
    }
    assert forbidden(graph) == [
        "dashboard.analysis -> farm.measure.throttle (dashboard -> farm.measure)",
        "farm.cluster.worker -> farm.analysis.profile (farm.cluster -> farm.analysis)",
        "kernels.baselines -> farm.measure.extra_baselines (kernels -> farm.measure)",
    ]


def test_imports_inside_functions_and_relative_imports_count(tmp_path):
    (tmp_path / "farm" / "cluster").mkdir(parents=True)
    (tmp_path / "kernels").mkdir()
    (tmp_path / "dashboard").mkdir()
    for init in ("farm", "farm/cluster", "kernels", "dashboard"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "farm" / "cluster" / "dispatch.py").write_text("from farm.cluster.fleet import Worker\n")
    (tmp_path / "farm" / "cluster" / "fleet.py").write_text("def start():\n    from . import dispatch\n")
    (tmp_path / "kernels" / "registry.py").write_text("def catalog():\n    import farm.cluster.fleet\n")
    graph = import_graph(tmp_path)
    assert graph["farm.cluster.fleet"] == {"farm.cluster.dispatch"}
    assert cycles(graph) == [["farm.cluster.dispatch", "farm.cluster.fleet"]]
    assert forbidden(graph) == ["kernels.registry -> farm.cluster.fleet (kernels -> farm.cluster)"]


def test_modules_named_in_strings_count(tmp_path):
    (tmp_path / "farm" / "measure").mkdir(parents=True)
    (tmp_path / "farm" / "cluster").mkdir()
    (tmp_path / "kernels" / "walk").mkdir(parents=True)
    (tmp_path / "dashboard").mkdir()
    for init in ("farm", "farm/measure", "farm/cluster", "kernels", "kernels/walk", "dashboard"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "farm" / "cluster" / "standin.py").write_text("")
    (tmp_path / "kernels" / "walk" / "stages.py").write_text("")
    (tmp_path / "farm" / "measure" / "measurers.py").write_text(
        'import logging\nlog = logging.getLogger("farm.cluster.standin")\n'
        'TABLE = {"standin": "farm.cluster.standin:Standin", "label": "farm.gpu-model:x"}\n'
    )
    (tmp_path / "kernels" / "registry.py").write_text(
        'import importlib\ndef families(name):\n    return importlib.import_module(f"kernels.{name}.stages")\n'
    )
    graph = import_graph(tmp_path)
    assert graph["farm.measure.measurers"] == {"farm.cluster.standin"}
    assert graph["kernels.registry"] == {"kernels.walk.stages"}
    assert forbidden(graph) == ["farm.measure.measurers -> farm.cluster.standin (farm.measure -> farm.cluster)"]
