"""Whether a statement is nested too deeply for libcst.

libcst's parser recurses natively once per level of nesting and, a few
thousand levels down, crashes the process instead of raising. CPython's
parser accepts that much on 3.10 and 3.13 (`1 + 1 + ...`, 20,000 terms),
and `and`/`or` chains of any length on every version (it keeps them flat,
libcst nests them). Kept statements nested deeper than MAX_NESTING never
reach libcst (slicing.py); the rules' own walks give up (RecursionError)
sooner anyway.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from vllm_spec_lint.model.lines import ends_and_starts, split_lines

MAX_NESTING = 1000

# Levels that take no character of their own: a statement's node over its
# expression (`-x`), a name's context, an operator, a pattern's value.
_LEVELS_WITHOUT_TEXT = 8


def statement_text(node: ast.stmt, text: str, line_starts: list[int]) -> str:
    """A top-level statement's lines, decorators and all."""
    last = node.end_lineno or node.lineno
    stop = line_starts[last] if last < len(line_starts) else len(text)
    return text[line_starts[first_row(node) - 1] : stop]


# A statement's nesting follows from its text alone, and the language server
# slices the same long statements again at every keystroke elsewhere.
_NESTING_BY_TEXT: dict[str, int] = {}
_NESTINGS_KEPT = 64


def deeper_than_libcst(node: ast.stmt, statement: str) -> bool:
    """Whether libcst would nest the statement deeper than MAX_NESTING. It
    takes a level per character at most, and a few more: a statement with
    fewer needs no measuring."""
    if len(statement) + _LEVELS_WITHOUT_TEXT <= MAX_NESTING:
        return False
    depth = _NESTING_BY_TEXT.get(statement)
    if depth is None:
        if len(_NESTING_BY_TEXT) >= _NESTINGS_KEPT:
            _NESTING_BY_TEXT.clear()
        depth = _nesting(node, _fitting_statements(node, statement))
        _NESTING_BY_TEXT[statement] = depth
    return depth > MAX_NESTING


def _nesting(node: ast.AST, fits: Callable[[ast.stmt, int], bool] | None = None) -> int:
    """How deep libcst nests ``node``'s tree: a level per node, and a level
    per further operand of an `and`/`or` chain (one libcst node per
    operator). Stops counting past MAX_NESTING. A statement ``fits`` (at
    its depth) is not walked: the count is then exact only past
    MAX_NESTING."""
    deepest = 0
    stack = [(node, 1)]
    while stack and deepest <= MAX_NESTING:
        node, depth = stack.pop()
        if fits is not None and isinstance(node, ast.stmt) and fits(node, depth):
            continue
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 2
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _fitting_statements(
    top: ast.stmt, statement: str
) -> Callable[[ast.stmt, int], bool]:
    """Whether a statement inside ``top`` (whose text is ``statement``)
    takes fewer characters than the levels left below its depth: then
    nothing under it is deeper than MAX_NESTING (most of a long class is
    methods that fit)."""
    first = first_row(top)
    starts = ends_and_starts(statement, split_lines(statement))[1]

    def fits(node: ast.stmt, depth: int) -> bool:
        # From the start of its first row (decorators included) to its end
        # column, which counts UTF-8 bytes: at least one per character.
        start, end = first_row(node) - first, node.end_lineno - first
        size = starts[end] + node.end_col_offset - starts[start]
        return depth + size + _LEVELS_WITHOUT_TEXT <= MAX_NESTING

    return fits


def first_row(node: ast.AST) -> int:
    """The statement's first row, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return (
        min([node.lineno, *(d.lineno for d in decorators)])
        if decorators
        else node.lineno
    )
