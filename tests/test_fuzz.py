"""Property-based tests: generated sources in vLLM's style (checks wrapped
in tuples, unions, negations, comprehensions, comments and line breaks) and
arbitrary Python from hypothesmith. More examples with VSL_FUZZ_EXAMPLES=N.
"""

from __future__ import annotations

import ast
import difflib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.findings import wanted
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.repair.formatting import formatter_for

EXAMPLES = int(os.environ.get("VSL_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

IMPORTS = st.sampled_from(
    [
        "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n",
        "from vllm.v1.kv_cache_interface import (\n    FullAttentionSpec,\n    MLAAttentionSpec,\n)\n",
        "from vllm.v1.kv_cache_interface import FullAttentionSpec\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLAAttentionSpec\n",
        "from vllm.v1.kv_cache_interface import *\n",
        "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec\n",
    ]
)
TARGETS = st.sampled_from(["spec", "layer_spec", "self.kv_cache_spec", "specs[i]"])
OTHERS = st.sampled_from(
    ["FullAttentionSpec", "SlidingWindowMLASpec", "MLAAttentionSpec"]
)
COMMENT = st.sampled_from(["", "  # MLA layout", "  # noqa: E501"])


@st.composite
def classinfo(draw, depth=0):
    kind = draw(
        st.sampled_from(
            ["name", "tuple", "union", "multiline"] + (["nested"] if depth < 2 else [])
        )
    )
    if kind == "name":
        return draw(OTHERS)
    members = draw(st.lists(OTHERS, min_size=1, max_size=3))
    if kind == "union":
        return " | ".join(members)
    if kind == "multiline":
        comment = draw(COMMENT)
        return "(\n" + "".join(f"        {m},{comment}\n" for m in members) + "    )"
    if kind == "nested":
        return f"({draw(classinfo(depth=depth + 1))}, {members[0]})"
    return "(" + ", ".join(members) + ("," if len(members) == 1 else "") + ")"


@st.composite
def check(draw):
    target = draw(TARGETS)
    info = draw(classinfo())
    form = draw(
        st.sampled_from(
            ["isinstance", "not", "type_is", "type_is_not", "any", "and"]
            + ["name_is", "name_in", "mro_names", "mro_classes", "mro_member"]
        )
    )
    # Tests by class name and through the MRO (VSL005).
    if form == "name_is":
        return f'type({target}).__name__ == "{draw(OTHERS)}"'
    if form == "name_in":
        names = draw(st.lists(OTHERS, min_size=1, max_size=3))
        return f"{target}.__class__.__qualname__ in ({', '.join(map(repr, names))},)"
    if form == "mro_names":
        return f'any(c.__name__ == "{draw(OTHERS)}" for c in type({target}).__mro__)'
    if form == "mro_classes":
        return f"any(c is {draw(OTHERS)} for c in type({target}).mro())"
    if form == "mro_member":
        return f"{draw(OTHERS)} in type({target}).__mro__"
    if form == "isinstance":
        return f"isinstance({target}, {info})"
    if form == "not":
        return f"not isinstance({target}, {info})"
    if form == "type_is":
        return f"type({target}) is {draw(OTHERS)}"
    if form == "type_is_not":
        return f"type({target}) != {draw(OTHERS)}"
    if form == "any":
        return f"any(isinstance(s, {info}) for s in specs)"
    return f"isinstance({target}, FullAttentionSpec) and isinstance({target}, {info})"


@st.composite
def statement(draw):
    test = draw(check())
    shape = draw(
        st.sampled_from(["if", "assign", "assert", "return", "elif", "const", "match"])
    )
    comment = draw(COMMENT)
    if shape == "if":
        return f"    if {test}:{comment}\n        return 1\n"
    if shape == "elif":
        return f"    if flag:\n        pass\n    elif {test}:\n        return 2\n"
    if shape == "assert":
        return f"    assert {test}{comment}\n"
    if shape == "return":
        return f"    return {test}\n"
    if shape == "match":
        return (
            f"    match spec:\n        case {draw(OTHERS)}():\n            return 3\n"
        )
    if shape == "const":
        return f"    LOCAL = ({draw(OTHERS)},)\n"
    return f"    result = {test}{comment}\n"


@st.composite
def module(draw):
    header = draw(IMPORTS)
    functions = []
    for i in range(draw(st.integers(1, 3))):
        body = "".join(draw(st.lists(statement(), min_size=1, max_size=4)))
        functions.append(
            f"\n\ndef check_{i}(spec, layer_spec, specs, i, flag):\n{body}"
        )
    constant = draw(
        st.sampled_from(
            [
                "",
                "\n_SPECS = (MLAAttentionSpec,)\n",
                "\n_SPECS = FullAttentionSpec | MLAAttentionSpec\n",
            ]
        )
    )
    return header + constant + "".join(functions) + draw(dispatch())


@st.composite
def dispatch(draw):
    """Dispatch on classes at module level (VSL006): a table, a registry,
    or a singledispatch function."""
    keys = draw(st.lists(OTHERS, min_size=1, max_size=3, unique=True))
    form = draw(st.sampled_from(["none", "table", "mro_table", "registry", "dispatch"]))
    if form == "none":
        return ""
    if form in ("table", "mro_table"):
        entries = ", ".join(f"{k}: {i}" for i, k in enumerate(keys))
        lookup = (
            "\n\ndef lookup(spec):\n"
            "    for cls in type(spec).__mro__:\n"
            "        if cls in _TABLE:\n"
            "            return _TABLE[cls]\n"
            if form == "mro_table"
            else "\n\ndef lookup(spec):\n    return _TABLE[type(spec)]\n"
        )
        return f"\n_TABLE = {{{entries}}}\n{lookup}"
    if form == "registry":
        return "\n" + "".join(f"Registry.register({k}, manager)\n" for k in keys)
    registered = "".join(
        f"\n\n@size.register\ndef _(spec: {k}):\n    return {i}\n"
        for i, k in enumerate(keys)
    )
    return (
        "\n\nimport functools\n\n\n@functools.singledispatch\n"
        f"def size(spec):\n    return -1\n{registered}"
    )


def _fix(source: str, config: Config) -> str:
    outcome = fix_source(
        source, "gen.py", config, formatter=formatter_for("gen.py", 88), unsafe=True
    )
    assert outcome.failure is None, outcome.failure
    return outcome.text


def _allowed_rows(source: str, findings) -> set[int]:
    """Rows a fix may touch: each finding's statement (a compound
    statement's header only) and the import statements."""
    tree = ast.parse(source)
    rows: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            rows.update(range(node.lineno, node.end_lineno + 1))
    for finding in findings:
        row = finding.location[0]
        best = None
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and node.lineno <= row <= node.end_lineno:
                if best is None or node.lineno >= best.lineno:
                    best = node
        body = getattr(best, "body", None)
        if isinstance(body, list) and body and not isinstance(best, ast.ClassDef):
            end = body[0].lineno - 1
        else:
            end = best.end_lineno
        if isinstance(best, ast.Match):
            end = best.end_lineno
        rows.update(range(best.lineno, end + 1))
    return rows


@FUZZ
@given(module(), st.booleans())
def test_generated_modules_keep_every_invariant(source, strict):
    config = Config(strict=strict)
    ast.parse(source)  # the generator writes valid Python
    before = analyze_source(source, "gen.py", config)  # never raises
    assert not [f for f in before.findings if f.code == "VSL900"]
    fixed = _fix(source, config)
    ast.parse(fixed)  # fixed code parses
    assert _fix(fixed, config) == fixed  # idempotent
    after = analyze_source(fixed, "gen.py", config)
    assert not [f for f in after.findings if wanted(f, unsafe=True)]
    # Nothing changes outside the reported statements and the imports.
    allowed = _allowed_rows(source, [f for f in before.findings if wanted(f, True)])
    matcher = difflib.SequenceMatcher(
        a=source.splitlines(), b=fixed.splitlines(), autojunk=False
    )
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1 + 1, i2 + 1)) <= allowed, (tag, i1, i2)


@pytest.fixture(scope="module")
def hypothesmith():
    return pytest.importorskip("hypothesmith", reason="hypothesmith is not installed")


def test_arbitrary_python_never_crashes_the_checker(hypothesmith):
    @FUZZ
    @given(
        hypothesmith.from_grammar(),
        st.sampled_from(["", "isinstance(x, MLAAttentionSpec)\n"]),
    )
    def run(code, tail):
        source = (
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            + code
            + "\n"
            + tail
        )
        result = analyze_source(source, "any.py", Config(strict=True))
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            codes = [f.code for f in result.findings]
            if tail:  # a candidate: the file is parsed whole
                assert codes == ["VSL900"]
            else:  # only the statements naming a word (docs/precision.md)
                assert codes in ([], ["VSL900"])
        else:
            assert all(
                f.code != "VSL900" or "cannot parse" in f.message
                for f in result.findings
            )

    run()


@settings(max_examples=max(3, EXAMPLES // 8), deadline=None)
@given(st.lists(module(), min_size=2, max_size=4))
def test_generated_trees_give_the_same_findings_for_any_jobs_and_cache(sources):
    import json
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    try:
        for i, source in enumerate(sources):
            (folder / f"gen_{i}.py").write_text(source)

        def run(*args):
            out = subprocess.run(
                [sys.executable, "-m", "vllm_spec_lint", "check", "--strict", "--format", "json", *args, "."],
                cwd=folder, capture_output=True, text=True,
            )  # fmt: skip
            return json.loads(out.stdout)

        reference = run("--no-cache", "-j", "1")
        assert run("--no-cache", "-j", "2") == reference
        assert run("-j", "2") == reference  # fills the cache
        assert run("-j", "1") == reference  # reads it
    finally:
        shutil.rmtree(folder)


@FUZZ
@given(module())
def test_slicing_changes_no_finding_in_generated_modules(source):
    """The slice (core/slicing.py) may drop only what cannot hold a finding:
    the same findings and suppressions as on the whole module."""
    from unittest import mock

    from vllm_spec_lint.core import slicing

    config = Config(strict=True)
    sliced = analyze_source(source, "gen.py", config, module_name="vllm.x.gen")
    whole_slice = slicing.Slice(source, list(range(1, source.count("\n") + 2)))
    with mock.patch.object(slicing, "relevant_source", lambda *_: whole_slice):
        whole = analyze_source(source, "gen.py", config, module_name="vllm.x.gen")
    assert sliced.findings == whole.findings
    assert sliced.suppressed == whole.suppressed
