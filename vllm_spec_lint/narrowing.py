"""Whether a companion can reach a check at all, and whether the author
considered it: the reasons a syntactic finding is suppressed by default.

What is known about the checked value at a check comes from what dominates
it in the same function: ``and``/``or`` operands before it, the enclosing
``if``/``elif``/``else`` branches, conditional expressions and comprehension
conditions, and earlier ``assert``s and early exits (``if C: return``).
Facts about a collection (``assert all(isinstance(v, C) for v in xs)``, an
early exit on ``any(...)``) narrow the elements a later loop or generator
over the same collection checks. A fact stops counting at an assignment to
the value. Guards in other functions never count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from vllm_spec_lint.families import ClassHierarchy, Family, short_name
from vllm_spec_lint.scopes import walk
from vllm_spec_lint.semantics import FileContext, TypeTest, code_of, target_key

_COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


@dataclass(frozen=True)
class Fact:
    """``test`` is known to be ``holds`` where the check runs; ``elements``
    when it is about every element of the collection ``key`` names."""

    test: TypeTest
    holds: bool
    key: str
    elements: bool = False


def excludes(fact: Fact, companion: str, hierarchy: ClassHierarchy) -> bool:
    """True when ``fact`` means the value cannot be a ``companion``."""
    test = fact.test
    is_instance = test.positive == fact.holds  # the class relation is known
    if test.exact:
        return (companion not in test.named) if is_instance else companion in test.named
    covered = bool(test.named & hierarchy.ancestors(companion))
    unknown = any(r.qualname is None for r in test.refs)
    if is_instance:
        return not covered and not unknown
    return covered


class Narrowing:
    """Per-file helper the rules ask about one check at a time."""

    def __init__(self, ctx: FileContext):
        self.ctx = ctx

    # -- facts from expressions ------------------------------------------------

    def _facts_from(self, expr: cst.BaseExpression, holds: bool) -> Iterator[Fact]:
        ctx = self.ctx
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            yield from self._facts_from(expr.expression, not holds)
        elif isinstance(expr, cst.BooleanOperation):
            both = cst.And if holds else cst.Or
            if isinstance(expr.operator, both):
                yield from self._facts_from(expr.left, holds)
                yield from self._facts_from(expr.right, holds)
        elif isinstance(expr, cst.Call) and self._quantifier(expr):
            yield from self._element_facts(expr, holds)
        else:
            test = ctx.type_test(expr)
            key = target_key(test.target) if test else None
            if key is not None:
                yield Fact(test, holds, key)

    def _quantifier(self, call: cst.Call) -> str | None:
        for name in ("all", "any"):
            if self.ctx.is_builtin(call.func, name):
                return name
        return None

    def _element_facts(self, call: cst.Call, holds: bool) -> Iterator[Fact]:
        """``all(test(v) for v in xs)`` true, or ``any(...)`` false: a fact
        about every element of ``xs``."""
        quantifier = self._quantifier(call)
        if (quantifier == "all") != holds or len(call.args) != 1:
            return
        generator = call.args[0].value
        if not isinstance(generator, cst.GeneratorExp):
            return
        comp = generator.for_in
        if comp.ifs or comp.inner_for_in is not None:
            return
        element = _loop_variable(comp.target)
        collection = collection_key(comp.iter, comp.target)
        if element is None or collection is None:
            return
        for fact in self._facts_from(generator.elt, holds):
            if fact.key == element and not fact.elements:
                yield Fact(fact.test, fact.holds, collection, elements=True)

    # -- facts from the surroundings -------------------------------------------------

    def facts_at(self, node: cst.CSTNode, key: str) -> Iterator[Fact]:
        """Facts that hold where ``node`` runs, about ``key`` (or about the
        collection it is an element of, once a loop binding ``key`` is left)."""
        ctx = self.ctx
        elements_of: str | None = None
        child, parent = node, ctx.parent(node)
        while parent is not None:
            if isinstance(parent, cst.BooleanOperation) and child is parent.right:
                holds = isinstance(parent.operator, cst.And)
                yield from self._matching(
                    self._facts_from(parent.left, holds), key, elements_of
                )
            elif isinstance(parent, cst.IfExp) and child is not parent.test:
                holds = child is parent.body
                yield from self._matching(
                    self._facts_from(parent.test, holds), key, elements_of
                )
            elif isinstance(parent, cst.If) and child is not parent.test:
                holds = child is parent.body
                yield from self._matching(
                    self._facts_from(parent.test, holds), key, elements_of
                )
            elif isinstance(parent, cst.CompFor):
                if child is not parent.iter:
                    for comp_if in parent.ifs:
                        if comp_if is child:
                            break
                        yield from self._matching(
                            self._facts_from(comp_if.test, True), key, elements_of
                        )
                if elements_of is None and _loop_variable(parent.target) == key:
                    elements_of = collection_key(parent.iter, parent.target)
                    if elements_of is None:
                        return
            elif isinstance(parent, _COMPREHENSIONS) and child is not parent.for_in:
                yield from self._comprehension_ifs(parent.for_in, key, elements_of)
                if elements_of is None and _binds(parent.for_in, key):
                    elements_of = _collection_of(parent.for_in, key)
                    if elements_of is None:
                        return
            elif isinstance(parent, cst.For) and child is parent.body:
                if elements_of is None and _loop_variable(parent.target) == key:
                    elements_of = collection_key(parent.iter, parent.target)
                    if elements_of is None:
                        return
            elif isinstance(parent, (cst.IndentedBlock, cst.Module)):
                statements = parent.body
                index = next((i for i, s in enumerate(statements) if s is child), None)
                for statement in reversed(statements[:index] if index else []):
                    if _assigns(statement, elements_of or key):
                        return
                    yield from self._matching(
                        self._statement_facts(statement), key, elements_of
                    )
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return
            child, parent = parent, ctx.parent(parent)

    def _comprehension_ifs(self, comp: cst.CompFor, key, elements_of) -> Iterator[Fact]:
        while comp is not None:
            for comp_if in comp.ifs:
                yield from self._matching(
                    self._facts_from(comp_if.test, True), key, elements_of
                )
            comp = comp.inner_for_in

    def _statement_facts(self, statement: cst.CSTNode) -> Iterator[Fact]:
        """``assert C``: C holds after it. ``if C: <exit>``: C does not."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assert):
                    yield from self._facts_from(small.test, True)
        elif isinstance(statement, cst.If) and statement.orelse is None:
            if _ends_in(statement.body, _EXITS):
                yield from self._facts_from(statement.test, False)

    @staticmethod
    def _matching(facts, key: str, elements_of: str | None) -> Iterator[Fact]:
        for fact in facts:
            if elements_of is None and not fact.elements and fact.key == key:
                yield fact
            elif elements_of is not None and fact.elements and fact.key == elements_of:
                yield fact

    # -- the three reasons ------------------------------------------------------

    def unreachable(
        self, node: cst.CSTNode, target, family: Family, missing: list[str]
    ):
        key = target_key(target) if target is not None else None
        if key is None:
            return None
        hierarchy = self.ctx.hierarchy
        for fact in self.facts_at(node, key):
            if all(excludes(fact, c, hierarchy) for c in missing):
                line = self.ctx.line(fact.test.node)
                return (
                    f"narrowed: `{_short(fact.test.node)}` (line {line}) already "
                    f"excludes {', '.join(short_name(c) for c in missing)}"
                )
        return None

    def considered(self, node: cst.CSTNode, target, missing: list[str]):
        """Another test of the same value in the same function names the
        companion: the author handled it on purpose."""
        ctx = self.ctx
        key = target_key(target) if target is not None else None
        collection = self._collection_for(node, key)
        function = _enclosing_function(ctx, node)
        if function is None or (key is None and collection is None):
            return None
        for other in _type_tests(ctx, function):
            if other.node is node or not set(missing) & other.named:
                continue
            # The value both test: the target, or for generator checks the
            # collection both iterate (then reassigning it is what counts).
            value = key if target_key(other.target) == key else None
            if value is None and collection is not None:
                other_key = target_key(other.target)
                if self._collection_for(other.node, other_key) == collection:
                    value = collection.removesuffix(".values()")
            if value is not None and not _reassigned_between(
                ctx, function, value, node, other.node
            ):
                line = ctx.line(other.node)
                return (
                    f"deliberate: line {line} tests `{code_of(other.target)}` for "
                    f"{', '.join(short_name(c) for c in missing if c in other.named)}"
                )
        return None

    def _collection_for(self, node: cst.CSTNode, key: str | None) -> str | None:
        """The collection a generator or loop check iterates, for its target."""
        if key is None:
            return None
        parent = self.ctx.parent(node)
        while parent is not None and not isinstance(
            parent, (cst.FunctionDef, cst.Module)
        ):
            if isinstance(parent, cst.CompFor) and _loop_variable(parent.target) == key:
                return collection_key(parent.iter, parent.target)
            if isinstance(parent, _COMPREHENSIONS) and _binds(parent.for_in, key):
                return _collection_of(parent.for_in, key)
            if isinstance(parent, cst.For) and _loop_variable(parent.target) == key:
                return collection_key(parent.iter, parent.target)
            parent = self.ctx.parent(parent)
        return None

    def loud_failure(self, node: cst.CSTNode, positive: bool):
        """A positive check that fails loudly (``assert isinstance(x, C)``,
        ``if not all(isinstance(...)): raise``) never silently misclassifies."""
        if not positive:
            return None
        ctx = self.ctx
        negations = 0
        child, parent = node, ctx.parent(node)
        while parent is not None:
            if isinstance(parent, cst.Assert) and child is parent.test:
                if negations % 2:
                    return None
                return (
                    "assert: a failing assert is loud, not a silent misclassification"
                )
            if isinstance(parent, cst.If) and child is parent.test:
                if negations % 2 and _ends_in(parent.body, cst.Raise):
                    return "raise: the code raises when the check fails, loudly"
                return None
            if isinstance(parent, cst.UnaryOperation) and isinstance(
                parent.operator, cst.Not
            ):
                negations += 1
            elif isinstance(parent, cst.BooleanOperation):
                # Only `and`: in `X and Y` a failing X decides the outcome.
                if not isinstance(parent.operator, cst.And):
                    return None
            elif isinstance(parent, cst.Call):
                if not ctx.is_builtin(parent.func, "all"):
                    return None
            elif not isinstance(parent, (cst.GeneratorExp, cst.Arg, cst.CompFor)):
                return None
            child, parent = parent, ctx.parent(parent)
        return None

    def reason(
        self,
        node: cst.CSTNode,
        target,
        family: Family,
        missing: list[str],
        positive: bool,
    ) -> str | None:
        """Why this check is not reported by default, or None."""
        return (
            self.unreachable(node, target, family, missing)
            or self.loud_failure(node, positive)
            or self.considered(node, target, missing)
        )


# -- helpers -----------------------------------------------------------------------


def _ends_in(block: cst.BaseSuite, kind: type) -> bool:
    body = block.body
    last = body[-1] if body else None
    if isinstance(block, cst.SimpleStatementSuite):
        return isinstance(last, kind)
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], kind)


def _short(node: cst.CSTNode, limit: int = 60) -> str:
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _loop_variable(target: cst.BaseExpression) -> str | None:
    """``v`` in ``for v in ...``, or the value in ``for k, v in d.items()``."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        value = target.elements[1].value
        return value.value if isinstance(value, cst.Name) else None
    return None


def collection_key(
    iterable: cst.BaseExpression, target: cst.BaseExpression
) -> str | None:
    """A key for the collection whose elements a loop binds: ``specs``,
    ``specs.values()`` (also for ``k, v in specs.items()``)."""
    if isinstance(iterable, cst.Call) and not iterable.args:
        func = iterable.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("values", "items"):
            base = target_key(func.value)
            if base is None:
                return None
            if func.attr.value == "items" and not isinstance(target, cst.Tuple):
                return None
            return f"{base}.values()"
        return None
    if isinstance(target, cst.Tuple):
        return None
    return target_key(iterable)


def _binds(comp: cst.CompFor | None, key: str) -> bool:
    while comp is not None:
        if _loop_variable(comp.target) == key:
            return True
        comp = comp.inner_for_in
    return False


def _collection_of(comp: cst.CompFor | None, key: str) -> str | None:
    while comp is not None:
        if _loop_variable(comp.target) == key:
            return collection_key(comp.iter, comp.target)
        comp = comp.inner_for_in
    return None


def _assignment_targets(statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """What a statement assigns to (not in nested functions, lambdas and
    comprehensions, whose names are their own), each with the node to place
    it by."""
    for node in walk(statement, prune=(cst.FunctionDef, cst.Lambda, cst.CompFor)):
        if isinstance(node, cst.AssignTarget):
            yield from _targets(node.target, node)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                yield from _targets(node.target, node)
        elif isinstance(node, (cst.AugAssign, cst.For, cst.NamedExpr, cst.Del)):
            yield from _targets(node.target, node)
        elif isinstance(node, cst.AsName):
            yield from _targets(node.name, node)
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            # `import a.b` binds `a`
            yield from _targets(_leftmost(node.name), node)


def _leftmost(name: cst.Attribute | cst.Name) -> cst.Name:
    while isinstance(name, cst.Attribute):
        name = name.value
    return name


def _targets(target: cst.CSTNode, at: cst.CSTNode) -> Iterator[tuple]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _targets(element.value, at)
    elif isinstance(target, cst.StarredElement):
        yield from _targets(target.value, at)
    elif isinstance(target, cst.BaseExpression):
        yield target, at


def _hits(assigned: cst.CSTNode, key: str) -> bool:
    """Assigning ``assigned`` changes ``key`` (it is it, or what it hangs off)."""
    name = target_key(assigned)
    return name is not None and (
        key == name or key.startswith((name + ".", name + "["))
    )


def _assigns(statement: cst.CSTNode, key: str) -> bool:
    return any(_hits(target, key) for target, _ in _assignment_targets(statement))


def _enclosing_function(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            return parent
        parent = ctx.parent(parent)
    return None


def _statements_of(function: cst.CSTNode):
    if isinstance(function, cst.FunctionDef):
        return function.body.body
    return [
        s for s in function.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))
    ]


def _type_tests(ctx: FileContext, function: cst.CSTNode) -> list[TypeTest]:
    """Every class test in a function's own body (not in nested functions),
    in source order."""
    tests = []
    for statement in _statements_of(function):
        for node in walk(statement, prune=(cst.FunctionDef,)):
            if isinstance(node, (cst.Call, cst.Comparison)):
                test = ctx.type_test(node)
                if test:
                    tests.append(test)

    return tests  # walk() goes in source order


def _reassigned_between(ctx, function, key: str, first, second) -> bool:
    """An assignment to ``key`` between two tests (by position, so that
    ``if isinstance(s, A): s = t`` on one line counts as between)."""

    def start(node) -> tuple[int, int]:
        position = ctx.positions[node].start
        return position.line, position.column

    low, high = sorted(start(n) for n in (first, second))
    for statement in _statements_of(function):
        for target, at in _assignment_targets(statement):
            if _hits(target, key) and low < start(at) < high:
                return True
    return False
