"""What the smaller commands and options print, written out in full."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr

import pytest

from tests.conftest import REPO, SPEC_CLASSES, run_cli, write_family_module

pytestmark = pytest.mark.fast

BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)
EXACT = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla = type(layer_spec) is MLAAttentionSpec\n"
)


def test_families_prints_the_families_and_the_trees_hierarchy(tmp_path):
    tree = tmp_path / "examples"
    shutil.copytree(REPO / "examples", tree)
    out = run_cli("families", ".", cwd=tree)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == (
        "family mla (vllm.v1.kv_cache_interface)\n"
        "  anchor: MLAAttentionSpec\n"
        "  companion: SlidingWindowMLASpec\n"
        f"hierarchy (from scanned tree: {tree}/vllm/v1/kv_cache_interface.py):\n"
        "  AttentionSpec <- KVCacheSpec\n"
        "  FullAttentionSpec <- AttentionSpec\n"
        "  KVCacheSpec <- -\n"
        "  MLAAttentionSpec <- FullAttentionSpec\n"
        "  SlidingWindowMLASpec <- SlidingWindowSpec\n"
        "  SlidingWindowSpec <- AttentionSpec\n"
    )


HYBRID_TREE = (
    SPEC_CLASSES + "class HybridMLASpec(MLAAttentionSpec, SlidingWindowSpec): ...\n"
)


@pytest.fixture
def hybrid_tree(tmp_path):
    write_family_module(tmp_path, HYBRID_TREE)
    return tmp_path


def test_families_lists_every_base_and_says_when_there_are_no_twins(hybrid_tree):
    kci = hybrid_tree / "vllm" / "v1" / "kv_cache_interface.py"
    out = run_cli("families", ".", cwd=hybrid_tree)
    assert "  HybridMLASpec <- MLAAttentionSpec, SlidingWindowSpec\n" in out.stdout
    twins = run_cli("families", "--discover", ".", cwd=hybrid_tree)
    assert twins.stdout == (
        "structural twins among the subclasses of "
        "vllm.v1.kv_cache_interface.KVCacheSpec (hierarchy from scanned tree: "
        f"{kci}; proposed at a score of 5 or more):\n"
        "  none\n"
    )


def test_families_as_json(hybrid_tree):
    out = run_cli("families", "--output-format", "json", ".", cwd=hybrid_tree)
    kci = "vllm.v1.kv_cache_interface"
    assert out.stdout.startswith('{\n  "families": [\n    {\n      "name": "mla",\n')
    assert json.loads(out.stdout) == {
        "families": [
            {
                "name": "mla",
                "module": kci,
                "anchor": f"{kci}.MLAAttentionSpec",
                "companions": [f"{kci}.SlidingWindowMLASpec"],
                "discovered": False,
                "stand_in": None,
                "quiet": None,
            }
        ],
        "hierarchy": {
            f"{kci}.AttentionSpec": [f"{kci}.KVCacheSpec"],
            f"{kci}.FullAttentionSpec": [f"{kci}.AttentionSpec"],
            f"{kci}.HybridMLASpec": [
                f"{kci}.MLAAttentionSpec",
                f"{kci}.SlidingWindowSpec",
            ],
            f"{kci}.KVCacheSpec": [],
            f"{kci}.MLAAttentionSpec": [f"{kci}.FullAttentionSpec"],
            f"{kci}.SlidingWindowMLASpec": [f"{kci}.SlidingWindowSpec"],
            f"{kci}.SlidingWindowSpec": [f"{kci}.AttentionSpec"],
        },
        "source": f"scanned tree: {hybrid_tree / kci.replace('.', '/')}.py",
    }


def test_families_warns_about_a_family_module_it_cannot_read(tmp_path):
    kci = write_family_module(tmp_path, "class (:\n")
    out = run_cli("families", ".", cwd=tmp_path)
    assert out.returncode == 0
    assert out.stderr == (
        f"warning: {kci}: cannot read class hierarchy: invalid syntax (<unknown>, line 1)\n"
    )
    assert "hierarchy (from built-in defaults):\n" in out.stdout


def test_rules_as_markdown_is_the_readme_table():
    out = run_cli("rules", "--format", "markdown")
    assert out.stdout.splitlines()[:3] == [
        "| code | name | what it finds |",
        "|---|---|---|",
        "| VSL001 | `isinstance-leaves-out-companion` | isinstance()/issubclass() names "
        "MLAAttentionSpec but not SlidingWindowMLASpec |",
    ]


def test_explain_an_unknown_code_is_a_usage_error():
    out = run_cli("explain", "VSL999")
    assert (out.returncode, out.stdout, out.stderr) == (
        2,
        "",
        "error: unknown rule code or name: VSL999\n",
    )


def test_select_takes_comma_separated_codes_and_names_unknown_ones(tmp_path):
    (tmp_path / "w.py").write_text(BAD + EXACT.split("\n", 1)[1])
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "-q",
        "--select",
        "VSL001,VSL002",
        ".",
        cwd=tmp_path,
    )
    assert [line.split(": ")[1][:6] for line in out.stdout.splitlines()] == [
        "VSL001",
        "VSL002",
    ]
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--select",
        "VSL001,E501,W6",
        ".",
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert "unknown rule selector 'E501', 'W6'" in out.stderr


@pytest.mark.parametrize(
    "selected, ignored, reported",
    [
        ("VSL001", "VSL001", False),  # a tie: ignore wins, as in ruff
        ("VSL00", "VSL001", False),
        ("VSL001", "VSL00", True),
    ],
)
def test_the_longer_of_select_and_ignore_decides(tmp_path, selected, ignored, reported):
    (tmp_path / "w.py").write_text(BAD)
    args = ("--select", selected, "--ignore", ignored)
    out = run_cli(
        "check", "--no-cache", "--output-format", "concise", *args, ".", cwd=tmp_path
    )
    assert out.returncode == (1 if reported else 0)


def test_a_syntax_error_is_marked_by_one_caret(tmp_path):
    (tmp_path / "p.py").write_text("MLAAttentionSpec(\n")
    out = run_cli("check", "--no-cache", "p.py", cwd=tmp_path)
    assert out.stdout == (
        "VSL900 cannot parse: '(' was never closed\n"
        " --> p.py:1:17\n"
        "  |\n"
        "1 | MLAAttentionSpec(\n"
        "  |                 ^\n"
        "  |\n"
        "\n"
        "Found 1 error.\n"
    )


def test_show_files_defaults_to_the_working_folder_and_honours_force_exclude(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["b.py"]\n'
    )
    assert (
        run_cli(
            "check", "--output-format", "concise", "--show-files", cwd=tmp_path
        ).stdout
        == "a.py\n"
    )
    named = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-files",
        "a.py",
        "b.py",
        cwd=tmp_path,
    )
    assert named.stdout == "a.py\nb.py\n"  # named files are taken, as in ruff
    forced = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-files",
        "--force-exclude",
        "a.py",
        "b.py",
        cwd=tmp_path,
    )
    assert forced.stdout == "a.py\n"


def test_show_files_follows_outside_links_only_when_asked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("x = 1\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.py").symlink_to(outside / "o.py")
    assert (
        run_cli(
            "check", "--output-format", "concise", "--show-files", ".", cwd=tree
        ).stdout
        == ""
    )
    followed = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-files",
        "--follow-links",
        ".",
        cwd=tree,
    )
    assert followed.stdout == "link.py\n"


def test_show_fixes_counts_unsafe_fixes_only_when_they_apply(tmp_path):
    (tmp_path / "w.py").write_text(EXACT)
    safe = run_cli(
        "check", "--output-format", "concise", "--show-fixes", ".", cwd=tmp_path
    )
    assert "Would fix" not in safe.stdout
    unsafe = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-fixes",
        "--unsafe-fixes",
        ".",
        cwd=tmp_path,
    )
    assert "\nWould fix 1 error:\n- w.py:\n    1 \u00d7 VSL002 (" in unsafe.stdout


def test_show_fixes_after_a_baseline_lists_only_new_findings(tmp_path):
    (tmp_path / "old.py").write_text(BAD)
    run_cli(
        "check",
        "--output-format",
        "concise",
        "--write-baseline",
        "b.json",
        ".",
        cwd=tmp_path,
    )
    (tmp_path / "new.py").write_text(BAD)
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-fixes",
        "--unsafe-fixes",
        "--baseline",
        "b.json",
        ".",
        cwd=tmp_path,
    )
    assert "- new.py:\n" in out.stdout and "old.py" not in out.stdout


def test_baseline_messages_count_entries(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    one = run_cli(
        "check",
        "--output-format",
        "concise",
        "--write-baseline",
        "b.json",
        ".",
        cwd=tmp_path,
    )
    assert one.stderr == "Wrote 1 entry to b.json.\n"
    (tmp_path / "b.py").write_text(BAD)
    two = run_cli(
        "check",
        "--output-format",
        "concise",
        "--write-baseline",
        "b.json",
        ".",
        cwd=tmp_path,
    )
    assert two.stderr == "Wrote 2 entries to b.json.\n"


def test_fix_counts_errors_in_the_singular_and_plural(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    assert run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--diff",
        ".",
        cwd=tmp_path,
    ).stdout.endswith("\nWould fix 1 error.\n")
    (tmp_path / "b.py").write_text(BAD)
    assert run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--diff",
        ".",
        cwd=tmp_path,
    ).stdout.endswith("\nWould fix 2 errors.\n")


def test_progress_bar():
    from vllm_spec_lint.faces.commands.running import progress_line

    err = io.StringIO()
    with redirect_stderr(err):
        progress_line(1, 4)
        progress_line(4, 4)
    assert err.getvalue() == (
        "\r[#######.......................] 1/4 files"
        "\r[##############################] 4/4 files\n"
    )


def test_fix_diff_with_show_fixes_over_two_files(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(BAD)
    out = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--diff",
        "--show-fixes",
        ".",
        cwd=tmp_path,
    )
    assert out.returncode == 1
    hunk = (
        "@@ -1,2 +1,2 @@\n"
        "-from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "-is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
        "+from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "+is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert out.stdout == (
        "--- a.py\n+++ a.py\n" + hunk + "--- b.py\n+++ b.py\n" + hunk + "\n"
        "Would fix 2 errors:\n"
        "- a.py:\n    1 \u00d7 VSL001 (isinstance-leaves-out-companion)\n"
        "- b.py:\n    1 \u00d7 VSL001 (isinstance-leaves-out-companion)\n\n"
        "Would fix 2 errors.\n"
    )


def test_concise_is_the_text_format(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    check = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "concise",
        ".",
        cwd=tmp_path,
    )
    assert (
        check.stdout
        == run_cli("check", "--output-format", "concise", ".", cwd=tmp_path).stdout
    )
    assert check.stdout.endswith(
        "Found 1 error.\n1 unsafe fix available with `--fix --unsafe-fixes`.\n"
    )
    fixed = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--output-format",
        "concise",
        ".",
        cwd=tmp_path,
    )
    assert fixed.stdout == "Found 1 error (1 fixed, 0 remaining).\n"


def test_fix_prints_warnings(tmp_path):
    kci = write_family_module(tmp_path, "class (:\n")
    (tmp_path / "a.py").write_text(BAD)
    out = run_cli(
        "fix", "--output-format", "concise", "--unsafe-fixes", "a.py", cwd=tmp_path
    )
    assert out.stderr == (
        f"warning: {kci}: cannot read class hierarchy: invalid syntax (<unknown>, line 1)\n"
    )
    assert (
        run_cli(
            "fix",
            "--output-format",
            "concise",
            "--unsafe-fixes",
            "-q",
            "a.py",
            cwd=tmp_path,
        ).stderr
        == ""
    )


UNSAFE_ONLY = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
    "def uses_mla(spec):\n"
    "    return isinstance(spec, MLAAttentionSpec)\n"
)


def test_fix_with_output_format_text_is_full_by_its_old_name(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY)
    text = run_cli("fix", "--no-cache", "--output-format", "text", ".", cwd=tmp_path)
    full = run_cli("fix", "--no-cache", "--output-format", "full", ".", cwd=tmp_path)
    assert (text.returncode, text.stdout, text.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    assert text.stdout.startswith(
        "VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n --> m.py:5:29\n"
    )
    assert text.stdout.endswith(
        "\nFound 1 error.\n1 unsafe fix available with `--fix --unsafe-fixes`.\n"
    )


def test_a_fix_preview_from_stdin_is_laid_out_by_the_named_files_project(tmp_path):
    """The project --stdin-filename names formats with black at 60 columns;
    the working folder has no settings (ruff at 88 would not wrap)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n")
    out = run_cli(
        "check", "--no-cache", "--stdin-filename", "sub/m.py", "-",
        cwd=tmp_path, input=BAD,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert (
        "6 + is_mla_region = isinstance(\n"
        "7 +     layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "8 + )\n"
    ) in out.stdout


def test_fix_from_stdin_frames_the_given_source_not_the_file(tmp_path):
    out = run_cli(
        "fix", "--no-cache", "--stdin-filename", "nothere/m.py", "-",
        cwd=tmp_path, input=UNSAFE_ONLY,
    )  # fmt: skip
    assert (out.returncode, out.stdout) == (1, UNSAFE_ONLY)
    assert out.stderr.startswith(
        "VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
        " --> nothere/m.py:5:29\n"
        "  |\n"
        "3 |\n"
        "4 | def uses_mla(spec):\n"
        "5 |     return isinstance(spec, MLAAttentionSpec)\n"
    )


def test_the_full_format_marks_unsafe_fixes_fixable_when_they_are_allowed(tmp_path):
    (tmp_path / "w.py").write_text(BAD)
    shown = run_cli("check", "--no-cache", "--unsafe-fixes", ".", cwd=tmp_path)
    assert shown.stdout.startswith("VSL001 [*] isinstance() check against ")
    hidden = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert hidden.stdout.startswith("VSL001 isinstance() check against ")


def test_a_file_that_cannot_be_decoded_has_no_frame_and_the_next_one_has(tmp_path):
    (tmp_path / "a.py").write_bytes(
        b'from vllm.v1.kv_cache_interface import MLAAttentionSpec\nx = "\xff"\n'
    )
    (tmp_path / "b.py").write_text(BAD)
    out = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert out.stdout.startswith(
        "VSL900 cannot decode: 'utf-8' codec can't decode byte 0xff in position 61: "
        "invalid start byte\n"
        " --> a.py:1:1\n"
        "\n"
        "VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
        " --> b.py:2:40\n"
        "  |\n"
        "1 | from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    )


def test_families_draws_the_hierarchy_as_mermaid_without_discovering(tmp_path):
    write_family_module(tmp_path, SPEC_CLASSES)
    out = run_cli("families", "--output-format", "mermaid", ".", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == (
        "flowchart TD\n"
        "    KVCacheSpec --> AttentionSpec\n"
        "    AttentionSpec --> FullAttentionSpec\n"
        "    FullAttentionSpec --> MLAAttentionSpec\n"
        "    SlidingWindowSpec --> SlidingWindowMLASpec\n"
        "    AttentionSpec --> SlidingWindowSpec\n"
        '    MLAAttentionSpec -.-|"family mla"| SlidingWindowMLASpec\n'
        "    classDef anchor fill:#fde2e2,stroke:#c0392b\n"
        "    classDef companion fill:#e2effd,stroke:#2874a6\n"
        "    class MLAAttentionSpec anchor\n"
        "    class SlidingWindowMLASpec companion\n"
    )


def test_the_code_frame_of_stdin_shows_stdin_not_the_file_of_that_name(tmp_path):
    (tmp_path / "w.py").write_text("x = 1\n")
    out = run_cli(
        "check", "--no-cache", "--stdin-filename", "w.py", "-", cwd=tmp_path, input=BAD
    )
    assert out.stdout.startswith(
        "VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
        " --> w.py:2:40\n"
        "  |\n"
        "1 | from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "2 | is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    )
