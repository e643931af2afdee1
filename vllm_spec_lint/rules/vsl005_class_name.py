from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.repair.plans import (
    add_class_names,
    add_companions,
    exact_comparison_to_membership,
)
from vllm_spec_lint.rules.base import Example, Rule, describe

_IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"


class ClassNameLeavesOutCompanion(Rule):
    """
    Finds tests of a value's class by name or through its MRO that name
    ``MLAAttentionSpec`` and leave out ``SlidingWindowMLASpec``:

    - ``type(x).__name__ == "MLAAttentionSpec"`` (or ``x.__class__``,
      ``__qualname__``; ``!=``, ``in`` / ``not in`` a tuple of names): an
      exact test, matched by the companion's own name only;
    - scans of the MRO: ``any(c.__name__ == "MLAAttentionSpec" for c in
      type(x).__mro__)``, ``"MLAAttentionSpec" in {c.__name__ for c in
      type(x).__mro__}``, ``MLAAttentionSpec in type(x).__mro__`` (also
      ``type(x).mro()`` and ``inspect.getmro(type(x))``): ``isinstance()``
      tests, so a base class of the companion covers it.

    Why: code that must import without vLLM (LMCache's integration) tests
    spec classes by name, and a ``SlidingWindowMLASpec`` layer (MLA layout,
    another class) fails a test written for ``MLAAttentionSpec`` exactly as
    ``isinstance()`` does (VSL001). A string is read as a class name only
    where it is compared with a class's ``__name__``; a module that defines
    its own class of that name means its own class.

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it):
    an MRO scan that compares names (``c.__name__ == "A"``) or classes
    (``c is A``) gets the companion beside the anchor; a ``__name__``
    comparison becomes a membership test, ``type(x).__name__ in
    ("MLAAttentionSpec", "SlidingWindowMLASpec")``. ``"A" in {c.__name__
    ...}`` and ``A in type(x).__mro__`` have no automatic fix.

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL005`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL005"
    NAME = "class-name-leaves-out-companion"
    SUMMARY = (
        "a class-name or MRO test names MLAAttentionSpec but not SlidingWindowMLASpec"
    )

    VALID = [
        'ok = type(spec).__name__ in ("MLAAttentionSpec", "SlidingWindowMLASpec")\n',
        "ok = any(c.__name__ in ('MLAAttentionSpec', 'SlidingWindowSpec')\n"
        "         for c in type(spec).__mro__)\n",
        # A base class covers the companion through the MRO.
        'ok = "AttentionSpec" in {c.__name__ for c in type(spec).__mro__}\n',
        # A string that is not compared with a class's name.
        'logger.info("MLAAttentionSpec layers: %d", n)\nok = name == "MLAAttentionSpec"\n',
        # The module's own class of that name.
        "class MLAAttentionSpec:\n    pass\n\n\n"
        'ok = type(spec).__name__ == "MLAAttentionSpec"\n',
        # A base's name covers the companion in an MRO scan.
        'ok = any(c.__name__ == "AttentionSpec" for c in type(spec).__mro__)\n',
        # Strings that name no spec class, or a name not known to be a class's.
        'ok = type(spec).__name__ == "mla"\n',
        'ok = "MLAAttentionSpec" in layer_names\n',
        "ok = type(spec).__name__ == expected_name\n",
        # The exact name comparison, after the companion was taken.
        'if type(spec).__name__ == "SlidingWindowMLASpec":\n    pass\n'
        'elif type(spec).__name__ == "MLAAttentionSpec":\n    pass\n',
    ]
    INVALID = [
        Example(
            'is_mla = type(spec).__name__ == "MLAAttentionSpec"\n',
            position=(1, 33),
            message="class-name test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "ok = spec.__class__.__qualname__ not in ('MLAAttentionSpec', 'X')\n",
            position=(1, 42),
            message="class-name test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            "is_mla = any(\n"
            '    cls.__name__ == "MLAAttentionSpec" for cls in type(spec).__mro__\n'
            ")\n",
            position=(2, 21),
            message="MRO test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            'ok = "MLAAttentionSpec" in {c.__name__ for c in type(spec).mro()}\n',
            position=(1, 6),
            message="MRO test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            _IMPORT + "ok = MLAAttentionSpec in type(spec).__mro__\n",
            position=(2, 6),
            message="MRO test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            _IMPORT + "import inspect\n\n"
            "ok = any(c is MLAAttentionSpec for c in inspect.getmro(type(spec)))\n",
            position=(4, 15),
            message="MRO test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        Example(
            'ok = "MLAAttentionSpec" == type(spec).__name__\n',
            position=(1, 6),
            message="class-name test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
        # A base class does not cover an exact name.
        Example(
            'ok = type(spec).__name__ in ("MLAAttentionSpec", "AttentionSpec")\n',
            position=(1, 30),
            message="class-name test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._check(node)

    def _check(self, node: cst.Call | cst.Comparison) -> None:
        test = self.model.tests.type_test(node)
        if test is None or test.kind not in ("name", "mro"):
            return
        for family in self.model.families:
            anchors = test.anchor_refs(family)
            missing = self.missing_companions(test, family) if anchors else []
            if not missing:
                continue
            reason = self.suppression(test, family, missing)
            how = "class-name test" if test.kind == "name" else "MRO test"
            for ref in anchors:
                self.report(
                    ref.node,
                    f"{how} against {short_name(family.anchor)} "
                    f"leaves out {describe(missing)}",
                    self._fix(test, ref.node, missing),
                    reason,
                    family=family,
                    test=test,
                    missing=missing,
                )

    def _fix(self, test, anchor, missing):
        if isinstance(anchor, cst.SimpleString):
            if test.kind == "mro" and not isinstance(test.node, cst.Call):
                return None  # "A" in {c.__name__ ...}: no place for another name
            return add_class_names(self.model, anchor, missing)
        if not isinstance(test.node, cst.Call):
            return None  # A in type(x).__mro__
        comparison = test.node.args[0].value.elt
        if isinstance(test.classinfo, (cst.Tuple, cst.List, cst.Set)):
            return add_companions(self.model, anchor, missing)
        return exact_comparison_to_membership(
            self.model, comparison, comparison.left, anchor, missing, True
        )
