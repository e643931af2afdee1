"""What is known about a value at a point: the one walker over the code
that dominates a check.

From the check outwards, in the same function: the other operands of its
``and``/``or`` chain, the ``if``/``elif``/``else`` branches and conditional
expressions around it, comprehension conditions, and the statements before
it in each enclosing block (``assert``s, early exits such as ``if C:
return``). Each gives facts: a class test known to be true or false.

A fact is about the checked value, or about every element of a collection
the value comes from (a loop or generator over ``xs``, ``xs[i]``,
``next(iter(xs))``). Collection facts come from ``all()``/``any()`` guards
and from how the collection was built in the same function: a filtering
comprehension, ``filter(lambda v: test, ...)``, or a loop that appends only
under a test. A local alias (``t = s``, ``ys = xs``) is followed back to
what it names. A fact stops counting where what it is about is assigned.
Guards in other functions never count.

Facts come in two kinds. *Decision* facts are the check's own decision:
the operands of the or-chain it widens (``isinstance(s, A) or
isinstance(s, B)``) and the earlier branches of its ``elif`` chain; values
they take never depend on the check, so the rules do not report what they
cover. *Guard* facts are everything else; the default mode acts on them
(narrowing.py), ``--strict`` does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import libcst as cst

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.model.syntax import (
    COMPREHENSIONS,
    FUNCTIONS,
    assignment_targets,
    code_of,
    target_key,
    walk,
)

_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
# Methods that never add an element to the collection they are called on.
_NOT_ADDING = frozenset(
    {"pop", "remove", "discard", "clear", "copy", "count", "index", "get",
     "keys", "values", "items", "sort", "reverse", "popitem"}
)  # fmt: skip
# Builds a filter()'s elements pass through unchanged.
_SEQUENCE_OF = ("list", "set", "tuple", "sorted", "frozenset")
# What _added returns for a statement that adds nothing.
_UNCHANGED = object()
# How deep the walker follows appends (their own facts come from a walk).
_MAX_DEPTH = 3


@dataclass(frozen=True)
class Fact:
    """``test`` is known to be ``holds`` where the check runs; ``elements``
    when it is about every element of the collection ``key`` names."""

    test: TypeTest
    holds: bool
    key: str
    elements: bool = False
    decision: bool = False

    @property
    def is_instance(self) -> bool:
        """True when the fact says the value is of the tested classes."""
        return self.test.positive == self.holds


def excludes(fact: Fact, companion: str, hierarchy: ClassHierarchy) -> bool:
    """True when ``fact`` means the value cannot be a ``companion``."""
    test = fact.test
    if test.exact:
        named = companion in test.named
        return not named if fact.is_instance else named
    covered = bool(test.named & hierarchy.ancestors(companion))
    unknown = any(r.qualname is None for r in test.refs)
    if fact.is_instance:
        if not hierarchy.knows_bases(companion):
            return False  # whatever it derives from, a test may admit it
        # A subclass of the companion (a plugin's own) is a companion too.
        related = covered or any(
            companion in hierarchy.ancestors(named) for named in test.named
        )
        return not related and not unknown
    return covered


@dataclass(frozen=True)
class Subject:
    """What the facts must be about: the value's own key, the key of the
    collection it is an element of, or both (``xs[0]``).

    ``appended`` is None until a statement that adds to the collection is
    passed; then it holds what is known of every element added, and only
    the collection's (empty) creation makes it a fact about all of them.
    """

    value: str | None
    collection: str | None = None
    appended: tuple[Fact, ...] | None = None

    def matches(self, fact: Fact) -> bool:
        if fact.elements:
            return fact.key == self.collection and self.appended is None
        return fact.key == self.value


class Facts:
    """The fact walker for one file's semantic model."""

    def __init__(self, model):
        self.model = model
        # Per statement, the keys of what it assigns: every check climbs
        # back over the statements before it, so each is walked once.
        self._assigned: dict[cst.CSTNode, tuple[str | None, ...]] = {}

    def _assigns(self, statement: cst.CSTNode, key: str) -> bool:
        names = self._assigned.get(statement)
        if names is None:
            names = self._assigned[statement] = tuple(
                target_key(target) for target, _ in assignment_targets(statement)
            )
        return any(_changes(name, key) for name in names)

    def about(
        self, node: cst.CSTNode, target: cst.BaseExpression, positive: bool
    ) -> Iterator[Fact]:
        """Facts that hold where ``node`` runs about ``target`` (or about the
        collection it is an element of). ``positive`` is whether ``node``
        accepts the classes it names; it decides which operands share its
        decision."""
        subject = self.subject_of(target)
        if subject.value is None and subject.collection is None:
            return iter(())
        return self._climb(node, subject, positive, depth=0)

    def decision(
        self, node: cst.CSTNode, target: cst.BaseExpression, positive: bool
    ) -> Iterator[Fact]:
        return (f for f in self.about(node, target, positive) if f.decision)

    def subject_of(self, expr: cst.BaseExpression) -> Subject:
        """The subject a check's target names: ``s``, ``self.spec``, an
        element ``xs[i]`` (also one of the collection's indexable elements,
        ``xs[]``), or ``next(iter(xs))``."""
        value = target_key(expr)
        collection = None
        if isinstance(expr, cst.Subscript):
            base = target_key(expr.value)
            collection = None if base is None else base + "[]"
        elif self._calls(expr, "next") and expr.args:
            inner = expr.args[0].value
            if self._calls(inner, "iter") and inner.args:
                collection = collection_key(inner.args[0].value)
        return Subject(value, collection)

    def _calls(self, expr: cst.BaseExpression, builtin: str) -> bool:
        return isinstance(expr, cst.Call) and self.model.names.is_builtin(
            expr.func, builtin
        )

    # -- the walk -------------------------------------------------------------

    def _climb(self, node, subject: Subject, polarity: bool, depth: int):
        model = self.model
        # Still inside the check's own chain: ``not``s around the check, then
        # the operators that widen it (``or``; ``and`` for a negated check).
        in_chain, negations_done = True, False
        in_branch_test = False  # the check is in an if/elif condition
        # What earlier code established about a variable another scope can
        # rebind (a global, a nonlocal) may not hold by the time it runs.
        shared = model.rebound_elsewhere(node, subject)
        child, parent = node, model.parent(node)
        while parent is not None:
            if in_chain and not negations_done and _is_not(parent):
                polarity = not polarity
            elif isinstance(parent, cst.BooleanOperation):
                widening = in_chain and isinstance(
                    parent.operator, cst.Or if polarity else cst.And
                )
                in_chain, negations_done = widening, True
                if child is parent.right:
                    holds = isinstance(parent.operator, cst.And)
                    for fact in self._from(parent.left, holds):
                        if subject.matches(fact):
                            yield _tagged(fact, widening)
                elif widening:  # later operands decide the values they take
                    for fact in self._from(parent.right, not polarity):
                        fact = _tagged(fact, True)
                        if subject.matches(fact) and fact.decision:
                            yield fact
            else:
                in_chain = False
            if isinstance(parent, cst.If):
                if child is parent.test:
                    in_branch_test = True
                else:
                    holds = child is parent.body
                    in_branch_test &= isinstance(child, cst.If)  # an elif
                    for fact in self._from(parent.test, holds):
                        if subject.matches(fact) and (in_branch_test or not shared):
                            yield _tagged(fact, in_branch_test)
            elif isinstance(parent, cst.IfExp) and child is not parent.test:
                holds = child is parent.body
                yield from _matching(self._from(parent.test, holds), subject)
            elif isinstance(parent, cst.CompFor):
                if child is not parent.iter:
                    for comp_if in parent.ifs:
                        if comp_if is child:
                            break
                        yield from _matching(self._from(comp_if.test, True), subject)
            elif type(parent) in COMPREHENSIONS and child is not parent.for_in:
                comp = parent.for_in
                while comp is not None:
                    for comp_if in comp.ifs:
                        yield from _matching(self._from(comp_if.test, True), subject)
                    comp = comp.inner_for_in
            elif isinstance(parent, (cst.IndentedBlock, cst.Module)):
                if shared:
                    return
                statements = parent.body
                index = next((i for i, s in enumerate(statements) if s is child), None)
                for statement in reversed(statements[:index] if index else []):
                    facts, subject = self._statement(statement, subject, depth)
                    yield from facts
                    if subject is None:
                        return
            if subject.value is not None:
                collection = loop_collection(parent, child, subject.value)
                if collection is not False:
                    if collection is None:
                        return
                    subject = Subject(None, collection)
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return
            child, parent = parent, model.parent(parent)

    def _statement(
        self, statement: cst.CSTNode, subject: Subject, depth: int
    ) -> tuple[list[Fact], Subject | None]:
        """The facts a statement before the check gives, and the subject to
        follow further back (None: stop, what the facts are about was
        assigned here)."""
        hits_value = subject.value is not None and self._assigns(
            statement, subject.value
        )
        root = _root(subject.collection)
        hits_collection = root is not None and self._assigns(statement, root)
        if hits_value or hits_collection:
            assigned = _single_assignment(statement)
            if assigned is None:
                return [], None
            name, value = assigned
            if hits_collection and name == root:
                # ``xs = <expr>`` (``xs[i]`` is an element of it as well).
                return self._collection_assigned(subject, value, depth)
            if hits_value and name == subject.value:
                # ``t = <expr>``: facts about what ``t`` was assigned.
                followed = self.subject_of(value)
                if followed.value is None and followed.collection is None:
                    return [], None
                return [], followed
            return [], None
        if root is not None:
            added = self._added(statement, root, depth)
            if added is None:  # an unknown change: nothing known of its elements
                if subject.value is None:
                    return [], None
                subject = Subject(subject.value)
            elif added is not _UNCHANGED:
                if subject.appended is not None:
                    added = _common(subject.appended, added)
                subject = replace(subject, appended=added)
        return list(_matching(self._statement_facts(statement), subject)), subject

    def _collection_assigned(self, subject: Subject, value, depth: int):
        """``xs = <value>`` for the collection the subject's elements are in."""
        collection = subject.collection
        if subject.appended is not None:
            if _is_empty(value):
                return [_about(f, collection) for f in subject.appended], None
            return [], None
        built = self._built(value, collection, depth)
        if built is not None:
            return built, None
        alias = target_key(value)
        if alias is None:
            return [], None
        return [], Subject(None, alias + collection[len(_root(collection)) :])

    def _built(self, value, collection: str, depth: int) -> list[Fact] | None:
        """Facts about every element of a collection built by filtering."""
        if depth >= _MAX_DEPTH:
            return None
        kind = collection[len(_root(collection)) :]  # "", ".values()" or "[]"
        if (
            any(self._calls(value, name) for name in _SEQUENCE_OF)
            and len(value.args) == 1
        ):
            value = value.args[0].value  # list(filter(...)) and the like
        if self._calls(value, "filter"):
            return self._filtered(value, collection)
        if isinstance(value, cst.DictComp):
            element = value.key if kind == "" else value.value
        elif isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            if kind == ".values()":
                return None
            element = value.elt
        else:
            return None
        facts = self._climb(element, self.subject_of(element), True, depth + 1)
        return [_about(f, collection) for f in facts]

    def _filtered(self, call: cst.Call, collection: str) -> list[Fact] | None:
        """``filter(lambda v: <test>, xs)``: the test holds for each element."""
        if len(call.args) != 2 or not isinstance(call.args[0].value, cst.Lambda):
            return None
        function = call.args[0].value
        params = function.params.params
        if len(params) != 1:
            return None
        name = params[0].name.value
        return [
            _about(f, collection)
            for f in self._from(function.body, True)
            if not f.elements and f.key == name
        ]

    def _added(self, statement, root: str, depth: int):
        """What a statement adds to the collection ``root``: ``_UNCHANGED``
        when nothing, else what is known of every element it adds
        (``root.append(v)``, ``root.add(v)``); None when it adds in a way not
        followed (``extend``, ``insert``, ...)."""
        known: tuple[Fact, ...] = ()
        added = False
        for node in walk(statement, prune=FUNCTIONS):
            if not (isinstance(node, cst.Name) and node.value == root):
                continue
            attribute = self.model.parent(node)
            call = self.model.parent(attribute)
            if not (
                isinstance(attribute, cst.Attribute)
                and attribute.value is node
                and isinstance(call, cst.Call)
                and call.func is attribute
            ):
                continue  # read, not changed (as for the other facts)
            method = attribute.attr.value
            if method in _NOT_ADDING:
                continue
            if (
                method not in ("append", "add")
                or len(call.args) != 1
                or call.args[0].keyword is not None
                or call.args[0].star
                or depth >= _MAX_DEPTH
            ):
                return None
            value = call.args[0].value
            facts = tuple(self._climb(value, self.subject_of(value), True, depth + 1))
            known = facts if not added else _common(known, facts)
            added = True
        return known if added else _UNCHANGED

    # -- facts from one expression or statement --------------------------------

    def _from(self, expr: cst.BaseExpression, holds: bool) -> Iterator[Fact]:
        """The facts ``expr`` being ``holds`` gives."""
        if _is_not(expr):
            yield from self._from(expr.expression, not holds)
        elif isinstance(expr, cst.BooleanOperation):
            both = cst.And if holds else cst.Or
            if isinstance(expr.operator, both):
                yield from self._from(expr.left, holds)
                yield from self._from(expr.right, holds)
        else:
            test = self.model.tests.type_test(expr)
            if test is None and isinstance(expr, cst.Call) and self._quantifier(expr):
                # any()/all() over values; an any() over an MRO is a test.
                yield from self._element_facts(expr, holds)
                return
            key = target_key(test.target) if test else None
            if key is not None:
                yield Fact(test, holds, key)

    def _quantifier(self, call: cst.Call) -> str | None:
        for name in ("all", "any"):
            if self.model.names.is_builtin(call.func, name):
                return name
        return None

    def _element_facts(self, call: cst.Call, holds: bool) -> Iterator[Fact]:
        """``all(test(v) for v in xs)`` true, or ``any(...)`` false: a fact
        about every element of ``xs``."""
        quantifier = self._quantifier(call)
        if (quantifier == "all") != holds or len(call.args) != 1:
            return
        generator = call.args[0].value
        if not isinstance(generator, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
            return  # all([... for v in xs]) says the same as all(... for v in xs)
        comp = generator.for_in
        if comp.ifs or comp.inner_for_in is not None:
            return
        element = loop_variable(comp.target)
        collection = collection_key(comp.iter, comp.target)
        if element is None or collection is None:
            return
        for fact in self._from(generator.elt, holds):
            if fact.key == element and not fact.elements:
                yield Fact(fact.test, fact.holds, collection, elements=True)

    def _statement_facts(self, statement: cst.CSTNode) -> Iterator[Fact]:
        """``assert C``: C holds after it. ``if C: <exit>`` (with or without
        ``elif``/``else``): C does not."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assert):
                    yield from self._from(small.test, True)
        elif isinstance(statement, cst.If):
            if ends_in(statement.body, _EXITS):
                yield from self._from(statement.test, False)


# -- helpers -------------------------------------------------------------------


def _is_not(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)


def _tagged(fact: Fact, decision: bool) -> Fact:
    """Decision facts are those that take values away from the check."""
    if decision and not fact.is_instance and not fact.elements:
        return replace(fact, decision=True)
    return fact


def _matching(facts: Iterator[Fact], subject: Subject) -> Iterator[Fact]:
    return (f for f in facts if subject.matches(f))


def _about(fact: Fact, collection: str) -> Fact:
    """A fact about one element, as a fact about every element."""
    return Fact(fact.test, fact.holds, collection, elements=True)


def _common(first: tuple[Fact, ...], second: tuple[Fact, ...]) -> tuple[Fact, ...]:
    """Facts both sets hold: the same classes tested the same way, whatever
    each loop calls the element it adds."""

    def same(fact: Fact) -> tuple:
        return code_of(fact.test.classinfo), fact.test.exact, fact.is_instance

    seen = {same(f) for f in second}
    return tuple(f for f in first if same(f) in seen)


def _root(collection: str | None) -> str | None:
    """``xs`` for ``xs``, ``xs.values()`` and ``xs[]``."""
    if collection is None:
        return None
    return collection.removesuffix(".values()").removesuffix("[]")


def _is_empty(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Set, cst.Tuple)):
        return not value.elements
    # list() / set(): by name, as a shadowed list() that fills is far-fetched
    return (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Name)
        and value.func.value in ("list", "set")
    )


def _single_assignment(statement) -> tuple[str, cst.BaseExpression] | None:
    """``name = value`` (or annotated) as a statement of its own."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target, value = small.targets[0].target, small.value
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        target, value = small.target, small.value
    else:
        return None
    return (target.value, value) if isinstance(target, cst.Name) else None


def ends_in(block: cst.BaseSuite, kind) -> bool:
    body = block.body
    last = body[-1] if body else None
    if isinstance(block, cst.SimpleStatementSuite):
        return isinstance(last, kind)
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], kind)


def loop_variable(target: cst.BaseExpression) -> str | None:
    """``v`` in ``for v in ...``, or the value in ``for k, v in d.items()``."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        value = target.elements[1].value
        return value.value if isinstance(value, cst.Name) else None
    return None


def collection_key(
    iterable: cst.BaseExpression, target: cst.BaseExpression | None = None
) -> str | None:
    """A key for the collection whose elements a loop binds to ``target``
    (None: one element, as ``next(iter(...))`` takes): ``specs``,
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


def loop_collection(parent: cst.CSTNode, child: cst.CSTNode, key: str):
    """When ``parent`` is a loop or comprehension that binds ``key`` for
    ``child``: the key of the collection it iterates (None when it cannot be
    named). False when ``parent`` binds nothing for ``child``."""
    if isinstance(parent, cst.CompFor):
        if loop_variable(parent.target) == key:
            return collection_key(parent.iter, parent.target)
    elif type(parent) in COMPREHENSIONS:
        if child is not parent.for_in:
            comp = parent.for_in
            while comp is not None:
                if loop_variable(comp.target) == key:
                    return collection_key(comp.iter, comp.target)
                comp = comp.inner_for_in
    elif isinstance(parent, cst.For) and child is parent.body:
        if loop_variable(parent.target) == key:
            return collection_key(parent.iter, parent.target)
    return False


def hits(assigned: cst.CSTNode, key: str) -> bool:
    """Assigning ``assigned`` changes ``key`` (it is it, or what it hangs off)."""
    return _changes(target_key(assigned), key)


def _changes(name: str | None, key: str) -> bool:
    return name is not None and (
        key == name or key.startswith((name + ".", name + "["))
    )
