"""The ``check`` and ``families`` commands: output, exit codes, config, files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    COMPRESSED_PARENT,
    REPO,
    run_cli,
    run_here,
    write_family_module,
)

pytestmark = pytest.mark.fast

BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)
GOOD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
)
# A check against a configured family's anchor and one against MLA's.
MAMBA_AND_MLA = (
    "from vllm.v1.kv_cache_interface import MambaSpec, MLAAttentionSpec\n"
    "a = isinstance(s, MambaSpec)\n"
    "b = isinstance(s, MLAAttentionSpec)\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "good.py").write_text(GOOD)
    return tmp_path


def test_text_output_and_exit_code(tree):
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == (
        "pkg/bad.py:2:40: VSL001 isinstance() check against MLAAttentionSpec "
        "leaves out SlidingWindowMLASpec"
    )
    assert lines[1:] == [
        "Found 1 error.",
        "1 unsafe fix available with `--fix --unsafe-fixes`.",
    ]


def test_clean_tree_exits_zero(tree):
    (tree / "pkg" / "bad.py").unlink()
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert out.returncode == 0
    assert "All checks passed" in out.stdout


def test_exit_zero(tree):
    assert (
        run_cli(
            "check", "--output-format", "concise", "--exit-zero", ".", cwd=tree
        ).returncode
        == 0
    )


def test_json_output_has_ruffs_shape(tree):
    out = run_cli(
        "check", "--output-format", "concise", "--format", "json", ".", cwd=tree
    )
    assert out.returncode == 1
    [finding] = json.loads(out.stdout)
    assert finding == {
        "code": "VSL001",
        "message": "isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec",
        "filename": str(tree / "pkg" / "bad.py"),
        "location": {"row": 2, "column": 40},
        "end_location": {"row": 2, "column": 56},
        "fix": finding["fix"],  # fixes are covered by the fix tests
        "noqa_row": 2,
        "url": "https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md",
        "name": "isinstance-leaves-out-companion",
        "suppressed_by": None,
    }


def test_select_and_ignore_on_the_command_line(tree):
    assert (
        run_cli(
            "check", "--output-format", "concise", "--select", "VSL002", ".", cwd=tree
        ).returncode
        == 0
    )
    assert (
        run_cli(
            "check", "--output-format", "concise", "--ignore", "VSL001", ".", cwd=tree
        ).returncode
        == 0
    )
    assert (
        run_cli(
            "check", "--output-format", "concise", "--select", "VSL0", ".", cwd=tree
        ).returncode
        == 1
    )
    out = run_cli(
        "check", "--output-format", "concise", "--select", "E501", ".", cwd=tree
    )
    assert out.returncode == 2 and "E501" in out.stderr


def test_pyproject_settings(tree):
    (tree / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nper-file-ignores = { "pkg/bad.py" = ["VSL001"] }\n'
    )
    assert run_cli("check", "--output-format", "concise", ".", cwd=tree).returncode == 0
    (tree / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nexclude = ["pkg/b*.py"]\n'
    )
    assert run_cli("check", "--output-format", "concise", ".", cwd=tree).returncode == 0
    out = run_cli("check", "--output-format", "concise", "--show-files", ".", cwd=tree)
    assert out.stdout.splitlines() == ["pkg/good.py"]


def test_per_file_ignores_match_from_the_settings_folder_not_the_working_one(tree):
    (tree / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nper-file-ignores = { "pkg/bad.py" = ["VSL001"] }\n'
    )
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree / "pkg")
    assert (out.returncode, out.stdout) == (0, "All checks passed!\n")


def test_setup_cfg_settings(tree):
    (tree / "setup.cfg").write_text("[vllm-spec-lint]\nignore = VSL001\n")
    assert run_cli("check", "--output-format", "concise", ".", cwd=tree).returncode == 0
    (tree / "setup.cfg").write_text(
        "[vllm-spec-lint]\nper-file-ignores =\n    bad.py: VSL001\n"
    )
    assert run_cli("check", "--output-format", "concise", ".", cwd=tree).returncode == 0


def test_setup_cfg_families_one_per_line_replace_the_defaults(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[vllm-spec-lint]\nfamilies =\n"
        "    vllm.v1.kv_cache_interface: MambaSpec, ShortConvSpec\n"
        "\n"
        "    vllm.x:A,B\n"
    )
    (tmp_path / "m.py").write_text(MAMBA_AND_MLA)
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert out.stdout.splitlines()[:2] == [
        "m.py:2:19: VSL001 isinstance() check against MambaSpec leaves out "
        "ShortConvSpec",
        "Found 1 error.",
    ]
    families = run_cli("families", ".", cwd=tmp_path).stdout.splitlines()
    assert families[:6] == [
        "family MambaSpec (vllm.v1.kv_cache_interface)",
        "  anchor: MambaSpec",
        "  companion: ShortConvSpec",
        "family A (vllm.x)",
        "  anchor: A",
        "  companion: B",
    ]


def test_setup_cfg_extend_families_one_per_line_add_to_the_defaults(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[vllm-spec-lint]\nextend-families =\n"
        "    vllm.v1.kv_cache_interface: MambaSpec, ShortConvSpec\n"
    )
    (tmp_path / "m.py").write_text(MAMBA_AND_MLA)
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert out.stdout.splitlines()[:3] == [
        "m.py:2:19: VSL001 isinstance() check against MambaSpec leaves out "
        "ShortConvSpec",
        "m.py:3:19: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec",
        "Found 2 errors.",
    ]


def test_setup_cfg_family_line_without_a_colon_exits_2(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[vllm-spec-lint]\nfamilies =\n    vllm.v1.kv_cache_interface MambaSpec\n"
    )
    out = run_cli("check", ".", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == (
        f"error: {tmp_path / 'setup.cfg'}: invalid value for 'families': "
        "expected 'module: A, B': 'vllm.v1.kv_cache_interface MambaSpec'\n"
    )


def _crashed(monkeypatch, tmp_path, argv: list[str], message: str) -> Path:
    """Run the command line with an internal error raising ``message``:
    it exits 2; the crash file it wrote."""
    from vllm_spec_lint.faces import cli

    def broken(argv):
        raise RuntimeError(message)

    monkeypatch.setattr(cli, "_main", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr("sys.argv", ["vllm-spec-lint", *argv])
    assert cli.main(argv) == 2
    [report] = tmp_path.glob("vllm-spec-lint-crash-*.txt")
    return report


def test_an_internal_error_exits_2_with_one_line_and_a_crash_file(
    tmp_path, monkeypatch, capsys
):
    from vllm_spec_lint.faces import cli

    report = _crashed(monkeypatch, tmp_path, ["check", "."], "boom")
    assert capsys.readouterr().err == (
        f"error: internal error: RuntimeError: boom (please report it with {report})\n"
    )
    lines = report.read_text().splitlines()
    assert lines[:3] == [
        f"vllm-spec-lint {cli.__version__}",
        "vllm-spec-lint check .",
        "",
    ]
    assert lines[3] == "Traceback (most recent call last):"
    assert lines[-1] == "RuntimeError: boom"


def test_the_crash_file_is_utf_8_whatever_the_locale_says(
    tmp_path, monkeypatch, capsys
):
    import locale

    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        argv = ["check", "caf\u00e9.py"]
        report = _crashed(monkeypatch, tmp_path, argv, "boom in caf\u00e9.py")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    lines = report.read_bytes().splitlines()
    assert lines[1] == "vllm-spec-lint check caf\u00e9.py".encode()
    assert lines[-1] == "RuntimeError: boom in caf\u00e9.py".encode()


def test_an_internal_error_without_a_writable_temp_folder_still_says_one_line(
    tmp_path, monkeypatch, capsys
):
    from vllm_spec_lint.faces import cli

    def broken(argv):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_main", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "missing"))
    assert cli.main(["check", "."]) == 2
    assert capsys.readouterr().err == (
        "error: internal error: RuntimeError: boom (please report it)\n"
    )


def test_an_interrupt_exits_130_in_one_line_without_a_traceback(monkeypatch, capsys):
    from vllm_spec_lint.faces import cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["check", "."]) == 130
    assert capsys.readouterr() == ("", "error: interrupted\n")


def test_an_interrupted_fix_says_in_its_one_line_what_it_wrote(monkeypatch, capsys):
    from vllm_spec_lint.edges.runner import RunInterrupted
    from vllm_spec_lint.faces import cli

    def interrupted(argv):
        raise RunInterrupted(2)

    monkeypatch.setattr(cli, "_main", interrupted)
    assert cli.main(["fix", "."]) == 130
    assert capsys.readouterr() == (
        "",
        "error: interrupted; 2 files already fixed and written, "
        "no other file changed\n",
    )


def test_a_reader_that_has_gone_gets_no_traceback(tmp_path):
    """`vllm-spec-lint check | head -0`: the pipe has no reader when the
    report is written (closed before the tool starts, so no race); the tool
    says nothing and exits 2."""
    for i in range(50):
        (tmp_path / f"m{i}.py").write_text(BAD)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "vllm_spec_lint", "check", "--no-cache", "."],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert (out.returncode, out.stderr) == (2, b"")


@pytest.mark.parametrize("entry", [["-m", "vllm_spec_lint"], ["-c", "run"]])
def test_a_reader_gone_before_a_short_report_is_flushed_gets_no_traceback(
    tmp_path, entry
):
    """One finding: the report waits in the buffer until the command is
    done (buffered: no PYTHONUNBUFFERED), and only then meets the closed
    pipe; the tool still says nothing and exits 2 (through ``python -m``
    and the console script's entry)."""
    (tmp_path / "m.py").write_text(BAD)
    if entry[0] == "-c":
        entry = ["-c", "from vllm_spec_lint.faces.cli import run; run()"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        out = subprocess.run(
            [sys.executable, *entry, "check", "--no-cache", "."],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert (out.returncode, out.stderr) == (2, b"")


def test_run_leaves_with_main_s_status(tmp_path, monkeypatch, capsys):
    (tmp_path / "m.py").write_text(BAD)
    (tmp_path / "ok.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    args = ("check", "--no-cache", "--output-format", "concise")
    assert run_here(monkeypatch, *args, "m.py") == 1
    assert capsys.readouterr().out.startswith("m.py:2:40: VSL001")
    assert run_here(monkeypatch, *args, "ok.py") == 0


def test_run_leaves_with_2_when_the_last_flush_meets_a_closed_pipe(
    tmp_path, monkeypatch
):
    """The report fit the buffer; the reader was gone when it was flushed:
    status 2, and what is written later goes to the null device."""
    (tmp_path / "ok.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)

    class GoneAtFlush:
        closed = False

        def __init__(self, file):
            self.file = file

        def write(self, text):
            return len(text)

        def flush(self):
            raise BrokenPipeError

        def fileno(self):
            return self.file.fileno()

    with open(tmp_path / "stdout", "w") as stdout:
        monkeypatch.setattr(sys, "stdout", GoneAtFlush(stdout))
        assert run_here(monkeypatch, "check", "--no-cache", "ok.py") == 2
        stdout.write("written after")
    assert (tmp_path / "stdout").read_text() == ""


def test_run_leaves_with_main_s_status_after_it_closed_its_output(
    tmp_path, monkeypatch
):
    """The language server closes stdout when the client says exit: there
    is nothing left to flush, and the status is main's."""
    from vllm_spec_lint.faces import cli

    stdout = open(tmp_path / "stdout", "w")
    monkeypatch.setattr(sys, "stdout", stdout)

    def closes_its_output():
        stdout.write("said")
        stdout.close()
        return 0

    monkeypatch.setattr(cli, "main", closes_its_output)
    assert run_here(monkeypatch) == 0
    assert (tmp_path / "stdout").read_text() == "said"


def test_run_flushes_both_streams_before_it_leaves(tmp_path, monkeypatch):
    """Block-buffered files in place of stdout and stderr: what main wrote
    without a line break is on disk when ``run`` leaves (``os._exit``
    flushes nothing)."""
    from vllm_spec_lint.faces import cli

    out, err = open(tmp_path / "out", "w"), open(tmp_path / "err", "w")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)

    def writes_both():
        out.write("report")
        err.write("warning")
        return 1

    monkeypatch.setattr(cli, "main", writes_both)
    try:
        assert run_here(monkeypatch) == 1
        written = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    finally:
        out.close()
        err.close()
    assert written == ("report", "warning")


def test_run_leaves_with_main_s_status_without_standard_output(monkeypatch):
    """``pythonw`` and some services start Python with no stdout at all."""
    from vllm_spec_lint.faces import cli

    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(cli, "main", lambda: 1)
    assert run_here(monkeypatch) == 1


def test_the_command_exits_with_main_s_status_its_output_all_written(tmp_path):
    """The command leaves at once after ``main``: what it printed is all
    there, and the status is main's."""
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(BAD)
    # Buffered, as without PYTHONUNBUFFERED (which some shells set).
    args = ("check", "--no-cache", "--output-format", "concise", ".")
    out = run_cli(*args, cwd=tmp_path, env={"PYTHONUNBUFFERED": None})
    assert out.returncode == 1
    assert out.stdout.endswith(
        "Found 3 errors.\n3 unsafe fixes available with `--fix --unsafe-fixes`.\n"
    )
    assert out.stdout.count("VSL001") == 3


@pytest.mark.parametrize(
    "command",
    [
        ["codemod", "add-sliding-window-mla"],
        ["codemod", "nixl-mla-region"],
        ["families"],
    ],
)
def test_commands_without_standard_input_refuse_a_dash(tmp_path, command):
    out = run_cli(*command, "-", cwd=tmp_path, input=BAD)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: {command[0]} does not read standard input ('-'): name files or "
        "folders\n"
    )


def test_a_dash_after_an_option_is_a_path_not_an_option(tmp_path):
    """argparse leaves a positional after ``--diff`` over; ``-`` there is
    standard input, which the codemods refuse as such."""
    out = run_cli("codemod", "add-sliding-window-mla", "--diff", "-", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (
        2,
        "error: codemod does not read standard input ('-'): name files or folders\n",
    )


def test_unknown_options_are_named_together(tmp_path):
    out = run_cli("check", "--foo", "--bar", ".", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (
        2,
        "error: unrecognized arguments: --foo --bar (see 'vllm-spec-lint --help')\n",
    )


def test_main_without_arguments_reads_the_command_line(monkeypatch, capsys):
    from vllm_spec_lint import __version__
    from vllm_spec_lint.faces import cli

    monkeypatch.setattr("sys.argv", ["vllm-spec-lint", "--version"])
    with pytest.raises(SystemExit) as exited:  # argparse's version action
        cli.main()
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"vllm-spec-lint {__version__}\n"


def test_the_server_starts_whatever_the_settings_where_it_runs(tmp_path, monkeypatch):
    """It reads settings per document: a broken settings file in the working
    folder is no reason not to start."""
    from vllm_spec_lint.faces import cli, lsp, lsp_start

    served = []
    monkeypatch.setattr(lsp_start, "serve_stdio", served.append)
    (tmp_path / "pyproject.toml").write_text("[tool.vllm-spec-lint]\ncolour = 1\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["server"]) == 0
    [build_server] = served  # stdio: built once initialize is answered
    assert isinstance(build_server(), lsp.SpecLintServer)


def test_a_reader_gone_mid_report_leaves_stdout_on_the_null_device(
    tmp_path, monkeypatch
):
    """After a broken pipe, what Python flushes at exit goes nowhere, not
    into a second traceback."""
    from vllm_spec_lint.faces import cli

    def pipe_gone(argv):
        raise BrokenPipeError

    monkeypatch.setattr(cli, "_main", pipe_gone)
    with open(tmp_path / "stdout", "w") as stdout:
        monkeypatch.setattr("sys.stdout", stdout)
        assert cli.main(["check", "."]) == 2
        stdout.write("flushed at exit")
    assert (tmp_path / "stdout").read_text() == ""


@pytest.mark.parametrize(
    "setting, key",
    [
        ("line-length = 'long'", "line-length"),
        ("select = ['E501']", "select"),
        ("strict = 3", "strict"),
        (
            "families = [{ module = 'vllm.x', members = ['OnlyOne'] }]",
            "families[0].members",
        ),
        ("families = [{ members = ['A', 'B'] }]", "families[0].module"),
    ],
)
def test_bad_config_value_names_the_key_and_exits_2(tree, setting, key):
    (tree / "pyproject.toml").write_text(f"[tool.vllm-spec-lint]\n{setting}\n")
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert out.returncode == 2
    assert f"invalid value for '{key}'" in out.stderr
    assert "pyproject.toml" in out.stderr


def test_an_unknown_setting_is_named_and_exits_2(tree):
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\ncolour = true\n")
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: {tree / 'pyproject.toml'}: unknown setting 'colour'\n"
    )


def test_unparsable_config_file_exits_2(tree):
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint\n")
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert out.returncode == 2 and "pyproject.toml" in out.stderr


def test_configured_family(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\n"
        "extend-families = [{ name = 'mamba', module = 'vllm.v1.kv_cache_interface',"
        " members = ['MambaSpec', 'ShortConvSpec'] }]\n"
    )
    (tmp_path / "m.py").write_text(MAMBA_AND_MLA)
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert out.returncode == 1
    assert (
        "m.py:2:19: VSL001 isinstance() check against MambaSpec leaves out ShortConvSpec"
        in out.stdout
    )
    assert "m.py:3:19: VSL001" in out.stdout
    families = run_cli("families", ".", cwd=tmp_path)
    assert (
        "family mamba" in families.stdout
        and "companion: ShortConvSpec" in families.stdout
    )


def test_gitignore_is_honoured(tree):
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    (tree / ".gitignore").write_text("pkg/bad.py\n")
    assert run_cli("check", "--output-format", "concise", ".", cwd=tree).returncode == 0
    out = run_cli("check", "--output-format", "concise", "--show-files", ".", cwd=tree)
    assert out.stdout.splitlines() == ["pkg/good.py"]
    assert (
        run_cli(
            "check",
            "--output-format",
            "concise",
            "--no-respect-gitignore",
            ".",
            cwd=tree,
        ).returncode
        == 1
    )
    # A file named on the command line is checked anyway, as in ruff.
    assert (
        run_cli(
            "check", "--output-format", "concise", "pkg/bad.py", cwd=tree
        ).returncode
        == 1
    )


def test_a_gitignore_in_a_subfolder_is_read_even_with_undecodable_lines(tree):
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    (tree / "pkg" / ".gitignore").write_bytes(b"\xff\xfe not utf-8\nbad.py\n")
    out = run_cli("check", "--show-files", ".", cwd=tree)
    assert out.stdout.splitlines() == ["pkg/good.py"]


def test_default_excludes(tree):
    (tree / ".venv").mkdir()
    (tree / ".venv" / "bad.py").write_text(BAD)
    out = run_cli("check", "--output-format", "concise", "--show-files", ".", cwd=tree)
    assert out.stdout.splitlines() == ["pkg/bad.py", "pkg/good.py"]


def test_hierarchy_is_read_from_the_tree(tmp_path):
    kci = write_family_module(tmp_path, COMPRESSED_PARENT)
    user = tmp_path / "user.py"
    user.write_text(
        "from vllm.v1.kv_cache_interface import CompressedSpec, MLAAttentionSpec\n"
        "ok = isinstance(s, (MLAAttentionSpec, CompressedSpec))\n"
    )
    assert (
        run_cli("check", "--output-format", "concise", ".", cwd=tmp_path).returncode
        == 0
    )
    families = run_cli("families", ".", cwd=tmp_path)
    assert "SlidingWindowMLASpec <- CompressedSpec" in families.stdout
    assert str(kci) in families.stdout
    # Without the tree's module, the defaults apply and CompressedSpec covers nothing.
    kci.unlink()
    assert (
        run_cli("check", "--output-format", "concise", ".", cwd=tmp_path).returncode
        == 1
    )
    assert "built-in defaults" in run_cli("families", ".", cwd=tmp_path).stdout


# -- VSL900: files that cannot be read, decoded or parsed --------------------


def test_syntax_error_is_vsl900_and_the_run_goes_on(tree):
    (tree / "pkg" / "broken.py").write_text("import MLAAttentionSpec\ndef f(:\n")
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    assert out.returncode == 1
    assert "pkg/bad.py:2:40: VSL001" in out.stdout
    [error] = [line for line in out.stdout.splitlines() if "VSL900" in line]
    assert error.startswith("pkg/broken.py:2:") and "cannot parse" in error


def test_undecodable_file_is_vsl900(tree):
    (tree / "pkg" / "latin.py").write_bytes(b"x = '\xff\xfe'  # MLAAttentionSpec\n")
    (tree / "pkg" / "cookie.py").write_bytes(
        b"# -*- coding: klingon -*-\nMLAAttentionSpec\n"
    )
    out = run_cli("check", "--output-format", "concise", ".", cwd=tree)
    errors = sorted(line for line in out.stdout.splitlines() if "VSL900" in line)
    assert len(errors) == 2, out.stdout
    assert errors[0].startswith("pkg/cookie.py:") and "cannot decode" in errors[0]
    assert errors[1].startswith("pkg/latin.py:") and "cannot decode" in errors[1]
    assert "pkg/bad.py:2:40: VSL001" in out.stdout


def test_latin1_file_with_cookie_is_checked(tmp_path):
    (tmp_path / "l1.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD.encode()
    )
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert "l1.py:4:40: VSL001" in out.stdout


def test_unreadable_file_is_vsl900(tree):
    # A link to itself: nobody, root included, can read it.
    os.symlink("secret.py", tree / "pkg" / "secret.py")
    out = run_cli(
        "check", "--output-format", "concise", "pkg/secret.py", "pkg/bad.py", cwd=tree
    )
    assert out.returncode == 1
    assert out.stdout.splitlines()[:2] == [
        "pkg/secret.py:1:1: VSL900 cannot read: Too many levels of symbolic links",
        "pkg/bad.py:2:40: VSL001 isinstance() check against MLAAttentionSpec "
        "leaves out SlidingWindowMLASpec",
    ]


def test_missing_file_is_vsl900(tree):
    out = run_cli(
        "check", "--output-format", "concise", "pkg/bad.py", "pkg/nope.py", cwd=tree
    )
    assert out.returncode == 1
    assert (
        "pkg/nope.py:1:1: VSL900 cannot read: No such file or directory" in out.stdout
    )
    assert "pkg/bad.py:2:40: VSL001" in out.stdout


def test_vsl900_cannot_be_ignored(tree):
    (tree / "pkg" / "bad.py").write_text("MLAAttentionSpec(\n")
    out = run_cli(
        "check", "--output-format", "concise", "--ignore", "VSL900", ".", cwd=tree
    )
    assert out.returncode == 1
    assert "pkg/bad.py:1:17: VSL900 cannot parse: '(' was never closed" in out.stdout


@pytest.mark.parametrize(
    "ignored, warned",
    [
        ("VSL900", True),
        ("VSL9", True),
        ("VSL90", True),
        ("VSL", False),
        ("VSL001", False),
    ],
)
def test_ignoring_vsl900_by_name_warns_that_it_has_no_effect(tree, ignored, warned):
    """A selector that names VSL900 (longer than the prefix every code has)
    changes nothing, and says so; ``VSL`` ignores the rules, not VSL900."""
    out = run_cli("check", "--no-cache", "--ignore", ignored, ".", cwd=tree)
    warning = (
        "warning: VSL900 (files that cannot be read or parsed) is always "
        "reported; ignoring it has no effect"
    )
    assert (warning in out.stderr.splitlines()) is warned


def test_python_dash_m_and_version():
    from vllm_spec_lint import __version__

    out = run_cli("--version")  # python -m vllm_spec_lint --version
    assert (out.returncode, out.stdout) == (0, f"vllm-spec-lint {__version__}\n")
    assert __version__ == "0.1.0"


def test_example_tree_in_the_repo():
    out = run_cli("check", "--output-format", "concise", "examples", cwd=REPO)
    assert out.returncode == 1
    assert "VSL001" in out.stdout and "VSL004" in out.stdout


def test_named_pipe_is_vsl900_and_never_blocks(tree):
    fifo = tree / "pkg" / "pipe.py"
    os.mkfifo(fifo)
    out = run_cli(
        "check", "--output-format", "concise", "pkg/pipe.py", "pkg/bad.py", cwd=tree
    )
    assert "pkg/pipe.py:1:1: VSL900 cannot read: not a regular file" in out.stdout
    assert "pkg/bad.py:2:40: VSL001" in out.stdout
    # Inside a folder walk it is passed over without a word.
    assert (
        "pipe.py"
        not in run_cli("check", "--output-format", "concise", ".", cwd=tree).stdout
    )


def test_the_server_over_tcp_listens_on_the_port_given(monkeypatch):
    from vllm_spec_lint.faces import cli, lsp

    ports = []
    monkeypatch.setattr(lsp, "serve", ports.append)
    assert cli.main(["server", "--tcp", "2087"]) == 0
    assert ports == [2087]


def test_a_server_without_pygls_is_a_usage_error_saying_what_to_install(
    monkeypatch, capsys
):
    from vllm_spec_lint import faces
    from vllm_spec_lint.faces import cli

    # None in sys.modules: importing the module raises ImportError (and the
    # package must not hand out the module an earlier import left on it).
    monkeypatch.setitem(sys.modules, "vllm_spec_lint.faces.lsp", None)
    monkeypatch.delattr(faces, "lsp", raising=False)
    assert cli.main(["server", "--tcp", "2087"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: the language server needs pygls (import of ")
    assert error.endswith("): pip install 'vllm-spec-lint[lsp]'\n")


@pytest.mark.parametrize(
    "written, said",
    [
        (0, "interrupted"),
        (1, "interrupted; 1 file already fixed and written, no other file changed"),
        (3, "interrupted; 3 files already fixed and written, no other file changed"),
    ],
)
def test_an_interrupted_run_says_how_many_files_it_wrote(written, said):
    from vllm_spec_lint.edges.runner import RunInterrupted
    from vllm_spec_lint.faces import cli

    assert cli._interrupted(RunInterrupted(written)) == said
    assert cli._interrupted(KeyboardInterrupt()) == "interrupted"


def test_each_commands_defaults_are_the_explicit_spelling(tmp_path):
    from tests.conftest import run_cli

    (tmp_path / "m.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    pairs = [
        (["rules"], ["rules", "--output-format", "text"]),
        (["families", "."], ["families", "--output-format", "text", "."]),
        (
            ["fix", "--unsafe-fixes", "--diff", "m.py"],
            ["fix", "--unsafe-fixes", "--diff", "--fix-formatter", "auto", "m.py"],
        ),
    ]
    for default, explicit in pairs:
        plain = run_cli(*default, cwd=tmp_path)
        spelled = run_cli(*explicit, cwd=tmp_path)
        assert plain.returncode in (0, 1), plain.stderr
        assert (spelled.returncode, spelled.stdout, spelled.stderr) == (
            plain.returncode,
            plain.stdout,
            plain.stderr,
        ), explicit


def test_fix_of_standard_input_writes_no_file_and_exit_zero_says_zero(tmp_path):
    from tests.conftest import run_cli

    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    on_disk = "# the file on disk, not what is piped in\n"
    (tmp_path / "m.py").write_text(on_disk)
    out = run_cli(
        "fix", "--unsafe-fixes", "--stdin-filename", "m.py", "-",
        cwd=tmp_path, input=source,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "SlidingWindowMLASpec" in out.stdout  # the fixed source, on stdout
    assert (tmp_path / "m.py").read_text() == on_disk
    # Without --unsafe-fixes the finding remains: 1, or 0 with --exit-zero.
    (tmp_path / "m.py").write_text(source)
    assert run_cli("fix", "m.py", cwd=tmp_path).returncode == 1
    assert run_cli("fix", "--exit-zero", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text() == source


def test_a_baseline_checked_from_standard_input_is_stale_under_its_name(tmp_path):
    from tests.conftest import run_cli

    (tmp_path / "m.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    assert (
        run_cli("check", "--write-baseline", "b.json", "m.py", cwd=tmp_path).returncode
        == 0
    )
    stale = "stale: m.py: VSL001 'ok = isinstance(spec, MLAAttentionSpec)'\n"
    named = run_cli(
        "check", "--baseline", "b.json", "--show-stale", "--stdin-filename", "m.py",
        "-", cwd=tmp_path, input="ok = 1\n",
    )  # fmt: skip
    assert (named.returncode, named.stderr) == (0, stale)
    # Without a name, standard input is "-": no entry of m.py is stale.
    unnamed = run_cli(
        "check", "--baseline", "b.json", "--show-stale", "-", cwd=tmp_path,
        input="ok = 1\n",
    )  # fmt: skip
    assert (unnamed.returncode, unnamed.stderr) == (0, "")


def test_a_baseline_of_unnamed_standard_input_is_stale_under_a_dash(tmp_path):
    found = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    written = run_cli(
        "check", "--write-baseline", "b.json", "-", cwd=tmp_path, input=found
    )
    assert written.returncode == 0, written.stderr
    out = run_cli(
        "check", "--baseline", "b.json", "--show-stale", "-", cwd=tmp_path,
        input="ok = 1\n",
    )  # fmt: skip
    assert (out.returncode, out.stderr) == (
        0,
        "stale: -: VSL001 'ok = isinstance(spec, MLAAttentionSpec)'\n",
    )


def test_a_run_pauses_the_cycle_collector_and_the_server_keeps_it(
    monkeypatch, tmp_path
):
    """A run of the command line pauses Python's cycle collector; the
    language server, which runs for hours, keeps it; main() leaves it as
    it found it, for a caller in the same process: after a run, after a run
    that failed, and off when the caller had turned it off."""
    import gc

    from vllm_spec_lint.faces import cli

    seen = {}

    def record(name):
        def command(args, config):
            seen[name] = gc.isenabled()
            return 0

        return command

    monkeypatch.setitem(cli.COMMANDS, "check", record("check"))
    monkeypatch.setattr(cli, "command_server", record("server"))
    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    assert cli.main(["check", "."]) == 0
    assert gc.isenabled()
    assert cli.main(["server"]) == 0
    assert gc.isenabled()
    assert seen == {"check": False, "server": True}

    def failing(args, config):
        seen["failing"] = gc.isenabled()
        raise cli.UsageError("no")

    monkeypatch.setitem(cli.COMMANDS, "check", failing)
    assert cli.main(["check", "."]) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.setitem(cli.COMMANDS, "check", record("check"))
        assert cli.main(["check", "."]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen == {"check": False, "server": True, "failing": False}
