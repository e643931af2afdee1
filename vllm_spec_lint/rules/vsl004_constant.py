from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.repair.plans import add_companions
from vllm_spec_lint.rules.base import Example, Rule, describe


class ConstantLeavesOutCompanion(Rule):
    """
    Finds module- or class-level constants that collect spec classes, as a
    tuple, an ``A | B`` union or a ``frozenset``, containing
    ``MLAAttentionSpec`` but not covering ``SlidingWindowMLASpec``, e.g.
    ``_MLA_SPECS = (MLAAttentionSpec,)``.

    Why: such constants are what ``isinstance(spec, _MLA_SPECS)`` checks
    against elsewhere, so leaving the companion out of the constant misses
    ``SlidingWindowMLASpec`` layers in every check that uses it (see VSL001).
    Checks through the constant are not reported again: the constant is.

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it):
    add ``SlidingWindowMLASpec`` after ``MLAAttentionSpec``; every check
    that uses the constant then admits it.
    ``X: TypeAlias = ...`` aliases are for annotations and are not reported.

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL004`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL004"
    NAME = "constant-leaves-out-companion"
    SUMMARY = "a constant tuple/union/frozenset of specs lists MLAAttentionSpec only"

    VALID = [
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "_MLA_SPECS = (MLAAttentionSpec, SlidingWindowMLASpec)\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "def f():\n    local_specs = (MLAAttentionSpec,)\n",
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "PAIR = (MLAAttentionSpec, 16)\n",
        # Aliases are for annotations, from either module.
        "from typing import TypeAlias\n"
        "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
        "AnyMLA: TypeAlias = FullAttentionSpec | MLAAttentionSpec\n",
        "from typing_extensions import TypeAlias\n"
        "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
        "AnyMLA: TypeAlias = FullAttentionSpec | MLAAttentionSpec\n",
    ]
    INVALID = [
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "_MLA_SPECS = (MLAAttentionSpec,)\n",
            position=(2, 1),
            message="constant _MLA_SPECS lists MLAAttentionSpec but leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
            "class Worker:\n"
            "    SPECS: frozenset = frozenset({FullAttentionSpec, MLAAttentionSpec})\n",
            position=(3, 5),
            message="constant SPECS lists MLAAttentionSpec but leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
            "AnyMLA = FullAttentionSpec | MLAAttentionSpec\n",
            position=(2, 1),
            message="constant AnyMLA lists MLAAttentionSpec but leaves out SlidingWindowMLASpec",
        ),
    ]

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        parent = self.model.parent(node)
        if not (
            isinstance(parent, cst.Module)
            or isinstance(self.model.parent(parent), cst.ClassDef)
        ):
            return
        for small in node.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                self._check(small.targets[0].target, small.value)
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                annotation = small.annotation.annotation
                if not (
                    isinstance(annotation, (cst.Name, cst.Attribute))
                    and self.model.names.qualified_names(annotation)
                    & {"typing.TypeAlias", "typing_extensions.TypeAlias"}
                ):
                    self._check(small.target, small.value)

    def _check(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        model = self.model
        if not isinstance(target, cst.Name) or not self._is_class_collection(value):
            return
        refs = model.tests.classinfo_refs(value)
        if not all(isinstance(r.node, (cst.Name, cst.Attribute)) for r in refs):
            return  # not a collection of classes, e.g. (MLAAttentionSpec, 16)
        named = {r.qualname for r in refs if r.qualname}
        for family in model.families:
            if family.anchor in named:
                missing = model.hierarchy.uncovered(family, named)
                if missing:
                    anchor = next(r.node for r in refs if r.qualname == family.anchor)
                    self.report(
                        target,
                        f"constant {target.value} lists {short_name(family.anchor)} "
                        f"but leaves out {describe(missing)}",
                        add_companions(model, anchor, missing),
                        family=family,
                    )

    def _is_class_collection(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Tuple):
            return True
        if isinstance(value, cst.BinaryOperation):
            return isinstance(value.operator, cst.BitOr)
        return isinstance(value, cst.Call) and self.model.names.is_builtin(
            value.func, "frozenset"
        )
