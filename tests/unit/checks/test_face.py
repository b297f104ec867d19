"""The checks' public face: code outside the package imports ``medlit.checks`` only, every name
it exports is found, and importing it loads no check."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import medlit.checks

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src"
CHECKS = SRC / "medlit" / "checks"


def test_every_public_name_is_found_where_it_is_said_to_be() -> None:
    assert sorted(medlit.checks.__all__) == sorted(medlit.checks._WHERE)
    for name in medlit.checks.__all__:
        assert getattr(medlit.checks, name) is not None
        assert name in dir(medlit.checks)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        medlit.checks.no_such_check  # noqa: B018
    except AttributeError as error:
        assert "no_such_check" in str(error)
    else:
        raise AssertionError("an unknown name was found")


def test_code_outside_the_package_imports_only_its_face() -> None:
    """No module of ``src`` outside ``medlit/checks`` imports one of the checks' modules."""
    reached: dict[str, str] = {}
    for path in SRC.rglob("*.py"):
        if CHECKS in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("medlit.checks."):
                    reached[name] = str(path.relative_to(SRC))
    assert reached == {}


def test_importing_the_package_loads_no_check() -> None:
    code = (
        "import json, sys, medlit.checks; "
        "print(json.dumps([m for m in sys.modules if m.startswith('medlit.checks.')]))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout) == []
