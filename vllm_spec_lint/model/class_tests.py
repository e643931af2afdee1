"""Class tests: the expressions that test a value's class, and the classes
each one names."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from vllm_spec_lint.model.hierarchy import Family
from vllm_spec_lint.model.names import Names


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


class ClassTests:
    """Reads expressions as class tests, for one parsed module."""

    def __init__(self, names: Names):
        self.names = names

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
            and self.names.is_builtin(expr.func, "frozenset")
            and len(expr.args) == 1
        ):
            return self.classinfo_refs(
                expr.args[0].value, via_constant=via_constant, depth=depth
            )
        qualname = self.names.class_of(expr)
        if qualname is None and isinstance(expr, cst.Name) and depth < 4:
            value = self.names.constants.get(expr.value)
            if value is not None and self.names.qualified_names(expr) == {expr.value}:
                return self.classinfo_refs(value, via_constant=True, depth=depth + 1)
        return (ClassRef(expr, qualname, via_constant),)

    def type_test(self, expr: cst.CSTNode) -> TypeTest | None:
        """``expr`` read as a test of a value's class, or None."""
        if isinstance(expr, cst.Call):
            if (
                len(expr.args) == 2
                and all(a.keyword is None and not a.star for a in expr.args)
                and (
                    self.names.is_builtin(expr.func, "isinstance")
                    or self.names.is_builtin(expr.func, "issubclass")
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
            and self.names.is_builtin(expr.func, "type")
        ):
            return expr.args[0].value
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            return expr.value
        return None
