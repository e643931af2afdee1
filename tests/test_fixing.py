"""fix_source in process: passes, what counts as fixed, and when it gives
up. The formatter is a stand-in that counts its calls (the real ones are
tests/test_fix_formatter.py's)."""

from __future__ import annotations

import pytest

from tests.conftest import THREE_MEMBER_MLA
from vllm_spec_lint.core import fixing
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config

HEADER = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
)
# Every fix is unsafe until a project promotes it.
SAFE_CONFIG = Config(extend_safe_fixes=("VSL001",))
SAFE = HEADER + "ok = isinstance(s, MLAAttentionSpec)\n"
SAFE_FIXED = HEADER + "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
# The table's fix (VSL006) holds the lambda, whose own fix (VSL001) waits for
# the next pass; both are unsafe.
TABLE = HEADER + "T = {MLAAttentionSpec: lambda s: isinstance(s, MLAAttentionSpec)}\n"
CHECK = "lambda s: isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))"
TABLE_FIXED = (
    HEADER + f"T = {{MLAAttentionSpec: {CHECK}, SlidingWindowMLASpec: {CHECK}}}\n"
)


class Formatter:
    """Returns the text it is given (or ``replacement``), counting calls
    and keeping the text as found that each call is given."""

    def __init__(self, replacement: str | None = None):
        self.calls = 0
        self.replacement = replacement
        self.befores: list[str] = []

    def __call__(self, text, changed, before):
        self.calls += 1
        self.befores.append(before)
        return text if self.replacement is None else self.replacement


def test_a_safe_fix_is_applied_once_and_counted():
    formatter = Formatter()
    outcome = fix_source(SAFE, "x.py", SAFE_CONFIG, formatter=formatter)
    assert (outcome.text, outcome.fixed, outcome.failure) == (
        SAFE_FIXED,
        ("VSL001",),
        None,
    )
    assert formatter.calls == 1


def test_fixes_are_counted_over_every_pass_each_shown_the_file_as_found():
    formatter = Formatter()
    outcome = fix_source(TABLE, "x.py", Config(), unsafe=True, formatter=formatter)
    assert (outcome.text, outcome.failure) == (TABLE_FIXED, None)
    assert outcome.fixed == ("VSL006", "VSL001", "VSL001")
    assert formatter.calls == 2
    # Each pass's formatter is shown the file as found, not the last pass's.
    assert formatter.befores == [TABLE, TABLE]


def test_unsafe_fixes_wait_to_be_asked_for():
    outcome = fix_source(SAFE, "x.py", Config())
    assert (outcome.text, outcome.fixed, outcome.failure) == (SAFE, (), None)
    assert [f.code for f in outcome.remaining] == ["VSL001"]


def test_a_clean_file_is_analysed_once(monkeypatch):
    calls = []
    analyze_source = fixing.analyze_source

    def counted(*args, **kwargs):
        calls.append(args[0])
        return analyze_source(*args, **kwargs)

    monkeypatch.setattr(fixing, "analyze_source", counted)
    outcome = fix_source(SAFE_FIXED, "x.py", Config())
    assert (outcome.text, outcome.fixed, outcome.failure) == (SAFE_FIXED, (), None)
    assert calls == [SAFE_FIXED]


@pytest.mark.parametrize("unsafe", [False, True])
def test_a_fix_that_keeps_coming_back_is_given_up_after_four_passes(unsafe):
    # A formatter that undoes every fix: the finding is still there.
    text = TABLE if unsafe else SAFE
    formatter = Formatter(replacement=text)
    config = Config() if unsafe else SAFE_CONFIG
    outcome = fix_source(text, "x.py", config, unsafe=unsafe, formatter=formatter)
    assert formatter.calls == 4
    assert outcome.text == text
    assert [f.code for f in outcome.remaining] == (
        ["VSL006", "VSL001"] if unsafe else ["VSL001"]
    )
    assert outcome.failure == (
        f"{'VSL006 at 2:6' if unsafe else 'VSL001 at 2:20'}"
        " is still reported after fixing; not written"
    )


def test_fixed_code_that_does_not_parse_is_not_written_and_keeps_the_findings():
    formatter = Formatter(replacement=SAFE_FIXED + "def (\n")
    outcome = fix_source(SAFE, "x.py", SAFE_CONFIG, formatter=formatter)
    assert (outcome.text, outcome.fixed) == (SAFE, ())
    assert outcome.failure == "the fixed code does not parse; not written"
    # The file's findings as they stand: the report still shows them.
    assert [(f.code, f.location) for f in outcome.remaining] == [("VSL001", (2, 20))]


# vLLM's family with a second companion: fixes that add one line per companion.


def test_companions_of_an_aliased_relative_import_get_lines_of_their_own():
    text = (
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n"
        "    from ..kv_cache_interface import MLAAttentionSpec as MLA\n\n\n"
        "def uses_mla(spec):\n"
        "    return isinstance(spec, MLA)\n"
    )
    outcome = fix_source(
        text,
        "vllm/v1/core/x.py",
        Config(families=(THREE_MEMBER_MLA,)),
        module_name="vllm.v1.core.x",
        unsafe=True,
    )
    assert (outcome.fixed, outcome.failure) == (("VSL001",), None)
    assert outcome.text == (
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n"
        "    from ..kv_cache_interface import MLAAttentionSpec as MLA\n"
        "    from ..kv_cache_interface import SlidingWindowMLASpec\n"
        "    from ..kv_cache_interface import ChunkedMLASpec\n\n\n"
        "def uses_mla(spec):\n"
        "    return isinstance(spec, (MLA, SlidingWindowMLASpec, ChunkedMLASpec))\n"
    )


IMPORTED = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
ALL_IMPORTED = (
    "from vllm.v1.kv_cache_interface import "
    "ChunkedMLASpec, MLAAttentionSpec, SlidingWindowMLASpec\n"
)
DISPATCH = "\n\n@singledispatch\ndef size(spec):\n    return 0\n\n\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            IMPORTED + DISPATCH + "@size.register(MLAAttentionSpec)\n"
            "def _(spec):\n    return 1\n",
            ALL_IMPORTED + DISPATCH + "@size.register(MLAAttentionSpec)\n"
            "@size.register(SlidingWindowMLASpec)\n"
            "@size.register(ChunkedMLASpec)\n"
            "def _(spec):\n    return 1\n",
        ),
        (
            IMPORTED + "\nREGISTRY.register(MLAAttentionSpec, handler)  # MLA\nx = 1\n",
            ALL_IMPORTED + "\nREGISTRY.register(MLAAttentionSpec, handler)  # MLA\n"
            "REGISTRY.register(SlidingWindowMLASpec, handler)\n"
            "REGISTRY.register(ChunkedMLASpec, handler)\n"
            "x = 1\n",
        ),
    ],
    ids=["decorator", "statement"],
)
def test_each_companion_is_registered_on_a_line_of_its_own_after_the_anchor(
    before, after
):
    outcome = fix_source(
        before, "x.py", Config(families=(THREE_MEMBER_MLA,)), unsafe=True
    )
    assert (outcome.text, outcome.fixed, outcome.failure) == (after, ("VSL006",), None)


@pytest.mark.parametrize(
    ("use", "message"),
    [
        (
            DISPATCH + "@size.register(MLAAttentionSpec)\ndef _(spec):\n    return 1\n",
            "Register SlidingWindowMLASpec, ChunkedMLASpec as MLAAttentionSpec",
        ),
        (
            "\nREGISTRY.register(MLAAttentionSpec, handler)\n",
            "Register SlidingWindowMLASpec, ChunkedMLASpec as MLAAttentionSpec",
        ),
        (
            "T = {MLAAttentionSpec: 1}\n",
            "Add SlidingWindowMLASpec, ChunkedMLASpec with MLAAttentionSpec's value",
        ),
    ],
    ids=["decorator", "statement", "table"],
)
def test_a_fix_for_two_companions_names_both_in_its_message(use, message):
    [found] = analyze_source(
        IMPORTED + use, "x.py", Config(families=(THREE_MEMBER_MLA,))
    ).findings
    assert found.fix.message == message
