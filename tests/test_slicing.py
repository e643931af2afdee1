"""The slicer in process, each slice written out: what libcst gets to see of
a file, and that the rules find the same in the slice as in the whole file.

The differential check alone cannot tell a slice that keeps too much (a
slower run) from the right one, and the command-line tests run the slicer
in a process of its own; these pin the slice itself."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO, THREE_MEMBER_MLA
from vllm_spec_lint.core import slicing
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy, Family

KCI = "vllm.v1.kv_cache_interface"
IMPORTS = f"from {KCI} import MLAAttentionSpec, SlidingWindowMLASpec\n"
TEST = "ok = isinstance(s, MLAAttentionSpec)\n"
REGISTRATIONS = (
    "@describe.register(int)\n"
    "def _(spec):\n"
    "    return MLAAttentionSpec\n"
    "\n"
    "\n"
    "@describe.register(str)\n"
    "def _(spec):\n"
    "    return 1\n"
    "\n"
    "\n"
)

# name -> (source, the slice's text; None: nothing in the file can be a finding)
CASES = {
    "nothing to find": (
        "def f(s):\n    return isinstance(s, FullAttentionSpec)\n",
        None,
    ),
    "a test on the file's first characters": (
        "MLAAttentionSpec is type(spec) or fail()\n",
        "MLAAttentionSpec is type(spec) or fail()\n",
    ),
    "definitions in every kind of block": (
        "if TYPE_CHECKING:\n"
        "    @decorated\n"
        "    def a():\n"
        "        pass\n"
        "    def b():\n"
        "        pass\n"
        "else:\n"
        "    def c():\n"
        "        pass\n"
        "    x = 1\n"
        "try:\n"
        "    def d():\n"
        "        pass\n"
        "    y = 1\n"
        "except ImportError:\n"
        "    def e():\n"
        "        pass\n"
        "    z = 1\n"
        "finally:\n"
        "    def f():\n"
        "        pass\n"
        "    w = 1\n"
        "for i in r:\n"
        "    def g():\n"
        "        pass\n"
        "while r:\n"
        "    def h():\n"
        "        pass\n"
        "    v = 1\n"
        "with cm:\n"
        "    def j():\n"
        "        pass\n"
        "    u = 1\n" + TEST,
        # A block left empty keeps a `pass` on its first definition's row.
        "if TYPE_CHECKING:\n"
        "    pass\n"
        "else:\n"
        "    x = 1\n"
        "try:\n"
        "    y = 1\n"
        "except ImportError:\n"
        "    z = 1\n"
        "finally:\n"
        "    w = 1\n"
        "for i in r:\n"
        "    pass\n"
        "while r:\n"
        "    v = 1\n"
        "with cm:\n"
        "    u = 1\n" + TEST,
    ),
    "a block keeping one stub needs no pass": (
        "if TYPE_CHECKING:\n"
        "    def isinstance(a, b):\n"
        "        return True\n"
        "    def other():\n"
        "        pass\n" + TEST,
        "if TYPE_CHECKING:\n    def isinstance(): pass\n" + TEST,
    ),
    "comments and blank lines after a definition go with it": (
        "def unrelated():\n"
        "    pass\n"
        "# about what follows\n"
        "    # indented\n"
        "\n"
        "x = 1\n" + TEST,
        "x = 1\n" + TEST,
    ),
    "a spec class's name keeps a stub": (
        "def FullAttentionSpec():\n    return 1\n\n\n" + TEST,
        "def FullAttentionSpec(): pass\n" + TEST,
    ),
    "a registration of a function that returns an anchor keeps every one": (
        REGISTRATIONS + 'def named():\n    return "register"\n',
        REGISTRATIONS,
    ),
    "an alias of a companion is not an anchor": (
        f"from {KCI} import SlidingWindowMLASpec as SW\n\n\n"
        "def f(s):\n    return isinstance(s, SW)\n",
        None,
    ),
    "an alias of singledispatch is not an anchor": (
        "from functools import singledispatch as sd\n\n\n"
        "def f(s):\n    return isinstance(s, sd)\n",
        None,
    ),
    "an alias of the anchor from the family module": (
        f"from {KCI} import MLAAttentionSpec as M\n\n\n"
        "def f(s):\n    return isinstance(s, M)\n\n\n"
        "def g():\n    pass\n",
        f"from {KCI} import MLAAttentionSpec as M\n\n\n"
        "def f(s):\n    return isinstance(s, M)\n\n\n",
    ),
    "an alias of the anchor from elsewhere": (
        "from vllm.attention import MLAAttentionSpec as M\n\n\n"
        "def f(s):\n    return isinstance(s, M)\n",
        "from vllm.attention import MLAAttentionSpec as M\n\n\n"
        "def f(s):\n    return isinstance(s, M)\n",
    ),
    "a test covering the companion": (
        IMPORTS + "\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        None,
    ),
    "a companion imported under TYPE_CHECKING still covers": (
        f"if TYPE_CHECKING:\n    {IMPORTS}\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        None,
    ),
    "a companion shadowed by another import does not cover": (
        IMPORTS + "from compat import SlidingWindowMLASpec\n\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "same",
    ),
    "a companion shadowed by a plain import does not cover": (
        IMPORTS + "import compat as SlidingWindowMLASpec  # MLAAttentionSpec\n\n\n"
        "def f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "same",
    ),
    "a dotted import binds its first name": (
        IMPORTS + "import SlidingWindowMLASpec.compat\n\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "same",
    ),
    # The companion's own import first: the later one must undo the trust.
    "a name bound to two family classes does not cover": (
        IMPORTS
        + f"from {KCI} import MLAAttentionSpec as SlidingWindowMLASpec\n"
        + "\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "same",
    ),
    "a companion imported in the function does not cover": (
        "def f(s):\n    " + IMPORTS + "    return isinstance(s, "
        "(MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "same",
    ),
    "a test of the class against the companion covers": (
        IMPORTS + "\n\ndef f(s):\n"
        "    return type(s) in (MLAAttentionSpec, SlidingWindowMLASpec)\n\n\n"
        "def g(s):\n"
        "    return s.__class__ in (MLAAttentionSpec, SlidingWindowMLASpec)\n",
        None,
    ),
    "the value tested is not a class it is tested against": (
        IMPORTS + "\n\ndef f(specs):\n"
        "    return type(specs.SlidingWindowMLASpec) is MLAAttentionSpec\n\n\n"
        "def g(specs):\n"
        "    return specs.SlidingWindowMLASpec.__class__ is MLAAttentionSpec\n",
        "same",
    ),
    "a scan of the MRO is read whole": (
        IMPORTS + "\n\ndef f(s):\n"
        "    return any(\n"
        "        c in (MLAAttentionSpec, SlidingWindowMLASpec)"
        " for c in type(s).__mro__\n"
        "    )\n",
        "same",
    ),
    "a constant in a function is not VSL004's": (
        "def f():\n    X = (MLAAttentionSpec,)\n    return X\n",
        None,
    ),
    "a constant in an async function is not VSL004's": (
        "async def f():\n    X = (MLAAttentionSpec,)\n    return X\n",
        None,
    ),
    "a constant of a class in a function is VSL004's": (
        "def f():\n    class Local:\n        X = (MLAAttentionSpec,)\n"
        "    return Local\n",
        "same",
    ),
    "an annotation without a value is not a constant": (
        "spec: MLAAttentionSpec\n",
        None,
    ),
    "a constant naming only a companion's parent is not VSL004's": (
        "SPECS = (SlidingWindowSpec,)\n",
        None,
    ),
}


def _slice(
    text: str, module_name: str | None = None, config: Config | None = None
) -> slicing.Slice:
    screen = slicing.Screen.build(
        config or Config(), ClassHierarchy.default(), module_name
    )
    return slicing.relevant_source(text, ast.parse(text), screen)


@pytest.mark.parametrize("name", CASES)
def test_slice(name):
    text, expected = CASES[name]
    result = _slice(text)
    if expected is None:
        assert result == slicing.Slice("", [], has_candidates=False)
    else:
        assert result.text == (text if expected == "same" else expected)
        assert result.has_candidates
        ast.parse(result.text)


def _differential_sources():
    for name, (text, _) in CASES.items():
        yield pytest.param(text, id=name)
    for folder in (REPO / "examples", REPO / "tests" / "corpus"):
        for path in sorted(folder.rglob("*.py")):
            yield pytest.param(path.read_text(), id=str(path.relative_to(REPO)))


@pytest.mark.parametrize("text", list(_differential_sources()))
def test_slicing_changes_no_finding(text, monkeypatch):
    config = Config(strict=True)
    sliced = analyze_source(text, "x.py", config, module_name="vllm.x.y")
    monkeypatch.setattr(
        slicing, "relevant_source",
        lambda source, tree, screen: slicing.Slice(source, list(range(1, source.count("\n") + 2))),
    )  # fmt: skip
    whole = analyze_source(text, "x.py", config, module_name="vllm.x.y")
    assert sliced.findings == whole.findings
    assert sliced.suppressed == whole.suppressed


def test_rows_of_a_slice_without_cuts():
    text = "import os; x = 1\n" + TEST
    # The row after the last line ending counts too, as in the original.
    assert _slice(text) == slicing.Slice(text, [1, 2, 3], statement_rows=[1, 1, 2])


def test_rows_of_a_slice_with_cuts():
    text, expected = CASES["definitions in every kind of block"]
    result = _slice(text)
    assert result.text == expected
    # The `pass` of the first block stands on the decorator's row.
    assert result.rows == [1, 2, 7, 10, 11, 14, 15, 18, 19, 22, 23, 24] + [
        26,
        29,
        30,
        33,
        34,
        35,
    ]
    # Top-level statements: the `if`, `try`, `for`, `while`, `with`, `ok =`.
    assert result.statement_rows == [1, 5, 11, 13, 15, 17]


def test_rows_of_stubs_and_dropped_definitions():
    text = (
        "@functools.cache\n"
        "def isinstance(a, b):\n"
        "    return True\n"
        "def unrelated():\n"
        "    pass\n" + TEST
    )
    result = _slice(text)
    assert result.text == "def isinstance(): pass\n" + TEST
    assert result.rows == [1, 6, 7]
    assert result.statement_rows == [1, 2]


def test_the_family_modules_own_classes_cover():
    text = (
        "class SlidingWindowMLASpec(SlidingWindowSpec):\n    pass\n\n\n"
        "def f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert not _slice(text, KCI).has_candidates
    assert _slice(text, "vllm.other").has_candidates


@pytest.mark.parametrize(
    "definition",
    [
        "class Holder:\n    class SlidingWindowMLASpec:\n        pass\n",
        "def make():\n    class SlidingWindowMLASpec:\n        pass\n",
        "SlidingWindowMLASpec = SlidingWindowSpec\n",
    ],
    ids=["in a class", "in a function", "assigned at module level"],
)
def test_a_family_class_defined_below_module_level_does_not_cover(definition):
    text = (
        "class SlidingWindowMLASpec(SlidingWindowSpec):\n    pass\n\n\n"
        + definition
        + "\n\ndef f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert _slice(text, KCI).has_candidates


PLUGIN = Family("plugin", "vllm_plugin.specs", ("PluginMLASpec", "PluginSWMLASpec"))


def test_an_alias_of_a_plugins_anchor_is_looked_for():
    # vLLM's anchor is also a class that covers a companion (of the
    # SlidingWindowSpec family); a plugin's anchor covers nothing.
    text = (
        "from vllm_plugin.specs import PluginMLASpec as P\n\n\n"
        "def f(s):\n    return isinstance(s, P)\n"
    )
    assert _slice(text, config=Config(families=(PLUGIN,))).text == text


def test_an_alias_of_one_familys_anchor_is_judged_against_that_family_only():
    text = (
        "from vllm_plugin.specs import PluginMLASpec as P, PluginSWMLASpec\n\n\n"
        "def f(s):\n    return isinstance(s, (P, PluginSWMLASpec))\n"
    )
    config = Config(families=(*Config().families, PLUGIN))
    assert not _slice(text, config=config).has_candidates


# -- stubs, kept rows, and the screen ---------------------------------------------


def test_slice_keeps_stubs_for_names_that_matter():
    text = (
        "def isinstance(a, b):\n    return True\n\n\n"
        "class MLAAttentionSpec:\n    x = 1\n\n\n"
        "def check(spec):\n    return isinstance(spec, MLAAttentionSpec)\n"
    )
    result = _slice(text)
    # Blank lines after a definition that goes (or is stubbed) go with it.
    assert result.text == (
        "def isinstance(): pass\nclass MLAAttentionSpec: pass\n"
        "def check(spec):\n    return isinstance(spec, MLAAttentionSpec)\n"
    )
    assert result.rows == [1, 5, 9, 10, 11]
    ast.parse(result.text)


def test_a_stub_keeps_its_methods_indent_and_async():
    text = (
        "class Holder:\n"
        "    async def isinstance(self):\n"
        "        return True\n"
        "\n"
        "    def check(self, spec):\n"
        "        return isinstance(spec, MLAAttentionSpec)\n"
    )
    result = _slice(text)
    assert result.text == (
        "class Holder:\n"
        "    async def isinstance(): pass\n"
        "    def check(self, spec):\n"
        "        return isinstance(spec, MLAAttentionSpec)\n"
    )
    assert result.rows == [1, 2, 5, 6, 7]


def test_slice_keeps_kept_lines_and_their_rows():
    text = (
        "import os\n\n\n"
        "def unrelated(a):\n    return a + 1\n\n\n"
        "@decorator\n"
        "def related(spec):\n    return isinstance(spec, MLAAttentionSpec)\n\n\n"
        "class Holder:\n    def build(self):\n        return MLAAttentionSpec(16)\n"
    )
    result = _slice(text)
    lines = text.split("\n")
    kept = result.text.split("\n")
    assert not [line for line in kept if "unrelated" in line]  # gone entirely
    assert not [
        line for line in kept if "Holder" in line
    ]  # constructing is not checking
    assert "@decorator" in kept
    for line, row in zip(kept, result.rows, strict=False):
        assert lines[row - 1] == line
    ast.parse(result.text)


SCREENED = {
    # Covered in the test itself, through names imported from the family module.
    "covered": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        False,
    ),
    "covered by a base": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowSpec))\n",
        False,
    ),
    # A base does not cover an exact comparison.
    "exact with a base": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "def f(s):\n    return type(s) in (MLAAttentionSpec, SlidingWindowSpec)\n",
        True,
    ),
    "imported elsewhere": (
        "from fakes import SlidingWindowMLASpec\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f(s, SlidingWindowMLASpec):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "imported in another function": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "def g():\n    from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "companion only as the tested value": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f():\n    return issubclass(SlidingWindowMLASpec, MLAAttentionSpec)\n",
        True,
    ),
    "constant": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "SPECS = (MLAAttentionSpec,)\n",
        True,
    ),
    "alias": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as M\n"
        "def f(s):\n    return isinstance(s, M)\n",
        True,
    ),
    "a name test, the anchor only in a string": (
        'ok = type(spec).__name__ == "MLAAttentionSpec"\n',
        True,
    ),
    "any() over a covering isinstance": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f(xs):\n"
        "    return any(isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec)) for s in xs)\n",
        False,
    ),
    "a table keyed by the anchor": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "T = {MLAAttentionSpec: 1}\n",
        True,
    ),
    "the anchor only as a table's value": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f():\n    return {SlidingWindowMLASpec: MLAAttentionSpec}\n",
        False,
    ),
    "registrations, none of the anchor": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "@CustomOp.register('mla')\nclass MLA:\n"
        "    def spec(self):\n        return MLAAttentionSpec(1)\n",
        False,
    ),
    "a registration of the anchor": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "def setup():\n    Registry.register(MLAAttentionSpec, Manager)\n",
        True,
    ),
    "table keyed by the parent": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n"
        "    table = {SlidingWindowSpec: False}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        True,
    ),
    "table keyed by the parent and the companion": (
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec, SlidingWindowSpec\n"
        "def f(s):\n"
        "    table = {SlidingWindowMLASpec: True, SlidingWindowSpec: False}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        False,
    ),
    "table keyed by the parent and a local class named as the companion": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "class SlidingWindowMLASpec: ...\n"
        "def f(s):\n"
        "    table = {SlidingWindowMLASpec: True, SlidingWindowSpec: False}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        True,
    ),
    "a parent test that goes on": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n    if isinstance(s, SlidingWindowSpec):\n        s = 1\n",
        False,
    ),
    "a parent test that returns nothing": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n    if isinstance(s, SlidingWindowSpec):\n        return\n",
        True,
    ),
    "a parent test that returns a value": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n    if isinstance(s, SlidingWindowSpec):\n        return 2\n",
        False,
    ),
    "a parent test that returns False at once": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n    if isinstance(s, SlidingWindowSpec):\n"
        "        return False\n    return True\n",
        True,
    ),
    # The companion's name bound again in the module: not vLLM's class.
    "rebound by an assignment": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "SlidingWindowMLASpec = None\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound by an except clause": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "try:\n    pass\nexcept Exception as SlidingWindowMLASpec:\n    pass\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound by a capture pattern": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "match x:\n    case SlidingWindowMLASpec:\n        pass\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound by a mapping pattern's rest": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "match x:\n    case {**SlidingWindowMLASpec}:\n        pass\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound by a star pattern inside a function": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f(rows, s):\n    match rows:\n        case [_, *SlidingWindowMLASpec]:\n"
        "            pass\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "rebound through global": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def g():\n    global SlidingWindowMLASpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    "table built by dict() keyed by the parent": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n"
        "    table = dict([(SlidingWindowSpec, False)])\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        True,
    ),
    "an implementation registered for the parent that rejects": (
        "from functools import singledispatch\n"
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "@singledispatch\n"
        "def layout(spec):\n    return 1\n"
        "@layout.register(SlidingWindowSpec)\n"
        "def _(spec):\n    raise ValueError('no window')\n",
        True,
    ),
    # Only `register` registers: another method's call naming an anchor
    # does not bring in the module's MRO walks.
    "a call of another method naming an anchor": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "registry.add(MLAAttentionSpec)\n"
        "def f(s):\n    for c in type(s).__mro__:\n        pass\n",
        False,
    ),
    # An async implementation registered for the anchor by its annotation.
    "an async implementation registered by annotation": (
        "from functools import singledispatch\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "@singledispatch\n"
        "async def layout(spec):\n    return 1\n"
        "@layout.register\n"
        "async def _(spec: MLAAttentionSpec):\n    return 2\n",
        True,
    ),
    # VSL007 reports only rejections by default: a case that goes on is none.
    "a parent's class pattern in a case that does not reject": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "def f(s):\n    match s:\n        case SlidingWindowSpec():\n"
        "            return 1\n",
        False,
    ),
    "an alias of an unrelated module": (
        "import numpy as np\ndef f(x):\n    return isinstance(x, np.ndarray)\n",
        False,
    ),
    # The import is read (it names an anchor): only its anchors' and
    # covering classes' aliases are looked for.
    "an alias of another name from the family module": (
        "from vllm.v1.kv_cache_interface import (\n"
        "    MLAAttentionSpec,\n"
        "    KVCacheConfig as Config,\n"
        ")\n"
        "def f(x):\n    return isinstance(x, Config)\n",
        False,
    ),
    # A companion key from another module is a stand-in's own entry, not
    # the family companion's.
    "a table keyed by the parent and a companion from another module": (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec\n"
        "from vllm_plugin.specs import SlidingWindowMLASpec\n"
        "def f(s):\n"
        "    table = {SlidingWindowSpec: 1, SlidingWindowMLASpec: 2}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        True,
    ),
    "an alias of a companion": (
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec as SWMLA\n"
        "def f(x):\n    return isinstance(x, SWMLA)\n",
        False,
    ),
    # A stand-in imported from elsewhere is not the family's companion.
    "a companion's name imported from another module": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "from vllm_plugin.specs import SlidingWindowMLASpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        True,
    ),
    # Through a star import the companion's key is not surely the family's.
    "a table keyed by the parent and a companion from a star import": (
        "from vllm.v1.kv_cache_interface import *\n"
        "def f(s):\n"
        "    table = {SlidingWindowSpec: 1, SlidingWindowMLASpec: 2}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n",
        True,
    ),
    "aliases, covered": (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as M\n"
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec as W\n"
        "def f(s):\n    return isinstance(s, (M, W))\n",
        False,
    ),
}


@pytest.mark.parametrize(
    "module_name, candidate",
    [("vllm.v1.worker.layout", False), ("plugin.layout", True), (None, True)],
)
def test_a_relative_import_is_trusted_only_where_it_reaches_vllm(
    module_name, candidate
):
    text = (
        "from ..kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "def f(s):\n    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert _slice(text, module_name).has_candidates == candidate


@pytest.mark.parametrize("name", SCREENED)
def test_screen_keeps_every_possible_finding(name):
    """A file whose every check surely covers the companion needs no libcst;
    any doubt keeps the check, and then the full analysis decides."""
    text, candidate = SCREENED[name]
    assert _slice(text).has_candidates == candidate
    for config in (Config(), Config(strict=True)):
        kept = _slice(text, config=config).has_candidates
        found = analyze_source(text, "x.py", config, module_name="vllm.x.y")
        if found.findings:
            assert kept


@pytest.mark.parametrize(
    "builtin", ["isinstance", "issubclass", "type", "all", "any", "frozenset", "dict"]
)
def test_a_definition_rebinding_a_builtin_the_rules_resolve_is_kept_as_a_stub(
    builtin,
):
    """The rules read these names as builtins unless the module rebinds
    them: the slice keeps the definition (as a stub) for every one of them,
    also where the check does not call it."""
    text = f"def {builtin}(a, b):\n    return True\n" + TEST
    assert _slice(text).text == f"def {builtin}(): pass\n" + TEST


def test_a_relative_import_without_a_module_is_read_as_binding_its_names():
    """``from . import x`` names no module: its names are bound here (not
    trusted as the spec classes), and the rest is sliced as usual."""
    text = "from . import MLAAttentionSpec\n\n\ndef unrelated():\n    pass\n" + TEST
    result = _slice(text)
    assert result.text == "from . import MLAAttentionSpec\n\n\n" + TEST
    assert result.rows == [1, 2, 3, 6, 7]


@pytest.mark.parametrize(
    "walk",
    ["for c in type(s).mro():\n        pass\n", "return inspect.getmro(type(s))\n"],
    ids=["mro()", "getmro"],
)
def test_an_mro_walk_stays_beside_a_table_keyed_by_an_anchor(walk):
    """VSL006 reads how a table is looked up: the walk's function is kept
    whole, the unrelated one goes."""
    head = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "TABLE = {MLAAttentionSpec: 1}\n"
    )
    text = head + "def unrelated():\n    return 0\ndef lookup(s):\n    " + walk
    assert _slice(text).text == head + "def lookup(s):\n    " + walk


def test_strict_keeps_no_test_that_names_no_anchor():
    # The row is read (it names an anchor); its one test names none.
    text = "def f(x):\n    return isinstance(x, int) and MLAAttentionSpec\n"
    assert not _slice(text, config=Config(strict=True)).has_candidates


def test_a_table_keyed_by_one_parent_and_its_companion_sweeps_in_no_other_family():
    """With a third member beside a second parent, a table that keys the
    first parent with its own companion entry sweeps nothing in: the other
    pair's parent is not among its keys."""
    bases = {
        "KVCacheSpec": (),
        "AttentionSpec": ("KVCacheSpec",),
        "FullAttentionSpec": ("AttentionSpec",),
        "MLAAttentionSpec": ("FullAttentionSpec",),
        "SlidingWindowSpec": ("AttentionSpec",),
        "SlidingWindowMLASpec": ("SlidingWindowSpec",),
        "ChunkedLocalAttentionSpec": ("AttentionSpec",),
        "ChunkedMLASpec": ("ChunkedLocalAttentionSpec",),
    }
    hierarchy = ClassHierarchy.default().with_module(
        KV_CACHE_INTERFACE, bases, "test", "scanned tree"
    )
    text = (
        "from vllm.v1.kv_cache_interface import SlidingWindowSpec, SlidingWindowMLASpec\n"
        "def f(s):\n"
        "    table = {SlidingWindowSpec: 1, SlidingWindowMLASpec: 2}\n"
        "    return next(table[c] for c in type(s).__mro__ if c in table)\n"
    )
    config = Config(families=(THREE_MEMBER_MLA,))
    screen = slicing.Screen.build(config, hierarchy, None)
    assert ("ChunkedLocalAttentionSpec", "ChunkedMLASpec") in screen.parent_companions
    assert not slicing.relevant_source(text, ast.parse(text), screen).has_candidates


def test_a_name_at_the_files_first_character_is_looked_for():
    """The test on row 1 starts the file with an alias of the anchor (one
    no other name looked for holds): its row is read too."""
    text = (
        "MLA is type(spec)\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLA\n"
    )
    assert _slice(text).has_candidates
    found = analyze_source(text, "w.py", Config())
    assert [(f.code, f.location) for f in found.findings] == [("VSL002", (1, 1))]


def test_the_first_kept_statement_nested_deeper_than_libcst_takes_is_named_by_its_row(
    monkeypatch,
):
    """Measured on the statement itself (its decorators' row first): the
    one after it, as deep, is not named; a statement cut from the slice is
    not measured. Measured afresh: not from another test's remembered
    measure of the same text."""
    from vllm_spec_lint.core import nesting

    monkeypatch.setattr(nesting, "_NESTING_BY_TEXT", {})
    deep = "-" * 998 + "x\n"
    text = (
        "def cut():\n    return " + deep
        + TEST
        + "@decorate\nclass Kept:\n    y = isinstance(s, MLAAttentionSpec)\n"
        "    z = " + deep
        + "w = " + deep
    )  # fmt: skip
    assert _slice(text).too_deep == 4  # the decorator's row
