from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.repair.plans import add_companion_patterns
from vllm_spec_lint.rules.base import Example, Rule


def class_patterns(pattern: cst.MatchPattern) -> Iterator[cst.MatchClass]:
    """The class patterns a case tries at its top level (``A() | B() as x``)."""
    if isinstance(pattern, cst.MatchAs) and pattern.pattern is not None:
        yield from class_patterns(pattern.pattern)
    elif isinstance(pattern, cst.MatchOr):
        for element in pattern.patterns:
            yield from class_patterns(element.pattern)
    elif isinstance(pattern, cst.MatchClass):
        yield pattern


def catches_every_instance(case: cst.MatchCase, cls: cst.MatchClass) -> bool:
    return case.guard is None and not cls.patterns and not cls.kwds


class MatchClassLeavesOutCompanion(Rule):
    """
    Finds ``match`` cases with a class pattern ``case MLAAttentionSpec(...)``
    and no ``SlidingWindowMLASpec(...)`` alternative in the same case.

    Why: a class pattern is an ``isinstance()`` test, so the case skips
    ``SlidingWindowMLASpec`` layers although they use the MLA layout (see
    VSL001). A case is fine when an alternative names the companion or one of
    its base classes, or when an earlier case of the same ``match`` already
    catches every companion instance (no sub-patterns, no guard).

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it;
    only when the pattern has no sub-patterns): ``case
    MLAAttentionSpec():`` becomes ``case MLAAttentionSpec() |
    SlidingWindowMLASpec():``. With sub-patterns the finding is reported
    without a fix: the companion may not have the same attributes.

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL003`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL003"
    NAME = "match-class-leaves-out-companion"
    SUMMARY = "case MLAAttentionSpec() has no SlidingWindowMLASpec() alternative"

    VALID = [
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "match spec:\n"
        "    case MLAAttentionSpec() | SlidingWindowMLASpec():\n"
        "        pass\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "match spec:\n"
        "    case SlidingWindowMLASpec():\n"
        "        pass\n"
        "    case MLAAttentionSpec():\n"
        "        pass\n",
    ]
    INVALID = [
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "match spec:\n"
            "    case MLAAttentionSpec():\n"
            "        pass\n",
            position=(3, 10),
            message="case MLAAttentionSpec() has no SlidingWindowMLASpec() alternative",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
            "match spec:\n"
            "    case SlidingWindowMLASpec(block_size=16):\n"
            "        pass\n"
            "    case MLAAttentionSpec(block_size=b) as mla:\n"
            "        pass\n",
            position=(5, 10),
            message="case MLAAttentionSpec() has no SlidingWindowMLASpec() alternative",
        ),
    ]

    def visit_Match(self, node: cst.Match) -> None:
        model = self.model
        earlier: set[str] = set()  # classes whose every instance an earlier case took
        for case in node.cases:
            patterns = [
                (p, model.names.class_of(p.cls)) for p in class_patterns(case.pattern)
            ]
            named = {cls for _, cls in patterns if cls} | earlier
            for family in model.families:
                missing = model.hierarchy.uncovered(family, named)
                for pattern, cls in patterns if missing else ():
                    if cls == family.anchor:
                        self.report(
                            pattern.cls,
                            f"case {short_name(family.anchor)}() has no "
                            f"{' or '.join(short_name(c) + '()' for c in missing)} "
                            "alternative",
                            add_companion_patterns(model, pattern, missing),
                            model.narrowing.reason(
                                pattern, node.subject, family, missing, positive=False
                            ),
                            family=family,
                        )
            earlier |= {
                cls for p, cls in patterns if cls and catches_every_instance(case, p)
            }
