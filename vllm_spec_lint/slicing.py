"""What libcst needs to see of a file: every line the rules can act on.

libcst's scope and position metadata cost about a millisecond per line, and
a 4,000-line vLLM file names the anchor class in a handful of functions.
Every finding and every fact the rules use lies in the function that holds
the check (or at module or class level), so a function that never names an
anchor (or an alias of one) is replaced by a one-line stub ``def name():
pass`` that keeps its name bound. Kept lines are kept whole, so columns do
not change, and each kept line's original row is recorded: findings and fix
edits are reported against the real file.

CPython's own parser (``ast``) finds the functions; it also decides whether
the file is valid Python at all.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

_NEWLINE = re.compile(r"\r\n|\r|\n")


def _aliases(tree: ast.Module, names: frozenset[str]) -> set[str]:
    """Names the anchors are imported as (``import ... Anchor as A``)."""
    found = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in names and alias.asname:
                    found.add(alias.asname)
    return found


def _names_one(node: ast.AST, words: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id in words)
        or (isinstance(n, ast.Attribute) and n.attr in words)
        for n in ast.walk(node)
    )


_TEST_CALLS = {"isinstance", "issubclass"}


def _is_class_test(node: ast.AST) -> bool:
    """Nodes a finding can sit in: class tests and class patterns."""
    if isinstance(node, (ast.Compare, ast.MatchClass)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in _TEST_CALLS
    return False


def _may_report(definition: ast.AST, words: set[str]) -> bool:
    """Whether a function can hold a finding: a class test naming an anchor
    (an anchor only constructed or annotated never is one)."""
    return any(
        _is_class_test(node) and _names_one(node, words)
        for node in ast.walk(definition)
    )


@dataclass(frozen=True)
class Slice:
    text: str
    rows: list[int]  # rows[i]: the original row of the slice's row i + 1


def relevant_source(text: str, tree: ast.Module, anchors: frozenset[str]) -> Slice:
    """``text`` with the functions and classes that cannot matter stubbed out."""
    lines = _NEWLINE.split(text)
    newlines = [m.group() for m in _NEWLINE.finditer(text)] + [""]
    words = _aliases(tree, anchors)
    stubs: dict[int, tuple[int, str]] = {}  # first row: (last row, stub line)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                # A class is kept while it names an anchor anywhere (its own
                # constants are VSL004's); then its methods are judged one by one.
                is_class = isinstance(node, ast.ClassDef)
                if not (_names_one if is_class else _may_report)(node, words):
                    line = lines[node.lineno - 1]
                    indent = line[: len(line) - len(line.lstrip())]
                    if is_class:
                        stub = f"{indent}class {node.name}: pass"
                    elif isinstance(node, ast.AsyncFunctionDef):
                        stub = f"{indent}async def {node.name}(): pass"
                    else:
                        stub = f"{indent}def {node.name}(): pass"
                    stubs[first] = (last, stub)
                elif is_class:
                    visit(node.body)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                # Definitions under `if TYPE_CHECKING:`, `try:` and the like.
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    if not stubs:
        return Slice(text, list(range(1, len(lines) + 1)))
    out: list[str] = []
    rows: list[int] = []
    row = 1
    while row <= len(lines):
        # A definition always starts its own line, so a stub replaces whole
        # lines; the stub's line ending is that of the definition's last line.
        if row in stubs:
            last, stub = stubs[row]
            out += [stub, newlines[last - 1]]
            rows.append(row)
            row = last + 1
        else:
            out += [lines[row - 1], newlines[row - 1]]
            rows.append(row)
            row += 1
    return Slice("".join(out), rows)
