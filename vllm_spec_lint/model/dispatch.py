"""Dispatch on a value's class: tables keyed by classes, ``singledispatch``
functions and registries. Each is a class test spread over a module: which
classes it names, and whether it looks classes up exactly or through the
MRO (where a base class's entry serves its subclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from vllm_spec_lint.model.class_tests import ClassRef
from vllm_spec_lint.model.syntax import code_of, target_key, walk

_SINGLEDISPATCH = ("functools.singledispatch", "functools.singledispatchmethod")


@dataclass(frozen=True)
class TableEntry:
    """One ``key: value`` of a class-keyed table (a dict display, or a pair
    in ``dict([...])``)."""

    ref: ClassRef
    value: cst.BaseExpression
    # The DictElement, or the pair's Element in dict([...]).
    element: cst.CSTNode


@dataclass(frozen=True)
class Table:
    node: cst.Dict | cst.Call
    entries: tuple[TableEntry, ...]
    # True when the module looks keys up along an MRO (``for c in
    # type(x).__mro__: table[c]``): a base class's entry covers subclasses.
    by_mro: bool


@dataclass
class Registrations:
    """The classes one dispatcher or registry is given, in source order."""

    name: str
    # True for singledispatch (dispatch walks the MRO); registries: False.
    by_mro: bool
    # Each class given, with the registering statement or decorator (fixes
    # repeat it for the companion).
    registered: list[tuple[ClassRef, cst.CSTNode]] = field(default_factory=list)

    @property
    def refs(self) -> list[ClassRef]:
        return [ref for ref, _ in self.registered]


class Dispatch:
    def __init__(self, model):
        self.model = model
        self.names = model.names

    # -- tables ------------------------------------------------------------

    def table(self, node: cst.CSTNode) -> Table | None:
        """``node`` read as a table keyed by classes: every key a name or an
        attribute, at least one of them a known class; None otherwise."""
        pairs = self._pairs(node)
        if not pairs:
            return None
        entries = []
        for key, value, element in pairs:
            if not isinstance(key, (cst.Name, cst.Attribute)):
                return None
            entries.append(
                TableEntry(ClassRef(key, self.names.class_of(key)), value, element)
            )
        if not any(e.ref.qualname for e in entries):
            return None
        return Table(node, tuple(entries), self._looked_up_by_mro(node))

    def _pairs(self, node: cst.CSTNode) -> list[tuple] | None:
        if isinstance(node, cst.Dict):
            if any(not isinstance(e, cst.DictElement) for e in node.elements):
                return None  # **others: keys unknown
            return [(e.key, e.value, e) for e in node.elements]
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "dict"
            and self.names.is_builtin(node.func, "dict")
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
            and isinstance(node.args[0].value, (cst.List, cst.Tuple))
        ):
            pairs = []
            for element in node.args[0].value.elements:
                pair = element.value
                if not (
                    isinstance(element, cst.Element)
                    and isinstance(pair, cst.Tuple)
                    and len(pair.elements) == 2
                    and all(isinstance(e, cst.Element) for e in pair.elements)
                ):
                    return None
                pairs.append((pair.elements[0].value, pair.elements[1].value, element))
            return pairs
        return None

    def _looked_up_by_mro(self, node: cst.CSTNode) -> bool:
        if "mro" not in self.model.text:  # most modules: no walk at all
            return False
        key = self._bound_to(node)
        return key is not None and key in self._mro_lookups

    def _bound_to(self, node: cst.CSTNode) -> str | None:
        parent = self.model.parent(node)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return target_key(parent.targets[0].target)
        if isinstance(parent, cst.AnnAssign):
            return target_key(parent.target)
        return None

    @cached_property
    def _mro_lookups(self) -> frozenset[str]:
        """Tables (by target key) that the module indexes, ``.get()``s or
        tests membership in with a variable that walks an MRO."""
        found = set()
        for node in walk(self.model.module):
            loop = self._loop_over_mro(node)
            if loop is None:
                continue
            variable, scope = loop
            for inner in walk(scope):
                table = _looked_up_with(inner, variable)
                if table is not None:
                    found.add(table)
        return frozenset(found)

    def _loop_over_mro(self, node: cst.CSTNode) -> tuple[str, cst.CSTNode] | None:
        """(the loop variable, where it is used) for ``for c in X.__mro__``
        and comprehensions over an MRO."""
        if isinstance(node, cst.For):
            iterated, target, scope = node.iter, node.target, node.body
        elif isinstance(
            node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
        ):
            iterated, target, scope = node.for_in.iter, node.for_in.target, node
        else:
            return None
        is_mro = self.model.tests.mro_owner(iterated) is not None
        return (
            (target.value, scope) if is_mro and isinstance(target, cst.Name) else None
        )

    # -- singledispatch and registries -------------------------------------

    @cached_property
    def registrations(self) -> dict[str, Registrations]:
        """Every dispatcher and registry of the module, by name as written:
        singledispatch functions (registered by annotation, by argument or
        by call) and any object's ``register(Class, ...)``."""
        found: dict[str, Registrations] = {}
        if ".register" not in self.model.text:  # most modules: no walk at all
            return found
        dispatchers = self._dispatchers

        def add(name: str, refs, site) -> None:
            entry = found.setdefault(name, Registrations(name, name in dispatchers))
            entry.registered += [(ref, site) for ref in refs]

        for node in walk(self.model.module):
            if type(node) is cst.FunctionDef:
                for decorator in node.decorators:
                    owner = _register_owner(decorator.decorator)
                    if owner is not None and owner in dispatchers:
                        if not isinstance(decorator.decorator, cst.Call):
                            add(owner, self._annotated(node), decorator)
            elif type(node) is cst.Call:
                owner = _register_owner(node.func)
                if owner is None or not node.args:
                    continue
                first = self._registered_argument(node)
                if first is None:
                    continue
                refs = self.model.tests.classinfo_refs(first.value)
                if owner not in dispatchers:
                    # A registry's key is one class: unions are not keys.
                    refs = tuple(r for r in refs if r.node is first.value)
                add(owner, [r for r in refs if r.qualname], self._site(node))
        return found

    def _registered_argument(self, call: cst.Call) -> cst.Arg | None:
        """The argument of ``R.register(...)`` that holds the class: the
        first positional one, else a keyword named as registries name it
        (``cls``, ``kvcache_spec_cls``, ``key``, ...). The registry's own
        signature is not read: the slice the rules see seldom holds it."""
        first = call.args[0]
        if first.keyword is None and not first.star:
            return first
        for arg in call.args:
            if arg.keyword is not None and _names_a_class(arg.keyword.value):
                return arg
        return None

    @cached_property
    def _dispatchers(self) -> frozenset[str]:
        names = set()
        for node in walk(self.model.module):
            if type(node) is cst.FunctionDef:
                for decorator in node.decorators:
                    expression = decorator.decorator
                    if isinstance(expression, cst.Call):
                        expression = expression.func
                    if self.names.qualified_names(expression) & set(_SINGLEDISPATCH):
                        names.add(node.name.value)
        return frozenset(names)

    def _annotated(self, function: cst.FunctionDef) -> tuple[ClassRef, ...]:
        """The classes the dispatched parameter's annotation names (``A``,
        ``A | B``, ``Union[A, B]``)."""
        params = function.params.params
        in_class = isinstance(
            self.model.parent(self.model.parent(function)), cst.ClassDef
        )
        index = (
            1 if in_class and params and params[0].name.value in ("self", "cls") else 0
        )
        if len(params) <= index or params[index].annotation is None:
            return ()
        annotation = params[index].annotation.annotation
        if isinstance(annotation, cst.Subscript) and self.names.qualified_names(
            annotation.value
        ) & {"typing.Union", "typing.Optional"}:
            return tuple(
                ref
                for element in annotation.slice
                if isinstance(element.slice, cst.Index)
                for ref in self.model.tests.classinfo_refs(element.slice.value)
                if ref.qualname
            )
        return tuple(
            r for r in self.model.tests.classinfo_refs(annotation) if r.qualname
        )

    def _site(self, call: cst.Call) -> cst.CSTNode:
        """The statement line a registering call stands alone in, or the call."""
        parent = self.model.parent(call)
        if isinstance(parent, cst.Decorator):
            return parent
        if isinstance(parent, cst.Expr):
            line = self.model.parent(parent)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                return line
        return call


# Keywords registries take their class by, where their signature is not in
# reach: exactly these, or ending so (``spec_cls``, ``kvcache_spec_class``).
_CLASS_KEYWORDS = frozenset({"cls", "klass", "class_", "key", "type_", "typ"})
_CLASS_KEYWORD_ENDINGS = ("_cls", "_class", "_type")


def _names_a_class(keyword: str) -> bool:
    return keyword in _CLASS_KEYWORDS or keyword.endswith(_CLASS_KEYWORD_ENDINGS)


def _register_owner(expression: cst.BaseExpression) -> str | None:
    """``R`` for ``R.register``, as written."""
    if isinstance(expression, cst.Attribute) and expression.attr.value == "register":
        return code_of(expression.value)
    return None


def _looked_up_with(node: cst.CSTNode, variable: str) -> str | None:
    """The table ``node`` looks ``variable`` up in: ``t[v]``, ``t.get(v)``,
    ``v in t``."""

    def is_variable(expr) -> bool:
        return isinstance(expr, cst.Name) and expr.value == variable

    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and is_variable(index.value):
            return target_key(node.value)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "get"
        and node.args
        and is_variable(node.args[0].value)
    ):
        return target_key(node.func.value)
    if (
        isinstance(node, cst.Comparison)
        and is_variable(node.left)
        and len(node.comparisons) == 1
        and isinstance(node.comparisons[0].operator, cst.In)
    ):
        return target_key(node.comparisons[0].comparator)
    return None
