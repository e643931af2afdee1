"""Plant realistic one-line bugs, one at a time, and see which the tests catch.

    python scripts/realistic_mutants.py vllm_spec_lint/edges/pairing.py \\
        --tests tests/test_pairing.py [--tests ...] [--shape drop-operand] \\
        [-m "not release"] [-k EXPR]

mutmut changes operators and constants one at a time; the bugs people write
have other shapes (tests/test_no_false_greens.py pins a sample of each).
This makes every mutant of these shapes in the given modules:

- ``drop-operand``: ``a and b`` -> ``a`` or ``b`` (also ``or``);
- ``all-any``: ``all(...)`` <-> ``any(...)``;
- ``edge``: ``<=`` <-> ``<``, ``>=`` <-> ``>``;
- ``drop-element``: one element left out of a tuple, set or list of names,
  attributes or strings (a tuple of types, a set of names);
- ``drop-guard``: an ``if`` without ``else`` whose body ends in ``return``,
  ``raise``, ``continue`` or ``break`` removed;
- ``drop-separator``: ``x + os.sep`` (``os.path.sep``, ``"/"``) -> ``x``.

Each mutant is written into a copy of the repository made from the commit
(``git archive HEAD``: the working tree is never touched), and the given
tests run there with ``pytest -x`` and ``MUTANT_UNDER_TEST`` set, so the
command line runs in the test's process, where the mutant is
(tests/conftest.py). A mutant that does not compile is not counted. The
output is a table per module and every survivor, to be judged: killed by a
new test, or recorded in MUTATION.md as equivalent with its reason.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

REPO = Path(__file__).resolve().parent.parent
SHAPES = (
    "drop-operand",
    "all-any",
    "edge",
    "drop-element",
    "drop-guard",
    "drop-separator",
)
_EDGES = {
    cst.LessThanEqual: cst.LessThan,
    cst.LessThan: cst.LessThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
    cst.GreaterThan: cst.GreaterThanEqual,
}
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    shape: str
    code: str  # the whole mutated module


class _Sites(cst.CSTVisitor):
    """Every node a shape can change, with the replacements it makes."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites: list[tuple[cst.CSTNode, str, object]] = []

    def visit_BooleanOperation(self, node):
        self.sites += [(node, "drop-operand", node.left)]
        self.sites += [(node, "drop-operand", node.right)]

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value in ("all", "any"):
            other = "any" if node.func.value == "all" else "all"
            self.sites += [(node, "all-any", node.with_changes(func=cst.Name(other)))]

    def visit_Comparison(self, node):
        for index, target in enumerate(node.comparisons):
            swapped = _EDGES.get(type(target.operator))
            if swapped is None:
                continue
            old = target.operator
            new = swapped(
                whitespace_before=old.whitespace_before,
                whitespace_after=old.whitespace_after,
            )
            targets = list(node.comparisons)
            targets[index] = target.with_changes(operator=new)
            self.sites += [(node, "edge", node.with_changes(comparisons=targets))]

    def _elements(self, node):
        elements = node.elements
        simple = (cst.Name, cst.Attribute, cst.SimpleString)
        if len(elements) < 2 or not all(
            isinstance(e, cst.Element) and isinstance(e.value, simple) for e in elements
        ):
            return
        for index in range(len(elements)):
            rest = [
                e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                for i, e in enumerate(elements)
                if i != index
            ]
            self.sites += [(node, "drop-element", node.with_changes(elements=rest))]

    visit_Tuple = visit_Set = visit_List = _elements

    def visit_If(self, node):
        if node.orelse is not None:
            return
        body = node.body.body
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(
            last.body[-1], _EXITS
        ):
            self.sites += [(node, "drop-guard", cst.RemoveFromParent())]

    def visit_BinaryOperation(self, node):
        if not isinstance(node.operator, cst.Add):
            return
        right = node.right
        separator = (
            isinstance(right, cst.SimpleString) and right.evaluated_value == "/"
        ) or (
            isinstance(right, cst.Attribute)
            and right.attr.value == "sep"
            and isinstance(right.value, (cst.Name, cst.Attribute))
        )
        if separator:
            self.sites += [(node, "drop-separator", node.left)]


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement):
        self.target = target
        self.replacement = replacement

    def on_leave(self, original_node, updated_node):
        if original_node is self.target:
            return self.replacement
        return updated_node


def mutants(path: Path, shapes: set[str], name: Path) -> list[Mutant]:
    """Every mutant of the file at ``path``, named ``name`` (its path in the
    repository)."""
    source = path.read_text()
    wrapper = MetadataWrapper(cst.parse_module(source))
    sites = _Sites()
    wrapper.visit(sites)
    positions = wrapper.resolve(PositionProvider)
    found = []
    for node, shape, replacement in sites.sites:
        if shape not in shapes:
            continue
        code = wrapper.module.visit(_Replace(node, replacement)).code
        try:
            compile(code, str(path), "exec")
        except SyntaxError:
            continue
        if code != source:
            line = positions[node].start.line
            found.append(Mutant(str(name), line, shape, code))
    return found


def _copy_of_head(folder: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)


def run(
    modules: list[Path],
    tests: list[str],
    shapes: set[str],
    keyword: str | None = None,
    markers: str | None = None,
    only: set[str] | None = None,
):
    results: dict[str, Counter] = {}
    survivors: list[tuple[Mutant, str]] = []
    with tempfile.TemporaryDirectory(prefix="vsl-mutants-") as folder:
        copy = Path(folder)
        _copy_of_head(copy)
        environment = dict(os.environ, MUTANT_UNDER_TEST="realistic")
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        command += tests + (["-k", keyword] if keyword else [])
        command += ["-m", markers] if markers else []
        for module in modules:
            relative = (REPO / module).resolve().relative_to(REPO)
            counts = results.setdefault(str(module), Counter())
            original = (copy / relative).read_text()
            for mutant in mutants(copy / relative, shapes, relative):
                if only and f"{mutant.module}:{mutant.line}" not in only:
                    continue
                (copy / mutant.module).write_text(mutant.code)
                try:
                    out = subprocess.run(
                        command, cwd=copy, env=environment, capture_output=True,
                        text=True, timeout=900,
                    )  # fmt: skip
                    killed = out.returncode != 0
                except subprocess.TimeoutExpired:
                    killed = True
                finally:
                    (copy / mutant.module).write_text(original)
                counts["killed" if killed else "survived"] += 1
                if not killed:
                    line = mutant.code.splitlines()[mutant.line - 1].strip()
                    survivors.append((mutant, line))
                print(
                    f"{mutant.module}:{mutant.line} {mutant.shape}: "
                    f"{'killed' if killed else 'SURVIVED'}",
                    flush=True,
                )
    print("\n| module | mutants | killed | survived | score |")
    print("|---|---|---|---|---|")
    for module, counts in results.items():
        total = counts["killed"] + counts["survived"]
        score = f"{100 * counts['killed'] / total:.1f} %" if total else "-"
        print(
            f"| {module} | {total} | {counts['killed']} | {counts['survived']} "
            f"| {score} |"
        )
    for mutant, line in survivors:
        print(f"survived: {mutant.module}:{mutant.line} {mutant.shape}: {line}")
    return results, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="+", type=Path)
    parser.add_argument("--tests", action="append", required=True)
    parser.add_argument("--shape", action="append", choices=SHAPES)
    parser.add_argument("-k", dest="keyword", help="pytest's -k")
    parser.add_argument("-m", dest="markers", help="pytest's -m")
    parser.add_argument(
        "--only",
        action="append",
        metavar="PATH:LINE",
        help="only the mutants on these lines (a survivor, again)",
    )
    args = parser.parse_args(argv)
    run(
        args.modules,
        args.tests,
        set(args.shape or SHAPES),
        args.keyword,
        args.markers,
        set(args.only or ()),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
