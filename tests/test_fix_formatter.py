"""fix-formatter: each value on the same yapf-styled file, auto picking each
formatter from the project's configuration, and a missing formatter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import BAD, fake_black, interpreter_without_tools, run_cli
from vllm_spec_lint.repair import formatting
from vllm_spec_lint.repair.formatting import detect

# Written in tpu-inference's style: yapf, aligned continuation lines.
MODULE = textwrap.dedent(
    """\
    from vllm.v1.kv_cache_interface import (FullAttentionSpec, KVCacheConfig,
                                            KVCacheSpec, MLAAttentionSpec)


    def page_size(spec: KVCacheSpec, config: KVCacheConfig) -> int:
        if isinstance(spec, MLAAttentionSpec) and not isinstance(spec, FullAttentionSpec):
            return spec.page_size_bytes
        return 0
    """
)
TAIL = textwrap.dedent(
    """\


    def page_size(spec: KVCacheSpec, config: KVCacheConfig) -> int:
    """
)
EXPLODED_IMPORT = textwrap.dedent(
    """\
    from vllm.v1.kv_cache_interface import (
        FullAttentionSpec,
        KVCacheConfig,
        KVCacheSpec,
        MLAAttentionSpec,
        SlidingWindowMLASpec,
    )
    """
)
EXPLODED_CHECK = (
    "    if isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec)) and not isinstance(\n"
    "        spec, FullAttentionSpec\n"
    "    ):\n"
    "        return spec.page_size_bytes\n"
    "    return 0\n"
)
EXPECTED = {
    # The new name at its sorted place, the check widened; nothing rewrapped.
    "none": textwrap.dedent(
        """\
        from vllm.v1.kv_cache_interface import (FullAttentionSpec, KVCacheConfig,
                                                KVCacheSpec, MLAAttentionSpec, SlidingWindowMLASpec)


        def page_size(spec: KVCacheSpec, config: KVCacheConfig) -> int:
            if isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec)) and not isinstance(spec, FullAttentionSpec):
                return spec.page_size_bytes
            return 0
        """
    ),
    "yapf": textwrap.dedent(
        """\
        from vllm.v1.kv_cache_interface import (FullAttentionSpec, KVCacheConfig,
                                                KVCacheSpec, MLAAttentionSpec,
                                                SlidingWindowMLASpec)


        def page_size(spec: KVCacheSpec, config: KVCacheConfig) -> int:
            if isinstance(spec,
                          (MLAAttentionSpec, SlidingWindowMLASpec)) and not isinstance(
                              spec, FullAttentionSpec):
                return spec.page_size_bytes
            return 0
        """
    ),
    # black and ruff lay it out alike; the blank lines below the import stay.
    "black": EXPLODED_IMPORT + TAIL + EXPLODED_CHECK,
    "ruff": EXPLODED_IMPORT + TAIL + EXPLODED_CHECK,
}
YAPF_STYLE = "[style]\nbased_on_style = pep8\n"


def fix(folder: Path, *args: str, env: dict | None = None, python: str | None = None):
    return run_cli(
        "fix", "--unsafe-fixes", "--no-cache", *args, ".", cwd=folder, env=env,
        python=python,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "kv_cache_manager.py").write_text(MODULE)
    return tmp_path


@pytest.mark.parametrize("formatter", ["none", "yapf", "black", "ruff"])
def test_each_fix_formatter_on_the_same_file(project, formatter):
    (project / ".style.yapf").write_text(YAPF_STYLE)
    result = fix(project, "--fix-formatter", formatter)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "kv_cache_manager.py").read_text() == EXPECTED[formatter]


def test_the_yapf_fix_is_stable_under_yapf(project):
    (project / ".style.yapf").write_text(YAPF_STYLE)
    fix(project, "--fix-formatter", "yapf")
    fixed = (project / "kv_cache_manager.py").read_text()
    again = subprocess.run(
        [str(Path(sys.executable).parent / "yapf"), "--lines", "1-11"],
        input=fixed,
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert again.stdout == fixed


@pytest.mark.parametrize(
    "files, expected",
    [
        ({".style.yapf": YAPF_STYLE}, "yapf"),
        ({"setup.cfg": "[yapf]\nbased_on_style = pep8\n"}, "yapf"),
        ({"pyproject.toml": "[tool.yapf]\nbased_on_style = 'pep8'\n"}, "yapf"),
        ({"pyproject.toml": "[tool.black]\nline-length = 100\n"}, "black"),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, "ruff"),
        ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n"}, "ruff"),
        ({"ruff.toml": "line-length = 100\n"}, "ruff"),
        ({".ruff.toml": "line-length = 100\n"}, "ruff"),
        # The hook that formats wins over a lint-only ruff section.
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
                ".pre-commit-config.yaml": (
                    "repos:\n- repo: https://github.com/google/yapf\n"
                    "  rev: v0.43.0\n  hooks:\n  - id: yapf\n"
                ),
            },
            "yapf",
        ),
        (
            {
                ".pre-commit-config.yaml": (
                    "repos:\n- repo: https://github.com/psf/black\n"
                    "  rev: 24.1.0\n  hooks:\n    - id: black\n"
                )
            },
            "black",
        ),
        (
            {
                ".pre-commit-config.yaml": (
                    "repos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n"
                    "  hooks:\n  - id: ruff\n  - id: ruff-format\n"
                )
            },
            "ruff",
        ),
        # ruff's linter hook formats nothing: black, the formatter, decides.
        (
            {
                ".pre-commit-config.yaml": (
                    "repos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n"
                    "  hooks:\n  - id: ruff\n"
                    "- repo: https://github.com/psf/black\n"
                    "  hooks:\n  - id: black\n"
                )
            },
            "black",
        ),
        # Nothing configured: no formatter is the project's.
        ({}, None),
    ],
)
def test_auto_picks_the_projects_formatter(tmp_path, files, expected):
    # Above the project, a configuration of another formatter: the project's
    # own must be what decides, not the default or the search going on up.
    if files:
        other = "[tool.yapf]\n" if expected == "black" else "[tool.black]\n"
        (tmp_path / "pyproject.toml").write_text(other)
    project = tmp_path / "project"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    package = project / "pkg"
    package.mkdir()
    assert detect(package / "module.py") == expected


def test_auto_takes_the_nearest_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".style.yapf").write_text(YAPF_STYLE)
    assert detect(tmp_path / "sub" / "module.py") == "yapf"
    assert detect(tmp_path / "module.py") == "black"


def test_auto_formats_with_the_projects_yapf(project):
    (project / ".style.yapf").write_text(YAPF_STYLE)
    result = fix(project)
    assert result.returncode == 0, result.stderr
    assert (project / "kv_cache_manager.py").read_text() == EXPECTED["yapf"]


# MODULE as ruff's defaults lay it out.
RUFF_LAID_OUT = textwrap.dedent(
    """\
    from vllm.v1.kv_cache_interface import (
        FullAttentionSpec,
        KVCacheConfig,
        KVCacheSpec,
        MLAAttentionSpec,
    )


    def page_size(spec: KVCacheSpec, config: KVCacheConfig) -> int:
        if isinstance(spec, MLAAttentionSpec) and not isinstance(spec, FullAttentionSpec):
            return spec.page_size_bytes
        return 0
    """
)


def test_with_no_formatter_configured_ruff_lays_out_only_a_file_laid_out_so(
    project,
):
    """No formatter configured above the project: the yapf-styled file keeps
    its layout, the one ruff's defaults leave as it is gets ruff's, in the
    report's previews and in what fix writes."""
    (project / "ruff_laid_out.py").write_text(RUFF_LAID_OUT)
    report = run_cli("check", "--no-cache", "--unsafe-fixes", ".", cwd=project)
    assert report.returncode == 1, report.stderr
    # The yapf-styled file's import, widened in place.
    assert (
        "2 +                                         KVCacheSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec)\n" in report.stdout
    )
    # The other file's, as ruff lays it out.
    assert " 6 +     SlidingWindowMLASpec,\n" in report.stdout
    fix(project)
    assert (project / "kv_cache_manager.py").read_text() == EXPECTED["none"]
    assert (project / "ruff_laid_out.py").read_text() == EXPECTED["ruff"]


def test_a_missing_formatter_warns_once_and_fixes_unformatted(project):
    (project / "other.py").write_text(MODULE)
    # No yapf beside the interpreter, and a PATH without yapf.
    empty = project / "empty-bin"
    empty.mkdir()
    python, env = interpreter_without_tools(project.parent)
    env = {**env, "PATH": str(empty)}
    result = fix(project, "--fix-formatter", "yapf", env=env, python=python)
    assert result.returncode == 0, result.stderr
    assert (
        result.stderr.count(
            "warning: yapf is not installed: fixes are applied without formatting "
            "(the project formats with yapf; pip install yapf)"
        )
        == 1
    )
    assert (project / "kv_cache_manager.py").read_text() == EXPECTED["none"]
    assert (project / "other.py").read_text() == EXPECTED["none"]


@pytest.mark.parametrize(
    "kind, hint",
    [
        ("ruff", "pip install ruff"),
        ("black", "the project formats with black; pip install black"),
    ],
)
def test_a_missing_formatters_warning_says_how_to_install_it(kind, hint):
    # ruff is a dependency of ours; the others are the project's own.
    assert formatting.missing_warning(kind) == (
        f"{kind} is not installed: fixes are applied without formatting ({hint})"
    )


def test_outside_a_run_a_missing_formatter_is_warned_about_once(
    tmp_path, monkeypatch, capsys
):
    # An environment without yapf: nothing beside the interpreter, an empty PATH.
    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(formatting, "_warned", set())
    for name in ("a.py", "b.py"):
        assert formatting.formatter_for(str(tmp_path / name), 88, "yapf") is None
    assert capsys.readouterr().err == (
        "warning: yapf is not installed: fixes are applied without formatting "
        "(the project formats with yapf; pip install yapf)\n"
    )


def test_an_unknown_fix_formatter_setting_is_an_error(project):
    (project / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nfix-formatter = "autopep8"\n'
    )
    result = fix(project)
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {project / 'pyproject.toml'}: invalid value for 'fix-formatter': "
        "expected one of auto, ruff, black, yapf, none\n"
    )


def test_none_chooses_no_formatter_without_a_warning(tmp_path):
    warnings = []
    choice = formatting.choose("none", tmp_path, 100, warnings)
    assert choice == formatting.FormatterChoice("none", None, 100)
    assert warnings == []


def test_ruffs_own_package_is_found_when_nothing_is_beside_the_interpreter(
    tmp_path, monkeypatch
):
    from ruff.__main__ import find_ruff_bin

    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [str(tmp_path)])
    monkeypatch.setenv("PATH", str(tmp_path))  # and nothing on PATH either
    assert formatting.find_executable("ruff") == find_ruff_bin()
    assert formatting.find_executable("black") is None


def test_a_diff_the_formatter_failed_on_names_the_failure_and_hides_no_fix(
    tmp_path, monkeypatch, capsys
):
    """With --unsafe-fixes nothing is left to offer: no "available with
    --unsafe-fixes" line under the error; without it, the unsafe fix is."""
    from vllm_spec_lint.faces import cli

    fake_black(monkeypatch, tmp_path, 'echo "cannot format: broken" >&2\nexit 1\n')
    (tmp_path / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    args = ["fix", "--diff", "--no-cache", "--fix-formatter", "black", "w.py"]
    assert cli.main([*args, "--unsafe-fixes"]) == 1
    assert capsys.readouterr() == (
        "",
        "error: w.py: not fixed: the formatter failed: cannot format: broken\n",
    )
    assert cli.main(args) == 0
    assert capsys.readouterr() == (
        "No errors would be fixed (1 fix available with `--unsafe-fixes`).\n",
        "",
    )


def test_a_fix_the_formatter_broke_is_not_written_and_its_finding_stays_reported(
    tmp_path, monkeypatch, capsys
):
    """ruff's "fix introduced a syntax error": the file is left as it was,
    the run fails, and the report shows what is still there (not "All
    checks passed!")."""
    from vllm_spec_lint.faces import cli

    fake_black(monkeypatch, tmp_path, "echo 'def ('\n")
    (tmp_path / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    args = ["fix", "--no-cache", "--unsafe-fixes", "--fix-formatter", "black"]
    assert cli.main([*args, "--output-format", "concise", "w.py"]) == 1
    assert capsys.readouterr() == (
        "w.py:2:40: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\nFound 1 error.\n",
        "error: w.py: the fixed code does not parse; not written\n",
    )
    assert (tmp_path / "w.py").read_text() == BAD


def test_a_formatter_not_beside_the_interpreter_is_found_on_path(tmp_path, monkeypatch):
    from vllm_spec_lint.repair import formatting

    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name in ("black", "ruff"):
        tool = bin_folder / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [])
    monkeypatch.setenv("PATH", str(bin_folder))
    assert formatting.find_executable("black") == str(bin_folder / "black")
    # ruff's package without its binary: PATH then.
    import ruff.__main__

    def no_binary():
        raise FileNotFoundError("ruff")

    monkeypatch.setattr(ruff.__main__, "find_ruff_bin", no_binary)
    assert formatting.find_executable("ruff") == str(bin_folder / "ruff")


def test_ruff_beside_the_interpreter_comes_before_ruffs_own_package(
    tmp_path, monkeypatch
):
    """A pre-commit hook's environment pins its own ruff: that one formats,
    not the binary another installed ruff package would name."""
    from vllm_spec_lint.repair import formatting

    beside = tmp_path / "bin"
    beside.mkdir()
    pinned = beside / "ruff"
    pinned.write_text("#!/bin/sh\n")
    pinned.chmod(0o755)
    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [str(beside)])
    assert formatting.find_executable("ruff") == str(pinned)
