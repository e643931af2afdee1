"""Why a check the rules would report is fine as written: the reasons the
default mode leaves a finding out (``--strict`` reports it).

- narrowed: a guard fact (facts.py) rules out every companion left out;
- loud: the check is an assert, or raises when it fails;
- deliberate: the same function tests the same value for the companion.
"""

from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.facts import (
    assignment_targets,
    ends_in,
    excludes,
    hits,
    loop_collection,
)
from vllm_spec_lint.model.hierarchy import Family, short_name
from vllm_spec_lint.model.syntax import code_of, target_key, walk


class Narrowing:
    """The reasons, asked about one check at a time."""

    def __init__(self, model):
        self.model = model

    # -- the three reasons ------------------------------------------------------

    def unreachable(
        self,
        node: cst.CSTNode,
        target,
        family: Family,
        missing: list[str],
        positive: bool = True,
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

    def considered(self, node: cst.CSTNode, target, missing: list[str]):
        """Another test of the same value in the same function names the
        companion: the author handled it on purpose."""
        model = self.model
        key = target_key(target) if target is not None else None
        collection = self._collection_for(node, key)
        function = _enclosing_function(model, node)
        if function is None or (key is None and collection is None):
            return None
        for other in _type_tests(model, function):
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
                model, function, value, node, other.node
            ):
                line = model.line(other.node)
                return (
                    f"deliberate: line {line} tests `{code_of(other.target)}` for "
                    f"{', '.join(short_name(c) for c in missing if c in other.named)}"
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
                return collection
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
            self.unreachable(node, target, family, missing, positive)
            or self.loud_failure(node, positive)
            or self.considered(node, target, missing)
        )


# -- helpers -----------------------------------------------------------------------


def _short(node: cst.CSTNode, limit: int = 60) -> str:
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _enclosing_function(model, node: cst.CSTNode) -> cst.CSTNode | None:
    parent = model.parent(node)
    while parent is not None:
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            return parent
        parent = model.parent(parent)
    return None


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
        for node in walk(statement, prune=(cst.FunctionDef,)):
            if isinstance(node, (cst.Call, cst.Comparison)):
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
