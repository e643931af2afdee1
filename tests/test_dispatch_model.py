"""The semantic model's reading of dispatch on classes (model/dispatch.py):
which dicts are class-keyed tables and how they are looked up, and what
each dispatcher or registry is given. Expected values are written out."""

from __future__ import annotations

import libcst as cst
import pytest

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.model.syntax import code_of, walk

HEADER = (
    "import functools\n"
    "from functools import singledispatch as sd\n\n"
    "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n\n"
)
KV = "vllm.v1.kv_cache_interface"


def model_of(text: str) -> SemanticModel:
    source = HEADER + text
    return SemanticModel(
        cst.parse_module(source),
        source,
        families=Config().families,
        hierarchy=ClassHierarchy.default(),
    )


def first_table(text: str):
    model = model_of(text)
    for node in walk(model.module):
        if isinstance(node, (cst.Dict, cst.Call)):
            table = model.dispatch.table(node)
            if table is not None:
                return [(code_of(e.ref.node), e.ref.qualname) for e in table.entries], (
                    table.by_mro
                )
    return None


TABLE = "T = {MLAAttentionSpec: 1, FullAttentionSpec: 2}\n"
KEYS = [
    ("MLAAttentionSpec", f"{KV}.MLAAttentionSpec"),
    ("FullAttentionSpec", f"{KV}.FullAttentionSpec"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (TABLE, (KEYS, False)),
        (TABLE + "def f(s):\n    return T[type(s)]\n", (KEYS, False)),
        (
            TABLE + "def f(s):\n    for c in type(s).__mro__:\n"
            "        if c in T:\n            return 1\n",
            (KEYS, True),
        ),
        (
            TABLE + "def f(s):\n    for c in s.__class__.mro():\n"
            "        x = T.get(c)\n",
            (KEYS, True),
        ),
        (
            TABLE + "import inspect\n\n\ndef f(s):\n"
            "    return [T[c] for c in inspect.getmro(type(s))]\n",
            (KEYS, True),
        ),
        # Another table is looked up along the MRO, not this one.
        (
            TABLE + "def f(s):\n    for c in type(s).__mro__:\n        U.get(c)\n",
            (KEYS, False),
        ),
        # The MRO walked, but the table is indexed with something else.
        (
            TABLE + "def f(s):\n    for c in type(s).__mro__:\n        T[0]\n",
            (KEYS, False),
        ),
        (
            TABLE + "def f(s):\n    for c in type(s).__mro__:\n        T[c:]\n",
            (KEYS, False),
        ),
        # The variable walks something else (beside an MRO walked for nothing).
        (
            TABLE + "def f(s):\n    for c in classes:\n        T.get(c)\n"
            "    bases = [c for c in type(s).__mro__]\n",
            (KEYS, False),
        ),
        (
            TABLE + "def f(s):\n    for c in type(s).__mro__:\n        T.get(s)\n",
            (KEYS, False),
        ),
        (
            "class C:\n    def __init__(self):\n"
            "        self.t: dict = {MLAAttentionSpec: 1}\n\n"
            "    def f(self, s):\n"
            "        return next(self.t[c] for c in type(s).__mro__)\n",
            ([("MLAAttentionSpec", f"{KV}.MLAAttentionSpec")], True),
        ),
        (
            "T = dict(((MLAAttentionSpec, 1), (Unknown, 2)))\n",
            (
                [("MLAAttentionSpec", f"{KV}.MLAAttentionSpec"), ("Unknown", None)],
                False,
            ),
        ),
        # Not tables keyed by classes.
        ("T = {Unknown: 1}\n", None),
        ('T = {"mla": MLAAttentionSpec}\n', None),
        ("T = {**BASE, MLAAttentionSpec: 1}\n", None),
        ("T = dict(mla=MLAAttentionSpec)\n", None),
        ("T = dict([MLAAttentionSpec])\n", None),
        ("T = dict([(MLAAttentionSpec, 1, 2)])\n", None),
        ("T = dict([*PAIRS, (MLAAttentionSpec, 1)])\n", None),
        ("T = OrderedDict([(MLAAttentionSpec, 1)])\n", None),
    ],
)
def test_tables_keyed_by_classes(text, expected):
    assert first_table(text) == expected


def test_a_table_is_the_node_it_was_read_from():
    model = model_of(TABLE)
    [node] = [n for n in walk(model.module) if isinstance(n, cst.Dict)]
    assert model.dispatch.table(node).node is node


def registrations(text: str) -> dict[str, tuple[bool, list]]:
    model = model_of(text)
    return {
        name: (r.by_mro, [(code_of(ref.node), ref.qualname) for ref in r.refs])
        for name, r in model.dispatch.registrations.items()
    }


MLA = ("MLAAttentionSpec", f"{KV}.MLAAttentionSpec")
FULL = ("FullAttentionSpec", f"{KV}.FullAttentionSpec")


def test_registrations_of_singledispatch_functions_and_registries():
    text = (
        "@sd\ndef size(spec):\n    return 0\n\n\n"
        "@size.register\ndef _(spec: MLAAttentionSpec | FullAttentionSpec):\n"
        "    return 1\n\n\n"
        "@size.register(Unknown)\ndef _(spec):\n    return 2\n\n\n"
        "@size.register\ndef _(spec: Sequence[FullAttentionSpec]):\n    return 3\n\n\n"
        "@functools.singledispatch\ndef page(spec):\n    return 0\n\n\n"
        "page.register(FullAttentionSpec, lambda spec: 1)\n"
        "Registry.register(MLAAttentionSpec, Full, base=FullAttentionSpec)\n"
        "Registry.register(Unknown)\n"
        "Registry.register(name=FullAttentionSpec)\n"
        "Registry.register(*classes)\n"
        "Registry.register((MLAAttentionSpec, FullAttentionSpec))\n"
        "other.register(FullAttentionSpec)\n"
    )
    assert registrations(text) == {
        "size": (True, [MLA, FULL]),
        "page": (True, [FULL]),
        "Registry": (False, [MLA]),
        "other": (False, [FULL]),
    }


def test_a_singledispatchmethod_dispatches_on_the_argument_after_self():
    text = (
        "class Sizes:\n"
        "    @functools.singledispatchmethod\n"
        "    def size(self, spec):\n        return 0\n\n"
        "    @size.register\n"
        "    def _(self, spec: Union[MLAAttentionSpec, None]):\n        return 1\n\n"
        "    @size.register\n"
        "    def _(self, spec):\n        return 2\n\n"
        "    @size.register\n"
        "    def _(self):\n        return 3\n"
    )
    assert registrations("from typing import Union\n" + text) == {
        "size": (True, [MLA]),
    }


def test_a_module_without_register_has_no_registrations():
    assert registrations("x = {MLAAttentionSpec: 1}\n") == {}


def test_a_registrations_site_is_its_line_or_the_call_when_it_shares_one():
    model = model_of(
        "Registry.register(MLAAttentionSpec)\n"
        "x = 1; Registry.register(FullAttentionSpec)\n"
        "if flag: Registry.register(FullAttentionSpec)\n"
    )
    [registry] = model.dispatch.registrations.values()
    sites = [(type(site), code_of(site).strip()) for _, site in registry.registered]
    assert sites == [
        (cst.SimpleStatementLine, "Registry.register(MLAAttentionSpec)"),
        (cst.Call, "Registry.register(FullAttentionSpec)"),
        (cst.Call, "Registry.register(FullAttentionSpec)"),
    ]


# -- registrations by keyword, as plugins write them ------------------------------

KEYWORD_REGISTRY = """\
from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec

from plugin.registry import KVCacheSpecRegistry

KVCacheSpecRegistry.register(kvcache_spec_cls=FullAttentionSpec, layout="paged")
KVCacheSpecRegistry.register(kvcache_spec_cls=MLAAttentionSpec, layout="latent")
"""


def test_a_registration_by_keyword_is_read_as_the_positional_one():
    from tests.conftest import findings

    positional = KEYWORD_REGISTRY.replace("kvcache_spec_cls=", "")
    assert findings(KEYWORD_REGISTRY) == [("VSL006", 6, 47)]
    assert findings(positional) == [("VSL006", 6, 30)]


def test_a_keyword_registration_of_the_companion_covers_it():
    from tests.conftest import findings

    covered = KEYWORD_REGISTRY.replace(
        "import FullAttentionSpec, MLAAttentionSpec",
        "import FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec",
    ) + (
        "KVCacheSpecRegistry.register(kvcache_spec_cls=SlidingWindowMLASpec, "
        'layout="latent")\n'
    )
    assert findings(covered) == []


def test_a_keyword_that_names_no_class_is_not_a_registration():
    from tests.conftest import findings

    source = KEYWORD_REGISTRY.replace("kvcache_spec_cls=", "layer=")
    assert findings(source) == []
