"""Mutation testing's reach (MUTATION.md): every module of the package is
mutated but the package markers and the entry point, and in the command
line only the option declarations (faces/cli_options.py) are kept out."""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re

from tests.conftest import REPO

PACKAGE = REPO / "vllm_spec_lint"


def _setting(name: str) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    return parser["mutmut"][name].split()


def test_every_module_but_markers_and_the_entry_point_is_mutated():
    only, never = _setting("only_mutate"), _setting("do_not_mutate")
    left_out = sorted(
        path.relative_to(REPO).as_posix()
        for path in PACKAGE.rglob("*.py")
        if not any(fnmatch.fnmatch(path.relative_to(REPO).as_posix(), p) for p in only)
        or any(fnmatch.fnmatch(path.relative_to(REPO).as_posix(), p) for p in never)
    )
    markers = sorted(
        path.relative_to(REPO).as_posix() for path in PACKAGE.rglob("__init__.py")
    )
    assert left_out == sorted([*markers, "vllm_spec_lint/__main__.py"])


def test_only_option_declarations_are_kept_from_mutation():
    source = (PACKAGE / "faces" / "cli_options.py").read_text()
    regions = re.findall(
        r"# pragma: no mutate start\n(.*?)# pragma: no mutate end", source, re.S
    )
    assert len(regions) == 1
    defined = [
        node.name
        for node in ast.parse(regions[0]).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    ]
    assert defined == ["_add_selection_options", "_add_fix_options", "build_parser"]
    assert not [
        path
        for path in PACKAGE.rglob("*.py")
        if path.name != "cli_options.py" and "pragma: no mutate" in path.read_text()
    ]


def test_every_test_left_out_of_mutation_runs_exists():
    """A test moved to another module must be left out under its new name
    (a stale ``--deselect`` leaves nothing out, and mutmut's first run of the
    suite fails on it)."""
    arguments = _setting("pytest_add_cli_args")
    left_out = [
        a.split("=", 1)[1]
        for a in arguments
        if a.startswith(("--deselect=", "--ignore="))
    ]
    assert left_out
    for target in left_out:
        path, _, test = target.partition("::")
        assert (REPO / path).is_file(), target
        if test:
            defined = {
                node.name
                for node in ast.parse((REPO / path).read_text()).body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
            assert test in defined, target
