"""Class tests: the expressions that test a value's class, and the classes
each one names."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from vllm_spec_lint.model.hierarchy import Family
from vllm_spec_lint.model.names import Names
from vllm_spec_lint.model.syntax import OWN_SCOPES, walk


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
    # How the test is written: "isinstance" (also issubclass), "type"
    # (``type(x) is C``), "name" (``type(x).__name__ == "C"``), "mro" (a
    # scan of ``type(x).__mro__`` by class or by name) or "property" (a read
    # of a declared layout property, ``x.uses_mla_layout``: an isinstance
    # test of the family's members). Each kind has its rule; facts and
    # narrowing read them all alike.
    kind: str = "isinstance"

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
        self._tests: dict[cst.CSTNode, TypeTest | None] = {}

    def classinfo_refs(
        self, expr: cst.BaseExpression, *, via_constant: bool = False, depth: int = 0
    ) -> tuple[ClassRef, ...]:
        """The classes a classinfo expression names: tuples (nested, starred),
        ``A | B`` unions, ``KINDS + (A,)`` concatenations, and module
        constants holding such, flattened."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return tuple(
                ref
                for element in expr.elements
                for ref in self.classinfo_refs(
                    element.value, via_constant=via_constant, depth=depth
                )
            )
        if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.BitOr, cst.Add)
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
        # Every rule, the facts and narrowing ask about the same nodes.
        if expr in self._tests:
            return self._tests[expr]
        test = self._tests[expr] = self._type_test(expr)
        return test

    @cached_property
    def _layout_properties(self) -> dict[str, Family]:
        hierarchy = self.names.hierarchy
        return {
            f.property_name: f
            for f in self.names.families
            if hierarchy.declares_layout(f)
        }

    def _type_test(self, expr: cst.CSTNode) -> TypeTest | None:
        if isinstance(expr, cst.Attribute):
            family = self._layout_properties.get(expr.attr.value)
            if family is None:
                return None
            # The members are not named at the site: refs as via a constant.
            refs = tuple(ClassRef(expr, m, True) for m in family.qualified_members)
            return TypeTest(expr, expr.value, expr, refs, False, kind="property")
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
            return self._mro_scan(expr)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            comparison = expr.comparisons[0]
            kind = _COMPARISONS.get(type(comparison.operator))
            if kind is None:
                return None
            positive, membership = kind
            left, right = expr.left, comparison.comparator
            by_name = self._by_name(expr, left, right, positive, membership)
            if by_name is not None:
                return by_name
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
            return TypeTest(expr, target, classinfo, refs, True, positive, kind="type")
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

    # -- tests by name and through the MRO ------------------------------------

    def _by_name(self, expr, left, right, positive, membership) -> TypeTest | None:
        """``type(x).__name__ == "C"`` (either side; ``!=``, ``in``, ``not in``
        a display of strings), ``"C" in {c.__name__ for c in type(x).__mro__}``
        and ``C in type(x).__mro__``."""
        if membership:
            target = self._mro_of(right)
            if target is not None:  # C in type(x).__mro__
                refs = self.classinfo_refs(left)
                return TypeTest(expr, target, left, refs, False, positive, kind="mro")
            scanned = self._mro_names(self._bound_once(right) or right)
            if scanned is not None:  # "C" in {c.__name__ for c in type(x).__mro__}
                refs = self.string_refs(left)
                if refs:
                    return TypeTest(
                        expr, scanned, left, refs, False, positive, kind="mro"
                    )
                return None
        sides = [(left, right)] if membership else [(left, right), (right, left)]
        for named, strings in sides:
            target = self._name_of(named)
            if target is None:
                continue
            if membership and not isinstance(strings, (cst.Tuple, cst.List, cst.Set)):
                return None
            refs = self.string_refs(strings)
            if refs and (membership or len(refs) == 1):
                return TypeTest(
                    expr, target, strings, refs, True, positive, kind="name"
                )
            return None
        return None

    def _mro_scan(self, call: cst.Call) -> TypeTest | None:
        """``any(c.__name__ == "C" for c in type(x).__mro__)``, also with
        ``in`` a display of names, or comparing classes (``c is C``)."""
        if not (
            len(call.args) == 1
            and isinstance(call.args[0].value, cst.GeneratorExp)
            and self.names.is_builtin(call.func, "any")
        ):
            return None
        generator = call.args[0].value
        variable_name = _only_loop_variable(generator)
        if variable_name is None:
            return None
        target = self._mro_of(generator.for_in.iter)
        element = generator.elt
        if target is None or not (
            isinstance(element, cst.Comparison) and len(element.comparisons) == 1
        ):
            return None
        kind = _COMPARISONS.get(type(element.comparisons[0].operator))
        if kind is None or not kind[0]:
            return None
        variable, compared = element.left, element.comparisons[0].comparator
        if _is_name_of(variable, variable_name):
            refs = self.string_refs(compared)
            if kind[1] and not isinstance(compared, (cst.Tuple, cst.List, cst.Set)):
                return None
        elif isinstance(variable, cst.Name) and variable.value == variable_name:
            refs = self.classinfo_refs(compared)
        else:
            return None
        if not refs or (not kind[1] and len(refs) != 1):
            return None
        return TypeTest(call, target, compared, refs, False, True, kind="mro")

    def _mro_of(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``type(x).__mro__``, ``x.__class__.__mro__``,
        ``type(x).mro()`` or ``inspect.getmro(type(x))``."""
        owner = self.mro_owner(expr)
        return None if owner is None else self._type_of_target(owner)

    def mro_owner(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``C`` for ``C.__mro__``, ``C.mro()`` or ``inspect.getmro(C)``:
        the class whose MRO ``expr`` is."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__mro__":
            return expr.value
        if isinstance(expr, cst.Call) and not expr.args:
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value == "mro":
                return func.value
        if (
            isinstance(expr, cst.Call)
            and len(expr.args) == 1
            and "inspect.getmro" in self.names.qualified_names(expr.func)
        ):
            return expr.args[0].value
        return None

    def _mro_names(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``{c.__name__ for c in type(x).__mro__}`` (or a list,
        a generator)."""
        if not isinstance(expr, (cst.SetComp, cst.ListComp, cst.GeneratorExp)):
            return None
        variable_name = _only_loop_variable(expr)
        if variable_name is None or not _is_name_of(expr.elt, variable_name):
            return None
        return self._mro_of(expr.for_in.iter)

    def _bound_once(self, name: cst.BaseExpression) -> cst.BaseExpression | None:
        """The value of ``name = value``, the one binding of ``name`` in the
        scope it is read in (``names = {c.__name__ for c in type(x).__mro__}``
        then ``"C" in names``); None otherwise."""
        if not isinstance(name, cst.Name):
            return None
        scopes = self.names.scopes
        binder = scopes.binder(name, name.value)
        if (
            binder is None
            or len(binder.bindings[name.value]) != 1
            or not isinstance(binder.node, (cst.Module, cst.FunctionDef))
        ):
            return None
        body = binder.node if binder.node is scopes.module else binder.node.body
        for node in walk(body, OWN_SCOPES):
            if (
                isinstance(node, cst.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)
                and node.targets[0].target.value == name.value
            ):
                return node.value
        return None

    def _name_of(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for ``type(x).__name__`` / ``x.__class__.__qualname__``."""
        if isinstance(expr, cst.Attribute) and expr.attr.value in _NAME_ATTRIBUTES:
            return self._type_of_target(expr.value)
        return None

    def string_refs(self, expr: cst.BaseExpression) -> tuple[ClassRef, ...]:
        """The classes a string (or a display of strings) names by their
        class name; empty when any element is not a plain string."""
        elements = (
            [e.value for e in expr.elements]
            if isinstance(expr, (cst.Tuple, cst.List, cst.Set))
            else [expr]
        )
        refs = []
        for element in elements:
            if not isinstance(element, cst.SimpleString):
                return ()
            refs.append(ClassRef(element, self.names.class_named(element)))
        return tuple(refs)


_NAME_ATTRIBUTES = ("__name__", "__qualname__")


def _only_loop_variable(comprehension) -> str | None:
    """``c`` for a comprehension of one ``for c in ...`` with no condition."""
    loop = comprehension.for_in
    if loop.inner_for_in is not None or loop.ifs:
        return None
    return loop.target.value if isinstance(loop.target, cst.Name) else None


def _is_name_of(expr: cst.BaseExpression, variable: str) -> bool:
    """``variable.__name__`` (or ``__qualname__``)."""
    return (
        isinstance(expr, cst.Attribute)
        and expr.attr.value in _NAME_ATTRIBUTES
        and isinstance(expr.value, cst.Name)
        and expr.value.value == variable
    )
