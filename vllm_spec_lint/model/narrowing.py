"""Why a check the rules would report is fine as written: the reasons the
default mode leaves a finding out (``--strict`` reports it).

- narrowed: a guard fact (facts.py) rules out every companion left out;
- loud: the check is an assert, or raises when it fails, or what it lets
  through meets a rejection right after it that the companion cannot pass;
- deliberate: the same function tests the same value for the companion.
"""

from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.facts import (
    ends_in,
    excludes,
    hits,
    loop_collection,
)
from vllm_spec_lint.model.hierarchy import Family, short_name
from vllm_spec_lint.model.syntax import assignment_targets, code_of, target_key, walk

# A function's own class tests: not those of functions defined in it. Not
# syntax.FUNCTIONS: a lambda's tests are read as the enclosing function's.
_FUNCTION = frozenset({cst.FunctionDef})
# The nodes that can be a class test (an attribute: a layout property read).
_MAY_TEST = frozenset({cst.Call, cst.Comparison, cst.Attribute})


class Narrowing:
    """The reasons, asked about one check at a time."""

    def __init__(self, model):
        self.model = model

    # -- the three reasons ------------------------------------------------------

    def unreachable(
        self,
        node: cst.CSTNode,
        target: cst.BaseExpression,
        missing: list[str],
        positive: bool,
    ):
        hierarchy = self.model.hierarchy
        for fact in self.model.facts.about(node, target, positive):
            if all(excludes(fact, c, hierarchy) for c in missing):
                line = self.model.line(fact.test.node)
                return (
                    f"narrowed: `{_short(fact.test.node)}` (line {line}) already "
                    f"excludes {', '.join(short_name(c) for c in missing)}"
                )
        return None

    def considered(
        self, node: cst.CSTNode, target: cst.BaseExpression, missing: list[str]
    ):
        """Other tests of the same value in the same function name every
        companion left out: the author handled them on purpose (one named
        and another not is a companion overlooked)."""
        model = self.model
        key = target_key(target)
        if key is None:
            return None
        # A comprehension's filter decides each element alone: another
        # filter over the same collection naming the companion is another
        # decision, not this one's (a partition fixed on one side only
        # puts the companion on both).
        collection = None if _filters(model, node) else self._collection_for(node, key)
        function = _enclosing_function(model, node)
        handled: dict[str, int] = {}  # companion -> the line of a test naming it
        for other in _type_tests(model, function):
            if other.node is node or not set(missing) & other.named:
                continue
            # The value both test: the target (the same variable: one name
            # in two comprehensions or functions is two variables), or for
            # generator checks the collection both iterate (then
            # reassigning it is what counts).
            value = (
                key
                if target_key(other.target) == key
                and model.same_variable(node, other.node, key)
                else None
            )
            if value is None and collection is not None:
                other_key = target_key(other.target)
                if self._collection_for(other.node, other_key) == collection:
                    value = collection.removesuffix(".values()")
            if value is None or _reassigned_between(
                model, function, value, node, other.node
            ):
                continue
            for companion in missing:
                if companion in other.named:
                    handled.setdefault(companion, model.line(other.node))
            if len(handled) == len(missing):
                lines = sorted(set(handled.values()))
                said = "line" if len(lines) == 1 else "lines"
                verb = "tests" if len(lines) == 1 else "test"
                return (
                    f"deliberate: {said} {', '.join(map(str, lines))} {verb} "
                    f"`{code_of(other.target)}` for "
                    f"{', '.join(short_name(c) for c in missing)}"
                )
        return None

    def _collection_for(self, node: cst.CSTNode, key: str | None) -> str | None:
        """The collection a generator or loop check iterates, for its target."""
        if key is None:
            return None
        child, parent = node, self.model.parent(node)
        while parent is not None and not isinstance(
            parent, (cst.FunctionDef, cst.Module)
        ):
            collection = loop_collection(parent, child, key)
            if collection is not False:
                # A lambda (or comprehension) in between binds the name again:
                # the check tests its own variable, not the loop's elements.
                return (
                    collection if self.model.same_variable(node, child, key) else None
                )
            child, parent = parent, self.model.parent(parent)
        return None

    def loud_failure(self, node: cst.CSTNode, positive: bool):
        """A positive check that fails loudly (``assert isinstance(x, C)``,
        ``if not all(isinstance(...)): raise``) never silently misclassifies."""
        if not positive:
            return None
        model = self.model
        negations = 0
        child, parent = node, model.parent(node)
        while parent is not None:
            if isinstance(parent, cst.Assert) and child is parent.test:
                if negations % 2:
                    return None
                return (
                    "assert: a failing assert is loud, not a silent misclassification"
                )
            if isinstance(parent, cst.If) and child is parent.test:
                if negations % 2 and ends_in(parent.body, cst.Raise):
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
                if not model.names.is_builtin(parent.func, "all"):
                    return None
            elif not isinstance(parent, (cst.GeneratorExp, cst.Arg, cst.CompFor)):
                return None
            child, parent = parent, model.parent(parent)
        return None

    def rejected_later(
        self,
        node: cst.CSTNode,
        target: cst.BaseExpression,
        family: Family,
        missing: list[str],
    ):
        """Facts after the check: a check in an ``if`` (no ``else``) whose
        failure lets the value, or every element of a collection, go on,
        followed by a loud rejection of the same value or collection that
        does not admit the companions left out (``if not all(isinstance(s,
        A) for s in xs): raise``, ``assert isinstance(s, A)``). Only raising
        guards and plain assignments to other names may stand between."""
        model = self.model
        key = target_key(target)
        if key is None:
            return None
        collection = self._collection_for(node, key)
        found = _if_statement_of(model, node)
        if found is None:
            return None
        statement, block = found
        if not (
            ends_in(statement.body, cst.Raise) or _failure_skips(model, node, statement)
        ):
            return None
        value = collection.removesuffix(".values()") if collection else key
        for later in block[block.index(statement) + 1 :]:
            rejection = self._rejection(later, key, collection, family, missing)
            if rejection is not None:
                line = model.line(later)
                return (
                    f"{rejection}: line {line} rejects what the check lets "
                    f"through, {', '.join(short_name(c) for c in missing)} "
                    "included, loudly"
                )
            if not _cannot_let_out(later, value):
                return None
        return None

    def _rejection(self, statement, key, collection, family, missing):
        """``assert`` or ``raise`` when ``statement`` loudly rejects, on the
        same value or collection, every companion in ``missing``."""
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(
            statement.body[0], cst.Assert
        ):
            test, kind = statement.body[0].test, "assert"
        elif (
            isinstance(statement, cst.If)
            and statement.orelse is None
            and ends_in(statement.body, cst.Raise)
        ):
            test, kind = statement.test, "raise"
        else:
            return None
        hierarchy = self.model.hierarchy
        for node in walk(test):
            if not isinstance(node, (cst.Call, cst.Comparison)):
                continue
            other = self.model.tests.type_test(node)
            if not other or self.loud_failure(node, other.positive) is None:
                continue
            other_key = target_key(other.target)
            same = (
                self._collection_for(node, other_key) == collection
                if collection is not None
                else other_key == key and self._collection_for(node, key) is None
            )
            left_out = hierarchy.uncovered(family, other.named, exact=other.exact)
            if same and all(c in left_out for c in missing):
                return kind
        return None

    def reason(
        self,
        node: cst.CSTNode,
        target: cst.BaseExpression,
        family: Family,
        missing: list[str],
        positive: bool,
    ) -> str | None:
        """Why this check is not reported by default, or None."""
        return (
            self.unreachable(node, target, missing, positive)
            or self.loud_failure(node, positive)
            or (positive and self.rejected_later(node, target, family, missing))
            or self.considered(node, target, missing)
        )


# -- helpers -----------------------------------------------------------------------


def _short(node: cst.CSTNode, limit: int = 60) -> str:
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _enclosing_function(model, node: cst.CSTNode) -> cst.CSTNode:
    """The function whose body holds ``node``, or the module."""
    parent = model.parent(node)
    while not isinstance(parent, (cst.FunctionDef, cst.Module)):
        parent = model.parent(parent)
    return parent


def _if_statement_of(model, node: cst.CSTNode):
    """The ``if`` (no ``elif``/``else``) whose test holds ``node``, and the
    statements of the block it stands in; None otherwise."""
    child, parent = node, model.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        child, parent = parent, model.parent(parent)
    if not isinstance(parent, cst.If) or child is not parent.test:
        return None
    if parent.orelse is not None:
        return None
    block = model.parent(parent)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None  # an elif: its block is the If before it
    return parent, list(block.body)


def decision_of(model, node: cst.CSTNode, *, through_or: bool = False):
    """The ``if`` or ``assert`` whose test decides on ``node``, reached
    through ``not``, ``and`` (also ``or`` with ``through_or``), ``any``/``all``
    and generators: ``(statement, negations on the way)``, or None when
    something else stands between (an assignment, another call)."""
    negations = 0
    child, parent = node, model.parent(node)
    while parent is not None:
        if isinstance(parent, (cst.If, cst.Assert)):
            return (parent, negations) if child is parent.test else None
        if isinstance(parent, cst.UnaryOperation) and isinstance(
            parent.operator, cst.Not
        ):
            negations += 1
        elif isinstance(parent, cst.BooleanOperation):
            if not (through_or or isinstance(parent.operator, cst.And)):
                return None
        elif isinstance(parent, cst.Call):
            if not any(model.names.is_builtin(parent.func, q) for q in ("any", "all")):
                return None
        elif not isinstance(parent, (cst.GeneratorExp, cst.Arg, cst.CompFor)):
            return None
        child, parent = parent, model.parent(parent)
    return None


def _failure_skips(model, node: cst.CSTNode, statement: cst.If) -> bool:
    """A failing ``node`` makes the ``if``'s test false (``and`` chains,
    ``any``/``all`` over generators, an even number of ``not``)."""
    found = decision_of(model, node)
    return found is not None and found[0] is statement and found[1] % 2 == 0


def _cannot_let_out(statement: cst.CSTNode, value: str) -> bool:
    """Statements that stand between a check and its rejection without
    letting the value out quietly: raising guards (``if ...: raise``,
    ``assert``), ``pass``, and plain assignments to other names (no call)."""
    if isinstance(statement, cst.If):
        return statement.orelse is None and all(
            isinstance(line, cst.SimpleStatementLine)
            and all(isinstance(s, cst.Raise) for s in line.body)
            for line in statement.body.body
        )
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, (cst.Assert, cst.Pass)):
            continue
        if isinstance(small, (cst.Assign, cst.AnnAssign)):
            if any(
                isinstance(n, (cst.Call, cst.Yield, cst.Await)) for n in walk(small)
            ):
                return False
            if any(hits(t, value) for t, _ in assignment_targets(small)):
                return False
            continue
        return False
    return True


def _statements_of(function: cst.CSTNode):
    if isinstance(function, cst.FunctionDef):
        return function.body.body
    return [
        s for s in function.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))
    ]


def _type_tests(model, function: cst.CSTNode) -> list[TypeTest]:
    """Every class test in a function's own body (not in nested functions),
    in source order."""
    tests = []
    for statement in _statements_of(function):
        for node in walk(statement, prune=_FUNCTION):
            # An attribute: a read of a declared layout property.
            if type(node) in _MAY_TEST:
                test = model.tests.type_test(node)
                if test:
                    tests.append(test)

    return tests  # walk() goes in source order


def _reassigned_between(model, function, key: str, first, second) -> bool:
    """An assignment to ``key`` between two tests (by position, so that
    ``if isinstance(s, A): s = t`` on one line counts as between)."""

    def start(node) -> tuple[int, int]:
        position = model.positions[node].start
        return position.line, position.column

    low, high = sorted(start(n) for n in (first, second))
    for statement in _statements_of(function):
        for target, at in assignment_targets(statement):
            if hits(target, key) and low < start(at) < high:
                return True
    return False


def _filters(model, node: cst.CSTNode) -> bool:
    """Whether ``node`` is in the ``if`` clause of a comprehension that
    builds a collection (a list, set or dict, or a generator handed to
    anything but ``any``/``all``), a lambda's body there included: such a
    clause lies within one statement."""
    child, parent = node, model.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.CompIf) and child is parent.test:
            comprehension = parent
            while not isinstance(
                comprehension,
                (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp),
            ):
                comprehension = model.parent(comprehension)
            return not _aggregated(model, comprehension)
        child, parent = parent, model.parent(parent)
    return False


def _aggregated(model, comprehension: cst.CSTNode) -> bool:
    """A generator that is the one argument of ``any``/``all``."""
    arg = model.parent(comprehension)
    call = model.parent(arg) if isinstance(arg, cst.Arg) else arg
    return (
        isinstance(comprehension, cst.GeneratorExp)
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ("any", "all")
    )
