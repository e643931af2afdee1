"""Walking CPython's ``ast`` by the fields that can hold a node, known per
node type: faster than ``ast.iter_fields`` and ``ast.iter_child_nodes``,
which try every field of every node (class summaries walk every expression
of the files backend pairing reads; reading class bases walks the
statements of each module the hierarchy is read from). And what CPython's
parser raises for a source it cannot take."""

from __future__ import annotations

import ast
import functools
from collections import deque
from collections.abc import Iterator

# What CPython's parser raises for a source it cannot take: a syntax error,
# a NUL byte (ValueError), or nesting too deep for it, which it reports as
# either of the last two, as the version has it. A walk of a tree too deep
# for the interpreter fails with those two as well (CPython 3.10's parser
# takes deeper nesting than later ones: a tree it gives may be too deep to
# walk).
TOO_DEEP = (RecursionError, MemoryError)
CANNOT_PARSE = (SyntaxError, ValueError, *TOO_DEEP)

# Fields that never hold a node: identifiers, a constant's kind, a format
# conversion, type comments, and the expression context (``Load``), which
# no walk here looks at.
_NOT_NODES = frozenset(
    {"ctx", "id", "attr", "arg", "kind", "type_comment", "conversion"}
)


@functools.cache
def node_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that can hold a node, in its order."""
    return tuple(f for f in kind._fields if f not in _NOT_NODES)


def children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the expression context."""
    found = []
    for name in node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, list):
            found += [v for v in value if isinstance(v, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The statements of ``body`` and of every block nested in it, in the
    order ``ast.walk`` meets them, without the expressions (which hold no
    statement): where an import can be, for a third of a whole walk."""
    nodes = deque(body)
    while nodes:
        node = nodes.popleft()
        yield node
        for name in node._fields:  # a handler or a case holds a block too
            if name in _BLOCKS:
                nodes.extend(getattr(node, name))


_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
