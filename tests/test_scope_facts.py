"""Facts belong to variables, and a variable to the scope that binds it
(Python's rules, as ``symtable`` reports them): a same-named variable of a
comprehension, lambda, inner function or class body shares no fact with
the function's own; a walrus in a comprehension binds in the function; a
variable another scope can rebind (``nonlocal``, a global) keeps no fact
from earlier statements."""

from __future__ import annotations

import textwrap

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config

HEAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
)


def _verdicts(body: str) -> list[tuple[int, str | None]]:
    """(row, why it is not reported by default, or None) of each VSL001."""
    result = analyze_source(
        HEAD + textwrap.dedent(body), "scopes.py", Config(strict=True)
    )
    return [(f.location[0], f.suppressed_by) for f in result.findings]


GUARD = """\
    def f(spec, specs):
        if isinstance(spec, SlidingWindowMLASpec):
            return None
    """


@pytest.mark.parametrize(
    "kind, tail",
    [
        (
            "comprehension",
            "    return [isinstance(spec, MLAAttentionSpec) for spec in specs]\n",
        ),
        (
            "generator",
            "    return any(isinstance(spec, MLAAttentionSpec) for spec in specs)\n",
        ),
        (
            "lambda",
            "    return sorted(specs, key=lambda spec: isinstance(spec, MLAAttentionSpec))\n",
        ),
        (
            "inner function",
            "    def pick(spec):\n        return isinstance(spec, MLAAttentionSpec)\n    return pick\n",
        ),
        (
            "class body",
            "    class Holder:\n        spec = specs[0]\n        mla = isinstance(spec, MLAAttentionSpec)\n"
            "    return Holder\n",
        ),
    ],
)
def test_a_same_named_variable_of_another_scope_shares_no_fact(kind, tail):
    (verdict,) = _verdicts(GUARD + tail)
    assert verdict[1] is None, kind


def test_the_functions_own_variable_after_the_guard_is_narrowed():
    assert _verdicts(GUARD + "    return isinstance(spec, MLAAttentionSpec)\n") == [
        (
            6,
            "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 4) already "
            "excludes SlidingWindowMLASpec",
        )
    ]


def test_a_walrus_in_a_comprehension_binds_the_functions_variable():
    body = """\
    def f(specs):
        flags = [isinstance(spec, SlidingWindowMLASpec) for s in specs if (spec := s)]
        return flags, isinstance(spec, MLAAttentionSpec)
    """
    assert _verdicts(body) == [
        (5, "deliberate: line 4 tests `spec` for SlidingWindowMLASpec")
    ]


def test_a_walrus_in_a_lambda_in_a_comprehension_binds_in_the_lambda():
    import libcst as cst

    from vllm_spec_lint.model.scopes import Scopes
    from vllm_spec_lint.model.syntax import parent_map, walk

    module = cst.parse_module(
        "def f(specs):\n"
        "    makers = [lambda: (spec := s) for s in specs]\n"
        "    direct = [(found := s) for s in specs]\n"
        "    return spec, found\n"
    )
    scopes = Scopes(module, parent_map(module))
    f = module.body[0]
    spec, found = [n for n in walk(module) if isinstance(n, cst.Return)][
        0
    ].value.elements
    assert scopes.binder(spec.value, "spec") is None  # the lambda's own
    assert scopes.binder(found.value, "found").node is f


def test_a_walrus_variable_of_another_function_is_not_the_same():
    body = """\
    def f(specs):
        return [spec for s in specs if isinstance(spec := s, SlidingWindowMLASpec)]


    def g(spec):
        return isinstance(spec, MLAAttentionSpec)
    """
    assert _verdicts(body) == [(8, None)]


def test_a_variable_an_inner_function_rebinds_keeps_no_earlier_fact():
    body = """\
    def f(spec, other):
        if isinstance(spec, SlidingWindowMLASpec):
            return None

        def swap():
            nonlocal spec
            spec = other

        swap()
        return isinstance(spec, MLAAttentionSpec)
    """
    # Not narrowed (swap() may have rebound it); the function still tests
    # the same variable for the companion: deliberate.
    assert _verdicts(body) == [
        (12, "deliberate: line 4 tests `spec` for SlidingWindowMLASpec")
    ]


def test_a_nonlocal_name_refers_to_the_enclosing_functions_variable():
    import libcst as cst

    from vllm_spec_lint.model.scopes import Scopes
    from vllm_spec_lint.model.syntax import parent_map, walk

    module = cst.parse_module(
        "def f(spec):\n"
        "    def check():\n"
        "        nonlocal spec\n"
        "        spec = None\n"
        "        return spec\n"
        "    def other():\n"
        "        spec = 1\n"
        "        return spec\n"
        "    return check\n"
    )
    scopes = Scopes(module, parent_map(module))
    f = module.body[0]
    check, other = f.body.body[0], f.body.body[1]
    in_check = [n for n in walk(check) if isinstance(n, cst.Name) and n.value == "spec"]
    in_other = [n for n in walk(other) if isinstance(n, cst.Name) and n.value == "spec"]
    assert {scopes.binder(n, "spec").node for n in in_check} == {f}
    assert {scopes.binder(n, "spec").node for n in in_other} == {other}
    assert scopes.rebound_elsewhere(f.body.body[2], "spec")
    assert not scopes.rebound_elsewhere(in_other[-1], "spec")


def test_a_nonlocal_name_in_a_method_skips_the_class_body():
    import libcst as cst

    from vllm_spec_lint.model.scopes import Scopes
    from vllm_spec_lint.model.syntax import parent_map, walk

    module = cst.parse_module(
        "def outer():\n"
        "    spec = 1\n"
        "    class Holder:\n"
        "        spec = 2\n"
        "        def method(self):\n"
        "            nonlocal spec\n"
        "            return spec\n"
    )
    scopes = Scopes(module, parent_map(module))
    outer = module.body[0]
    read = [n for n in walk(module) if isinstance(n, cst.Return)][0].value
    assert scopes.binder(read, "spec").node is outer


def test_a_global_read_in_a_function_keeps_no_fact_from_earlier_statements():
    body = """\
    def f():
        global current
        if isinstance(current, SlidingWindowMLASpec):
            return None
        reset()
        return isinstance(current, MLAAttentionSpec)
    """
    assert _verdicts(body) == [
        (8, "deliberate: line 5 tests `current` for SlidingWindowMLASpec")
    ]


def test_a_global_keeps_the_facts_of_its_own_condition():
    body = """\
    def f():
        return isinstance(current, SlidingWindowMLASpec) or isinstance(
            current, MLAAttentionSpec
        )
    """
    assert _verdicts(body) == []


def test_at_module_level_a_module_variable_is_narrowed():
    body = """\
    if isinstance(spec, SlidingWindowMLASpec):
        raise SystemExit
    mla = isinstance(spec, MLAAttentionSpec)
    """
    assert _verdicts(body) == [
        (
            5,
            "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 3) already "
            "excludes SlidingWindowMLASpec",
        )
    ]


@pytest.mark.parametrize("quantifier", ["all", "any"])
def test_a_filter_inside_any_or_all_is_excused_by_a_test_of_the_collection(
    quantifier,
):
    """A generator handed to any()/all() decides once for the collection,
    not element by element into a new one: another test of the collection
    for the companion counts as handling it."""
    body = f"""\
    def f(specs):
        if any(isinstance(s, SlidingWindowMLASpec) for s in specs):
            log()
        return {quantifier}(s.ready for s in specs if isinstance(s, MLAAttentionSpec))
    """
    assert _verdicts(body) == [
        (6, "deliberate: line 4 tests `s` for SlidingWindowMLASpec")
    ]


@pytest.mark.parametrize(
    "built",
    [
        "[s for s in specs if isinstance(s, MLAAttentionSpec)]",
        "{s for s in specs if isinstance(s, MLAAttentionSpec)}",
        "{s: 1 for s in specs if isinstance(s, MLAAttentionSpec)}",
        # A generator handed to anything but any()/all() builds one too,
        "tuple(s for s in specs if isinstance(s, MLAAttentionSpec))",
        # and any() over a list decides after the list is built.
        "any([s.ready for s in specs if isinstance(s, MLAAttentionSpec)])",
        "make()(s for s in specs if isinstance(s, MLAAttentionSpec))",
    ],
    ids=["list", "set", "dict", "generator-to-tuple", "list-in-any", "called-call"],
)
def test_a_filter_building_a_collection_is_not_excused_by_a_test_of_the_collection(
    built,
):
    body = f"""\
    def f(specs):
        if any(isinstance(s, SlidingWindowMLASpec) for s in specs):
            log()
        return {built}
    """
    assert _verdicts(body) == [(6, None)]
