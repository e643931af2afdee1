from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.facts import ends_in, excludes
from vllm_spec_lint.model.hierarchy import Family, short_name
from vllm_spec_lint.model.layout import is_pure
from vllm_spec_lint.model.narrowing import decision_of
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.model.syntax import target_key, walk
from vllm_spec_lint.repair.plans import FixPlan, companion_expressions
from vllm_spec_lint.rules.base import Example, Rule
from vllm_spec_lint.rules.vsl003_match_class import (
    catches_every_instance,
    class_patterns,
)

SHARED = "shared: "


def _shared(what: str, companion: str) -> str:
    """The reason a site is quiet when ``what`` it tests is shared by the
    companion (it does not reject the class)."""
    return (
        f"{SHARED}{what} does not reject the class; "
        f"{short_name(companion)} shares what it is about here"
    )


class ParentSweepsInCompanion(Rule):
    """
    Finds class tests against ``SlidingWindowSpec`` that sweep
    ``SlidingWindowMLASpec`` in where the code means the ordinary K/V layout.

    Why: ``SlidingWindowMLASpec`` derives from ``SlidingWindowSpec`` (it has a
    sliding window) but stores its cache in ``MLAAttentionSpec``'s layout. A
    test against ``SlidingWindowSpec`` admits it. That is right where the
    code is about windowing (window size, which blocks leave the window),
    which the companion shares, and wrong where it is about the layout or
    the transfer path. vLLM 0.34.0 fixed one: MoRIIO's WRITE mode rejected
    every sliding-window group, ``SlidingWindowMLASpec`` ones included, and
    now adds ``and not isinstance(g.kv_cache_spec, SlidingWindowMLASpec)``
    ("SlidingWindowMLASpec slots are MLA latents - WRITE handles them").

    Which classes: a companion's own proper ancestors that the anchor does
    not share (below their common ancestor), read from the hierarchy; for
    vLLM, ``SlidingWindowSpec``, never ``AttentionSpec``. A family whose
    companion has no such ancestor has nothing to report. A test is quiet
    when it names the companion (an explicit inclusion) or the anchor (it
    admits the anchor's layout as well), when its own
    decision excludes it (``isinstance(s, SlidingWindowSpec) and not
    isinstance(s, SlidingWindowMLASpec)``), when an earlier guard in the
    function rules it out, or when the function tests the same value for it
    elsewhere.

    Precision first: by default only a test that *rejects* the class is
    reported: when it holds, the code raises, returns ``False``/``None``, or
    asserts the opposite. A rejection of sliding-window caches names a
    path that does not handle them; whether it also cannot handle the MLA
    layout's sliding-window layers is the question a reviewer should be
    asked. Every other test is about what the companion shares and is left
    out; ``--strict`` reports them all, each with its reason.

    A class pattern, ``case SlidingWindowSpec():``, is read alike: quiet when
    an earlier case took the companion or the same case names it or the
    anchor; reported when its body rejects (raises, returns
    ``False``/``None``).

    Dispatch is read the same way. A ``functools.singledispatch`` function
    walks the MRO, so an implementation registered for ``SlidingWindowSpec``
    serves the companion unless one is registered for it (or for a class
    between them); a table looked up along the MRO (``for c in
    type(x).__mro__: table[c]``) does the same with its entries. Reported by
    default when that implementation raises or returns ``False``/``None``
    first, or that entry is ``False``/``None``. Registries and tables looked
    up by exact type (``table[type(x)]``) never give a subclass its parent's
    entry and are not sweeps.

    Fix (unsafe: it changes which values the test admits, which is the point
    for a real sweep and a regression where the companion belongs; only a
    person can tell which): exclude the companion explicitly,
    ``(isinstance(x, SlidingWindowSpec) and not isinstance(x,
    SlidingWindowMLASpec))``, importing it where ``SlidingWindowSpec`` comes
    from; once the spec classes declare the layout property (``codemod
    layout-property``), ``(isinstance(x, SlidingWindowSpec) and not
    x.uses_mla_layout)`` instead, which the codemod writes with
    ``--unsafe-fixes``. Tests through the MRO or by name, class patterns and
    dispatch get no automatic fix (for dispatch, register the companion
    with the implementation it needs). Nor does a test ``--strict`` reports as
    ``shared:``: by the rule's own reading the companion shares what it is
    about, and excluding it would be the bug (``--unsafe-fixes`` and the
    editor's quick fixes never apply one).

    Two ways forward: a test that must keep the companion out gets the
    exclusion (the fix); one that includes it on purpose says so by naming
    it, ``isinstance(x, (SlidingWindowSpec, SlidingWindowMLASpec))``, or
    keeps the code. Suppress such a site with ``# noqa: VSL007`` and a reason
    on the reported line (``check --add-noqa`` adds one to every reported
    line).
    """

    CODE = "VSL007"
    NAME = "parent-sweeps-in-companion"
    SUMMARY = (
        "a test against SlidingWindowSpec that rejects it also rejects "
        "SlidingWindowMLASpec"
    )

    VALID = [
        # The companion excluded explicitly: vLLM 0.34.0's MoRIIO fix.
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
        "def check(groups):\n"
        "    if any(\n"
        "        isinstance(g, SlidingWindowSpec) and not isinstance(g, SlidingWindowMLASpec)\n"
        "        for g in groups\n"
        "    ):\n"
        "        raise NotImplementedError('sliding window')\n",
        # Windowing: the companion shares it.
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
        "def window(spec):\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        return spec.sliding_window\n"
        "    return 0\n",
        # Included on purpose.
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, (SlidingWindowSpec, SlidingWindowMLASpec)):\n"
        "        raise NotImplementedError('sliding window')\n",
        # Narrowed: the companion was handled first.
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return True\n"
        "    if isinstance(spec, SlidingWindowSpec):\n"
        "        raise NotImplementedError('sliding window')\n"
        "    return True\n",
        # An earlier case took the companion.
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
        "def check(spec):\n"
        "    match spec:\n"
        "        case SlidingWindowMLASpec():\n"
        "            return True\n"
        "        case SlidingWindowSpec():\n"
        "            raise NotImplementedError('K/V layout only')\n",
        # The companion has an implementation of its own.
        "import functools\n\n"
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
        "@functools.singledispatch\n"
        "def can_write(spec):\n"
        "    return True\n\n"
        "@can_write.register(SlidingWindowSpec)\n"
        "def _(spec):\n"
        "    return False\n\n"
        "@can_write.register(SlidingWindowMLASpec)\n"
        "def _(spec):\n"
        "    return True\n",
        # An exact-type lookup: the companion never gets the parent's entry.
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
        "SUPPORTS_WRITE = {SlidingWindowSpec: False}\n\n"
        "def supports_write(spec):\n"
        "    return SUPPORTS_WRITE.get(type(spec), True)\n",
        # The common ancestor admits both layouts alike: not a sweep.
        "from vllm.v1.kv_cache_interface import AttentionSpec\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, AttentionSpec):\n"
        "        raise NotImplementedError('attention')\n",
    ]
    INVALID = [
        Example(
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "def check(spec):\n"
            "    match spec:\n"
            "        case SlidingWindowSpec():\n"
            "            raise NotImplementedError('K/V layout only')\n",
            position=(5, 14),
            message="case SlidingWindowSpec() also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
        ),
        # vLLM 0.33.0's MoRIIO WRITE-mode check.
        Example(
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "def check(mode, groups):\n"
            "    if mode == 'write' and any(\n"
            "        isinstance(g.kv_cache_spec, SlidingWindowSpec) for g in groups\n"
            "    ):\n"
            "        raise NotImplementedError('WRITE mode does not support sliding window')\n",
            position=(5, 37),
            message="isinstance() check against SlidingWindowSpec also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
            fixed=(
                "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
                "def check(mode, groups):\n"
                "    if mode == 'write' and any(\n"
                "        isinstance(g.kv_cache_spec, SlidingWindowSpec)"
                " and not isinstance(g.kv_cache_spec, SlidingWindowMLASpec)"
                " for g in groups\n"
                "    ):\n"
                "        raise NotImplementedError('WRITE mode does not support sliding window')\n"
            ),
        ),
        Example(
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "def supported(spec):\n"
            "    if isinstance(spec, SlidingWindowSpec):\n"
            "        return False\n"
            "    return True\n",
            position=(4, 25),
            message="isinstance() check against SlidingWindowSpec also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
            fixed=(
                "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
                "def supported(spec):\n"
                "    if isinstance(spec, SlidingWindowSpec)"
                " and not isinstance(spec, SlidingWindowMLASpec):\n"
                "        return False\n"
                "    return True\n"
            ),
        ),
        Example(
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "def check(spec):\n"
            "    assert not isinstance(spec, SlidingWindowSpec), 'K/V layout only'\n",
            position=(4, 33),
            message="isinstance() check against SlidingWindowSpec also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
            fixed=(
                "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n\n"
                "def check(spec):\n"
                "    assert not (isinstance(spec, SlidingWindowSpec)"
                " and not isinstance(spec, SlidingWindowMLASpec)), 'K/V layout only'\n"
            ),
        ),
        Example(
            "import vllm.v1.kv_cache_interface as kci\n\n"
            "def check(spec):\n"
            "    if not isinstance(spec, kci.MambaSpec | kci.SlidingWindowSpec):\n"
            "        return True\n"
            "    else:\n"
            "        raise ValueError('K/V layout')\n",
            position=(4, 45),
            message="isinstance() check against SlidingWindowSpec also admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
            fixed=(
                "import vllm.v1.kv_cache_interface as kci\n\n"
                "def check(spec):\n"
                "    if not (isinstance(spec, kci.MambaSpec | kci.SlidingWindowSpec)"
                " and not isinstance(spec, kci.SlidingWindowMLASpec)):\n"
                "        return True\n"
                "    else:\n"
                "        raise ValueError('K/V layout')\n"
            ),
        ),
        Example(
            "import functools\n\n"
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "@functools.singledispatch\n"
            "def register_region(spec):\n"
            "    pass\n\n"
            "@register_region.register\n"
            "def _(spec: SlidingWindowSpec):\n"
            "    raise NotImplementedError('K/V layout only')\n",
            position=(10, 13),
            message="singledispatch function register_region's SlidingWindowSpec implementation also serves SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
        ),
        Example(
            "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n\n"
            "SUPPORTS_WRITE = {SlidingWindowSpec: False}\n\n"
            "def supports_write(spec):\n"
            "    for c in type(spec).__mro__:\n"
            "        if c in SUPPORTS_WRITE:\n"
            "            return SUPPORTS_WRITE[c]\n"
            "    return True\n",
            position=(3, 19),
            message="table keyed by SlidingWindowSpec (MRO lookup) also serves SlidingWindowMLASpec, which has MLAAttentionSpec's layout",
        ),
    ]

    def visit_Match(self, node: cst.Match) -> None:
        """``case SlidingWindowSpec():`` admits the companion too, unless an
        earlier case took it or the same case names it or the anchor."""
        model, hierarchy = self.model, self.model.hierarchy
        earlier: set[str] = set()  # classes whose every instance a case took
        for case in node.cases:
            patterns = [
                (p, model.names.class_of(p.cls)) for p in class_patterns(case.pattern)
            ]
            named = {cls for _, cls in patterns if cls}
            for family in _swept_families(model):
                for companion, parents in hierarchy.companion_parents(family).items():
                    taken = earlier | named
                    if taken & (hierarchy.ancestors(companion) - set(parents)) or (
                        taken & hierarchy.ancestors(family.anchor)
                    ):
                        continue
                    for pattern, cls in patterns:
                        if cls not in parents:
                            continue
                        reason = None
                        if not _refuses(case.body):
                            reason = _shared("the case", companion)
                        self.report(
                            pattern.cls,
                            f"case {short_name(cls)}() also admits "
                            f"{short_name(companion)}, which has "
                            f"{short_name(family.anchor)}'s layout",
                            None,
                            reason,
                            family=family,
                        )
            earlier |= {
                cls for p, cls in patterns if cls and catches_every_instance(case, p)
            }

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)
        self._table(node)

    def visit_Dict(self, node: cst.Dict) -> None:
        self._table(node)

    def _table(self, node: cst.Dict | cst.Call) -> None:
        """A table looked up along the MRO gives the companion its parent's
        entry unless a key lies nearer to it. An exact lookup never does."""
        table = self.model.dispatch.table(node)
        if table is None or not table.by_mro:
            return
        keyed = {e.ref.qualname for e in table.entries if e.ref.qualname}
        for family, companion, parent in self._served_by_parent(keyed):
            for entry in table.entries:
                if entry.ref.qualname != parent:
                    continue
                reason = None
                if not _rejecting_value(entry.value):
                    reason = _shared("the entry", companion)
                self.report(
                    entry.ref.node,
                    f"table keyed by {short_name(parent)} (MRO lookup) also "
                    f"serves {short_name(companion)}, which has "
                    f"{short_name(family.anchor)}'s layout",
                    None,
                    reason,
                    family=family,
                )

    def visit_Module(self, node: cst.Module) -> None:
        """A singledispatch function walks the MRO: the companion reaches
        its parent's implementation unless one is registered nearer.
        Registries look classes up exactly and never do."""
        for name, registered in self.model.dispatch.registrations.items():
            if not registered.by_mro:
                continue
            keyed = {ref.qualname for ref in registered.refs}
            for family, companion, parent in self._served_by_parent(keyed):
                for ref, site in registered.registered:
                    if ref.qualname != parent:
                        continue
                    reason = None
                    if not self._implementation_refuses(site):
                        reason = _shared("the implementation", companion)
                    self.report(
                        ref.node,
                        f"singledispatch function {name}'s "
                        f"{short_name(parent)} implementation also serves "
                        f"{short_name(companion)}, which has "
                        f"{short_name(family.anchor)}'s layout",
                        None,
                        reason,
                        family=family,
                    )

    def _served_by_parent(self, keyed: set[str]):
        """(family, companion, parent) for each companion whose nearest keyed
        class along its MRO is one of its own parents."""
        hierarchy = self.model.hierarchy
        for family in _swept_families(self.model):
            for companion, parents in hierarchy.companion_parents(family).items():
                on_mro = keyed & hierarchy.ancestors(companion)
                for parent in parents:
                    nearer = {
                        k
                        for k in on_mro
                        if k != parent and parent in hierarchy.ancestors(k)
                    }
                    if parent in on_mro and not nearer:
                        yield family, companion, parent

    def _implementation_refuses(self, site: cst.CSTNode) -> bool:
        """The function a ``@f.register`` decorator stands on raises or
        returns ``False``/``None``. A function registered by name elsewhere
        is not read."""
        function = self.model.parent(site) if isinstance(site, cst.Decorator) else None
        return isinstance(function, cst.FunctionDef) and _refuses(function.body)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._check(node)

    def _check(self, node: cst.CSTNode) -> None:
        test = self.model.tests.type_test(node)
        # An exact test never matches a subclass: only these sweep it in.
        if test is None or test.exact or test.kind not in ("isinstance", "mro"):
            return
        hierarchy = self.model.hierarchy
        for family in _swept_families(self.model):
            for companion, parents in hierarchy.companion_parents(family).items():
                refs = [
                    r for r in test.refs if r.qualname in parents and not r.via_constant
                ]
                if not refs or companion in test.named:
                    continue
                # A test that admits the anchor's layout too is no sweep.
                if test.named & hierarchy.ancestors(family.anchor):
                    continue
                decision = self.model.facts.decision(node, test.target, test.positive)
                if any(excludes(f, companion, hierarchy) for f in decision):
                    continue
                if self._excluded_beside(test, companion):
                    continue
                reason = self._quiet_reason(test, companion)
                for ref in refs:
                    # Where the companion shares what the test is about, the
                    # exclusion would take it away: such a site has no fix.
                    shares = reason is not None and reason.startswith(SHARED)
                    self.report(
                        ref.node,
                        f"{_written(self.model, node)} check against "
                        f"{short_name(ref.qualname)} also admits "
                        f"{short_name(companion)}, which has "
                        f"{short_name(family.anchor)}'s layout",
                        None
                        if shares
                        else self._fix(test, ref.node, companion, family),
                        reason,
                        family=family,
                    )

    def _excluded_beside(self, test: TypeTest, companion: str) -> bool:
        """An operand of the same ``and`` chain rules the companion out:
        ``isinstance(x, P) and not isinstance(x, C)``."""
        model, hierarchy = self.model, self.model.hierarchy
        key = target_key(test.target)
        chain, parent = test.node, model.parent(test.node)
        while isinstance(parent, cst.BooleanOperation) and isinstance(
            parent.operator, cst.And
        ):
            chain, parent = parent, model.parent(parent)
        for operand in walk(chain):
            if not (
                isinstance(operand, cst.UnaryOperation)
                and isinstance(operand.operator, cst.Not)
            ):
                continue
            other = model.tests.type_test(operand.expression)
            if (
                other
                and other.positive
                and target_key(other.target) == key
                and other.named & hierarchy.ancestors(companion)
            ):
                return True
        return False

    def _quiet_reason(self, test: TypeTest, companion: str):
        narrowing = self.model.narrowing
        return (
            narrowing.unreachable(test.node, test.target, [companion], test.positive)
            or narrowing.considered(test.node, test.target, [companion])
            or (
                None
                if rejects_when_it_holds(self.model, test.node, test.positive)
                else _shared("the test", companion)
            )
        )

    def _fix(
        self, test: TypeTest, anchor, companion: str, family: Family
    ) -> FixPlan | None:
        node = test.node
        if test.kind != "isinstance" or not isinstance(node, cst.Call):
            return None
        title = f"Exclude {short_name(companion)}"
        if self.model.hierarchy.declares_layout(family) and is_pure(test.target):
            # After the migration the layout is asked, not listed: the
            # parent's test holds first, so the value is a spec.
            prop = family.property_name
            exclusion = cst.UnaryOperation(
                cst.Not(), cst.Attribute(test.target, cst.Name(prop))
            )
            imports: tuple[str, ...] = ()
            title = f"Exclude {short_name(family.anchor)}'s layout: ask `{prop}`"
        else:
            named = companion_expressions(self.model, anchor, [companion])
            if named is None:
                return None
            [value], imports = named
            exclusion = cst.UnaryOperation(
                cst.Not(),
                node.with_changes(
                    args=[node.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                          cst.Arg(value)],
                    lpar=(),
                    rpar=(),
                ),
            )  # fmt: skip
        replacement = cst.BooleanOperation(
            node.with_changes(lpar=(), rpar=()), cst.And(), exclusion
        )
        if isinstance(self.model.parent(node), (cst.UnaryOperation, cst.Attribute)):
            replacement = replacement.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
        return FixPlan(node, replacement, title, anchor, imports)


def _written(model, node: cst.CSTNode) -> str:
    if isinstance(node, cst.Call) and model.names.is_builtin(node.func, "issubclass"):
        return "issubclass()"
    if isinstance(node, cst.Call) and model.names.is_builtin(node.func, "isinstance"):
        return "isinstance()"
    return "MRO test"


def rejects_when_it_holds(model, node: cst.CSTNode, positive: bool) -> bool:
    """When the test holds, the code rejects the value: the branch it takes
    raises or returns ``False``/``None``, or an ``assert`` wants the opposite."""
    found = decision_of(model, node, through_or=True)
    if found is None:
        return False
    statement, negations = found
    holds_when_true = (negations + (0 if positive else 1)) % 2 == 0
    if isinstance(statement, cst.Assert):
        return not holds_when_true
    taken = statement.body if holds_when_true else statement.orelse
    if isinstance(taken, cst.Else):
        taken = taken.body
    return isinstance(taken, cst.BaseSuite) and _refuses(taken)


def _rejecting_value(value: cst.BaseExpression) -> bool:
    """A table entry that refuses: ``False``/``None``, or a lambda giving it."""
    if isinstance(value, cst.Lambda):
        value = value.body
    return _false_or_none(value)


def _false_or_none(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("False", "None")


def _refuses(block: cst.BaseSuite) -> bool:
    if ends_in(block, cst.Raise):
        return True
    body = block.body
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine):
        first = first.body[0]
    if isinstance(first, cst.Return):
        return first.value is None or _false_or_none(first.value)
    return False


def _swept_families(model: SemanticModel) -> list[Family]:
    """The families whose companions a parent test can sweep in: not a
    stand-in's (an anchor that subclasses another family's anchor, derived
    or configured), whose companion's parents are the other family's and
    its report names them already."""
    anchors = {f.anchor for f in model.families}
    return [
        f
        for f in model.families
        if not (anchors & (model.hierarchy.ancestors(f.anchor) - {f.anchor}))
    ]
