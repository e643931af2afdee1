"""What libcst needs to see of a file: every line the rules can act on.

libcst's scope and position metadata cost about a millisecond per line, and
a 4,000-line vLLM file names the anchor class in a handful of functions.
Every finding and every fact the rules use lies in the function that holds
the check (or at module or class level), so a function with no class test
naming an anchor (or an alias of one), and a class that never names one, is
left out. Its name stays bound through a one-line stub (``def name():
pass``) when the name could matter to the rules (a builtin they resolve, or
a spec class name); otherwise the definition goes entirely. Kept lines are
kept whole, so columns do not change, and each kept line's original row is
recorded: findings and fix edits are reported against the real file.

CPython's own parser (``ast``) finds the definitions; it also decides
whether the file is valid Python at all.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from vllm_spec_lint.analysis import NEWLINE, split_lines

_TEST_CALLS = {"isinstance", "issubclass"}
# Names the rules resolve as builtins: a definition that rebinds one matters.
_BUILTINS_USED = {"isinstance", "issubclass", "type", "all", "any", "frozenset"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Slice:
    text: str
    rows: list[int]  # rows[i]: the original row of the slice's row i + 1


def _aliases(tree: ast.Module, names: frozenset[str]) -> set[str]:
    """Names the anchors are imported as (``import ... Anchor as A``)."""
    found = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in names and alias.asname:
                    found.add(alias.asname)
    return found


def _names_word(node: ast.AST, words: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in words) or (
        isinstance(node, ast.Attribute) and node.attr in words
    )


def _is_class_test(node: ast.AST) -> bool:
    """Nodes a finding can sit in: class tests and class patterns."""
    if isinstance(node, (ast.Compare, ast.MatchClass)):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in _TEST_CALLS
    return False


def _rows_of(tree: ast.Module, words: set[str]) -> tuple[list[int], list[int]]:
    """Rows (sorted) where a word is named, and where a class test names one:
    one walk over the tree."""
    mentions, tests = [], []
    for node in ast.walk(tree):
        if _names_word(node, words):
            mentions.append(node.lineno)
        elif _is_class_test(node) and any(
            _names_word(n, words) for n in ast.walk(node)
        ):
            tests.append(node.lineno)
    return sorted(mentions), sorted(tests)


def _any_within(rows: list[int], first: int, last: int) -> bool:
    index = bisect.bisect_left(rows, first)
    return index < len(rows) and rows[index] <= last


def relevant_source(
    text: str,
    tree: ast.Module,
    anchors: frozenset[str],
    class_names: Iterable[str] = (),
) -> Slice:
    """``text`` without the definitions that cannot matter (see above).

    ``class_names`` are spec class names; a definition of one keeps a stub.
    """
    lines = split_lines(text)
    newlines = [m.group() for m in NEWLINE.finditer(text)] + [""]
    words = _aliases(tree, anchors)
    sensitive = _BUILTINS_USED | set(class_names) | words
    mentions, tests = _rows_of(tree, words)
    # first row -> (last row, replacement line, or None to leave nothing)
    cuts: dict[int, tuple[int, str | None]] = {}

    def cut(body: list[ast.stmt]) -> None:
        removed = 0
        for node in body:
            if isinstance(node, _DEFINITIONS):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                is_class = isinstance(node, ast.ClassDef)
                # A class stays while it names an anchor anywhere (its own
                # constants are VSL004's); its methods are judged one by one.
                keep = _any_within(mentions if is_class else tests, first, last)
                if keep:
                    if is_class:
                        cut(node.body)
                    continue
                # Blank and comment lines right after a definition lie between
                # statements (never inside a string): they go with it.
                while last < len(lines) and lines[last].strip()[:1] in ("", "#"):
                    last += 1
                stub = _stub(node, lines) if node.name in sensitive else None
                cuts[first] = (last, stub)
                removed += cuts[first][1] is None
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                # Definitions under `if TYPE_CHECKING:`, `try:` and the like.
                for block in ("body", "orelse", "finalbody"):
                    cut(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    cut(handler.body)
        if body and removed == len(body):
            # A block may not end up empty: its first definition becomes `pass`.
            first = min([body[0].lineno, *(d.lineno for d in body[0].decorator_list)])
            last, _ = cuts[first]
            cuts[first] = (last, _indent_of(lines[body[0].lineno - 1]) + "pass")

    cut(tree.body)
    if not cuts:
        return Slice(text, list(range(1, len(lines) + 1)))
    out: list[str] = []
    rows: list[int] = []
    row = 1
    while row <= len(lines):
        if row in cuts:
            # A definition always starts its own line, so whole lines go; a
            # replacement takes the line ending of the definition's last line.
            last, replacement = cuts[row]
            if replacement is not None:
                out += [replacement, newlines[last - 1]]
                rows.append(row)
            row = last + 1
        else:
            out += [lines[row - 1], newlines[row - 1]]
            rows.append(row)
            row += 1
    return Slice("".join(out), rows)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _stub(node: ast.AST, lines: list[str]) -> str:
    indent = _indent_of(lines[node.lineno - 1])
    if isinstance(node, ast.ClassDef):
        return f"{indent}class {node.name}: pass"
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{indent}{keyword} {node.name}(): pass"
