"""No false greens: no path means `.`, every bad input is refused in one
line with exit 2, and nothing passes that was not checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

EXAMPLES = REPO / "examples"
WORKER = "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"


# Each command as a user types it, and the status it must give on the examples.
COMMANDS = {
    "check": (["check", "--no-cache"], 1),
    "check-github": (["check", "--no-cache", "--output-format", "github"], 1),
    "check-diff": (["check", "--no-cache", "--diff"], 0),
    "check-diff-unsafe": (["check", "--no-cache", "--diff", "--unsafe-fixes"], 1),
    "fix": (["fix", "--no-cache"], 1),
    "codemod-add": (["codemod", "add-sliding-window-mla", "--diff"], 1),
    "codemod-nixl": (["codemod", "nixl-mla-region", "--diff"], 1),
    "families": (["families"], 0),
    "families-discover": (["families", "--discover"], 0),
}


@pytest.mark.fast
@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_path_is_exactly_dot(name, tmp_path):
    """Run on two identical copies (fix writes), once without a path and once
    with `.`: the same output, the same status, and that status is the one a
    tree with findings gives."""
    args, status = COMMANDS[name]
    without, with_dot = tmp_path / "a", tmp_path / "b"
    shutil.copytree(EXAMPLES, without)
    shutil.copytree(EXAMPLES, with_dot)
    implicit = run_cli(*args, cwd=without)
    explicit = run_cli(*args, ".", cwd=with_dot)
    assert implicit.returncode == explicit.returncode == status, implicit.stderr
    # families names the hierarchy's source file: the copies' folders differ.
    assert implicit.stdout == explicit.stdout.replace(str(with_dot), str(without))
    assert implicit.stderr == explicit.stderr
    assert "No Python files found" not in implicit.stderr
    assert "All checks passed!" not in implicit.stdout


@pytest.mark.fast
def test_no_path_checks_the_tree_and_fix_changes_it(examples):
    out = run_cli("check", "--output-format", "concise", "--no-cache", cwd=examples)
    assert out.stdout.splitlines()[-2] == "Found 5 errors."
    before = (examples / WORKER).read_text()
    run_cli("codemod", "nixl-mla-region", cwd=examples)
    after = (examples / WORKER).read_text()
    assert "(MLAAttentionSpec, SlidingWindowMLASpec)" in after
    assert "(MLAAttentionSpec, SlidingWindowMLASpec)" not in before


@pytest.mark.fast
def test_families_without_a_path_reads_the_trees_own_hierarchy(examples):
    """The examples' family module defines the classes: the hierarchy comes
    from it, not from the built-in defaults."""
    out = run_cli("families", cwd=examples)
    assert out.returncode == 0
    source = examples / "vllm" / "v1" / "kv_cache_interface.py"
    assert f"hierarchy (from scanned tree: {source}):" in out.stdout


@pytest.mark.fast
def test_a_folder_without_python_files_warns_and_passes(tmp_path):
    out = run_cli("check", "--output-format", "concise", cwd=tmp_path)
    assert out.returncode == 0
    assert out.stderr == "warning: No Python files found under the given path(s)\n"


@pytest.mark.fast
def test_a_missing_path_is_an_error_finding(examples):
    out = run_cli("check", "--output-format", "concise", "nope.py", cwd=examples)
    assert out.returncode == 1
    assert out.stdout.startswith(
        "nope.py:1:1: VSL900 cannot read: No such file or directory\n"
    )


def _write(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text)


# (id, arguments, files to write first, what stderr's one line must say)
BAD_INPUTS = [
    (
        "select-unknown",
        ["check", "--select", "VSL999", "."],
        {},
        ["--select", "'VSL999'"],
    ),
    (
        "select-no-rule-prefix",
        ["check", "--select", "VSL01", "."],
        {},
        ["--select", "'VSL01'"],
    ),
    (
        "select-lowercase",
        ["check", "--select", "vsl001", "."],
        {},
        ["--select", "'vsl001'"],
    ),
    (
        "select-other-tool",
        ["check", "--select", "E501", "."],
        {},
        ["--select", "'E501'"],
    ),
    (
        "extend-select",
        ["check", "--extend-select", "VSL7", "."],
        {},
        ["--extend-select", "'VSL7'"],
    ),
    (
        "ignore-unknown",
        ["check", "--ignore", "VSL999", "."],
        {},
        ["--ignore", "'VSL999'"],
    ),
    ("fix-select", ["fix", "--select", "VSL0001", "."], {}, ["--select", "'VSL0001'"]),
    (
        "config-select",
        ["check", "."],
        {"pyproject.toml": '[tool.vllm-spec-lint]\nselect = ["VSL999"]\n'},
        ["pyproject.toml", "'select'", "'VSL999'"],
    ),
    (
        "config-extend-ignore",
        ["check", "."],
        {"pyproject.toml": '[tool.vllm-spec-lint]\nextend-ignore = ["VSL01"]\n'},
        ["pyproject.toml", "'extend-ignore'", "'VSL01'"],
    ),
    (
        "config-per-file-ignores",
        ["check", "."],
        {
            "pyproject.toml": '[tool.vllm-spec-lint.per-file-ignores]\n"tests/*" = ["VSL999"]\n'
        },
        ["pyproject.toml", "per-file-ignores.tests/*", "'VSL999'"],
    ),
    (
        "setup-cfg-select",
        ["check", "."],
        {"setup.cfg": "[vllm-spec-lint]\nselect = VSL001, VSL999\n"},
        ["setup.cfg", "'select'", "'VSL999'"],
    ),
    (
        "config-missing",
        ["check", "--config", "nope.toml", "."],
        {},
        ["nope.toml: not found"],
    ),
    (
        "config-not-toml",
        ["check", "."],
        {
            "pyproject.toml": '[tool.vllm-spec-lint]\nselect = ["VSL001"\nstrict = true\n'
        },
        ["pyproject.toml:3:1: invalid TOML"],
    ),
    (
        "config-without-section",
        ["check", "--config", "other.toml", "."],
        {"other.toml": "[tool.ruff]\nline-length = 88\n"},
        ["other.toml: has no [tool.vllm-spec-lint] section"],
    ),
    (
        "config-folder",
        ["check", "--config", "vllm", "."],
        {},
        ["vllm: is a folder"],
    ),
    (
        "output-format",
        ["check", "--output-format", "xml", "."],
        {},
        ["--output-format", "'xml'"],
    ),
    ("jobs", ["check", "--jobs", "many", "."], {}, ["--jobs", "'many'"]),
    ("unknown-option", ["check", "--colour", "."], {}, ["--colour"]),
    ("unknown-command", ["lint", "."], {}, ["'lint'"]),
    ("explain-unknown", ["explain", "VSL999"], {}, ["VSL999"]),
    (
        "output-file-under-a-file",
        ["check", "--output-file", "README.md/report.txt", "."],
        {},
        ["README.md/report.txt: cannot write the report"],
    ),
    (
        "nixl-no-worker",
        ["codemod", "nixl-mla-region", "vllm/v1"],
        {},
        ["vllm/v1: no NIXL worker there"],
    ),
    (
        "nixl-missing-file",
        ["codemod", "nixl-mla-region", "nope.py"],
        {},
        ["nope.py: cannot read the NIXL worker"],
    ),
    ("codemod-unknown", ["codemod", "add-everything", "."], {}, ["'add-everything'"]),
    (
        "families-config-missing",
        ["families", "--config", "nope.toml"],
        {},
        ["nope.toml: not found"],
    ),
    (
        "vllm-source-missing",
        ["check", "--vllm-source", "no-such-checkout", "."],
        {},
        ["no-such-checkout"],
    ),
]


@pytest.mark.fast
@pytest.mark.parametrize(
    "args, files, culprits", [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_input_is_one_line_and_exit_2(args, files, culprits, examples):
    for name, text in files.items():
        _write(examples, name, text)
    out = run_cli(*args, cwd=examples)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: ")
    for culprit in culprits:
        assert culprit in lines[0]
    assert "All checks passed!" not in out.stdout


@pytest.mark.fast
@pytest.mark.parametrize(
    "selector", ["VSL", "VSL0", "VSL00", "VSL001", "VSL9", "VSL900"]
)
def test_real_selectors_are_accepted(selector, examples):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--select",
        selector,
        "-q",
        ".",
        cwd=examples,
    )
    assert out.returncode in (0, 1), out.stderr
    assert "error" not in out.stderr


@pytest.mark.fast
def test_select_narrows_and_does_not_turn_the_linter_off(examples):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--select",
        "VSL00",
        "-q",
        ".",
        cwd=examples,
    )
    assert out.returncode == 1
    assert [line.split()[1] for line in out.stdout.splitlines()] == [
        "VSL001",
        "VSL004",
        "VSL002",
        "VSL003",
        "VSL001",
    ]


@pytest.mark.fast
def test_bare_command_prints_the_help_and_exits_2():
    out = run_cli()
    assert out.returncode == 2
    assert out.stderr.startswith("usage: vllm-spec-lint")
    assert "check" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.fast
def test_output_file_creates_missing_folders(examples):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "json",
        "--output-file",
        "out/deeper/report.json",
        ".",
        cwd=examples,
    )
    assert out.returncode == 1
    report = (examples / "out" / "deeper" / "report.json").read_text()
    assert report.count('"code": "VSL') == 5
    assert out.stdout == ""


@pytest.mark.fast
@pytest.mark.parametrize(
    "where",
    [
        ".",
        "vllm",
        "vllm/distributed",
        "vllm/distributed/kv_transfer/kv_connector",
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl",
        WORKER,
    ],
)
def test_nixl_codemod_takes_any_folder_on_the_way_to_the_worker(where, examples):
    out = run_cli("codemod", "nixl-mla-region", where, cwd=examples)
    assert out.returncode == 0, out.stderr
    text = (examples / WORKER).read_text()
    assert (
        "isinstance(\n                layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        in text
    )


@pytest.mark.fast
def test_nixl_codemod_from_inside_the_nixl_folder(examples):
    folder = examples / WORKER.rpartition("/")[0]
    out = run_cli("codemod", "nixl-mla-region", cwd=folder)
    assert (out.returncode, out.stderr) == (0, "base_worker.py: applied\n")


# VSL900 is always reported, as ruff reports syntax errors.
UNPARSABLE = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\nx = (\n"
UNDECODABLE = b"from vllm.v1.kv_cache_interface import MLAAttentionSpec\nx = '\xff'\n"


@pytest.mark.fast
@pytest.mark.parametrize(
    "selection",
    [
        ["--select", "VSL001"],
        ["--ignore", "VSL900"],
        ["--ignore", "VSL9"],
        ["--select", "VSL00"],
    ],
)
def test_vsl900_is_reported_whatever_the_selection(selection, tmp_path):
    (tmp_path / "syntax.py").write_text(UNPARSABLE)
    (tmp_path / "bytes.py").write_bytes(UNDECODABLE)
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "-q",
        *selection,
        ".",
        cwd=tmp_path,
    )
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "bytes.py:1:1: VSL900 cannot decode: 'utf-8' codec can't decode byte 0xff "
        "in position 61: invalid start byte",
        "syntax.py:2:5: VSL900 cannot parse: '(' was never closed",
    ]


@pytest.mark.fast
def test_ignoring_vsl900_by_name_says_it_has_no_effect(tmp_path):
    (tmp_path / "syntax.py").write_text(UNPARSABLE)
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--ignore",
        "VSL900",
        ".",
        cwd=tmp_path,
    )
    assert out.returncode == 1
    assert out.stderr == (
        "warning: VSL900 (files that cannot be read or parsed) is always "
        "reported; ignoring it has no effect\n"
    )


@pytest.mark.fast
def test_per_file_ignores_cannot_hide_a_syntax_error(tmp_path):
    (tmp_path / "syntax.py").write_text(UNPARSABLE)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint.per-file-ignores]\n"syntax.py" = ["VSL"]\n'
    )
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", "-q", ".", cwd=tmp_path
    )
    assert out.stdout == "syntax.py:2:5: VSL900 cannot parse: '(' was never closed\n"


# families: one row per pair however the path is spelled.
TWINS = [
    ("MLAAttentionSpec", "ChunkedMLASpec"),
    ("MLAAttentionSpec", "SlidingWindowMLASpec"),
    ("SlidingWindowMLASpec", "ChunkedMLASpec"),
]


@pytest.fixture
def family_tree(tmp_path) -> Path:
    """test_twins' family module (two twins), and no ``__init__.py`` files."""
    from tests.test_twins import KV_CACHE_INTERFACE_PY

    kci = tmp_path / "tree" / "vllm" / "v1" / "kv_cache_interface.py"
    kci.parent.mkdir(parents=True)
    kci.write_text(KV_CACHE_INTERFACE_PY)
    return tmp_path / "tree"


def _pairs(out) -> list[tuple[str, str]]:
    import json

    return [
        (t["anchor"].rpartition(".")[2], t["companion"].rpartition(".")[2])
        for t in json.loads(out.stdout)
    ]


@pytest.mark.parametrize(
    "spelling", ["", ".", "./", "ABSOLUTE", "vllm/..", "vllm/v1/../.."]
)
def test_families_discover_gives_one_row_per_pair(spelling, family_tree):
    path = str(family_tree) if spelling == "ABSOLUTE" else spelling
    extra = [path] if path else []
    out = run_cli(
        "families", "--discover", "--output-format", "json", *extra, cwd=family_tree
    )
    assert out.returncode == 0, out.stderr
    assert sorted(_pairs(out)) == sorted(TWINS)
    text = run_cli("families", "--discover", *extra, cwd=family_tree).stdout
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(TWINS), text


def test_families_never_pairs_a_class_with_itself(family_tree):
    """Run from a folder above, where the module has no package name: its
    classes are read once, never paired with themselves under a second
    module name."""
    out = run_cli(
        "families",
        "--discover",
        "--output-format",
        "json",
        "tree",
        cwd=family_tree.parent,
    )
    assert out.returncode == 0, out.stderr
    assert sorted(_pairs(out)) == sorted(TWINS)


@pytest.mark.fast
def test_families_lists_only_the_spec_hierarchy(examples):
    kci = examples / "vllm" / "v1" / "kv_cache_interface.py"
    kci.write_text(
        kci.read_text()
        + "\n\nclass KVCacheConfig:\n    pass\n\n\nclass KVQuantMode(Enum):\n    pass\n"
    )
    out = run_cli("families", cwd=examples)
    listed = [
        line.split(" <- ")[0].strip()
        for line in out.stdout.splitlines()
        if " <- " in line
    ]
    assert "KVCacheConfig" not in listed and "KVQuantMode" not in listed
    assert "KVCacheSpec" in listed and "SlidingWindowMLASpec" in listed


def test_formatters_are_found_beside_the_interpreter_without_path(examples, tmp_path):
    """The tool run as ``.venv/bin/python -m vllm_spec_lint`` with no venv on
    PATH still finds black and yapf in its own environment."""
    import sys

    bare_path = "/usr/bin:/bin"
    for formatter in ("black", "yapf", "ruff"):
        copy = tmp_path / formatter
        shutil.copytree(EXAMPLES, copy)
        out = run_cli(
            "fix",
            "--output-format",
            "concise",
            "--no-cache",
            "--fix-formatter",
            formatter,
            ".",
            cwd=copy,
            env={"PATH": bare_path, "VIRTUAL_ENV": None},
        )
        assert "is not installed" not in out.stderr, (formatter, out.stderr)
        assert out.returncode == 1
    assert Path(sys.executable).parent.joinpath("black").exists()
