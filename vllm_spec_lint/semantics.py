"""What the code means, as the rules need it: which class a name is, which
expressions test a value's class, and what earlier tests already decided.

One ``FileContext`` is built per parsed file and shared by every rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from vllm_spec_lint.config import Config
from vllm_spec_lint.families import ClassHierarchy, Family, absolute_name
from vllm_spec_lint.positions import StatementPositions
from vllm_spec_lint.scopes import Scopes, parent_map

_EMPTY_MODULE = cst.Module([])
_WHITESPACE = re.compile(r"\s+")


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY_MODULE.code_for_node(node)


def unparenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.with_changes(lpar=(), rpar=()) if expr.lpar else expr


def target_key(expr: cst.BaseExpression) -> str | None:
    """A key equal for structurally equal targets (``s``, ``self.spec``,
    ``specs[i]``); None for anything whose value could differ between two
    evaluations (calls and the like)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = target_key(expr.value)
        return None if base is None else f"{base}.{expr.attr.value}"
    if isinstance(expr, cst.Subscript):
        base = target_key(expr.value)
        if base is None:
            return None
        index = ",".join(code_of(element.slice) for element in expr.slice)
        return f"{base}[{_WHITESPACE.sub('', index)}]"
    return None


@dataclass(frozen=True)
class ClassRef:
    """One class named in a check, as written, and the class it resolves to."""

    node: cst.BaseExpression
    qualname: str | None
    # True when reached through a named constant, so the name is not at the site.
    via_constant: bool = False


@dataclass(frozen=True)
class TypeTest:
    """An expression that tests a value's class.

    ``isinstance(target, classinfo)``, ``issubclass(...)``, or an exact
    comparison such as ``type(target) is classinfo`` / ``type(target) in (...)``.
    """

    node: cst.BaseExpression
    target: cst.BaseExpression
    classinfo: cst.BaseExpression
    refs: tuple[ClassRef, ...]
    exact: bool
    # False for ``is not`` / ``!=`` / ``not in``: true when the class differs.
    positive: bool = True

    @property
    def named(self) -> frozenset[str]:
        return frozenset(r.qualname for r in self.refs if r.qualname)

    def anchor_refs(self, family: Family) -> list[ClassRef]:
        return [r for r in self.refs if r.qualname == family.anchor]


_COMPARISONS = {
    cst.Is: (True, False),  # (positive, membership)
    cst.Equal: (True, False),
    cst.IsNot: (False, False),
    cst.NotEqual: (False, False),
    cst.In: (True, True),
    cst.NotIn: (False, True),
}


class FileContext:
    """Per-file facts shared by the rules; built once after parsing."""

    def __init__(
        self,
        module: cst.Module,
        text: str,
        *,
        config: Config,
        hierarchy: ClassHierarchy,
        module_name: str | None = None,
        rows: list[int] | None = None,
    ):
        # Original row of each row of the parsed (sliced) source.
        self._rows = rows
        self.module = module
        self.config = config
        self.hierarchy = hierarchy
        self.module_name = module_name
        self._parents = parent_map(self.module)
        self.scopes = Scopes(self.module, self._parents)
        self.positions = StatementPositions(module, self._parents, text)
        self._qualified_names: dict[cst.CSTNode, set[str]] = {}

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

    @cached_property
    def narrowing(self):
        from vllm_spec_lint.narrowing import Narrowing

        return Narrowing(self)

    @property
    def families(self) -> tuple[Family, ...]:
        return self.config.families

    @cached_property
    def known_classes(self) -> frozenset[str]:
        members = {f"{f.module}.{m}" for f in self.families for m in f.members}
        return self.hierarchy.classes() | members

    @cached_property
    def _family_modules(self) -> frozenset[str]:
        return frozenset(c.rpartition(".")[0] for c in self.known_classes)

    # -- names -------------------------------------------------------------

    def _absolute(self, name: str) -> str:
        return absolute_name(name, self.module_name)

    def _known(self, name: str) -> str | None:
        if name in self.known_classes:
            return name
        if name.startswith("."):  # relative, package unknown: match by suffix
            suffix = "." + name.lstrip(".")
            matches = [c for c in self.known_classes if c.endswith(suffix)]
            return matches[0] if len(matches) == 1 else None
        return None

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        names = self._qualified_names.get(node)
        if names is None:
            found = self.scopes.qualified_names(node)
            names = self._qualified_names[node] = {self._absolute(q) for q in found}
        return names

    def is_builtin(self, node: cst.CSTNode, name: str) -> bool:
        return f"builtins.{name}" in self.qualified_names(node)

    @cached_property
    def _star_modules(self) -> tuple[str, ...]:
        modules = []
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and isinstance(
                        small.names, cst.ImportStar
                    ):
                        dots = "." * len(small.relative)
                        module = code_of(small.module) if small.module else ""
                        modules.append(self._absolute(dots + module))
        return tuple(modules)

    def class_of(self, node: cst.CSTNode) -> str | None:
        """The known spec class ``node`` names, or None."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        bare = node.value if isinstance(node, cst.Name) else None
        return self._class_for(self.qualified_names(node), bare)

    def _class_for(self, names: set[str], bare: str | None) -> str | None:
        for name in names:
            known = self._known(name)
            if known:
                return known
            # A class defined in the family's own module, named locally there.
            if self.module_name and "." not in name:
                known = self._known(f"{self.module_name}.{name}")
                if known:
                    return known
        if not names and bare is not None:
            # Unbound in every scope: maybe from ``from <family module> import *``.
            for module in self._star_modules:
                known = self._known(f"{module}.{bare}")
                if known:
                    return known
        return None

    # -- bindings, for fixes -------------------------------------------------

    def _names_in_scope(self, at: cst.CSTNode, name: str) -> set[str]:
        found = self.scopes.qualified_names_of(self.scopes.scope(at), name)
        return {self._absolute(q) for q in found}

    def bound_name(self, at: cst.CSTNode, cls: str) -> str | None:
        """A name that already refers to ``cls`` where ``at`` is, if any."""
        candidates = [cls.rpartition(".")[2]]
        candidates += [
            b.name for b in self.scopes.visible_imports(self.scopes.scope(at))
        ]
        for name in dict.fromkeys(candidates):
            if self._class_for(self._names_in_scope(at, name), name) == cls:
                return name
        return None

    def name_is_taken(self, at: cst.CSTNode, name: str) -> bool:
        return bool(self.scopes.visible(self.scopes.scope(at), name))

    def import_of(
        self, name: cst.Name
    ) -> tuple[cst.ImportFrom, cst.ImportAlias] | None:
        """The ``from ... import`` statement and alias that bind ``name``."""
        for binding in self.scopes.visible(self.scopes.scope(name), name.value):
            if isinstance(binding.statement, cst.ImportFrom):
                return binding.statement, binding.alias
        return None

    # -- constants ---------------------------------------------------------

    @cached_property
    def constants(self) -> dict[str, cst.BaseExpression]:
        """Names assigned exactly once at module level, with their value."""
        values: dict[str, cst.BaseExpression] = {}
        seen: set[str] = set()
        for name, value in self._assignments(self.module.body):
            if name in seen:
                values.pop(name, None)
            else:
                values[name] = value
            seen.add(name)
        return values

    @staticmethod
    def _assignments(body) -> Iterator[tuple[str, cst.BaseExpression]]:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Name):
                            yield target.value, small.value
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:
                        if isinstance(small.target, cst.Name):
                            yield small.target.value, small.value

    # -- class tests -------------------------------------------------------

    def classinfo_refs(
        self, expr: cst.BaseExpression, *, via_constant: bool = False, depth: int = 0
    ) -> tuple[ClassRef, ...]:
        """The classes a classinfo expression names: tuples (nested, starred),
        ``A | B`` unions, and module constants holding such, flattened."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return tuple(
                ref
                for element in expr.elements
                for ref in self.classinfo_refs(
                    element.value, via_constant=via_constant, depth=depth
                )
            )
        if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, cst.BitOr
        ):
            return self.classinfo_refs(
                expr.left, via_constant=via_constant, depth=depth
            ) + self.classinfo_refs(expr.right, via_constant=via_constant, depth=depth)
        if (
            isinstance(expr, cst.Call)
            and self.is_builtin(expr.func, "frozenset")
            and len(expr.args) == 1
        ):
            return self.classinfo_refs(
                expr.args[0].value, via_constant=via_constant, depth=depth
            )
        qualname = self.class_of(expr)
        if qualname is None and isinstance(expr, cst.Name) and depth < 4:
            value = self.constants.get(expr.value)
            if value is not None and self.qualified_names(expr) == {expr.value}:
                return self.classinfo_refs(value, via_constant=True, depth=depth + 1)
        return (ClassRef(expr, qualname, via_constant),)

    def type_test(self, expr: cst.CSTNode) -> TypeTest | None:
        """``expr`` read as a test of a value's class, or None."""
        if isinstance(expr, cst.Call):
            if (
                len(expr.args) == 2
                and all(a.keyword is None and not a.star for a in expr.args)
                and (
                    self.is_builtin(expr.func, "isinstance")
                    or self.is_builtin(expr.func, "issubclass")
                )
            ):
                target, classinfo = (a.value for a in expr.args)
                return TypeTest(
                    expr, target, classinfo, self.classinfo_refs(classinfo), exact=False
                )
            return None
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            comparison = expr.comparisons[0]
            kind = _COMPARISONS.get(type(comparison.operator))
            if kind is None:
                return None
            positive, membership = kind
            left, right = expr.left, comparison.comparator
            target = self._type_of_target(left)
            classinfo = right
            if target is None and not membership:
                target, classinfo = self._type_of_target(right), left
            if target is None:
                return None
            if membership and not isinstance(classinfo, (cst.Tuple, cst.List, cst.Set)):
                return None
            refs = self.classinfo_refs(classinfo)
            if not membership and len(refs) != 1:
                return None
            return TypeTest(
                expr, target, classinfo, refs, exact=True, positive=positive
            )
        return None

    def _type_of_target(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``type(x)`` or ``x.__class__``."""
        if (
            isinstance(expr, cst.Call)
            and len(expr.args) == 1
            and expr.args[0].keyword is None
            and not expr.args[0].star
            and self.is_builtin(expr.func, "type")
        ):
            return expr.args[0].value
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            return expr.value
        return None

    # -- what surrounds a test ---------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def _polarity_root(self, node: cst.CSTNode) -> tuple[cst.CSTNode, bool]:
        """Climb ``not`` wrappers: the outermost one and whether it negates."""
        positive = True
        parent = self.parent(node)
        while isinstance(parent, cst.UnaryOperation) and isinstance(
            parent.operator, cst.Not
        ):
            node, positive = parent, not positive
            parent = self.parent(node)
        return node, positive

    def chain_alternatives(self, test: TypeTest) -> Iterator[TypeTest]:
        """Tests of the same target that widen ``test`` in its boolean chain:
        ``t or isinstance(s, X)``, or ``not t and not isinstance(s, X)``."""
        key = target_key(test.target)
        if key is None:
            return
        node, positive = self._polarity_root(test.node)
        positive = positive == test.positive
        widening = cst.Or if positive else cst.And
        parent = self.parent(node)
        while isinstance(parent, cst.BooleanOperation) and isinstance(
            parent.operator, widening
        ):
            for operand in self.boolean_operands(parent, widening):
                yield from self._tests_with_polarity(operand, key, positive)
            node = parent
            parent = self.parent(node)

    def boolean_operands(
        self, expr: cst.BaseExpression, operator: type
    ) -> Iterator[cst.BaseExpression]:
        """Operands of a chain of one boolean operator (``a or b or c``)."""
        if isinstance(expr, cst.BooleanOperation) and isinstance(
            expr.operator, operator
        ):
            yield from self.boolean_operands(expr.left, operator)
            yield from self.boolean_operands(expr.right, operator)
        else:
            yield expr

    def _tests_with_polarity(
        self, expr: cst.BaseExpression, key: str, positive: bool
    ) -> Iterator[TypeTest]:
        while isinstance(expr, cst.UnaryOperation) and isinstance(
            expr.operator, cst.Not
        ):
            expr, positive = expr.expression, not positive
        test = self.type_test(expr)
        if test and target_key(test.target) == key and test.positive == positive:
            yield test

    def earlier_branch_tests(self, test: TypeTest) -> Iterator[TypeTest]:
        """For a test in an ``elif`` condition: positive tests of the same
        target that earlier branches of the chain took, so their values never
        reach this one."""
        key = target_key(test.target)
        if key is None:
            return
        node: cst.CSTNode = test.node
        parent = self.parent(node)
        while parent is not None and not isinstance(parent, (cst.If, cst.BaseSuite)):
            node, parent = parent, self.parent(parent)
        if not isinstance(parent, cst.If) or node is not parent.test:
            return
        branch = parent
        previous = self.parent(branch)
        while isinstance(previous, cst.If) and previous.orelse is branch:
            for operand in self.boolean_operands(previous.test, cst.Or):
                yield from self._tests_with_polarity(operand, key, True)
            branch, previous = previous, self.parent(previous)
