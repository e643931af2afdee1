"""Name resolution (model/names.py) at its edges, through what a user sees:
which names are the family's classes, and which names a fix writes. The
expected findings and fixed texts are written out."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config


def codes(source: str, module_name: str | None = None) -> list[tuple[str, int]]:
    found = analyze_source(source, "x.py", Config(), module_name=module_name)
    return [(f.code, f.location[0]) for f in found.findings]


@pytest.mark.parametrize(
    ("source", "module_name", "expected"),
    [
        # A relative import of a class no family has (its package unknown):
        # not a spec class, and no error.
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "from .layers import OtherSpec\n"
            "ok = isinstance(s, (MLAAttentionSpec, OtherSpec))\n",
            None,
            [("VSL001", 3)],
        ),
        # Python 3 has no implicit relative imports: `import kv_cache_interface`
        # in vllm.v1 is not vllm.v1.kv_cache_interface.
        (
            "import kv_cache_interface\n"
            "ok = isinstance(s, kv_cache_interface.MLAAttentionSpec)\n",
            "vllm.v1.worker",
            [],
        ),
        (
            "from vllm.v1 import kv_cache_interface\n"
            "ok = isinstance(s, kv_cache_interface.MLAAttentionSpec)\n",
            "vllm.v1.worker",
            [("VSL001", 2)],
        ),
        # A star import does not reach a name the module binds itself.
        (
            "from vllm.v1.kv_cache_interface import *\n\n\n"
            "class MLAAttentionSpec:\n    pass\n\n\n"
            "ok = isinstance(s, MLAAttentionSpec)\n",
            None,
            [],
        ),
        (
            "from vllm.v1.kv_cache_interface import *\n"
            "ok = isinstance(s, MLAAttentionSpec)\n",
            None,
            [("VSL001", 2)],
        ),
        # A bytes literal is not a class name.
        (
            'ok = type(s).__name__ == b"MLAAttentionSpec"\n',
            None,
            [],
        ),
    ],
    ids=[
        "relative-unknown",
        "no-implicit-relative",
        "package-import",
        "star-shadowed",
        "star",
        "bytes",
    ],
)
def test_which_names_are_the_family_classes(source, module_name, expected):
    assert codes(source, module_name) == expected


def test_a_fix_uses_the_companion_imported_in_the_function():
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def f(spec):\n"
        "    from vllm.v1.kv_cache_interface import SlidingWindowMLASpec as SW\n\n"
        "    return isinstance(spec, MLAAttentionSpec)\n"
    )
    outcome = fix_source(source, "x.py", Config(), formatter=None, unsafe=True)
    assert outcome.text == source.replace(
        "isinstance(spec, MLAAttentionSpec)", "isinstance(spec, (MLAAttentionSpec, SW))"
    )


def test_a_fix_imports_the_companion_when_only_another_function_has_it():
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def g():\n"
        "    from vllm.v1.kv_cache_interface import SlidingWindowMLASpec as SW\n\n"
        "    return SW\n\n\n"
        "def f(spec):\n"
        "    return isinstance(spec, MLAAttentionSpec)\n"
    )
    outcome = fix_source(source, "x.py", Config(), formatter=None, unsafe=True)
    assert outcome.text == (
        source.replace(
            "import MLAAttentionSpec\n",
            "import MLAAttentionSpec, SlidingWindowMLASpec\n",
        ).replace(
            "isinstance(spec, MLAAttentionSpec)",
            "isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))",
        )
    )


@pytest.mark.parametrize(
    "compared", ['b"MLAAttentionSpec"', '"MLA AttentionSpec"', '"MLAAttentionSpec "']
)
def test_a_class_name_test_against_what_is_no_class_name_is_no_finding(compared):
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        f"ok = type(spec).__name__ == {compared}\n"
    )
    assert analyze_source(source, "m.py", Config(), None).findings == []
