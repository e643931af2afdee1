"""Options as ruff has them: each run beside real ruff with the same flags,
on a tree where each tool has one safely fixable finding (ours made safe by
the project's ``extend-safe-fixes``, as a team that reviews every fix would
set it; ruff's F401 is safe), and compared by
what a script sees: exit status, and which of stdout and stderr carry text.
Then our own output, written out."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BAD, FIXED, run_cli, write_covering_hierarchy

pytestmark = pytest.mark.fast

FINDING = (
    "w.py:2:40: VSL001 [*] isinstance() check against MLAAttentionSpec leaves out "
    "SlidingWindowMLASpec\n"
)
SAFE_VSL001 = '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
# ruff's twin: one unused import (F401, a safe fix).
RUFF_BAD = "import os\nx = 1\n"


def _ruff():
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(found).exists():
        pytest.fail("ruff is in the test extras but was not found")
    return found


def _run_ruff(args, cwd, stdin=None):
    concise = [] if "--output-format" in args else ["--output-format", "concise"]
    return subprocess.run(
        [_ruff(), "check", "--isolated", "--no-cache", "--select", "F401",
         *concise, *args],
        cwd=cwd, capture_output=True, text=True, input=stdin,
    )  # fmt: skip


def _shape(out):
    """What a script sees: exit status, and whether each stream has text."""
    return out.returncode, bool(out.stdout), bool(out.stderr)


@pytest.fixture
def trees(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "ruff"
    ours.mkdir()
    theirs.mkdir()
    (ours / "pyproject.toml").write_text(SAFE_VSL001)
    (ours / "w.py").write_text(BAD)
    (theirs / "w.py").write_text(RUFF_BAD)
    return ours, theirs


def _both(trees, ours_args, ruff_args, stdin=(None, None)):
    ours, theirs = trees
    # Both concise: ruff's one-line form, where the shapes compare line by line.
    command, *rest = ours_args
    return (
        run_cli(command, "--output-format", "concise", *rest, cwd=ours, input=stdin[0]),
        _run_ruff(ruff_args, theirs, stdin[1]),
    )


def test_check_reports_on_stdout_like_ruff(trees):
    ours, ruff = _both(trees, ["check", "."], ["."])
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert ours.stdout == FINDING + ("Found 1 error.\n[*] 1 fixable with `--fix`.\n")


def test_quiet_prints_findings_without_summary(trees):
    ours, ruff = _both(trees, ["check", "-q", "."], ["-q", "."])
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert ours.stdout == FINDING
    assert (
        run_cli(
            "check", "--output-format", "concise", "--quiet", ".", cwd=trees[0]
        ).stdout
        == FINDING
    )


def test_silent_with_findings_prints_nothing_and_exits_1(trees):
    ours, ruff = _both(trees, ["check", "-s", "."], ["-s", "."])
    assert _shape(ours) == _shape(ruff) == (1, False, False)
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--silent",
        "--output-format",
        "json",
        ".",
        cwd=trees[0],
    )
    assert (out.returncode, out.stdout) == (1, "")


def test_quiet_and_silent_exclude_each_other(trees):
    out = run_cli("check", "--output-format", "concise", "-q", "-s", ".", cwd=trees[0])
    assert out.returncode == 2 and "not allowed with" in out.stderr


def test_output_format_is_ruffs_name_and_format_its_alias(trees):
    ours, ruff = _both(
        trees, ["check", "--output-format", "github", "."],
        ["--output-format", "github", "."],
    )  # fmt: skip
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert ours.stdout.startswith("::error file=w.py,line=2,col=40,")
    alias = run_cli(
        "check", "--output-format", "concise", "--format", "github", ".", cwd=trees[0]
    )
    assert alias.stdout == ours.stdout


def test_fix_fixes_and_exits_0_like_ruff(trees):
    ours, ruff = _both(trees, ["fix", "."], ["--fix", "."])
    assert _shape(ours) == _shape(ruff) == (0, True, False)
    assert ours.stdout == "Found 1 error (1 fixed, 0 remaining).\n"
    assert (trees[0] / "w.py").read_text() == FIXED


def test_check_fix_is_the_fix_command(trees):
    out = run_cli("check", "--output-format", "concise", "--fix", ".", cwd=trees[0])
    assert (out.returncode, out.stdout) == (
        0,
        "Found 1 error (1 fixed, 0 remaining).\n",
    )
    assert (trees[0] / "w.py").read_text() == FIXED


def test_exit_non_zero_on_fix(trees):
    ours, ruff = _both(
        trees, ["fix", "--exit-non-zero-on-fix", "."],
        ["--fix", "--exit-non-zero-on-fix", "."],
    )  # fmt: skip
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert (trees[0] / "w.py").read_text() == FIXED
    # Nothing left to fix: exit 0 again.
    again = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--exit-non-zero-on-fix",
        ".",
        cwd=trees[0],
    )
    assert (again.returncode, again.stdout) == (0, "All checks passed!\n")


def test_no_fix_overrides_fix(trees):
    ours, ruff = _both(
        trees, ["check", "--fix", "--no-fix", "."], ["--fix", "--no-fix", "."]
    )
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert (trees[0] / "w.py").read_text() == BAD
    assert (trees[1] / "w.py").read_text() == RUFF_BAD


def test_diff_and_its_count_go_to_stdout(trees):
    ours, ruff = _both(trees, ["check", "--diff", "."], ["--diff", "."])
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert ours.stdout.startswith("--- w.py\n+++ w.py\n")
    assert ours.stdout.endswith(" SlidingWindowMLASpec))\n\nWould fix 1 error.\n")
    assert (trees[0] / "w.py").read_text() == BAD


def test_show_fixes_lists_what_fix_applied(trees):
    ours, ruff = _both(
        trees, ["fix", "--show-fixes", "."], ["--fix", "--show-fixes", "."]
    )
    assert _shape(ours) == _shape(ruff) == (0, True, False)
    assert ours.stdout == (
        "\nFixed 1 error:\n- w.py:\n    1 \u00d7 VSL001 (isinstance-leaves-out-companion)\n\n"
        "Found 1 error (1 fixed, 0 remaining).\n"
    )


def test_show_fixes_on_check_lists_what_fix_would_apply(trees):
    out = run_cli(
        "check", "--output-format", "concise", "--show-fixes", ".", cwd=trees[0]
    )
    assert out.returncode == 1
    assert out.stdout == FINDING + (
        "\nWould fix 1 error:\n- w.py:\n    1 \u00d7 VSL001 (isinstance-leaves-out-companion)\n\n"
        "Found 1 error.\n[*] 1 fixable with `--fix`.\n"
    )
    assert (trees[0] / "w.py").read_text() == BAD


def test_exclude_and_extend_exclude_on_the_command_line(trees):
    for option in ("--exclude", "--extend-exclude"):
        ours, ruff = _both(trees, ["check", option, "w.py", "."], [option, "w.py", "."])
        assert _shape(ours) == _shape(ruff) == (0, True, True)
        assert ours.stdout == "All checks passed!\n"
        assert ours.stderr == "warning: No Python files found under the given path(s)\n"


def test_exclude_replaces_the_configured_patterns_and_extend_adds(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["a.py"]\n'
    )
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(BAD)

    def files(*args):
        return run_cli(
            "check",
            "--output-format",
            "concise",
            "--show-files",
            *args,
            ".",
            cwd=tmp_path,
        ).stdout.split()

    assert files() == ["b.py"]
    assert files("--exclude", "b.py") == ["a.py"]
    assert files("--extend-exclude", "b.py") == []
    # Comma-separated and repeated, as in ruff.
    assert files("--exclude", "a.py,b.py") == []
    assert files("--exclude", "a.py", "--exclude", "b.py") == []
    # --extend-exclude adds to --exclude too.
    assert files("--exclude", "b.py", "--extend-exclude", "a.py") == []


def test_force_exclude_passes_over_an_excluded_file_named_on_the_command_line(
    tmp_path,
):
    (tmp_path / "w.py").write_text(BAD)
    args = ("check", "--no-cache", "--output-format", "concise", "--exclude", "w.py")
    named = run_cli(*args, "w.py", cwd=tmp_path)
    assert (named.returncode, named.stdout.splitlines()[0][:15]) == (
        1,
        "w.py:2:40: VSL0",
    )
    forced = run_cli(*args, "--force-exclude", "w.py", cwd=tmp_path)
    assert (forced.returncode, forced.stdout) == (0, "All checks passed!\n")


def test_extend_select_adds_to_select(tmp_path):
    """To --select when given, else to the configured selection (all)."""
    (tmp_path / "w.py").write_text(BAD + "_MLA_SPECS = (MLAAttentionSpec,)\n")
    check = ("check", "--no-cache", "--output-format", "concise", "-q")

    def codes(*args: str) -> list[str]:
        out = run_cli(*check, *args, ".", cwd=tmp_path).stdout
        return [line.split(": ")[1].split()[0] for line in out.splitlines()]

    assert codes("--select", "VSL002") == []
    assert codes("--select", "VSL002", "--extend-select", "VSL001") == ["VSL001"]
    assert codes("--extend-select", "VSL001") == ["VSL001", "VSL004"]


def test_line_length_on_the_command_line_lays_out_the_fixes(tmp_path):
    (tmp_path / "w.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "\n\n"
        "class Worker:\n"
        "    def register(self, specs):\n"
        "        for layer_spec in specs:\n"
        "            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
    )
    fix = ("fix", "--no-cache", "--diff", "--unsafe-fixes", "--fix-formatter", "ruff")

    def fixed_check(*args: str) -> list[str]:
        out = run_cli(*fix, *args, "w.py", cwd=tmp_path).stdout
        return [line for line in out.splitlines() if line.startswith("+ ")]

    assert fixed_check() == [
        "+            is_mla_region = isinstance(",
        "+                layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)",
        "+            )",
    ]
    assert fixed_check("--line-length", "100") == [
        "+            is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, "
        "SlidingWindowMLASpec))"
    ]


def test_command_line_patterns_are_relative_to_the_working_folder(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "w.py").write_text(BAD)
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-files",
        "--exclude",
        "/w.py",
        ".",
        cwd=tmp_path / "pkg",
    )
    assert out.stdout == ""
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--show-files",
        "--exclude",
        "/w.py",
        "pkg",
        cwd=tmp_path,
    )
    assert out.stdout == "pkg/w.py\n"


def test_version(trees):
    from vllm_spec_lint import __version__

    out = run_cli("--version")
    assert (out.returncode, out.stdout) == (0, f"vllm-spec-lint {__version__}\n")
    assert __version__.count(".") == 2 and all(
        p.isdigit() for p in __version__.split(".")
    )


# -- summary lines ------------------------------------------------------------

UNSAFE = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "a = isinstance(s, MLAAttentionSpec)\n"
    "b = type(t) is MLAAttentionSpec\n"
)


def test_summary_counts_safe_fixes_and_names_hidden_ones(tmp_path):
    (tmp_path / "u.py").write_text(UNSAFE)
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert out.stdout.splitlines()[-2:] == [
        "Found 2 errors.",
        "2 unsafe fixes available with `--fix --unsafe-fixes`.",
    ]
    assert "u.py:3:16: VSL002 exact type" in out.stdout  # no [*]: unsafe
    unsafe = run_cli(
        "check", "--output-format", "concise", "--unsafe-fixes", ".", cwd=tmp_path
    )
    assert unsafe.stdout.splitlines()[-2:] == [
        "Found 2 errors.",
        "[*] 2 fixable with `--fix`.",
    ]
    assert "u.py:3:16: VSL002 [*] exact type" in unsafe.stdout
    promoted = run_cli(
        "check",
        "--output-format",
        "concise",
        "--extend-safe-fixes",
        "VSL001",
        ".",
        cwd=tmp_path,
    )
    assert promoted.stdout.splitlines()[-2:] == [
        "Found 2 errors.",
        "[*] 1 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).",
    ]


def test_fix_summary_counts_what_remains(tmp_path):
    (tmp_path / "u.py").write_text(UNSAFE)
    out = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--extend-safe-fixes",
        "VSL001",
        ".",
        cwd=tmp_path,
    )
    assert out.returncode == 1
    assert out.stdout.splitlines()[-2:] == [
        "Found 2 errors (1 fixed, 1 remaining).",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]


# -- standard input -----------------------------------------------------------

NAME = "pkg/w.py"


def test_check_stdin_reports_under_the_given_name(trees):
    ours, ruff = _both(
        trees, ["check", "--stdin-filename", NAME, "-"],
        ["--stdin-filename", NAME, "-"], stdin=(BAD, RUFF_BAD),
    )  # fmt: skip
    assert _shape(ours) == _shape(ruff) == (1, True, False)
    assert (
        ours.stdout.splitlines()[0]
        == "pkg/w.py:2:40: " + FINDING.split(": ", 1)[1].rstrip()
    )


def test_fix_stdin_writes_the_source_to_stdout_and_the_report_to_stderr(trees):
    ours, ruff = _both(
        trees, ["fix", "--stdin-filename", NAME, "-"],
        ["--fix", "--stdin-filename", NAME, "-"], stdin=(BAD, RUFF_BAD),
    )  # fmt: skip
    assert _shape(ours) == _shape(ruff) == (0, True, True)
    assert ours.stdout == FIXED
    assert ours.stderr == "Found 1 error (1 fixed, 0 remaining).\n"
    assert ruff.stdout == "x = 1\n"


def test_fix_stdin_with_nothing_to_fix_writes_the_source_unchanged(trees):
    out = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--stdin-filename",
        NAME,
        "-",
        cwd=trees[0],
        input=FIXED,
    )
    assert (out.returncode, out.stdout) == (0, FIXED)


def test_fix_stdin_applies_unsafe_fixes_only_when_asked(tmp_path):
    safe = run_cli("fix", "--no-cache", "-", cwd=tmp_path, input=BAD)
    assert (safe.returncode, safe.stdout) == (1, BAD)
    unsafe = run_cli(
        "fix", "--no-cache", "--unsafe-fixes", "-", cwd=tmp_path, input=BAD
    )
    assert (unsafe.returncode, unsafe.stdout) == (0, FIXED)


def test_stdin_without_a_name_is_reported_as_a_dash(tmp_path):
    out = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "concise",
        "-",
        cwd=tmp_path,
        input=BAD,
    )
    assert out.stdout.splitlines()[0] == (
        "-:2:40: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec"
    )


def test_stdin_diff(trees):
    ours, ruff = _both(
        trees, ["fix", "--diff", "--stdin-filename", NAME, "-"],
        ["--diff", "--stdin-filename", NAME, "-"], stdin=(BAD, RUFF_BAD),
    )  # fmt: skip
    assert _shape(ours) == _shape(ruff) == (1, True, True)
    assert ours.stdout.startswith(f"--- {NAME}\n+++ {NAME}\n")
    assert (
        "+is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        in ours.stdout
    )
    assert ours.stderr == "Would fix 1 error.\n"


def _stdin_bytes(data: bytes, *args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "vllm_spec_lint", *args, "--output-format", "concise", "--stdin-filename", NAME, "-"],
        cwd=cwd, input=data, capture_output=True,
    )  # fmt: skip


def test_stdin_with_crlf_and_a_bom_keeps_both(tmp_path):
    data = b"\xef\xbb\xbf" + BAD.replace("\n", "\r\n").encode()
    (tmp_path / "pyproject.toml").write_text(SAFE_VSL001)
    check = _stdin_bytes(data, "check", cwd=tmp_path)
    # Columns as in the file: the BOM is not a column.
    assert check.stdout.startswith(b"pkg/w.py:2:40: VSL001 [*]")
    fixed = _stdin_bytes(data, "fix", cwd=tmp_path)
    assert fixed.returncode == 0
    assert fixed.stdout == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()


def test_stdin_that_does_not_parse(tmp_path):
    data = b"from vllm.v1.kv_cache_interface import MLAAttentionSpec\ndef (:\n"
    check = _stdin_bytes(data, "check", cwd=tmp_path)
    assert check.returncode == 1
    assert check.stdout.startswith(b"pkg/w.py:2:5: VSL900 cannot parse")
    fixed = _stdin_bytes(data, "fix", cwd=tmp_path)
    assert (fixed.returncode, fixed.stdout) == (1, data)
    assert fixed.stderr.startswith(b"pkg/w.py:2:5: VSL900 cannot parse")


def test_stdin_uses_the_settings_and_ignores_for_its_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nper-file-ignores = { "pkg/*" = ["VSL001"] }\n'
    )
    (tmp_path / "sub").mkdir()
    ignored = run_cli(
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        NAME,
        "-",
        cwd=tmp_path,
        input=BAD,
    )
    assert (ignored.returncode, ignored.stdout) == (0, "All checks passed!\n")
    other = run_cli(
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        "sub/w.py",
        "-",
        cwd=tmp_path,
        input=BAD,
    )
    assert other.returncode == 1 and other.stdout.startswith("sub/w.py:2:40: VSL001")


def test_stdin_takes_the_settings_of_the_project_at_its_name(tmp_path):
    """Run from outside the project the name is in: its settings, not the
    working folder's, as ruff reads them."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nignore = ["VSL001"]\n'
    )
    args = ("check", "--output-format", "concise", "--stdin-filename")
    inside = run_cli(*args, "project/w.py", "-", cwd=tmp_path, input=BAD)
    assert (inside.returncode, inside.stdout) == (0, "All checks passed!\n")
    outside = run_cli(*args, "w.py", "-", cwd=tmp_path, input=BAD)
    assert outside.returncode == 1 and outside.stdout.startswith("w.py:2:40: VSL001")


def test_a_stdin_filename_alone_reads_standard_input(tmp_path):
    """As in ruff: ``--stdin-filename`` without ``-`` still reads stdin."""
    out = run_cli(
        "check", "--output-format", "concise", "--stdin-filename", NAME,
        cwd=tmp_path, input=BAD,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stdout.startswith("pkg/w.py:2:40: VSL001 ")


def test_stdin_hierarchy_is_the_tree_at_its_name(tmp_path):
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_covering_hierarchy(tree)
    inside = run_cli(
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        "vllm/w.py",
        "-",
        cwd=tree,
        input=BAD,
    )
    assert (inside.returncode, inside.stdout) == (0, "All checks passed!\n")
    outside = run_cli(
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        "w.py",
        "-",
        cwd=elsewhere,
        input=BAD,
    )
    assert outside.returncode == 1


def test_stdin_excluded_name_with_force_exclude(tmp_path):
    args = ("--force-exclude", "--exclude", "pkg", "--stdin-filename", NAME, "-")
    check = run_cli(
        "check", "--output-format", "concise", *args, cwd=tmp_path, input=BAD
    )
    # Standard input was given: no "No Python files found" warning.
    assert (check.returncode, check.stdout, check.stderr) == (
        0,
        "All checks passed!\n",
        "",
    )
    fixed = run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        *args,
        cwd=tmp_path,
        input=BAD,
    )
    assert (fixed.returncode, fixed.stdout) == (0, BAD)
    assert fixed.stderr == "All checks passed!\n"  # no other warning


def test_an_excluded_folder_named_lists_the_files_ruff_lists(tmp_path):
    """Named on the command line, an excluded folder is walked as ruff walks
    it; with --force-exclude, left out as ruff leaves it."""
    exclude = '["sub", "*_pb2.py", "sub/gen"]'
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.ruff]\nexclude = {exclude}\n\n"
        f"[tool.vllm-spec-lint]\nexclude = {exclude}\n"
    )
    for name in ("sub/m.py", "sub/a_pb2.py", "sub/gen/g.py", "sub/deep/sub/d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    for forced in ([], ["--force-exclude"]):
        theirs = subprocess.run(
            [_ruff(), "check", "--no-cache", "--show-files", *forced, "sub"],
            cwd=tmp_path, capture_output=True, text=True,
        )  # fmt: skip
        ours = run_cli("check", "--show-files", *forced, "sub", cwd=tmp_path)
        listed = [str(Path(p).relative_to(tmp_path)) for p in theirs.stdout.split()]
        assert ours.stdout.split() == listed == ([] if forced else ["sub/m.py"])
