"""Where nodes are, worked out one top-level statement at a time.

libcst's PositionProvider generates the code of the whole module to find
every node's position; the rules need the positions of a few nodes in a few
statements. Here a statement's positions come from generating that statement
alone (as a module of its own, through the same public provider), shifted by
the row CPython's parser gives for the statement.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, PositionProvider


class StatementPositions:
    """``positions[node]``: the node's CodeRange in ``text`` (1-based rows,
    0-based columns, as libcst's PositionProvider gives them)."""

    def __init__(
        self,
        module: cst.Module,
        parents: dict[cst.CSTNode, cst.CSTNode],
        text: str,
        statement_rows: list[int] | None = None,
    ):
        self._module = module
        self._parents = parents
        self._text = text
        # Rows of the top-level statements as CPython's parser gives them,
        # when the caller knows them already.
        self._statement_rows = statement_rows
        self._first_rows: dict[cst.CSTNode, int] | None = None
        self._statements: dict[cst.CSTNode, tuple[dict, int]] = {}

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        relative, offset = self._statement_positions(self._top_level(node))
        found = relative[node]
        return CodeRange(
            CodePosition(found.start.line + offset, found.start.column),
            CodePosition(found.end.line + offset, found.end.column),
        )

    def _top_level(self, node: cst.CSTNode) -> cst.CSTNode:
        parent = self._parents.get(node)
        while parent is not None and parent is not self._module:
            node, parent = parent, self._parents.get(parent)
        return node

    def _statement_positions(self, statement: cst.CSTNode) -> tuple[dict, int]:
        found = self._statements.get(statement)
        if found is None:
            alone = self._module.with_changes(body=[statement], header=(), footer=())
            relative = _positions(alone)
            offset = self._first_row(statement) - relative[statement].start.line
            found = self._statements[statement] = (relative, offset)
        return found

    def _first_row(self, statement: cst.CSTNode) -> int:
        """The row CPython's parser gives the statement (its first line, not
        counting comments, blank lines or decorators before it; libcst agrees)."""
        if self._first_rows is None:
            known = self._statement_rows
            if known is None:
                known = [node.lineno for node in ast.parse(self._text).body]
            rows, index = {}, 0
            for top in self._module.body:
                rows[top] = known[index]
                # `a; b` is one libcst statement line and two ast statements.
                index += (
                    len(top.body) if isinstance(top, cst.SimpleStatementLine) else 1
                )
            self._first_rows = rows
        return self._first_rows[statement]


def _positions(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    """PositionProvider's positions of every node of ``module``: its code
    generation alone (its own ``_gen_impl``), without the visit of the whole
    tree MetadataWrapper makes first, which costs as much again."""
    provider = PositionProvider()
    provider._gen_impl(module)
    return provider._computed
