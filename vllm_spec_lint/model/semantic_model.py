"""The semantic model of one parsed file, which every rule queries.

It is built once per file and composed of parts that each answer one kind
of question: ``scopes`` (which binding a name is), ``names`` (which spec
class an expression names), ``tests`` (which expressions test a value's
class), ``facts`` (what is known about a value at a point), ``dispatch``
(tables, singledispatch functions and registries keyed by classes) and
``narrowing`` (why a check the rules would report is fine as written).
Rules only ask; nothing here knows about rules, findings or fixes.
"""

from __future__ import annotations

import re
from functools import cached_property

import libcst as cst

from vllm_spec_lint.model.class_tests import ClassTests
from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family
from vllm_spec_lint.model.names import Names
from vllm_spec_lint.model.positions import StatementPositions
from vllm_spec_lint.model.scopes import Scopes
from vllm_spec_lint.model.syntax import parent_map

_FIRST_NAME = re.compile(r"\w+")


class SemanticModel:
    def __init__(
        self,
        module: cst.Module,
        text: str,
        *,
        families: tuple[Family, ...],
        hierarchy: ClassHierarchy,
        module_name: str | None = None,
        rows: list[int] | None = None,
        statement_rows: list[int] | None = None,
    ):
        self.module = module
        self.text = text
        self.families = families
        self.hierarchy = hierarchy
        self.module_name = module_name
        # Original row of each row of the parsed (sliced) source.
        self._rows = rows
        self._parents = parent_map(module)
        self.scopes = Scopes(module, self._parents)
        self.positions = StatementPositions(module, self._parents, text, statement_rows)
        self.names = Names(
            module,
            self.scopes,
            families=families,
            hierarchy=hierarchy,
            module_name=module_name,
        )
        self.tests = ClassTests(self.names)

    @cached_property
    def facts(self):
        from vllm_spec_lint.model.facts import Facts

        return Facts(self)

    @cached_property
    def dispatch(self):
        from vllm_spec_lint.model.dispatch import Dispatch

        return Dispatch(self)

    @cached_property
    def narrowing(self):
        from vllm_spec_lint.model.narrowing import Narrowing

        return Narrowing(self)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def same_variable(self, node: cst.CSTNode, other: cst.CSTNode, key: str) -> bool:
        """Whether the value ``key`` names (``spec``, ``self.spec``,
        ``specs[0]``) at ``node`` and at ``other`` starts from one variable:
        its first name bound by the same scope (Python's scopes: each
        function, lambda, class body and comprehension has its own)."""
        name = _FIRST_NAME.match(key).group(0)
        return self.scopes.binder(node, name) is self.scopes.binder(other, name)

    def rebound_elsewhere(self, node: cst.CSTNode, subject) -> bool:
        """Whether the variable a fact subject starts from (``spec`` of
        ``spec``, ``spec.kind`` or ``specs[0]``) may be rebound at ``node``
        by code in another scope: a global read in a function, a variable
        an inner function declares ``nonlocal``."""
        key = subject.value or subject.collection
        if key is None:
            return False
        first = _FIRST_NAME.match(key)
        return first is not None and self.scopes.rebound_elsewhere(node, first.group(0))

    # -- positions in the real file ------------------------------------------

    def span(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        """1-based (row, column) start and end of ``node`` in the real file."""
        position = self.positions[node]
        return (
            (self.row(position.start.line), position.start.column + 1),
            (self.row(position.end.line), position.end.column + 1),
        )

    def row(self, parsed_row: int) -> int:
        return self._rows[parsed_row - 1] if self._rows else parsed_row

    def line(self, node: cst.CSTNode) -> int:
        return self.row(self.positions[node].start.line)
