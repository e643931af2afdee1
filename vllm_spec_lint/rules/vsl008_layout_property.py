from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.model.layout import layout_test
from vllm_spec_lint.repair.layout import layout_plan
from vllm_spec_lint.rules.base import Example, Rule, describe

_INTERFACE = (
    "class KVCacheSpec:\n"
    "    @property\n"
    "    def uses_mla_layout(self) -> bool:\n"
    "        return False\n\n\n"
    "class AttentionSpec(KVCacheSpec):\n    pass\n\n\n"
    "class FullAttentionSpec(AttentionSpec):\n    pass\n\n\n"
    "class MLAAttentionSpec(FullAttentionSpec):\n"
    "    @property\n"
    "    def uses_mla_layout(self) -> bool:\n"
    "        return True\n\n\n"
    "class SlidingWindowSpec(AttentionSpec):\n    pass\n\n\n"
    "class SlidingWindowMLASpec(SlidingWindowSpec):\n"
    "    @property\n"
    "    def uses_mla_layout(self) -> bool:\n"
    "        return True\n"
)
_IMPORT = "from vllm.v1.kv_cache_interface import "


class ClassTestInsteadOfLayoutProperty(Rule):
    """
    Finds ``isinstance()`` tests against ``MLAAttentionSpec`` in a tree whose
    spec classes declare the layout property (``uses_mla_layout``, written by
    ``vllm-spec-lint codemod layout-property``). Before that property
    exists, this rule is silent.

    Why: a class test decides the MLA layout by listing classes, and every
    class added later must be added to every list: exactly the bug of vLLM
    PR #45831, whose review asked the spec classes for their layout instead.
    Once ``KVCacheSpec.uses_mla_layout`` exists (False, and True on
    ``MLAAttentionSpec`` and ``SlidingWindowMLASpec``), the property is the
    one place that knows, and a new class sets it once.

    Reported: a test naming the whole family (``isinstance(s,
    (MLAAttentionSpec, SlidingWindowMLASpec))``), and a test naming the
    anchor that VSL001 reports (one that leaves a companion out and is not
    deliberate: a ``# noqa: VSL001`` on its line keeps it quiet here too,
    and so do the reasons ``--strict`` gives); exact comparisons alike
    (``type(s) is MLAAttentionSpec``, in VSL002's place and under its
    noqa). Tests of one companion alone ask about that class, not the
    layout, and are not reported; neither are ``issubclass()`` tests (a
    class has no property value to read).

    Fix: the test becomes ``spec.uses_mla_layout`` where the value is known
    to be a spec (a ``kv_cache_spec`` attribute, a parameter annotated with
    a spec class, a value of a collection annotated so, an earlier test of
    the same decision), else ``isinstance(spec, KVCacheSpec) and
    spec.uses_mla_layout``, which is True for exactly the same values; other
    classes the test names stay in an ``isinstance()`` of their own, before
    an ``or``. Safe for a test naming the whole family (the same result for
    every value); unsafe for one that leaves a companion out (the
    companion's layers change branch, as with VSL001's fix) and for an
    exact comparison (``type(s) is not MLAAttentionSpec`` becomes ``not
    spec.uses_mla_layout``: subclasses of the family's classes now pass
    too; one that also names other classes gets no fix). A value that
    is computed (a call) would be read twice: no fix. An import the rewrite
    leaves unused stays (ruff's F401 removes it); the codemod removes it.

    In VSL001's place: once the property is declared, VSL001 leaves these
    tests to this rule. Suppress a deliberate site with ``# noqa: VSL008``
    (or the ``# noqa: VSL001`` it already has) and a reason.
    """

    CODE = "VSL008"
    NAME = "class-test-instead-of-layout-property"
    SUMMARY = "isinstance() lists MLA-layout classes instead of asking uses_mla_layout"

    VALID = [
        # The property is not declared: silent.
        Example(
            _IMPORT + "MLAAttentionSpec, SlidingWindowMLASpec\n"
            "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        ),
        Example(
            _INTERFACE + "\n\nok = isinstance(spec, SlidingWindowMLASpec)\n",
            module="vllm.v1.kv_cache_interface",
        ),
        Example(
            _INTERFACE
            + "\n\nok = issubclass(cls, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
            module="vllm.v1.kv_cache_interface",
        ),
        Example(
            _INTERFACE
            + "\n\nok = isinstance(spec, MLAAttentionSpec)  # noqa: VSL001\n",
            module="vllm.v1.kv_cache_interface",
        ),
    ]
    INVALID = [
        Example(
            _INTERFACE
            + "\n\nok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
            module="vllm.v1.kv_cache_interface",
            position=(31, 6),
            message="isinstance() lists MLAAttentionSpec, SlidingWindowMLASpec: "
            "ask `uses_mla_layout`",
            fixed=_INTERFACE
            + "\n\nok = isinstance(spec, KVCacheSpec) and spec.uses_mla_layout\n",
        ),
        Example(
            _INTERFACE + "\n\ndef f(spec: KVCacheSpec):\n"
            "    if not isinstance(spec, MLAAttentionSpec):\n        return 1\n",
            module="vllm.v1.kv_cache_interface",
            position=(32, 12),
            message="isinstance() lists MLAAttentionSpec and leaves out "
            "SlidingWindowMLASpec: ask `uses_mla_layout`",
            fixed=_INTERFACE + "\n\ndef f(spec: KVCacheSpec):\n"
            "    if not spec.uses_mla_layout:\n        return 1\n",
        ),
        Example(
            _INTERFACE + "\n\nok = type(spec) is not MLAAttentionSpec\n",
            module="vllm.v1.kv_cache_interface",
            position=(31, 24),
            message="exact type comparison with MLAAttentionSpec leaves out "
            "SlidingWindowMLASpec: ask `uses_mla_layout`",
            fixed=_INTERFACE
            + "\n\nok = not (isinstance(spec, KVCacheSpec) and spec.uses_mla_layout)\n",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._check(node)

    def _check(self, node: cst.BaseExpression) -> None:
        test = self.model.tests.type_test(node)
        if test is None:
            return
        for family in self.model.families:
            layout = layout_test(self.model, test, family)
            if layout is None or not self.model.hierarchy.declares_layout(family):
                continue
            named = ", ".join(
                short_name(self.model.names.class_of(m)) for m in layout.members
            )
            if layout.exact:
                # Never equivalent: the property admits subclasses too.
                message, applicability = f"exact type comparison with {named}", "unsafe"
                site, rule = test.anchor_refs(family)[0].node, "VSL002"
            else:
                message = f"isinstance() lists {named}"
                # Equivalent for every value; a guessed family stays unsafe.
                applicability = "unsafe" if family.evidence else "safe"
                site, rule = node, "VSL001"
            missing, reason = [], None
            if not layout.whole_family:
                missing = self.missing_companions(test, family)
                if not missing:
                    continue  # a parent class covers them: not the layout
                reason = self.suppression(test, family, missing)
                applicability = "unsafe"
                joint = "" if layout.exact else " and"
                message += f"{joint} leaves out {describe(missing)}"
            plan = layout_plan(self.model, layout, family, applicability)
            message += f": ask `{family.property_name}`"
            if isinstance(plan, str):  # why there is no fix
                message, plan = f"{message} (no fix: {plan})", None
            self.report(
                site,
                message,
                plan,
                reason,
                family=family,
                test=test,
                missing=missing,
                follows=() if layout.whole_family else (rule,),
            )
