"""Whole outputs, word for word, on two small modules in vLLM's style
(``tests/golden``): the full format's source windows, carets, strict notes
and fix previews (lines added by an import, windows merged or split), the
statistics table's order, and ``fix --diff``. The expected texts were read
line by line when they were written; a change to the output shows up here
as a diff to read the same way."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.fast

GOLDEN = REPO / "tests" / "golden"


def _in_tree(tmp_path, name: str):
    shutil.copy(GOLDEN / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize(
    "source, args, expected",
    [
        ("worker.py", ["check", "--output-format", "full"], "worker.full.txt"),
        (
            "layers.py",
            [
                "check",
                "--strict",
                "--output-format",
                "full",
                "--extend-safe-fixes",
                "VSL001",
            ],
            "layers.full-strict.txt",
        ),
        (
            "layers.py",
            ["fix", "--diff", "--unsafe-fixes", "--fix-formatter", "none"],
            "layers.fix-diff.txt",
        ),
    ],
    ids=["full", "full-strict-promoted", "fix-diff"],
)
def test_whole_output(tmp_path, source, args, expected):
    out = run_cli(*args, "--no-cache", ".", cwd=_in_tree(tmp_path, source))
    assert out.returncode == 1
    assert out.stdout == (GOLDEN / expected).read_text()


@pytest.mark.parametrize(
    "args, table",
    [
        (
            [],
            "2\tVSL002\t[ ] exact-type-leaves-out-companion\n"
            "1\tVSL001\t[ ] isinstance-leaves-out-companion\n",
        ),
        (
            ["--strict", "--extend-safe-fixes", "VSL001"],
            "2\tVSL001\t[*] isinstance-leaves-out-companion\n"
            "2\tVSL002\t[ ] exact-type-leaves-out-companion\n",
        ),
        (
            ["--unsafe-fixes"],
            "2\tVSL002\t[*] exact-type-leaves-out-companion\n"
            "1\tVSL001\t[*] isinstance-leaves-out-companion\n",
        ),
    ],
    ids=["most-first", "ties-by-code", "unsafe-fixable"],
)
def test_statistics_most_frequent_first_then_by_code(tmp_path, args, table):
    tree = _in_tree(tmp_path, "layers.py")
    out = run_cli("check", "--no-cache", "--statistics", *args, ".", cwd=tree)
    assert out.stdout.startswith(table)


def test_sarif_is_indented_and_names_the_tool(tmp_path):
    tree = _in_tree(tmp_path, "worker.py")
    out = run_cli("check", "--no-cache", "--output-format", "sarif", ".", cwd=tree)
    assert out.stdout.startswith(
        "{\n"
        '  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",\n'
        '  "version": "2.1.0",\n'
        '  "runs": [\n'
        "    {\n"
        '      "tool": {\n'
        '        "driver": {\n'
        '          "name": "vllm-spec-lint",\n'
    )
    assert (
        '          "informationUri": "https://pypi.org/project/vllm-spec-lint/",\n'
        in out.stdout
    )


def test_explain_suppressions_gives_a_line_per_quiet_site(tmp_path):
    (tmp_path / "two.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\n"
        "def f(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return 0\n"
        "    a = isinstance(spec, MLAAttentionSpec)\n"
        "    b = isinstance(spec, MLAAttentionSpec)\n"
        "    return a or b\n"
    )
    out = run_cli("check", "--no-cache", "--explain-suppressions", ".", cwd=tmp_path)
    why = (
        "VSL001 not reported: narrowed: `isinstance(spec, SlidingWindowMLASpec)` "
        "(line 5) already excludes SlidingWindowMLASpec\n"
    )
    assert (out.returncode, out.stdout) == (
        0,
        f"two.py:7:26: {why}two.py:8:26: {why}All checks passed!\n",
    )


@pytest.mark.parametrize(
    "source, args, summary",
    [
        (
            "worker.py",
            [],
            "No errors would be fixed (2 fixes available with `--unsafe-fixes`).\n",
        ),
        (
            "layers.py",
            ["--extend-safe-fixes", "VSL001"],
            "Would fix 1 error (2 additional fixes available with `--unsafe-fixes`).\n",
        ),
        ("worker.py", ["--extend-safe-fixes", "VSL001"], "Would fix 2 errors.\n"),
    ],
    ids=["only-unsafe", "one-safe-two-unsafe", "all-safe"],
)
def test_fix_diff_ends_with_what_it_would_fix_and_what_it_leaves(
    tmp_path, source, args, summary
):
    tree = _in_tree(tmp_path, source)
    out = run_cli("fix", "--no-cache", "--diff", *args, ".", cwd=tree)
    assert out.stdout.endswith(summary)
