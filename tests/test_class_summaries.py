"""model/class_summaries.py: what one file says about its classes, imports,
tables and uses of names, read with ``ast`` (the pairing's verdicts on
whole trees are in tests/test_pairing.py)."""

from __future__ import annotations

import textwrap

import pytest

from vllm_spec_lint.model.class_bodies import SAME, SUPER
from vllm_spec_lint.model.class_summaries import summarize

pytestmark = pytest.mark.fast


def _summary(source: str, module: str = "pkg.sub.mod", is_package: bool = False):
    return summarize(textwrap.dedent(source).encode(), module, is_package)


# -- imports -----------------------------------------------------------------------


def test_imports_bind_qualified_names_relative_to_the_package():
    summary = _summary(
        """\
        import os.path
        import numpy as np
        import a.b as ab
        from . import sibling
        from .x import B
        from ..y import C as D
        from abs.mod import F
        from star import *
        """
    )
    assert summary.aliases == {
        "pkg.sub.mod.os": "os",
        "pkg.sub.mod.np": "numpy",
        "pkg.sub.mod.ab": "a.b",
        "pkg.sub.mod.sibling": "pkg.sub.sibling",
        "pkg.sub.mod.B": "pkg.sub.x.B",
        "pkg.sub.mod.D": "pkg.y.C",
        "pkg.sub.mod.F": "abs.mod.F",
    }


def test_a_packages_init_imports_relative_to_itself():
    summary = _summary("from .x import B\nfrom .. import top\n", "pkg.sub", True)
    assert summary.aliases == {"pkg.sub.B": "pkg.sub.x.B", "pkg.sub.top": "pkg.top"}


def test_relative_imports_three_levels_up_and_from_a_top_level_module():
    deep = _summary("from ...top import Name\n", "a.b.c.mod")
    assert deep.aliases == {"a.b.c.mod.Name": "a.top.Name"}
    # A module outside any package: its sibling's module is the name alone.
    alone = _summary("from .sibling import Name\n", "mod")
    assert alone.aliases == {"mod.Name": "sibling.Name"}


# -- tables ------------------------------------------------------------------------


def test_tables_are_module_level_tuples_and_frozensets_of_names():
    summary = _summary(
        """\
        T = frozenset({A, B})
        U = (A, B)
        V = tuple([A])
        W = frozenset()
        X = [A, B]
        Y = (A, "b")
        Z = ()
        R, S = (A, B)
        Q = set({A})
        P = frozenset(A, B)
        K = frozenset({A}, **extra)


        def f():
            L = (A, B)
        """
    )
    assert summary.tables == {
        "pkg.sub.mod.T": ("A", "B"),
        "pkg.sub.mod.U": ("A", "B"),
        "pkg.sub.mod.V": ("A",),
    }
    assert summary.uses("A") >= {"in table pkg.sub.mod.T", "in table pkg.sub.mod.V"}
    assert "in table pkg.sub.mod.X" not in summary.uses("A")


# -- classes -----------------------------------------------------------------------


def test_a_class_summary_has_its_resolved_bases_and_pairing_returns():
    summary = _summary(
        """\
        from vllm.attention import Backend, Builder as ImportedBuilder
        from vllm.spec import MLAAttentionSpec


        class Local:
            pass


        class MyBackend(Backend, Generic[T], Local, object, Unknown):
            def other(self):  # before the pairing methods: they are read too
                return Local

            @staticmethod
            def get_builder_cls():
                return ImportedBuilder

            def get_attn_backend(self):
                return MyBackend if FLAG else Local

            def get_kv_cache_spec(self, config):
                return MLAAttentionSpec(block_size=16)

            def customize_spec(self, spec):
                return spec
        """
    )
    info = summary.classes["pkg.sub.mod.MyBackend"]
    assert info.bases == (
        "vllm.attention.Backend",
        "?Generic",
        "pkg.sub.mod.Local",
        "builtins.object",
        "?Unknown",
    )
    assert info.returns == {
        "get_builder_cls": ("vllm.attention.Builder",),
        "get_attn_backend": ("pkg.sub.mod.MyBackend", "pkg.sub.mod.Local"),
        "get_kv_cache_spec": ("vllm.spec.MLAAttentionSpec",),
        "customize_spec": (SAME,),
    }
    assert (info.rebinds_own_spec, info.passes_other_spec) == (False, False)
    assert summary.defined == {"Local", "MyBackend"}


@pytest.mark.parametrize(
    "body, returns",
    [
        ("return super().customize_spec(spec)", (SUPER,)),
        ("return dataclasses.replace(spec, block_size=1)", (SAME,)),
        ("return copy.deepcopy(spec)", (SAME,)),
        ("return copy.copy(Made())", ("pkg.sub.mod.Made",)),
        ("return None", ()),
        ("if spec:\n    return\nreturn spec", (SAME,)),
        ("made = Made()\nreturn made", ("pkg.sub.mod.Made",)),
        ("made = Made()\nmade = spec\nreturn made", None),  # two bindings
        ("made, other = Made(), 1\nreturn made", None),  # not a plain binding
        ("for made in specs:\n    pass\nreturn made", None),
        ("with open() as made:\n    pass\nreturn made", None),
        ("made += 1\nreturn made", None),
        ("return (made := Made())", None),
        ("return len(spec)", None),  # a builtin makes no spec
        ("return factory()", None),  # unknown name
        ("return spec.copy()", None),
        ("return Made() if spec else spec", ("pkg.sub.mod.Made", SAME)),
        ("return Made() if spec else factory()", None),
        ("yield spec", None),
        ("def inner():\n    yield 1\nreturn spec", (SAME,)),  # not its own yield
        ("from elsewhere import Other\nreturn Other()", ("elsewhere.Other",)),
        ("import elsewhere\nreturn elsewhere.Other()", ("elsewhere.Other",)),
        ("return Made(); return spec", ("pkg.sub.mod.Made", SAME)),
        # Code of its own only: an inner async function's yield, a lambda's
        # or a class's bindings are theirs.
        ("async def inner():\n    yield 1\nreturn spec", (SAME,)),
        ("made = Made()\nf = lambda: (made := 2)\nreturn made", ("pkg.sub.mod.Made",)),
        (
            "made = Made()\nclass Inner:\n    made = 2\nreturn made",
            ("pkg.sub.mod.Made",),
        ),
        ("yield from specs", None),
        # Each way of binding the name again makes it unknown.
        ("made = Made()\nmade += extra\nreturn made", None),
        ("made = Made()\nmade: Made = other\nreturn made", None),
        ("made = Made()\nfor made in specs:\n    pass\nreturn made", None),
        ("made = Made()\nasync for made in specs:\n    pass\nreturn made", None),
        ("made = Made()\nwith open() as made:\n    pass\nreturn made", None),
        ("made = Made()\nasync with open() as made:\n    pass\nreturn made", None),
        ("made = Made()\nimport made.sub\nreturn made", None),
        ("made = Made()\nimport other as made\nreturn made", None),
        ("made = Made()\nfrom other import made\nreturn made", None),
        # Eight steps of names are followed; the ninth is not.
        (
            "a1 = Made()\n"
            + "".join(f"a{i} = a{i - 1}\n" for i in range(2, 9))
            + "return a8",
            ("pkg.sub.mod.Made",),
        ),
        (
            "a1 = Made()\n"
            + "".join(f"a{i} = a{i - 1}\n" for i in range(2, 10))
            + "return a9",
            None,
        ),
        ("return 0", None),  # a constant other than None makes no spec
        ("return self.make().build()", None),
        ("return copy.copy()", ("copy.copy",)),  # nothing to copy: a call
        ("from elsewhere import Other\nreturn Other", None),  # a class, not made
    ],
)
def test_what_customize_spec_can_return(body, returns):
    header = "import copy\nimport dataclasses\n\n\nclass Made:\n    pass\n"
    found = _returns(header, "def customize_spec(self, spec):", body)
    # What it can return, in no promised order.
    assert (None if found is None else sorted(found)) == (
        None if returns is None else sorted(returns)
    )


def _returns(header: str, method: str, body: str):
    """What ``method`` of ``class Backend`` (after ``header``, in module
    pkg.sub.mod) can return, with ``body``."""
    source = (
        f"{header}\n\nclass Backend:\n    {method}\n"
        + textwrap.indent(body, "        ")
        + "\n"
    )
    summary = summarize(source.encode(), "pkg.sub.mod", False)
    [found] = summary.classes["pkg.sub.mod.Backend"].returns.values()
    return found


@pytest.mark.parametrize(
    "body, returns",
    [
        ("return Builder", ("pkg.sub.mod.Builder",)),
        ("return builders.Builder", ("pkg.sub.builders.Builder",)),
        ("return Builder()", None),  # an instance, not a class
        ("cls = Builder\nreturn cls", ("pkg.sub.mod.Builder",)),
        ("from .builders import Builder as B\nreturn B", ("pkg.sub.builders.Builder",)),
        ("return pick()", None),
        ("return self.builder", None),
        ("return 'pkg.sub.mod.Builder'", None),  # a string is no class
    ],
)
def test_what_get_builder_cls_can_return(body, returns):
    header = "from . import builders\n\n\nclass Builder:\n    pass\n"
    method = "@staticmethod\n    def get_builder_cls():"
    assert _returns(header, method, body) == returns


@pytest.mark.parametrize(
    "init, passes_other",
    [
        (
            "def __init__(self, kv_cache_spec):\n    super().__init__(kv_cache_spec)",
            False,
        ),
        ("def __init__(self, kv_cache_spec):\n    super().__init__(spec)", True),
        (
            "def __init__(self, kv_cache_spec):\n"
            "    kv_cache_spec = make()\n    super().__init__(kv_cache_spec)",
            True,
        ),
        ("def __init__(self, *args):\n    super().__init__(*args)", False),
        ("def __init__(self, *args):\n    super().__init__(*others)", True),
        (
            "def __init__(self, *args):\n    args = ()\n    super().__init__(*args)",
            True,
        ),
        ("def __init__(self, **kw):\n    super().__init__(**kw)", False),
        ("def __init__(self, **kw):\n    super().__init__(**other)", True),
        (
            "def __init__(self, kv_cache_spec):\n"
            "    super().__init__(kv_cache_spec=kv_cache_spec)",
            False,
        ),
        (
            "def __init__(self, kv_cache_spec):\n"
            "    super().__init__(kv_cache_spec=other)",
            True,
        ),
        ("def __init__(self, spec):\n    super().__init__(kv_cache_spec=spec)", True),
        (
            "def __init__(self, kv_cache_spec):\n    Base.__init__(self, kv_cache_spec)",
            True,
        ),
        ("def __init__(self):\n    super().__init__()", False),
        # Another class's __init__, however called, is not followed.
        ("def __init__(self, **kw):\n    Base.__init__(**kw)", True),
        (
            "def __init__(self, kv_cache_spec):\n"
            "    self.parent().__init__(kv_cache_spec)",
            True,
        ),
        # A module's kv_cache_spec, not the one given.
        ("def __init__(self, spec):\n    super().__init__(kv_cache_spec)", True),
        ("def __init__(self):\n    super().__init__(layers=3)", False),
        ("def __init__(self):\n    self.setup()", False),
        ("def __init__(self):\n    def inner():\n        Base.__init__(1)", False),
    ],
)
def test_whether_init_hands_its_base_another_spec(init, passes_other):
    assert _builder(init).passes_other_spec is passes_other


def _builder(body: str):
    """The summary of ``class Builder(Base)`` with ``body``."""
    source = "class Builder(Base):\n" + textwrap.indent(body, "    ") + "\n"
    return summarize(source.encode(), "m", False).classes["m.Builder"]


@pytest.mark.parametrize(
    "body, rebinds",
    [
        ("def f(self):\n    self.kv_cache_spec = spec", True),
        # A class spelling all three words is read too.
        (
            "def f(self):\n    # no setattr, no delattr\n    self.kv_cache_spec = s",
            True,
        ),
        ("def f(self):\n    del self.kv_cache_spec", True),
        ("def f(self):\n    setattr(self, name, spec)", True),
        ("def f(self):\n    delattr(self, name)", True),
        ("def f(self):\n    return self.kv_cache_spec.block_size", False),
        ("def f(self):\n    self.other = self.kv_cache_spec", False),
        ("def f(self):\n    obj.setattr(self, name)", False),
    ],
)
def test_whether_a_class_rebinds_its_own_spec(body, rebinds):
    assert _builder(body).rebinds_own_spec is rebinds


# -- uses of names -----------------------------------------------------------------


def test_every_way_a_module_uses_a_name():
    summary = _summary(
        '''\
        """A module docstring naming pkg.Doc."""
        import os
        from pkg import Base as Renamed, Spec, Same as Same
        from pkg.mod import Other

        __all__ = ["Listed"]
        __all__: list = ["Annotated"]
        "pkg.Loose"


        @decorate(Deco)
        class Builder(Renamed, metaclass=Meta):
            "pkg.InClassDoc"
            field: Spec = Default
            NESTED = (Inner,)

            def get_builder_cls(self):
                return Pick if flag else Other

            def helper(self, x=Fallback):
                return Helped

            async def get_attn_backend(self):
                return Awaited


        def f(spec: Spec, *args: Star, **kw: Kw) -> Result:
            if isinstance(spec, (Tested, mod.Dotted)) and issubclass(Sub, Parent):
                return spec.block_size
            if type(spec) is Exact or spec == Equal:
                return "pkg.mod.Importable"
            if spec in (Member, Member2):
                return "not a dotted name"
            if isinstance(spec, *many):
                return Starred
            return isinstance(spec, Three, extra)


        class Nested(Outer.Attr):
            def get_builder_cls(self):
                return Kept
        '''
    )
    expected = {
        "os": {"import"},
        "Base": {"other"},  # imported under another name
        "Spec": {"import", "annotation"},
        "Same": {"import"},
        "Other": {"import", "returned by get_builder_cls"},
        "Deco": {"other"},
        "decorate": {"other"},
        "Renamed": {"base"},
        "Meta": {"other"},
        "Default": {"other"},
        "field": {"other"},
        "NESTED": {"other"},
        "Inner": {"other"},
        "Pick": {"returned by get_builder_cls"},
        "flag": {"other"},
        "x": set(),
        "Fallback": {"other"},
        "Helped": {"other"},
        "Awaited": {"other"},
        "Star": {"annotation"},
        "Kw": {"annotation"},
        "Result": {"annotation"},
        "Tested": {"class test"},
        "Dotted": {"class test"},
        "mod": {"attribute Dotted"},
        "Sub": {"other"},
        "Parent": {"class test"},
        "Exact": {"class test"},
        "Equal": {"class test"},
        "Importable": {"string"},
        "Member": {"membership"},
        "Member2": {"membership"},
        "many": {"other"},
        "Starred": {"other"},
        "Three": {"other"},
        "extra": {"other"},
        "Outer": {"attribute Attr"},
        "Attr": {"base"},
        "Kept": {"returned by get_builder_cls"},
        "spec": {"other", "class test", "attribute block_size"},
        "block_size": {"other"},
        "type": {"other"},  # type(spec): a call, compared
        "isinstance": {"other"},
        "issubclass": set(),  # a class test: its name is not a use
        "list": set(),  # the annotation of __all__, passed over with it
    }
    for name, uses in expected.items():
        assert summary.uses(name) == uses, name
    for never in ("Listed", "Annotated", "Doc", "Loose", "InClassDoc", "f"):
        assert summary.uses(never) == set(), never


@pytest.mark.parametrize(
    "test, uses",
    [
        # A set or list of classes is a membership test like a tuple.
        ("type(spec) in {Member, Member2}", {"membership"}),
        ("type(spec) in [Member, Member2]", {"membership"}),
        ("type(spec) not in (Member, Member2)", {"membership"}),
        # An order comparison or a chain is no membership test.
        ("spec.size < Member < Member2", {"other"}),
        ("spec in Member in Member2", {"other"}),
        ("spec.size < Member2", {"other"}),
        # A call with two arguments is a class test only as isinstance().
        ("getattr(Member, Member2)", {"other"}),
    ],
)
def test_how_a_comparison_or_call_uses_a_name(test, uses):
    summary = _summary(f"def f(spec):\n    return {test}\n")
    assert summary.uses("Member2") == uses


@pytest.mark.parametrize(
    "line", ["O = frozenset(names)", "M = N = (A, B)", "L = tuple(A)"]
)
def test_what_is_no_table(line):
    assert _summary(line + "\n").tables == {}


HANDLER_BUILDER = """\
class B:
    def get_builder_cls(self):
        try:
            from .fast import Builder
        except ImportError:
            return Fallback
        return Builder
"""
CASE_BUILDER = """\
class B:
    def get_builder_cls(self):
        match MODE:
            case Mode(fast=True):
                return FastBuilder
        return SlowBuilder
"""


@pytest.mark.parametrize(
    "source, name, uses",
    [
        (
            "async def f(spec: Spec):\n    return isinstance(spec, Spec)\n",
            "Spec",
            {"annotation", "class test"},
        ),
        (
            "from . import builders\n\n\nclass B:\n    def get_builder_cls(self):\n"
            "        return builders.Builder\n",
            "Builder",
            {"returned by get_builder_cls"},
        ),
        # A chain that mixes an identity test with an order is no class test.
        ("def f(spec):\n    return type(spec) is Exact < Other\n", "Other", {"other"}),
        # __all__ assigned with another name: its strings are still exports.
        ('__all__ = EXPORTED = ["Listed"]\n', "Listed", set()),
        # Inside an except handler or a match case, a pairing method's
        # return is still its return, and a class caught or matched is used.
        (HANDLER_BUILDER, "Fallback", {"returned by get_builder_cls"}),
        (HANDLER_BUILDER, "ImportError", {"other"}),
        (CASE_BUILDER, "FastBuilder", {"returned by get_builder_cls"}),
        (CASE_BUILDER, "Mode", {"other"}),
    ],
    ids=[
        "async-function", "returned-attribute", "mixed-chain", "all-and-another",
        "returned-in-a-handler", "caught", "returned-in-a-case", "matched",
    ],
)  # fmt: skip
def test_a_use_in_a_less_common_shape(source, name, uses):
    assert _summary(source).uses(name) == uses


def test_a_name_only_a_decorator_spells_is_a_use_when_asked_first():
    """A statement is walked for uses when a name asked about is in its
    text: a decorated definition's text starts at its first decorator."""
    summary = _summary(
        """\
        @register(Registered)
        @other
        class Plain:
            pass


        @wraps(Wrapped)
        def plain():
            pass
        """
    )
    assert summary.uses("Registered") == {"other"}
    assert summary.uses("Wrapped") == {"other"}
    assert summary.uses("Plain") == set()


def test_each_name_asked_about_finds_its_uses_in_statements_not_walked_yet():
    summary = _summary(
        """\
        from pkg import First


        def uses_first():
            return isinstance(x, First)


        def uses_second():
            return Second
        """
    )
    assert summary.uses("Second") == {"other"}
    assert summary.uses("First") == {"import", "class test"}
    assert summary.uses("Second") == {"other"}
    assert summary.uses("Missing") == set()


def test_a_name_asked_about_again_is_answered_without_reading_a_statement(
    monkeypatch,
):
    from vllm_spec_lint.model import class_summaries

    summary = _summary(
        """\
        from pkg import First


        def uses_first():
            return isinstance(x, First)


        def uses_both():
            return First, Second
        """
    )
    read = []
    statement = class_summaries._Uses.statement

    def counted(self, node, **how):
        if how.get("top"):
            read.append(node.lineno)
        return statement(self, node, **how)

    monkeypatch.setattr(class_summaries._Uses, "statement", counted)
    assert summary.uses("First") == {"import", "class test", "other"}
    assert read == [1, 4, 8]
    assert summary.uses("First") == {"import", "class test", "other"}
    assert summary.uses("Second") == {"other"}  # its statement was read
    assert summary.uses("Second") == {"other"}
    assert read == [1, 4, 8]
