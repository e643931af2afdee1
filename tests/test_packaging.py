"""The supported Pythons are said the same way everywhere: requires-python,
the classifiers (each one PyPI knows), the nox sessions and CI."""

from __future__ import annotations

import ast
import sys

from packaging.specifiers import SpecifierSet
from trove_classifiers import classifiers as KNOWN

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SUPPORTED = ["3.10", "3.11", "3.12", "3.13"]


def _project() -> dict:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def test_requires_python_admits_exactly_the_supported_versions():
    spec = SpecifierSet(_project()["requires-python"])
    assert [v for v in SUPPORTED if spec.contains(v + ".0")] == SUPPORTED
    assert not spec.contains("3.9.18")


def test_classifiers_name_the_supported_versions_and_exist():
    classifiers = _project()["classifiers"]
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if c.startswith("Programming Language :: Python :: 3.")
    ]
    assert versions == SUPPORTED
    assert [c for c in classifiers if c not in KNOWN] == []


def test_nox_runs_every_supported_version():
    tree = ast.parse((REPO / "noxfile.py").read_text())
    [pythons] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["PYTHONS"]
    ]
    assert ast.literal_eval(pythons) == SUPPORTED


def test_ci_runs_the_fast_sessions_and_the_package_check():
    ci = (REPO / ".ci" / "run").read_text()
    assert "nox" in ci and "fast-" in ci and "package" in ci


def test_a_plain_install_brings_the_formatter_fixes_are_laid_out_with():
    """ruff is a dependency, not an extra: `pip install .` alone lays out
    fixes (nox's package session runs fix with the wheel alone and checks
    the lines)."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    installed = [Requirement(r) for r in requires("vllm-spec-lint")]
    plain = [r.name for r in installed if r.marker is None]
    assert "ruff" in plain
    assert "ruff" in [Requirement(r).name for r in _project()["dependencies"]]
