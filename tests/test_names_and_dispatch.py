"""VSL005 and VSL006 through the command line: what the slice must keep for
them (a file naming the anchor only in a string, registrations and MRO
walks in functions that do not name it), cold and warm, and their fixes
laid out as ruff would. Expected output is written out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"


def findings(tree: Path, *args: str) -> list[tuple[str, int, int, str]]:
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "json",
        *args,
        ".",
        cwd=tree,
    )
    assert out.returncode in (0, 1), out.stderr
    return [
        (
            Path(f["filename"]).name,
            f["location"]["row"],
            f["location"]["column"],
            f["code"],
        )
        for f in json.loads(out.stdout)
    ]


def test_a_file_naming_the_anchor_only_in_a_string_is_read_cold_and_warm(tmp_path):
    (tmp_path / "connector.py").write_text(
        "def is_mla(spec) -> bool:\n"
        '    return type(spec).__name__ == "MLAAttentionSpec"\n'
    )
    expected = [("connector.py", 2, 35, "VSL005")]
    assert findings(tmp_path) == expected  # cold: fills the cache
    assert findings(tmp_path) == expected  # warm


def test_a_companion_registered_in_another_function_counts(tmp_path):
    """The companion's registration is in a function that does not name the
    anchor: the slice keeps it, so nothing is reported."""
    (tmp_path / "sizes.py").write_text(
        "from functools import singledispatch\n\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\n@singledispatch\ndef size(spec):\n    return 0\n\n\n"
        "@size.register\ndef _(spec: MLAAttentionSpec):\n    return 1\n\n\n"
        "def register_window():\n"
        "    size.register(SlidingWindowMLASpec, lambda spec: 2)\n"
    )
    (tmp_path / "managers.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\ndef register_mla():\n"
        "    Registry.register(MLAAttentionSpec, FullManager)\n\n\n"
        "def register_window():\n"
        "    Registry.register(SlidingWindowMLASpec, WindowManager)\n\n\n"
        "def register_other():\n"
        "    Other.register(MLAAttentionSpec, FullManager)\n"
    )
    # Only `Other`, which never gets the companion.
    assert findings(tmp_path, "--no-cache") == [("managers.py", 13, 20, "VSL006")]


def test_an_mro_walk_in_another_function_makes_a_base_key_cover(tmp_path):
    table = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowSpec\n"
        "\nHANDLERS = {MLAAttentionSpec: 1, SlidingWindowSpec: 2}\n"
    )
    (tmp_path / "by_mro.py").write_text(
        table + "\n\ndef handler(spec):\n"
        "    return next(HANDLERS[c] for c in type(spec).__mro__ if c in HANDLERS)\n"
    )
    (tmp_path / "exact.py").write_text(
        table + "\n\ndef handler(spec):\n    return HANDLERS[type(spec)]\n"
    )
    assert findings(tmp_path, "--no-cache") == [("exact.py", 3, 13, "VSL006")]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "def f(spec):\n"
            '    return any(c.__name__ == "MLAAttentionSpec" for c in type(spec).__mro__)\n',
            "def f(spec):\n"
            "    return any(\n"
            '        c.__name__ in ("MLAAttentionSpec", "SlidingWindowMLASpec")\n'
            "        for c in type(spec).__mro__\n"
            "    )\n",
        ),
        (
            'ok = type(spec).__name__ != "MLAAttentionSpec"\n',
            'ok = type(spec).__name__ not in ("MLAAttentionSpec", "SlidingWindowMLASpec")\n',
        ),
        (
            IMPORT
            + "HANDLERS = {\n    MLAAttentionSpec: mla,  # MLA\n    FullSpec: full,\n}\n",
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
            "HANDLERS = {\n"
            "    MLAAttentionSpec: mla,  # MLA\n"
            "    SlidingWindowMLASpec: mla,\n"
            "    FullSpec: full,\n"
            "}\n",
        ),
        (
            IMPORT + "\n\nclass Sizes:\n"
            "    def register(self):\n"
            "        REGISTRY.register(MLAAttentionSpec, mla, base=Full)\n",
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
            "\n\nclass Sizes:\n"
            "    def register(self):\n"
            "        REGISTRY.register(MLAAttentionSpec, mla, base=Full)\n"
            "        REGISTRY.register(SlidingWindowMLASpec, mla, base=Full)\n",
        ),
    ],
    ids=["mro-scan", "name-not-equal", "table-multiline", "registry-in-method"],
)
def test_fixes_are_laid_out_like_the_code_around_them(tmp_path, before, after):
    path = tmp_path / "m.py"
    path.write_text(before)
    # Every fix changes behaviour: without --unsafe-fixes none is made.
    run_cli("fix", "--output-format", "concise", "--no-cache", "m.py", cwd=tmp_path)
    assert path.read_text() == before
    run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--no-cache",
        "m.py",
        cwd=tmp_path,
    )
    assert path.read_text() == after


# -- at the analysis core (mutation testing counts these for the rule) --------

NAMES = "from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheSpec\n\n\n"


def _analysis(source: str):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    return analyze_source(source, "x.py", Config(), module_name="vllm.other")


def test_a_name_test_a_later_assert_rejects_is_deliberate_and_says_why():
    source = NAMES + (
        "def g(s: KVCacheSpec):\n"
        '    if type(s).__name__ == "MLAAttentionSpec":\n'
        "        return 1\n"
        "    assert isinstance(s, FullAttentionSpec)\n"
    )
    analysis = _analysis(source)
    assert analysis.findings == []
    assert [(f.code, f.location, f.suppressed_by) for f in analysis.suppressed] == [
        (
            "VSL005",
            (5, 28),
            "assert: line 7 rejects what the check lets through, "
            "SlidingWindowMLASpec included, loudly",
        )
    ]


def test_a_builders_name_test_of_its_own_spec_names_the_builder_and_the_left_out():
    source = (
        "class Builder:\n"
        "    def __init__(self, kv_cache_spec):\n"
        "        self.kv_cache_spec = kv_cache_spec\n"
        '        if type(self.kv_cache_spec).__name__ == "MLAAttentionSpec":\n'
        "            self.x = 1\n"
    )
    assert [(f.code, f.own_spec) for f in _analysis(source).findings] == [
        (
            "VSL005",
            ("vllm.other.Builder", "vllm.v1.kv_cache_interface.SlidingWindowMLASpec"),
        )
    ]


@pytest.mark.parametrize(
    "test, fixed",
    [
        (
            'type(spec).__name__ == "MLAAttentionSpec"',
            'type(spec).__name__ in ("MLAAttentionSpec", "SlidingWindowMLASpec")',
        ),
        # A name in a set of the MRO's names: no place for another name.
        ('"MLAAttentionSpec" in {c.__name__ for c in type(spec).mro()}', None),
    ],
    ids=["name", "mro-names"],
)
def test_a_name_test_is_fixed_where_another_name_has_a_place(test, fixed):
    from vllm_spec_lint.core.fixing import fix_source
    from vllm_spec_lint.core.settings import Config

    [finding] = _analysis(f"ok = {test}\n").findings
    assert (finding.fix is None) == (fixed is None)
    outcome = fix_source(
        f"ok = {test}\n", "x.py", Config(), module_name="vllm.other",
        unsafe=True, formatter=None,
    )  # fmt: skip
    assert outcome.text == f"ok = {fixed or test}\n"
