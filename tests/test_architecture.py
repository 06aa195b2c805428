"""The shape of the package: no import cycle among optplan's modules (function-level imports
included), no core module importing a problem package, no method module calling back into the
dispatcher, and one problem table that every problem is on."""

from __future__ import annotations

import ast
from pathlib import Path

import optplan
from optplan import problems

PACKAGE = Path(optplan.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path) -> set[str]:
    """Every optplan module ``path`` imports, at module level or inside a function: for
    ``from a.b import c`` the module ``a.b.c`` when it is one, else ``a.b`` (a package's
    ``__init__``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}"
                         in MODULES else node.module for alias in node.names)
    return {name for name in found if name in MODULES}


GRAPH = {name: imported_modules(path) - {name} for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("import optplan.model\nfrom optplan.exact import cpsat\n"
                      "def f():\n    from optplan.preload import validate_plan\n"
                      "    import numpy\n")
    assert imported_modules(source) == {"optplan.model", "optplan.exact.cpsat",
                                        "optplan.preload"}


def test_no_import_cycle_among_optplan_modules():
    assert cycles(GRAPH) == []


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


PROBLEM_PACKAGES = sorted({spec.load_instance.__module__.split(".")[1]
                           for spec in problems().values()} - {"formats"})
CORE = ("optplan", "optplan.problems", "optplan.model", "optplan.errors", "optplan.registry",
        "optplan.solve", "optplan.validate", "optplan.bounds", "optplan.result",
        "optplan.records", "optplan.profiles", "optplan.formats", "optplan.exact",
        "optplan.heuristics")


def is_core(name: str) -> bool:
    return any(name == core or name.startswith(core + ".") for core in CORE[1:]) \
        or name == "optplan"


def test_no_core_module_imports_a_problem_package():
    assert PROBLEM_PACKAGES == ["preload", "schedule"]
    for name, imported in GRAPH.items():
        if is_core(name):
            bad = [m for m in imported for p in PROBLEM_PACKAGES
                   if m == f"optplan.{p}" or m.startswith(f"optplan.{p}.")]
            assert not bad, (name, bad)


def test_every_problem_is_on_the_table_once_with_its_cli_spelling():
    table = problems()
    assert list(table) == ["shared-objects", "offsets", "preload", "schedule", "schedule-offsets"]
    for name, spec in table.items():
        assert spec.name == name and "_" not in name


ORCHESTRATION = ("optplan", "optplan.cli", "optplan.commands", "optplan.experiments",
                 "optplan.analysis", "optplan.torch", "optplan.runtimes")


def test_only_the_orchestration_layers_call_solve():
    callers = sorted(name for name, imported in GRAPH.items() if "optplan.solve" in imported)
    assert callers and all(any(name == layer or name.startswith(layer + ".")
                                for layer in ORCHESTRATION) for name in callers), callers


def test_every_exact_method_of_every_problem_takes_the_keyword_contract():
    import inspect

    from optplan import methods
    from optplan.registry import EXACT_CONTRACT

    checked = 0
    for info in methods(builtin_only=True).values():
        if info.kind != "exact":
            continue
        for problem, func in info.implementations.items():
            parameters = inspect.signature(func).parameters
            assert all(name in parameters and parameters[name].kind is parameters[name].KEYWORD_ONLY
                       for name in EXACT_CONTRACT), (info.name, problem)
            rest = list(parameters.values())[-1]
            assert rest.kind is rest.VAR_KEYWORD and rest.name == "solver_params", info.name
            checked += 1
    assert checked >= 12
