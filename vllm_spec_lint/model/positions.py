"""Where nodes are, worked out one top-level statement at a time.

libcst's PositionProvider generates the code of the whole module to find
every node's position; the rules need the positions of a few nodes in a few
statements. Here a statement's positions come from generating that statement
alone (through the same provider's code generation), shifted by the row
CPython's parser gives for the statement. In a long statement, it is the
innermost statement holding the node that is generated: down through the
indented blocks of classes, functions and compound statements (``if``,
``elif`` and ``else``, loops, ``with``, ``try`` and its handlers, match
cases), its columns kept by the indentation of the blocks around it. A
finding in one method does not generate the code of the whole class, nor
one in an ``if`` the whole function.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

# A top-level statement longer than this (in rows) is not generated whole
# for a node in its blocks: CPython's parser places the statement of the
# block that holds it, at a tenth of the cost per row of generating the code
# (and a parse of the slice, for the first such node of a file).
NESTED_FROM_ROWS = 20


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
        self._next_rows: dict[cst.CSTNode, int] = {}
        self._tree: ast.Module | None = None
        self._statements: dict[cst.CSTNode, tuple[dict, int]] = {}

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        relative, offset = self._statement_positions(*self._statement_of(node))
        found = relative[node]
        return CodeRange(
            CodePosition(found.start.line + offset, found.start.column),
            CodePosition(found.end.line + offset, found.end.column),
        )

    def _statement_of(self, node: cst.CSTNode):
        """The statement whose code is generated to place ``node``, its row,
        and the indentation of the blocks around it."""
        chain = [node]
        parent = self._parents.get(node)
        while parent is not None and parent is not self._module:
            chain.append(parent)
            parent = self._parents.get(parent)
        chain.reverse()  # top-level statement first
        statement = chain[0]
        row = self._first_row(statement)
        if self._rows_to_next(statement, row) <= NESTED_FROM_ROWS:
            return statement, (), row
        # Down through the indented blocks on the chain (of definitions and
        # compound statements): (libcst, ast) statements.
        outer, indents = self._ast_statement(statement), []
        depth = 0
        while (below := _block_below(chain, depth, outer)) is not None:
            at, body, case_indent = below
            block, inner = chain[at], chain[at + 1]
            outer = body[_ast_index(block.body, inner)]
            if case_indent is not None:
                indents.append(case_indent or self._module.default_indent)
            indents.append(block.indent or self._module.default_indent)
            statement, depth = inner, at + 1
        return statement, tuple(indents), outer.lineno if depth else row

    def _statement_positions(self, statement, indents, row) -> tuple[dict, int]:
        found = self._statements.get(statement)
        if found is None:
            relative = _positions(statement, indents, self._module)
            offset = row - relative[statement].start.line
            found = self._statements[statement] = (relative, offset)
        return found

    def _rows_to_next(self, statement: cst.CSTNode, row: int) -> int:
        """How many rows a top-level statement at ``row`` spans, to the next."""
        later = self._next_rows.get(statement)
        return (later if later is not None else self._text.count("\n") + 1) - row

    def _ast_statement(self, statement: cst.CSTNode) -> ast.stmt:
        if self._tree is None:
            self._tree = ast.parse(self._text)
        return self._tree.body[_ast_index(self._module.body, statement)]

    def _first_row(self, statement: cst.CSTNode) -> int:
        """The row CPython's parser gives the statement (its first line, not
        counting comments, blank lines or decorators before it; libcst agrees)."""
        if self._first_rows is None:
            known = self._statement_rows
            if known is None:
                self._tree = ast.parse(self._text)
                known = [node.lineno for node in self._tree.body]
            rows, index, previous = {}, 0, None
            for top in self._module.body:
                rows[top] = known[index]
                if previous is not None:
                    self._next_rows[previous] = rows[top]
                previous = top
                index += _ast_count(top)
            self._first_rows = rows
        return self._first_rows[statement]


def _block_below(chain: list, depth: int, tree: ast.stmt):
    """Where ``chain`` goes on below its statement at ``depth`` (``tree`` is
    CPython's): the chain index of the indented block it enters, the block's
    statements as CPython's parser gives them, and for a match case the
    indentation of the match's cases (else None). None when the chain stays
    in the statement's own lines (its header, decorators, a one-line body),
    an ``elif``'s header among them (generated alone, it would read ``if``)."""
    statement = chain[depth]
    at = depth + 1
    if at + 1 >= len(chain):
        return None
    below = chain[at]
    case_indent = None
    if below is getattr(statement, "body", None):
        body = tree.body
    elif isinstance(below, cst.If):  # elif: its block, at the same indentation
        return _block_below(chain, at, tree.orelse[0])
    elif isinstance(below, (cst.Else, cst.Finally)):
        body = tree.finalbody if isinstance(below, cst.Finally) else tree.orelse
        at += 1
    elif isinstance(below, (cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
        siblings = getattr(statement, "handlers", None) or statement.cases
        index = next(i for i, s in enumerate(siblings) if s is below)
        body = (getattr(tree, "handlers", None) or tree.cases)[index].body
        if isinstance(below, cst.MatchCase):  # the cases are a block of theirs
            case_indent = statement.indent or ""
        at += 1
    else:
        return None
    # Below an else, a finally, a handler or a case: its block, if one.
    if not isinstance(chain[at], cst.IndentedBlock) or at + 1 >= len(chain):
        return None
    return at, body, case_indent


def _ast_count(statement: cst.CSTNode) -> int:
    """CPython's statements in one of libcst's: ``a; b`` is one libcst
    statement line and two ast statements."""
    return len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1


def _ast_index(body, statement: cst.CSTNode) -> int:
    """The index in CPython's statement list of ``statement`` of ``body``."""
    index = 0
    for other in body:
        if other is statement:
            return index
        index += _ast_count(other)
    raise LookupError("not a statement of this body")


def _positions(
    statement: cst.CSTNode, indents: tuple[str, ...], module: cst.Module
) -> dict[cst.CSTNode, CodeRange]:
    """PositionProvider's positions of every node of ``statement``, its rows
    counted from its own code: the provider's code generation alone (as its
    ``_gen_impl`` runs it over a module), without the visit of the whole tree
    MetadataWrapper makes first, which costs as much again."""
    provider = PositionProvider()
    state = PositionProvidingCodegenState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=provider,
    )
    state.indent_tokens.extend(indents)
    statement._codegen(state)
    return provider._computed
