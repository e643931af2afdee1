"""The face a vLLM developer reads: today's ruff output (compared with the
ruff in the test extras), a rule page per code, help with defaults, the
hierarchy as a picture, and a README for users."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, fetch_vllm, run_cli
from vllm_spec_lint.core.settings import RULE_NAMES
from vllm_spec_lint.faces.rule_docs import documentation_pages, markdown_table

KCI = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
BAD = (
    KCI
    + "\n\ndef uses_mla(layer_spec):\n    return isinstance(layer_spec, MLAAttentionSpec)\n"
)


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which(
        "ruff"
    )
    if found is None:
        pytest.fail("ruff is in the test extras but was not found")
    return found


@pytest.mark.fast
def test_full_format_as_ruff_prints_it(tmp_path):
    (tmp_path / "w.py").write_text(BAD)
    out = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stdout == (
        "VSL001 isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec\n"
        " --> w.py:5:35\n"
        "  |\n"
        "3 |\n"
        "4 | def uses_mla(layer_spec):\n"
        "5 |     return isinstance(layer_spec, MLAAttentionSpec)\n"
        "  |                                   ^^^^^^^^^^^^^^^^\n"
        "  |\n"
        "help: Add SlidingWindowMLASpec\n"
        "  |\n"
        "  - from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "1 + from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "2 |\n"
        "  ...\n"
        "4 | def uses_mla(layer_spec):\n"
        "  -     return isinstance(layer_spec, MLAAttentionSpec)\n"
        "5 +     return isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "  |\n"
        "note: This is an unsafe fix and may change runtime behavior\n"
        "note: if leaving it out is deliberate, keep the code and say so: "
        "`# noqa: VSL001` with the reason\n"
        "\n"
        "Found 1 error.\n"
        "1 unsafe fix available with `--fix --unsafe-fixes`.\n"
    )
    concise = run_cli(
        "check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path
    )
    assert concise.stdout.splitlines()[0] == (
        "w.py:5:35: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec"
    )
    # `text`, the old name, is the full format.
    assert (
        run_cli(
            "check", "--no-cache", "--output-format", "text", ".", cwd=tmp_path
        ).stdout
        == out.stdout
    )


# Analogous inputs: ruff's and ours, each with one finding whose fix is safe,
# unsafe, or missing.
RUFF_CASES = {
    "safe": ("import os\nx = 1\n", ["--select", "F401"]),
    "unsafe": ("x = lambda: 1\n", ["--select", "E731"]),
    "none": ("y = undefined_name\n", ["--select", "F821"]),
}
OUR_CASES = {
    "safe": (BAD, ["--extend-safe-fixes", "VSL001"]),
    "unsafe": (BAD, []),
    # A class pattern with sub-patterns: reported without a fix.
    "none": (
        KCI + "match spec:\n    case MLAAttentionSpec(block_size=16):\n        pass\n",
        [],
    ),
}
SUMMARY_START = re.compile(r"^(Found \d|All checks|Would fix|No errors)", re.M)


def _summary(text: str) -> str:
    """The closing lines, with counts as N."""
    match = SUMMARY_START.search(text)
    return re.sub(r"\d+", "N", text[match.start() :] if match else "")


@pytest.mark.parametrize("case", list(RUFF_CASES))
@pytest.mark.parametrize(
    "mode",
    [
        [],
        ["--fix"],
        ["--diff"],
        ["--unsafe-fixes"],
        ["--fix", "--unsafe-fixes"],
        ["--diff", "--unsafe-fixes"],
    ],
)
def test_summaries_have_ruffs_shape(case, mode, tmp_path):
    """The same summary lines, counts aside, for the same situation: the next
    ruff wording change fails here, not in a stale README."""
    ruff_source, ruff_args = RUFF_CASES[case]
    our_source, our_args = OUR_CASES[case]
    (tmp_path / "ruff").mkdir()
    (tmp_path / "ours").mkdir()
    (tmp_path / "ruff" / "a.py").write_text(ruff_source)
    (tmp_path / "ours" / "a.py").write_text(our_source)
    ruff = subprocess.run(
        [_ruff(), "check", "--isolated", "--no-cache", *ruff_args, *mode, "."],
        cwd=tmp_path / "ruff", capture_output=True, text=True,
    )  # fmt: skip
    ours = run_cli("check", "--no-cache", *our_args, *mode, ".", cwd=tmp_path / "ours")
    assert ours.returncode == ruff.returncode, (ours.stdout, ruff.stdout)
    assert _summary(ours.stdout) == _summary(ruff.stdout), (ours.stdout, ruff.stdout)


@pytest.mark.fast
def test_the_unsafe_note_is_ruffs_own_words(tmp_path):
    (tmp_path / "a.py").write_text("x = lambda: 1\n")
    ruff = subprocess.run(
        [_ruff(), "check", "--isolated", "--no-cache", "--select", "E731", "."],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    note = [line for line in ruff.stdout.splitlines() if line.startswith("note:")]
    (tmp_path / "b.py").write_text(BAD)
    ours = run_cli("check", "--no-cache", "b.py", cwd=tmp_path)
    assert note and note[0] in ours.stdout.splitlines()


@pytest.mark.fast
def test_statistics_as_ruff_prints_them(examples):
    out = run_cli(
        "check",
        "--no-cache",
        "--statistics",
        "--extend-safe-fixes",
        "VSL001",
        ".",
        cwd=examples,
    )
    assert out.stdout == (
        "2\tVSL001\t[*] isinstance-leaves-out-companion\n"
        "1\tVSL002\t[ ] exact-type-leaves-out-companion\n"
        "1\tVSL003\t[ ] match-class-leaves-out-companion\n"
        "1\tVSL004\t[ ] constant-leaves-out-companion\n"
        "Found 5 errors.\n"
        "[*] 2 fixable with `--fix` (3 unsafe fixes available with `--fix --unsafe-fixes`).\n"
    )


PAGE = "https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md"


@pytest.mark.fast
def test_findings_carry_the_rules_name_and_page(tmp_path):
    (tmp_path / "w.py").write_text(BAD)
    [finding] = json.loads(
        run_cli("check", "--output-format", "json", ".", cwd=tmp_path).stdout
    )
    assert (finding["name"], finding["url"]) == (
        "isinstance-leaves-out-companion",
        PAGE,
    )
    sarif = json.loads(
        run_cli("check", "--output-format", "sarif", ".", cwd=tmp_path).stdout
    )
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert [r["helpUri"] for r in rules] == [
        f"https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/{code}.md"
        for code in RULE_NAMES
    ]
    github = run_cli("check", "--output-format", "github", ".", cwd=tmp_path).stdout
    assert (
        "title=VSL001 isinstance-leaves-out-companion (https%3A//github.com/"
        "vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md)" in github
    )


def test_every_rule_page_exists_and_is_current():
    pages = documentation_pages()
    assert sorted(p for p in pages if p.startswith("rules/")) == [
        f"rules/{code}.md" for code in RULE_NAMES
    ]
    for relative, text in pages.items():
        path = REPO / "docs" / relative
        assert path.read_text() == text, (
            f"{relative} is stale: run scripts/generate_docs.py"
        )
    assert "always **unsafe**" in pages["rules/VSL001.md"]


def test_rule_names_are_the_rule_modules_own():
    from vllm_spec_lint.rules import ALL_RULES

    assert {r.CODE: r.NAME for r in ALL_RULES} == {
        code: name for code, name in RULE_NAMES.items() if code != "VSL900"
    }


@pytest.mark.fast
@pytest.mark.parametrize(
    "spelling", ["VSL001", "vsl001", "isinstance-leaves-out-companion"]
)
def test_explain_takes_a_code_or_a_name(spelling):
    out = run_cli("explain", spelling)
    assert out.returncode == 0
    assert out.stdout.startswith("VSL001 (isinstance-leaves-out-companion)\n")


@pytest.mark.fast
def test_rules_takes_output_format_and_its_alias():
    new = run_cli("rules", "--output-format", "markdown")
    old = run_cli("rules", "--format", "markdown")
    assert new.stdout == old.stdout == markdown_table()


# -- help ------------------------------------------------------------------------


def _subparsers():
    import argparse

    from vllm_spec_lint.faces.cli_options import build_parser

    parser = build_parser()
    [commands] = [
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ]
    return commands.choices


@pytest.mark.fast
def test_every_option_has_help_and_shows_its_default():
    for name, sub in _subparsers().items():
        text = sub.format_help()
        for action in sub._actions:
            if "-h" in action.option_strings:
                continue
            assert action.help, (
                f"{name} {action.option_strings or action.dest}: no help"
            )
            meaningful = action.default not in (None, False, True, [], ())
            if meaningful:
                assert f"[default: {action.default}]" in text or "[default:" in (
                    action.help or ""
                ), (name, action.dest)
    check = _subparsers()["check"].format_help()
    assert "[default: .]" in check and "[default: full]" in check


@pytest.mark.fast
def test_the_default_follows_the_help_once_and_only_where_it_says_something():
    # argparse wraps the help; compare the words.
    check = " ".join(_subparsers()["check"].format_help().split())
    # Added where the help does not say it (--output-format alone, in check).
    # (Python 3.13 lists an option's aliases before one metavar.)
    assert (
        "{full,concise,json,github,sarif,text} report format (--format is an "
        "alias; text is full's old name) [default: full] -q, --quiet" in check
    )
    # Not added again where the help says it.
    assert (
        "the line length fixes are laid out for [default: the project formatter's "
        "own] --no-respect" in check
    )
    assert check.count("[default:") == 5
    # Switches (default False or True) and unset options show none.
    assert "[default: False]" not in check and "[default: True]" not in check
    assert (
        "--no-cache neither read nor write the results cache "
        "(.vllm_spec_lint_cache) --follow-links" in check
    )


@pytest.mark.fast
def test_a_help_that_states_its_default_is_left_as_written():
    import argparse

    from vllm_spec_lint.faces.cli_options import _HelpFormatter

    parser = argparse.ArgumentParser(prog="p", formatter_class=_HelpFormatter)
    parser.add_argument("--tries", default=3, help="attempts [default: three]")
    parser.add_argument("--wait", default=2, help="seconds")
    parser.add_argument("--bare", default=1)  # no help text: no default shown
    parser.add_argument("where", nargs="?", default="here", help="a place")
    words = " ".join(parser.format_help().split())
    # Python 3.10 heads the options "optional arguments:".
    assert words.replace("optional arguments:", "options:") == (
        "usage: p [-h] [--tries TRIES] [--wait WAIT] [--bare BARE] [where] "
        "positional arguments: where a place "
        "options: -h, --help show this help message and exit "
        "--tries TRIES attempts [default: three] --wait WAIT seconds [default: 2] "
        "--bare BARE"
    )


@pytest.mark.fast
def test_codemod_diff_says_would_fix(examples):
    out = run_cli("codemod", "add-sliding-window-mla", "--diff", cwd=examples)
    assert out.returncode == 1  # as `check --diff`: there is something to change
    assert out.stderr.endswith(
        "11 files checked, 2 would change, 5 findings would fix, 0 failures "
        "(VSL001: 2, VSL002: 1, VSL003: 1, VSL004: 1)\n"
    )


# -- the hierarchy as a picture ------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_0_34_0():
    return fetch_vllm("0.34.0")


@pytest.mark.release
def test_mermaid_on_vllm_0_34_draws_both_branches_and_the_family(vllm_0_34_0):
    out = run_cli("families", "--output-format", "mermaid", cwd=vllm_0_34_0)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "flowchart TD"
    for line in (
        "    SlidingWindowSpec --> SlidingWindowMLASpec",
        "    FullAttentionSpec --> MLAAttentionSpec",
        '    MLAAttentionSpec -.-|"family mla"| SlidingWindowMLASpec',
        "    class MLAAttentionSpec anchor",
        "    class SlidingWindowMLASpec companion",
    ):
        assert line in lines
    assert "KVCacheConfig" not in out.stdout


@pytest.mark.release
def test_dot_is_read_by_graphviz_parser(vllm_0_34_0):
    import pydot

    out = run_cli("families", "--output-format", "dot", "--discover", cwd=vllm_0_34_0)
    [graph] = pydot.graph_from_dot_data(out.stdout)
    edges = {
        (e.get_source().strip('"'), e.get_destination().strip('"'))
        for e in graph.get_edges()
    }
    assert ("SlidingWindowSpec", "SlidingWindowMLASpec") in edges
    assert ("FullAttentionSpec", "MLAAttentionSpec") in edges
    [family] = [
        e
        for e in graph.get_edges()
        if e.get_source().strip('"') == "MLAAttentionSpec"
        and e.get_destination().strip('"') == "SlidingWindowMLASpec"
        and e.get_style() == "dashed"
    ]
    assert family.get_label().strip('"') == "family mla"
    nodes = {n.get_name().strip('"'): n for n in graph.get_nodes()}
    assert nodes["MLAAttentionSpec"].get_fillcolor().strip('"') == "#fde2e2"


# -- the README --------------------------------------------------------------------


README = (REPO / "README.md").read_text()


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 200
    assert lines[3].startswith("pip install . && vllm-spec-lint check examples")
    assert lines[4].startswith("pip install '.[test]' && python -m pytest -q")


def test_readme_picture_is_the_tools_own():
    page = documentation_pages()["hierarchy.md"]
    picture = page[page.index("```mermaid") :]
    assert picture in README


def test_readme_rule_table_is_generated_from_the_rules():
    assert markdown_table() in README


def test_readme_links_point_at_files_that_exist():
    for target in re.findall(r"\]\(((?:docs/|BENCH|MUTATION)[^)#]*)", README):
        assert (REPO / target).exists(), target


def test_explain_lays_out_name_summary_body_and_both_examples():
    from vllm_spec_lint.faces.rule_docs import RuleDoc

    doc = RuleDoc(
        "VSL042",
        "made-up-rule",
        "a summary",
        "The body.\n\nSecond paragraph.",
        invalid="bad = 1\n\nworse = 2\n",
        valid="good = 1\n",
    )
    assert doc.explain() == (
        "VSL042 (made-up-rule)\n"
        "\n"
        "a summary\n"
        "\n"
        "The body.\n"
        "\n"
        "Second paragraph.\n"
        "\n"
        "Reported:\n"
        "\n"
        "    bad = 1\n"
        "\n"
        "    worse = 2\n"
        "\n"
        "Not reported:\n"
        "\n"
        "    good = 1\n"
    )
    assert RuleDoc("VSL042", "made-up-rule", "a summary", "Body.").explain() == (
        "VSL042 (made-up-rule)\n\na summary\n\nBody.\n"
    )


def test_a_pipe_in_a_summary_is_escaped_in_the_markdown_table(monkeypatch):
    from vllm_spec_lint.faces import rule_docs

    made_up = rule_docs.RuleDoc("VSL042", "made-up-rule", "A | B", "Body.")
    monkeypatch.setattr(rule_docs, "rule_docs", lambda: [made_up])
    assert rule_docs.markdown_table() == (
        "| code | name | what it finds |\n"
        "|---|---|---|\n"
        "| VSL042 | `made-up-rule` | A \\| B |\n"
    )
