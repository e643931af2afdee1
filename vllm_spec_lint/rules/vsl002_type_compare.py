from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.model.layout import property_answers
from vllm_spec_lint.repair.plans import add_companions, exact_comparison_to_membership
from vllm_spec_lint.rules.base import Example, Rule, describe


class ExactTypeLeavesOutCompanion(Rule):
    """
    Finds exact type comparisons with ``MLAAttentionSpec`` that leave out
    ``SlidingWindowMLASpec``: ``type(x) is / is not / == / != MLAAttentionSpec``
    and ``type(x) in (...)`` / ``not in`` with a container that names it;
    ``x.__class__`` in place of ``type(x)`` alike.

    Why: an exact comparison matches one class only, so a
    ``SlidingWindowMLASpec`` (MLA layout, different class) is treated as
    "not MLA". Base classes do not help here: ``type(x) in
    (MLAAttentionSpec, SlidingWindowSpec)`` still misses it.

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it):
    ``type(x) is MLAAttentionSpec`` becomes ``type(x) in
    (MLAAttentionSpec, SlidingWindowMLASpec)``; ``is not`` and ``!=``
    become ``not in``.

    Once the spec classes declare the family's layout property (``codemod
    layout-property``), VSL008 reports these comparisons in this rule's
    place, with a fix to the property.

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL002`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL002"
    NAME = "exact-type-leaves-out-companion"
    SUMMARY = (
        "type(x) is/==/in compares with MLAAttentionSpec but not SlidingWindowMLASpec"
    )

    VALID = [
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "ok = type(spec) in (MLAAttentionSpec, SlidingWindowMLASpec)\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "ok = type(spec) is MLAAttentionSpec or type(spec) is SlidingWindowMLASpec\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = type(spec) is int\n",
    ]
    INVALID = [
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "if type(spec) is MLAAttentionSpec:\n    pass\n",
            position=(2, 18),
            message="exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "other = type(spec) != MLAAttentionSpec\n",
            position=(2, 23),
            message="exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
            "ok = type(spec) in (MLAAttentionSpec, SlidingWindowSpec)\n",
            position=(2, 21),
            message="exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "if spec.__class__ == MLAAttentionSpec:\n    pass\n",
            position=(2, 22),
            message="exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1 import kv_cache_interface\n"
            "ok = spec.__class__ not in {kv_cache_interface.MLAAttentionSpec}\n",
            position=(2, 29),
            message="exact type comparison with MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
    ]

    def visit_Comparison(self, node: cst.Comparison) -> None:
        test = self.model.tests.type_test(node)
        if test is None or test.kind != "type":
            return
        for family in self.model.families:
            anchors = test.anchor_refs(family)
            if not anchors or property_answers(self.model, test, family):
                continue
            missing = self.missing_companions(test, family)
            reason = self.suppression(test, family, missing) if missing else None
            for ref in anchors if missing else ():
                self.report(
                    ref.node,
                    f"exact type comparison with {short_name(family.anchor)} "
                    f"leaves out {describe(missing)}",
                    self._fix(node, test.classinfo, ref.node, missing, test.positive),
                    reason,
                    family=family,
                    test=test,
                    missing=missing,
                )

    def _fix(self, node, classinfo, anchor, missing, positive):
        if classinfo is anchor:  # type(x) is A  ->  type(x) in (A, C)
            comparison = node.comparisons[0]
            type_side = (
                node.left
                if classinfo is comparison.comparator
                else comparison.comparator
            )
            return exact_comparison_to_membership(
                self.model, node, type_side, anchor, missing, positive
            )
        return add_companions(self.model, anchor, missing)
