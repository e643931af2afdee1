from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import short_name
from vllm_spec_lint.repair.plans import add_registrations, add_table_entries
from vllm_spec_lint.rules.base import Example, Rule, describe

_IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
_BOTH = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
)


class DispatchLeavesOutCompanion(Rule):
    """
    Finds dispatch on a value's class that has a case for
    ``MLAAttentionSpec`` and none for ``SlidingWindowMLASpec``:

    - a table keyed by classes (a dict display, or ``dict([(A, f), ...])``)
      with ``MLAAttentionSpec`` as a key. Looked up by exact type
      (``table[type(spec)]``, the default), only a ``SlidingWindowMLASpec``
      key covers the companion; when the module walks an MRO for the lookup
      (``for c in type(spec).__mro__: table.get(c)``), a key of one of its
      base classes does;
    - ``functools.singledispatch`` / ``singledispatchmethod`` functions that
      register ``MLAAttentionSpec`` (by argument, ``@f.register(A)``, by
      annotation, ``@f.register`` with ``spec: A`` or ``A | B`` or
      ``Union[A, B]``, or by call) and neither the companion nor one of its
      base classes (dispatch follows the MRO);
    - registries: ``R.register(MLAAttentionSpec, ...)`` (any object's
      ``register`` taking the class first) where the module never registers
      ``SlidingWindowMLASpec`` with the same ``R``.

    Why: a dispatch table is a class test the reader does not see. A
    ``SlidingWindowMLASpec`` layer (MLA layout, another class) misses the
    MLA entry and falls through to the default, or to a ``KeyError``.

    Fix (unsafe: adding the companion changes which values the check
    admits, which is the point for a real miss and a regression for a
    deliberate site; only a person can tell which. ``--unsafe-fixes``, a
    codemod or the fix hook apply it; ``extend-safe-fixes`` promotes it;
    it decides what the companion does): the companion gets the anchor's
    entry: ``{MLAAttentionSpec: f}`` becomes ``{MLAAttentionSpec: f,
    SlidingWindowMLASpec: f}``; a registration is repeated for it
    (``@f.register(SlidingWindowMLASpec)`` stacked on the anchor's
    function, or ``R.register(SlidingWindowMLASpec, ...)`` after the
    anchor's statement).

    Two ways forward: a real miss gets the companion (the fix); code that
    leaves it out on purpose keeps it and says so. Suppress such a site with
    ``# noqa: VSL006`` and a reason on the reported line (``check
    --add-noqa`` adds one to every reported line).
    """

    CODE = "VSL006"
    NAME = "dispatch-leaves-out-companion"
    SUMMARY = "a class-keyed table or registration has MLAAttentionSpec, not SlidingWindowMLASpec"

    VALID = [
        _BOTH + "HANDLERS = {MLAAttentionSpec: mla, SlidingWindowMLASpec: mla}\n",
        # A base key covers the companion when the lookup walks the MRO.
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "HANDLERS = {MLAAttentionSpec: mla, SlidingWindowSpec: window}\n\n\n"
        "def handler(spec):\n"
        "    for cls in type(spec).__mro__:\n"
        "        if cls in HANDLERS:\n"
        "            return HANDLERS[cls]\n",
        # The anchor only as a value.
        _BOTH + "PROMOTIONS = {SlidingWindowMLASpec: MLAAttentionSpec}\n",
        # A local class of the same name.
        "class MLAAttentionSpec:\n    pass\n\n\nHANDLERS = {MLAAttentionSpec: mla}\n",
        # singledispatch: a base registered covers through the MRO.
        "from functools import singledispatch\n\n"
        "from vllm.v1.kv_cache_interface import AttentionSpec, MLAAttentionSpec\n\n\n"
        "@singledispatch\ndef page_size(spec):\n    raise NotImplementedError\n\n\n"
        "@page_size.register\ndef _(spec: MLAAttentionSpec):\n    return 1\n\n\n"
        "@page_size.register\ndef _(spec: AttentionSpec):\n    return 2\n",
        # A registry given both.
        _BOTH + "Registry.register(MLAAttentionSpec, FullManager)\n"
        "Registry.register(SlidingWindowMLASpec, WindowManager)\n",
        # Keys not all known: a ** entry, strings.
        _IMPORT + "HANDLERS = {**BASE_HANDLERS, MLAAttentionSpec: mla}\n",
        _IMPORT + 'KINDS = {"mla": MLAAttentionSpec, MLAAttentionSpec: 1}\n',
        # The class given by keyword is not what the registry is keyed by.
        _IMPORT + "Registry.register(name=MLAAttentionSpec)\n",
        # Another object's register: not the anchor first.
        "import atexit\n\natexit.register(save, MLAAttentionSpec)\n",
    ]
    INVALID = [
        Example(
            _IMPORT + "HANDLERS = {MLAAttentionSpec: mla}\n",
            position=(2, 13),
            message="table keyed by MLAAttentionSpec (exact-type lookup) leaves out SlidingWindowMLASpec",
        ),
        # Exact lookup: a base key does not cover.
        Example(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
            "HANDLERS = {MLAAttentionSpec: mla, SlidingWindowSpec: window}\n"
            "handler = HANDLERS[type(spec)]\n",
            position=(2, 13),
            message="table keyed by MLAAttentionSpec (exact-type lookup) leaves out SlidingWindowMLASpec",
        ),
        # Looked up along the MRO, but no key covers the companion.
        Example(
            "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
            "HANDLERS = {MLAAttentionSpec: mla, FullAttentionSpec: full}\n"
            "handler = next(\n"
            "    HANDLERS.get(c) for c in type(spec).__mro__ if c in HANDLERS\n"
            ")\n",
            position=(2, 13),
            message="table keyed by MLAAttentionSpec (MRO lookup) leaves out SlidingWindowMLASpec",
        ),
        Example(
            _IMPORT + "HANDLERS = dict([(MLAAttentionSpec, mla)])\n",
            position=(2, 19),
            message="table keyed by MLAAttentionSpec (exact-type lookup) leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from functools import singledispatch as sd\n\n" + _IMPORT + "\n\n"
            "@sd\ndef page_size(spec):\n    raise NotImplementedError\n\n\n"
            "@page_size.register\ndef _(spec: MLAAttentionSpec | FullSpec):\n"
            "    return 1\n",
            position=(12, 13),
            message="singledispatch function page_size registers MLAAttentionSpec and leaves out SlidingWindowMLASpec",
        ),
        Example(
            "import functools\nfrom typing import Union\n\n" + _IMPORT + "\n\n"
            "class Sizer:\n    @functools.singledispatchmethod\n"
            "    def size(self, spec):\n        raise NotImplementedError\n\n"
            "    @size.register\n"
            "    def _(self, spec: Union[MLAAttentionSpec, FullSpec]):\n"
            "        return 1\n",
            position=(13, 29),
            message="singledispatch function size registers MLAAttentionSpec and leaves out SlidingWindowMLASpec",
        ),
        Example(
            "from functools import singledispatch\n\n" + _IMPORT + "\n\n"
            "@singledispatch\ndef size(spec):\n    raise NotImplementedError\n\n\n"
            "@size.register(MLAAttentionSpec)\ndef _(spec):\n    return 1\n",
            position=(11, 16),
            message="singledispatch function size registers MLAAttentionSpec and leaves out SlidingWindowMLASpec",
        ),
        Example(
            _IMPORT + "KVCacheSpecRegistry.register(MLAAttentionSpec, FullManager)\n",
            position=(2, 30),
            message="registry KVCacheSpecRegistry registers MLAAttentionSpec and leaves out SlidingWindowMLASpec",
        ),
    ]

    def visit_Dict(self, node: cst.Dict) -> None:
        self._table(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._table(node)

    def _table(self, node: cst.Dict | cst.Call) -> None:
        table = self.model.dispatch.table(node)
        if table is None:
            return
        named = frozenset(e.ref.qualname for e in table.entries if e.ref.qualname)
        how = "MRO lookup" if table.by_mro else "exact-type lookup"
        for family, missing in self._left_out(named, table.by_mro):
            for entry in table.entries:
                if entry.ref.qualname == family.anchor:
                    fix = add_table_entries(
                        self.model, node, entry.element, entry.ref.node,
                        entry.value, missing,
                    )  # fmt: skip
                    self.report(
                        entry.ref.node,
                        f"table keyed by {short_name(family.anchor)} ({how}) "
                        f"leaves out {describe(missing)}",
                        fix,
                        family=family,
                    )

    def visit_Module(self, node: cst.Module) -> None:
        for name, registered in self.model.dispatch.registrations.items():
            named = frozenset(r.qualname for r in registered.refs)
            what = "singledispatch function" if registered.by_mro else "registry"
            for family, missing in self._left_out(named, registered.by_mro):
                for ref, site in registered.registered:
                    if ref.qualname == family.anchor:
                        self.report(
                            ref.node,
                            f"{what} {name} registers {short_name(family.anchor)} "
                            f"and leaves out {describe(missing)}",
                            add_registrations(
                                self.model, site, ref.node, missing, name
                            ),
                            family=family,
                        )

    def _left_out(self, named: frozenset[str], by_mro: bool):
        """(family, companions left out) for each family whose anchor is
        named: by exact class, or through the MRO (a base covers)."""
        for family in self.model.families:
            if family.anchor in named:
                missing = self.model.hierarchy.uncovered(
                    family, named, exact=not by_mro
                )
                if missing:
                    yield family, missing
