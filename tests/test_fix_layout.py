"""Fixes as made, inside the existing layout (``fix-formatter = "none"``):
the edits alone, with no formatter to hide what they do to commas, line
breaks, comments and indentation. Each case is written out, before and after."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config

HEADER = "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n"
FIXED_HEADER = (
    "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec, "
    "SlidingWindowMLASpec\n"
)

CASES = {
    "multi_trailing": (
        HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,\n"
            "    ),\n"
            ")\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,\n"
            "        SlidingWindowMLASpec,\n"
            "    ),\n"
            ")\n"
        ),
    ),
    "multi_no_trailing": (
        HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec\n"
            "    ),\n"
            ")\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,\n"
            "        SlidingWindowMLASpec\n"
            "    ),\n"
            ")\n"
        ),
    ),
    "comment_after": (
        HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        MLAAttentionSpec,  # the MLA layout\n"
            "        FullAttentionSpec,\n"
            "    ),\n"
            ")\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        MLAAttentionSpec,  # the MLA layout\n"
            "        SlidingWindowMLASpec,\n"
            "        FullAttentionSpec,\n"
            "    ),\n"
            ")\n"
        ),
    ),
    "last_with_comment_no_comma": (
        HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec  # the MLA layout\n"
            "    ),\n"
            ")\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,  # the MLA layout\n"
            "        SlidingWindowMLASpec\n"
            "    ),\n"
            ")\n"
        ),
    ),
    "hanging": (
        HEADER
        + (
            "ok = isinstance(spec, (FullAttentionSpec,\n"
            "                      MLAAttentionSpec))\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(spec, (FullAttentionSpec,\n"
            "                      MLAAttentionSpec,\n"
            "                      SlidingWindowMLASpec))\n"
        ),
    ),
    "union": (
        HEADER + ("ok = isinstance(spec, FullAttentionSpec | MLAAttentionSpec)\n"),
        FIXED_HEADER
        + (
            "ok = isinstance(spec, FullAttentionSpec | MLAAttentionSpec | SlidingWindowMLASpec)\n"
        ),
    ),
    "set_exact": (
        HEADER + ("ok = type(spec) in {FullAttentionSpec, MLAAttentionSpec}\n"),
        FIXED_HEADER
        + (
            "ok = type(spec) in {FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec}\n"
        ),
    ),
    "is_exact": (
        HEADER + ("ok = type(spec) is not MLAAttentionSpec\n"),
        FIXED_HEADER
        + ("ok = type(spec) not in (MLAAttentionSpec, SlidingWindowMLASpec)\n"),
    ),
    "match": (
        HEADER
        + (
            "match spec:\n"
            "    case FullAttentionSpec() | MLAAttentionSpec():\n"
            "        pass\n"
        ),
        FIXED_HEADER
        + (
            "match spec:\n"
            "    case FullAttentionSpec() | MLAAttentionSpec() | SlidingWindowMLASpec():\n"
            "        pass\n"
        ),
    ),
    "constant": (
        HEADER
        + ("MLA_LIKE = (\n    MLAAttentionSpec,\n)\nok = isinstance(spec, MLA_LIKE)\n"),
        FIXED_HEADER
        + (
            "MLA_LIKE = (\n"
            "    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec,\n"
            ")\n"
            "ok = isinstance(spec, MLA_LIKE)\n"
        ),
    ),
    "import_paren": (
        (
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n"
            "    MLAAttentionSpec,\n"
            ")\n"
            "ok = isinstance(spec, MLAAttentionSpec)\n"
        ),
        (
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n"
            "    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec,\n"
            ")\n"
            "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        ),
    ),
    "import_paren_no_trailing": (
        (
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n"
            "    MLAAttentionSpec\n"
            ")\n"
            "ok = isinstance(spec, MLAAttentionSpec)\n"
        ),
        (
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n"
            "    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec\n"
            ")\n"
            "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        ),
    ),
    "import_alias": (
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLA\n"
            "ok = isinstance(spec, MLA)\n"
        ),
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLA\n"
            "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n"
            "ok = isinstance(spec, (MLA, SlidingWindowMLASpec))\n"
        ),
    ),
    "nested_block": (
        HEADER
        + (
            "def f(spec):\n"
            "    if True:\n"
            "        return isinstance(\n"
            "            spec,\n"
            "            (\n"
            "                FullAttentionSpec,\n"
            "                MLAAttentionSpec,\n"
            "            ),\n"
            "        )\n"
        ),
        FIXED_HEADER
        + (
            "def f(spec):\n"
            "    if True:\n"
            "        return isinstance(\n"
            "            spec,\n"
            "            (\n"
            "                FullAttentionSpec,\n"
            "                MLAAttentionSpec,\n"
            "                SlidingWindowMLASpec,\n"
            "            ),\n"
            "        )\n"
        ),
    ),
    "parenthesized_anchor": (
        HEADER + ("ok = isinstance(spec, (MLAAttentionSpec))\n"),
        FIXED_HEADER
        + ("ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"),
    ),
    "parenthesized_in_tuple": (
        HEADER + ("ok = isinstance(spec, (FullAttentionSpec, (MLAAttentionSpec)))\n"),
        FIXED_HEADER
        + (
            "ok = isinstance(spec, (FullAttentionSpec, (MLAAttentionSpec), SlidingWindowMLASpec))\n"
        ),
    ),
    "match_parenthesized": (
        HEADER + ("match spec:\n    case (MLAAttentionSpec()):\n        pass\n"),
        FIXED_HEADER
        + (
            "match spec:\n"
            "    case (MLAAttentionSpec() | SlidingWindowMLASpec()):\n"
            "        pass\n"
        ),
    ),
    "match_as": (
        HEADER + ("match spec:\n    case MLAAttentionSpec() as mla:\n        pass\n"),
        FIXED_HEADER
        + (
            "match spec:\n"
            "    case MLAAttentionSpec() | SlidingWindowMLASpec() as mla:\n"
            "        pass\n"
        ),
    ),
    "last_comment_trailing": (
        HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,  # the MLA layout\n"
            "    ),\n"
            ")\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(\n"
            "    spec,\n"
            "    (\n"
            "        FullAttentionSpec,\n"
            "        MLAAttentionSpec,  # the MLA layout\n"
            "        SlidingWindowMLASpec,\n"
            "    ),\n"
            ")\n"
        ),
    ),
    "hanging_first": (
        HEADER
        + (
            "ok = isinstance(spec, (MLAAttentionSpec,\n"
            "                      FullAttentionSpec))\n"
        ),
        FIXED_HEADER
        + (
            "ok = isinstance(spec, (MLAAttentionSpec,\n"
            "                      SlidingWindowMLASpec,\n"
            "                      FullAttentionSpec))\n"
        ),
    ),
    "tab_indented": (
        HEADER
        + (
            "def f(spec):\n"
            "\treturn isinstance(\n"
            "\t\tspec,\n"
            "\t\t(\n"
            "\t\t\tFullAttentionSpec,\n"
            "\t\t\tMLAAttentionSpec,\n"
            "\t\t),\n"
            "\t)\n"
        ),
        FIXED_HEADER
        + (
            "def f(spec):\n"
            "\treturn isinstance(\n"
            "\t\tspec,\n"
            "\t\t(\n"
            "\t\t\tFullAttentionSpec,\n"
            "\t\t\tMLAAttentionSpec,\n"
            "\t\t\tSlidingWindowMLASpec,\n"
            "\t\t),\n"
            "\t)\n"
        ),
    ),
    "import_between_lower": (
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, get_kv_cache_spec, KV_CONSTANT\n"
            "ok = isinstance(spec, MLAAttentionSpec)\n"
        ),
        (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec, get_kv_cache_spec, KV_CONSTANT\n"
            "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        ),
    ),
    # -- insert_items' corners --------------------------------------------
    "one_line_trailing_comma": (
        HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec,))\n",
        FIXED_HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec,))\n",
    ),
    "one_line_lone_comma": (
        HEADER + "ok = isinstance(spec, (MLAAttentionSpec,))\n",
        FIXED_HEADER
        + "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "lone_item_then_closer": (
        HEADER + "ok = isinstance(spec, (\n    MLAAttentionSpec,))\n",
        FIXED_HEADER
        + "ok = isinstance(spec, (\n    MLAAttentionSpec, SlidingWindowMLASpec,))\n",
    ),
    "three_last_trailing_comment": (
        HEADER + "ok = isinstance(\n    spec,\n    (\n        Other,\n"
        "        FullAttentionSpec,\n        MLAAttentionSpec,  # mla\n    ),\n)\n",
        FIXED_HEADER + "ok = isinstance(\n    spec,\n    (\n        Other,\n"
        "        FullAttentionSpec,\n        MLAAttentionSpec,  # mla\n"
        "        SlidingWindowMLASpec,\n    ),\n)\n",
    ),
    "three_last_then_closer": (
        HEADER + "ok = isinstance(spec, (Other,\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec))\n",
        FIXED_HEADER + "ok = isinstance(spec, (Other,\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec))\n",
    ),
    "three_last_space_comma_then_closer": (
        HEADER + "ok = isinstance(spec, (\n    Other,\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec ,\n))\n",
        # The new item is punctuated like the anchor, space and all.
        FIXED_HEADER + "ok = isinstance(spec, (\n    Other,\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec ,\n    SlidingWindowMLASpec ,\n))\n",
    ),
    "blank_line_between_items": (
        HEADER + "ok = isinstance(spec, (\n    MLAAttentionSpec,\n\n"
        "    FullAttentionSpec,\n))\n",
        # The blank line stays where it was, after the anchor's line.
        FIXED_HEADER + "ok = isinstance(spec, (\n    MLAAttentionSpec,\n\n"
        "    SlidingWindowMLASpec,\n    FullAttentionSpec,\n))\n",
    ),
    "items_on_one_line_closer_below": (
        HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec\n))\n",
        # The items share a line: the new one joins it, not a line of its own.
        FIXED_HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec\n))\n",
    ),
    "items_on_one_line_comment_closer_below": (
        HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec  # two\n"
        "    ))\n",
        FIXED_HEADER + "ok = isinstance(spec, (FullAttentionSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec  # two\n    ))\n",
    ),
    # -- the import the fix extends, in each layout --------------------------
    "import_lone_name_one_per_line": (
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec,\n)\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n",
        # The new name indented like the one before it, not at column 0.
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec,\n"
        "    SlidingWindowMLASpec,\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_lone_name_with_comment": (
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec,  # mla\n)\n"
        "\nok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec,  # mla\n"
        "    SlidingWindowMLASpec,\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_lone_name_comment_no_comma": (
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec  # mla\n)\n"
        "\nok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec,  # mla\n"
        "    SlidingWindowMLASpec\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_two_names_one_per_line": (
        "from vllm.v1.kv_cache_interface import (\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n)\n\nok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec,\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_closer_after_last": (
        "from vllm.v1.kv_cache_interface import (\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec)\n\nok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (\n    FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_names_on_the_opening_line": (
        "from vllm.v1.kv_cache_interface import (FullAttentionSpec, MLAAttentionSpec,\n"
        ")\n\nok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (FullAttentionSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec,\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_lone_name_closer_on_its_line": (
        "from vllm.v1.kv_cache_interface import (\n    MLAAttentionSpec)\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n",
        # No break after the name: the new one joins its line.
        "from vllm.v1.kv_cache_interface import (\n"
        "    MLAAttentionSpec, SlidingWindowMLASpec)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_uneven_indentation": (
        "from vllm.v1.kv_cache_interface import (\n        FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n)\n\nok = isinstance(spec, MLAAttentionSpec)\n",
        # Indented like the name before it (the break between the names).
        "from vllm.v1.kv_cache_interface import (\n        FullAttentionSpec,\n"
        "    MLAAttentionSpec,\n    SlidingWindowMLASpec,\n)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_aligned": (
        "from vllm.v1.kv_cache_interface import (FullAttentionSpec,\n"
        "                                        MLAAttentionSpec)\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import (FullAttentionSpec,\n"
        "                                        MLAAttentionSpec,\n"
        "                                        SlidingWindowMLASpec)\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_closer_on_its_own_line_indented": (
        "from vllm.v1.kv_cache_interface import (MLAAttentionSpec,\n    )\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n",
        # The names share the opening line: the new one joins them.
        "from vllm.v1.kv_cache_interface import (MLAAttentionSpec, "
        "SlidingWindowMLASpec,\n    )\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    "import_backslash": (
        "from vllm.v1.kv_cache_interface import \\\n    MLAAttentionSpec\n\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n",
        "from vllm.v1.kv_cache_interface import \\\n"
        "    MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        "ok = isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    ),
    # -- displays without a separator between items: the closer's line break --
    "tuple_backslash_anchor_first": (
        HEADER + "KINDS = MLAAttentionSpec, \\\n    FullAttentionSpec\n",
        FIXED_HEADER + "KINDS = MLAAttentionSpec, \\\n    SlidingWindowMLASpec, \\\n"
        "    FullAttentionSpec\n",
    ),
    "tuple_backslash_anchor_last": (
        HEADER + "KINDS = FullAttentionSpec, \\\n    MLAAttentionSpec\n",
        FIXED_HEADER + "KINDS = FullAttentionSpec, \\\n    MLAAttentionSpec, \\\n"
        "    SlidingWindowMLASpec\n",
    ),
    "names_list_one_per_line": (
        'ok = type(spec).__name__ in [\n    "MLAAttentionSpec",\n]\n',
        'ok = type(spec).__name__ in [\n    "MLAAttentionSpec",\n'
        '    "SlidingWindowMLASpec",\n]\n',
    ),
    "names_set_one_per_line": (
        'ok = type(spec).__name__ in {\n    "MLAAttentionSpec",\n}\n',
        'ok = type(spec).__name__ in {\n    "MLAAttentionSpec",\n'
        '    "SlidingWindowMLASpec",\n}\n',
    ),
    "names_tuple_one_per_line": (
        'ok = type(spec).__name__ in (\n    "MLAAttentionSpec",\n)\n',
        'ok = type(spec).__name__ in (\n    "MLAAttentionSpec",\n'
        '    "SlidingWindowMLASpec",\n)\n',
    ),
    "table_one_per_line": (
        HEADER + "HANDLERS = {\n    MLAAttentionSpec: 1,\n}\n\n\n"
        "def f(x):\n    return HANDLERS[type(x)]\n",
        FIXED_HEADER + "HANDLERS = {\n    MLAAttentionSpec: 1,\n"
        "    SlidingWindowMLASpec: 1,\n}\n\n\n"
        "def f(x):\n    return HANDLERS[type(x)]\n",
    ),
    "table_of_pairs": (
        HEADER + "HANDLERS = dict([(MLAAttentionSpec, 1)])\n\n\n"
        "def f(x):\n    return HANDLERS[type(x)]\n",
        FIXED_HEADER
        + "HANDLERS = dict([(MLAAttentionSpec, 1), (SlidingWindowMLASpec, 1)])"
        "\n\n\ndef f(x):\n    return HANDLERS[type(x)]\n",
    ),
    # -- MRO scans comparing classes (VSL005) ------------------------------
    "mro_scan_identity": (
        HEADER + "ok = any(c is MLAAttentionSpec for c in type(spec).__mro__)\n",
        FIXED_HEADER + "ok = any(c in (MLAAttentionSpec, SlidingWindowMLASpec) "
        "for c in type(spec).__mro__)\n",
    ),
    "mro_method_equality": (
        HEADER + "ok = any(c == MLAAttentionSpec for c in type(spec).mro())\n",
        FIXED_HEADER + "ok = any(c in (MLAAttentionSpec, SlidingWindowMLASpec) "
        "for c in type(spec).mro())\n",
    ),
    "mro_scan_in_tuple": (
        HEADER + "ok = any(c in (FullAttentionSpec, MLAAttentionSpec) "
        "for c in type(spec).__mro__)\n",
        FIXED_HEADER + "ok = any(c in (FullAttentionSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec) for c in type(spec).__mro__)\n",
    ),
    "mro_scan_in_list": (
        HEADER + "ok = any(c in [MLAAttentionSpec, FullAttentionSpec] "
        "for c in type(spec).__mro__)\n",
        FIXED_HEADER + "ok = any(c in [MLAAttentionSpec, SlidingWindowMLASpec, "
        "FullAttentionSpec] for c in type(spec).__mro__)\n",
    ),
    "mro_scan_in_set": (
        HEADER + "ok = any(c in {MLAAttentionSpec} for c in type(spec).__mro__)\n",
        FIXED_HEADER + "ok = any(c in {MLAAttentionSpec, SlidingWindowMLASpec} "
        "for c in type(spec).__mro__)\n",
    ),
    "module_attribute_exact": (
        "from vllm.v1 import kv_cache_interface as kv\n"
        "ok = type(spec) is kv.MLAAttentionSpec\n",
        "from vllm.v1 import kv_cache_interface as kv\n"
        "ok = type(spec) in (kv.MLAAttentionSpec, kv.SlidingWindowMLASpec)\n",
    ),
    "module_attribute_match": (
        "from vllm.v1 import kv_cache_interface as kv\n"
        "match spec:\n    case kv.MLAAttentionSpec():\n        pass\n",
        "from vllm.v1 import kv_cache_interface as kv\n"
        "match spec:\n    case kv.MLAAttentionSpec() | kv.SlidingWindowMLASpec():\n"
        "        pass\n",
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_edit_keeps_the_existing_layout(name):
    source, expected = CASES[name]
    outcome = fix_source(source, "x.py", Config(), formatter=None, unsafe=True)
    assert outcome.failure is None
    assert outcome.text == expected


def test_an_exact_comparison_becomes_membership_unsafely():
    from vllm_spec_lint.core.analysis import analyze_source

    source = HEADER + "ok = type(spec) is MLAAttentionSpec\n"
    [finding] = analyze_source(source, "x.py", Config()).findings
    assert finding.fix.applicability == "unsafe"
    assert (
        finding.fix.message == "Compare with (MLAAttentionSpec, SlidingWindowMLASpec)"
    )
    assert finding.fix.edits[0].content == (
        "type(spec) in (MLAAttentionSpec, SlidingWindowMLASpec)"
    )
