"""The layout property: a family's layout asked of the spec classes
(``spec.uses_mla_layout``) instead of listed in class tests.

The property is declared on the family's root (``KVCacheSpec``: False) and
overridden on the anchor and every companion (True), so it is True exactly
for instances of the family's members and their subclasses. Hence, for
every value ``x``::

    isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))
    == isinstance(x, KVCacheSpec) and x.uses_mla_layout

and where ``x`` is known to be a spec, ``x.uses_mla_layout`` alone. An
exact comparison (``type(x) is MLAAttentionSpec``) has no equivalent read:
the property also holds for subclasses, so its rewrite is never safe. This
module says what a class test names of a family and whether its value is
known to be a spec; repair/layout.py writes the new expression.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.hierarchy import Family
from vllm_spec_lint.model.scopes import dotted
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.model.syntax import (
    COMPREHENSIONS,
    OWN_SCOPES,
    unparenthesized,
    walk,
)

# Attributes that hold one spec by vLLM's convention (a metadata builder's,
# a layer group's): ``self.kv_cache_spec``, ``group.kv_cache_spec``.
SPEC_ATTRIBUTES = frozenset({"kv_cache_spec"})
_MAPPINGS = frozenset({"dict", "Mapping", "MutableMapping", "OrderedDict"})
_SEQUENCES = frozenset({"list", "tuple", "Sequence", "Iterable", "set", "frozenset"})


@dataclass(frozen=True)
class LayoutTest:
    """A class test split for the rewrite: the classinfo's elements that
    name the family's members, and the others, as written."""

    test: TypeTest
    members: tuple[cst.BaseExpression, ...]
    others: tuple[cst.BaseExpression, ...]
    # Every member named: an isinstance() test is the property, for every value.
    whole_family: bool

    @property
    def exact(self) -> bool:
        """``type(x) is C`` / ``in (...)``: the property admits subclasses too."""
        return self.test.kind == "type"


def layout_test(model: SemanticModel, test: TypeTest, family: Family):
    """The test as a :class:`LayoutTest` when it is an ``isinstance`` test
    or an exact comparison whose classinfo is one class or a flat display
    (or ``|`` union) of classes, one of which is the anchor; else None."""
    if test.kind == "type":
        classinfo = unparenthesized(test.classinfo)
        if isinstance(classinfo, (cst.List, cst.Set)):  # membership displays
            classinfo = cst.Tuple(classinfo.elements)
    elif test.kind == "isinstance" and isinstance(test.node, cst.Call):
        if not model.names.is_builtin(test.node.func, "isinstance"):
            return None  # issubclass: a class has no property value to read
        classinfo = unparenthesized(test.classinfo)
    else:
        return None
    elements = _elements(classinfo)
    if elements is None:
        return None
    members, others, named = [], [], set()
    qualified = family.qualified_members
    for element in elements:
        cls = model.names.class_of(element)
        if cls in qualified:
            members.append(element)
            named.add(cls)
        else:
            others.append(element)
    if family.anchor not in named:
        return None
    return LayoutTest(test, tuple(members), tuple(others), named == set(qualified))


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(expr, cst.Tuple):
        found = []
        for element in expr.elements:
            if not isinstance(element, cst.Element):
                return None  # starred: not written out
            found.append(unparenthesized(element.value))
        return found if all(dotted(e) for e in found) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        left = _elements(unparenthesized(expr.left))
        right = _elements(unparenthesized(expr.right))
        return None if left is None or right is None else left + right
    return [expr] if dotted(expr) else None


def property_answers(model: SemanticModel, test: TypeTest, family: Family) -> bool:
    """Whether VSL008 takes this test from VSL001/VSL002: the family's
    layout property is declared and the test names its anchor."""
    return model.hierarchy.declares_layout(family) and (
        layout_test(model, test, family) is not None
    )


def is_pure(expr: cst.BaseExpression) -> bool:
    """A name or a chain of attributes: reading it twice reads one value."""
    return dotted(unparenthesized(expr)) is not None


def known_spec(model: SemanticModel, test: TypeTest, root: str) -> bool:
    """Whether the tested value is known to be a spec (an instance of a class
    deriving from ``root``) where the test runs: a ``kv_cache_spec``
    attribute, a parameter annotated with a spec class, an element of a
    collection annotated so, or an earlier test of the same decision."""
    target = unparenthesized(test.target)
    if isinstance(target, cst.Attribute) and target.attr.value in SPEC_ATTRIBUTES:
        return True
    hierarchy = model.hierarchy
    for fact in model.facts.about(test.node, test.target, test.positive):
        named = fact.test.named
        if (
            fact.is_instance
            and named
            and len(named) == len(fact.test.refs)
            and all(root in hierarchy.ancestors(c) for c in named)
        ):
            return True
    # The name as the tree holds it (``(x)`` unparenthesized is a new node).
    return isinstance(target, cst.Name) and _bound_as_spec(model, test.target, root)


def _bound_as_spec(model: SemanticModel, name: cst.Name, root: str) -> bool:
    """A name bound once in its scope, as a parameter annotated with a spec
    class, or as the loop variable over the values of an annotated spec
    collection (``.values()``, the second of ``.items()``, the elements)."""
    scope = model.scopes.binder(name, name.value)
    if scope is None or len(scope.bindings.get(name.value, ())) != 1:
        return False
    owner = scope.node
    loops: list = []
    if isinstance(owner, cst.FunctionDef):
        for param in _params(owner):
            if param.name.value == name.value:
                annotation = param.annotation
                return annotation is not None and _spec_class(
                    model, annotation.annotation, root
                )
        loops = [
            n for n in walk(owner.body, prune=OWN_SCOPES) if isinstance(n, cst.For)
        ]
    elif type(owner) in COMPREHENSIONS:
        clause = owner.for_in
        while clause is not None:
            loops.append(clause)
            clause = clause.inner_for_in
    for loop in loops:
        element = _loop_element(loop.target, loop.iter, name.value)
        if element is not None:
            return _collection_of_specs(model, *element, root)
    return False


def _params(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _loop_element(target, iterable, name: str):
    """(collection, how its elements are read) when ``for target in
    iterable`` binds ``name`` to a value of the collection."""
    target = unparenthesized(target)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
        method = iterable.func.attr.value
        collection = iterable.func.value
        if method == "values" and isinstance(target, cst.Name):
            return (collection, "mapping") if target.value == name else None
        if method == "items" and isinstance(target, cst.Tuple):
            parts = [unparenthesized(e.value) for e in target.elements]
            if len(parts) == 2 and isinstance(parts[1], cst.Name):
                return (collection, "mapping") if parts[1].value == name else None
        return None
    if isinstance(target, cst.Name) and target.value == name:
        return iterable, "sequence"
    return None


def _collection_of_specs(model, collection, kind: str, root: str) -> bool:
    """Whether ``collection`` is a parameter of the function binding it,
    annotated as a mapping to (or a sequence of) a spec class, and bound
    nowhere else."""
    collection = unparenthesized(collection)
    if not isinstance(collection, cst.Name):
        return False
    scope = model.scopes.binder(collection, collection.value)
    if scope is None or not isinstance(scope.node, cst.FunctionDef):
        return False
    if len(scope.bindings.get(collection.value, ())) != 1:
        return False
    for param in _params(scope.node):
        if param.name.value != collection.value or param.annotation is None:
            continue
        annotation = param.annotation.annotation
        if not isinstance(annotation, cst.Subscript):
            return False
        outer = annotation.value
        outer_name = outer.attr.value if isinstance(outer, cst.Attribute) else None
        if isinstance(outer, cst.Name):
            outer_name = outer.value
        if outer_name not in (_MAPPINGS if kind == "mapping" else _SEQUENCES):
            return False
        # A mapping's values are its last type; a sequence's elements every
        # type it lists (``tuple[A, B]``), or the one ``tuple[A, ...]`` repeats.
        types = [e.slice for e in annotation.slice]
        if kind == "mapping":
            types = types[-1:]
        elif len(types) == 2 and _is_ellipsis(types[1]):
            types = types[:1]
        return all(
            isinstance(t, cst.Index) and _spec_class(model, t.value, root)
            for t in types
        )
    return False


def _is_ellipsis(element) -> bool:
    return isinstance(element, cst.Index) and isinstance(element.value, cst.Ellipsis)


def _spec_class(model: SemanticModel, annotation, root: str) -> bool:
    """An annotation naming one spec class (not ``X | None``, not a string)."""
    cls = model.names.class_of(unparenthesized(annotation))
    return cls is not None and root in model.hierarchy.ancestors(cls)
