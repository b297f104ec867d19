"""The package's layers hold: the import-linter contracts of pyproject.toml are kept, and no
module imports, at module level, a module that imports it back (directly or around a loop)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def test_import_contracts_are_kept() -> None:
    pytest.importorskip("importlinter", reason="import-linter is a dev dependency")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BROKEN" not in run.stdout


def _module_names() -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in (SRC / "medlit").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(statements: list[ast.stmt], package: str) -> set[str]:
    """What ``statements`` import when the module runs (not in functions, not for typing)."""
    found: set[str] = set()
    for node in statements:
        if isinstance(node, ast.If):
            found |= _imported(node.orelse, package)
            if not _type_checking(node.test):
                found |= _imported(node.body, package)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found |= _imported(block, package)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, *([node.module] if node.module else [])])
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def module_graph() -> dict[str, set[str]]:
    """Each module of medlit and the medlit modules its import runs (packages' ``__init__``
    included: importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    names = _module_names()
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        runs: set[str] = set()
        for target in _imported(ast.parse(path.read_text()).body, package):
            parts = target.split(".")
            runs |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
        graph[name] = {m for m in runs if m in names and m != name and not name.startswith(m + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_cycle_finder_finds_a_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_level_import_cycle() -> None:
    graph = module_graph()
    assert "medlit.words.grounding" in graph  # the walk saw the package
    assert cycles(graph) == []


def test_agent_holds_only_the_retrieval_loop() -> None:
    agent = {p.stem for p in (SRC / "medlit" / "agent").glob("*.py")} - {"__init__"}
    assert agent == {
        "decisions",
        "deps",
        "graph",
        "hit_nodes",  # the nodes a tier-1 hit runs (AskNodes' base)
        "memory",
        "nodes",
        "plan",  # a question's plan without the LLM (what a hit needs of query)
        "prompt",
        "query",
        "recheck",  # a due tier-1 hit checked for new articles, answered again through the graph
        "scoring",
        "state",
    }


def _long_functions(limit: int, under: Path) -> list[str]:
    found = []
    for path in sorted(under.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({length})")
    return found


def test_functions_stay_short() -> None:
    # The checks package: 60 lines a function; the rest of the package: 100.
    assert _long_functions(60, SRC / "medlit" / "checks") == []
    assert _long_functions(100, SRC / "medlit") == []
