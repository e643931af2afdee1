from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.model.layout import property_answers
from vllm_spec_lint.repair.plans import add_companions
from vllm_spec_lint.rules.base import Example, Rule, describe


class IsinstanceLeavesOutCompanion(Rule):
    """
    Finds ``isinstance()`` / ``issubclass()`` checks against
    ``MLAAttentionSpec`` that do not also cover ``SlidingWindowMLASpec``.

    Why: ``SlidingWindowMLASpec`` (DeepSeek-V4's compressed layers) stores its
    KV cache in the MLA layout but is not a subclass of ``MLAAttentionSpec``.
    A check that means "uses the MLA layout" silently treats those layers as
    non-MLA. vLLM PR #45831 fixed exactly this in the NIXL connector:
    ``is_mla_region = isinstance(layer_spec, MLAAttentionSpec)`` broke DSV4
    prefill/decode disaggregation.

    A check covers ``SlidingWindowMLASpec`` when it names it or one of its
    base classes (``SlidingWindowSpec``, ``AttentionSpec``, ``KVCacheSpec``),
    or when the same ``or`` chain (or an earlier ``elif`` branch) tests the
    same value for it. The class may be named directly, through an alias or
    a module attribute, in a tuple (nested, starred), in an ``A | B`` union,
    or in a concatenation (``KINDS + (MLAAttentionSpec,)``).

    A plugin's stand-in (``AscendMLAAttentionSpec(MLAAttentionSpec)``, a
    subclass named after the class it replaces) is checked the same way:
    what it leaves out is the plugin's stand-in of the companion, or
    ``SlidingWindowMLASpec`` itself where the plugin has none. A subclass
    under a name of its own (a different cache) is reported only with
    ``--strict`` (docs/rules.md, "Stand-ins").

    By default a check is not reported when ``SlidingWindowMLASpec`` cannot
    reach it (an earlier guard, branch or early exit in the same function
    rules it out), when the function tests the same value for it elsewhere,
    or when the check is an assert that fails loudly; ``--strict`` reports
    those too, and ``--explain-suppressions`` says why each was left out.

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it):
    add ``SlidingWindowMLASpec`` right after ``MLAAttentionSpec`` and
    import it where ``MLAAttentionSpec`` comes from.

    Once the spec classes declare the family's layout property (``codemod
    layout-property``), VSL008 reports the ``isinstance()`` tests it can
    rewrite in this rule's place, with a fix to the property.

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL001`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL001"
    NAME = "isinstance-leaves-out-companion"
    SUMMARY = (
        "isinstance()/issubclass() names MLAAttentionSpec but not SlidingWindowMLASpec"
    )

    VALID = [
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "is_mla = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowSpec))\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "ok = isinstance(spec, MLAAttentionSpec) or isinstance(spec, SlidingWindowMLASpec)\n",
        # A class of the same name that is not vLLM's (a test double).
        "class MLAAttentionSpec:\n    pass\n\nok = isinstance(spec, MLAAttentionSpec)\n",
        # A shadowed isinstance is not the builtin.
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "def f(isinstance, spec):\n    return isinstance(spec, MLAAttentionSpec)\n",
        "# isinstance(spec, MLAAttentionSpec) in a comment\n"
        "doc = 'isinstance(spec, MLAAttentionSpec)'\n",
        # A loud rejection right after the check: the companion cannot pass it.
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "def partition(specs):\n"
        "    if any(isinstance(s, MLAAttentionSpec) and s.v4 for s in specs):\n"
        "        raise ValueError('v4')\n"
        "    if not all(isinstance(s, MLAAttentionSpec) for s in specs):\n"
        "        raise ValueError('MLA only')\n",
    ]
    INVALID = [
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n",
            position=(2, 40),
            message="isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec as M\n"
            "if not isinstance(spec, (FullAttentionSpec, M)):\n    pass\n",
            position=(2, 45),
            message="isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "import vllm.v1.kv_cache_interface as kci\n"
            "ok = issubclass(cls, kci.FullAttentionSpec | kci.MLAAttentionSpec)\n",
            position=(2, 46),
            message="issubclass() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
            "FULL = (FullAttentionSpec,)\n"
            "ok = isinstance(spec, FULL + (MLAAttentionSpec,))\n",
            position=(3, 31),
            message="isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import *\n"
            "n = sum(1 for s in specs if isinstance(s, MLAAttentionSpec))\n",
            position=(2, 43),
            message="isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "has_mla = all(isinstance(s, MLAAttentionSpec) for s in specs.values())\n",
            position=(2, 29),
            message="isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        test = self.model.tests.type_test(node)
        if test is None or test.kind != "isinstance":
            return
        for family in self.model.families:
            anchors = [r for r in test.anchor_refs(family) if not r.via_constant]
            if not anchors or property_answers(self.model, test, family):
                continue
            missing = self.missing_companions(test, family)
            if missing:
                func = (
                    "issubclass"
                    if self.model.names.is_builtin(node.func, "issubclass")
                    else "isinstance"
                )
                reason = self.suppression(test, family, missing)
                for ref in anchors:
                    self.report(
                        ref.node,
                        f"{func}() check against {short_name(family.anchor)} "
                        f"leaves out {describe(missing)}",
                        add_companions(self.model, ref.node, missing),
                        reason,
                        family=family,
                        test=test,
                        missing=missing,
                    )
