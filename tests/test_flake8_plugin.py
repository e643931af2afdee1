"""The flake8 face, through the real flake8."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    COMPRESSED_PARENT,
    REPO,
    run_cli,
    run_flake8,
    write_covering_hierarchy,
    write_family_module,
    write_plugin_package,
)

CORPUS = [REPO / "examples", REPO / "tests" / "corpus"]


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_flake8("--isolated", *args, cwd=cwd)


def _flake8_findings(tree: Path) -> set[tuple[str, int, int, str]]:
    out = flake8(
        "--select",
        "VSL",
        "--format",
        "%(path)s|%(row)d|%(col)d|%(code)s",
        ".",
        cwd=tree,
    )
    assert out.returncode in (0, 1), out.stderr
    found = set()
    for line in out.stdout.splitlines():
        path, row, col, code = line.split("|")
        found.add((Path(path).as_posix().removeprefix("./"), int(row), int(col), code))
    return found


def _check_findings(tree: Path) -> set[tuple[str, int, int, str]]:
    out = run_cli(
        "check", "--output-format", "concise", "--format", "json", ".", cwd=tree
    )
    return {
        (
            Path(f["filename"]).relative_to(tree).as_posix(),
            f["location"]["row"],
            f["location"]["column"],
            f["code"],
        )
        for f in json.loads(out.stdout)
    }


@pytest.mark.parametrize("tree", CORPUS, ids=lambda p: p.name)
def test_flake8_and_check_agree(tree, tmp_path):
    copy = tmp_path / tree.name
    shutil.copytree(tree, copy)
    ours = _check_findings(copy)
    assert ours, "the corpus must have findings"
    assert _flake8_findings(copy) == ours


def test_plugin_is_registered(tmp_path):
    out = run_flake8("--version", cwd=tmp_path)
    assert "vllm-spec-lint" in out.stdout


@pytest.fixture
def bad_file(tmp_path):
    (tmp_path / "bad.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "a = isinstance(s, MLAAttentionSpec)\n"
        "b = isinstance(s, MLAAttentionSpec)  # noqa: VSL001\n"
    )
    return tmp_path


def test_noqa_and_extend_select(bad_file):
    out = flake8("--extend-select", "VSL", "bad.py", cwd=bad_file)
    assert "F821" in out.stdout  # flake8's own checks still run
    assert [line for line in out.stdout.splitlines() if "VSL" in line] == [
        "bad.py:2:19: VSL001 isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec"
    ]
    assert out.returncode == 1


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", ".flake8"])
def test_per_file_ignores_from_config_files(bad_file, name):
    (bad_file / name).write_text(
        "[flake8]\nselect = VSL\nper-file-ignores =\n    bad.py: VSL001\n"
    )
    out = run_flake8("bad.py", cwd=bad_file)
    assert out.returncode == 0 and out.stdout == ""


def test_our_options_from_flake8_config(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\nselect = VSL\nvsl-extend-families =\n"
        "    vllm.v1.kv_cache_interface: MambaSpec, ShortConvSpec\n"
    )
    (tmp_path / "m.py").write_text(
        "from vllm.v1.kv_cache_interface import MambaSpec\nok = isinstance(s, MambaSpec)\n"
    )
    out = run_flake8("m.py", cwd=tmp_path)
    assert (
        "m.py:2:20: VSL001 isinstance() check against MambaSpec leaves out ShortConvSpec"
        in out.stdout
    )


def _flake8_then(after: str, files: str, cwd: Path) -> list[str]:
    """flake8 (one job, in this process) over ``files``, then ``after``'s
    prints: its output's lines, flake8's report first."""
    code = (
        "import gc, sys\n"
        "from flake8.main.cli import main\n"
        "try:\n"
        f"    main(['--select', 'VSL', '-j', '1', {files!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"{after}\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_files_without_family_names_do_not_import_libcst(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    lines = _flake8_then("print('libcst' in sys.modules)", "plain.py", tmp_path)
    assert lines == ["False"]


def test_files_without_family_names_freeze_nothing(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    lines = _flake8_then("print(gc.get_freeze_count())", "plain.py", tmp_path)
    assert lines == ["0"]


def test_the_imported_analysis_is_left_out_of_the_cycle_collectors_walks(bad_file):
    after = (
        "import libcst\n"
        "from vllm_spec_lint.rules import vsl001_isinstance\n"
        "tracked = {id(o) for o in gc.get_objects()}\n"
        "print(gc.get_freeze_count() > 20000)\n"
        "print(id(libcst.Module) in tracked, id(vsl001_isinstance.__dict__) in tracked)\n"
        "made_later = []\n"
        "made_later.append(made_later)\n"
        "del made_later\n"
        "print(gc.collect() > 0)"
    )
    lines = _flake8_then(after, "bad.py", bad_file)
    assert lines == [
        "bad.py:2:19: VSL001 isinstance() check against MLAAttentionSpec"
        " leaves out SlidingWindowMLASpec",
        "True",
        "False False",
        "True",
    ]


NOQA_COMMENTS = [
    "",
    "  # noqa",
    "  # noqa: VSL001",
    "  # noqa: VSL0",
    "  # noqa:VSL00,E501",
    "  # noqa: VSL1",
    "  # noqa: VSL0010",
    "  # NOQA: VSL",
    "  # noqa: VSL002",
]


def test_noqa_comments_mean_the_same_to_flake8_and_check(tmp_path):
    lines = [
        f"ok{i} = isinstance(s, MLAAttentionSpec){comment}"
        for i, comment in enumerate(NOQA_COMMENTS)
    ]
    (tmp_path / "n.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        + "\n".join(lines)
        + "\n"
    )
    theirs = flake8("--select", "VSL", "n.py", cwd=tmp_path).stdout
    ours = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "json",
        ".",
        cwd=tmp_path,
    ).stdout
    flake8_rows = [int(line.split(":")[1]) for line in theirs.splitlines()]
    our_rows = [f["location"]["row"] for f in json.loads(ours)]
    # Rows 2.. hold the comments in order; reported: none, VSL1, VSL0010, VSL002.
    expected = [2, 7, 8, 10]
    assert flake8_rows == expected
    assert our_rows == expected


NARROWED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "\n\n"
    "def f(spec):\n"
    "    if isinstance(spec, SlidingWindowMLASpec):\n"
    "        return 0\n"
    "    return isinstance(spec, MLAAttentionSpec)\n"
)


def test_vsl_strict_reports_what_the_default_leaves_out(tmp_path):
    (tmp_path / "n.py").write_text(NARROWED)
    assert flake8("--select", "VSL", "n.py", cwd=tmp_path).stdout == ""
    strict = flake8("--select", "VSL", "--vsl-strict", "n.py", cwd=tmp_path)
    assert strict.stdout == (
        "n.py:7:29: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
    )


def test_strict_and_vllm_source_from_flake8_config(tmp_path):
    (tmp_path / "n.py").write_text(NARROWED)
    write_covering_hierarchy(tmp_path / "checkout")
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = VSL\nvsl-strict = true\n")
    strict = (
        "n.py:7:29: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
    )
    assert run_flake8("n.py", cwd=tmp_path).stdout == strict
    (tmp_path / "setup.cfg").write_text(
        "[flake8]\nselect = VSL\nvsl-strict = true\nvsl-vllm-source = checkout\n"
    )
    assert run_flake8("n.py", cwd=tmp_path).stdout == ""


def test_a_broken_vllm_source_is_said_and_the_defaults_stand_in(bad_file):
    kci = write_family_module(bad_file / "checkout", "class MLAAttentionSpec(\n")
    out = flake8(
        "--select", "VSL", "--vsl-vllm-source=checkout", "bad.py", cwd=bad_file
    )
    assert out.stderr == (
        f"vllm-spec-lint: warning: {kci}: cannot read class hierarchy: "
        "'(' was never closed (<unknown>, line 1)\n"
    )
    assert out.stdout == (
        "bad.py:2:19: VSL001 isinstance() check against MLAAttentionSpec leaves "
        "out SlidingWindowMLASpec\n"
    )


def test_the_trees_own_hierarchy_is_read(bad_file):
    write_covering_hierarchy(bad_file)
    assert flake8("--select", "VSL", "bad.py", cwd=bad_file).stdout == ""


def test_a_bad_family_option_stops_flake8_and_says_why(bad_file):
    out = flake8(
        "--select", "VSL", "--vsl-extend-families", "vllm.x MambaSpec", "bad.py",
        cwd=bad_file,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.endswith(
        "vllm-spec-lint: flake8 options: invalid value for 'families': "
        "expected 'module: A, B': 'vllm.x MambaSpec'\n"
    )


def test_flake8_help_lists_our_options(tmp_path):
    out = run_flake8("--help", cwd=tmp_path, env={"COLUMNS": "200"})
    indent = " " * 24
    assert (
        "  --vsl-extend-families VSL_EXTEND_FAMILIES\n"
        f"{indent}vllm-spec-lint: more families, one per line: "
        "'module: Anchor, Companion, ...'\n"
        "  --vsl-vllm-source VSL_VLLM_SOURCE\n"
        f"{indent}vllm-spec-lint: read vLLM's spec classes from this checkout or "
        "site-packages folder\n"
        "  --vsl-strict          vllm-spec-lint: report every syntactic finding\n"
    ) in out.stdout


def test_disable_noqa_shows_what_the_comment_hid(bad_file):
    # flake8 applies noqa itself: the plugin must not drop the line first.
    out = flake8("--select", "VSL", "--disable-noqa", "bad.py", cwd=bad_file)
    assert out.stdout == (
        "bad.py:2:19: VSL001 isinstance() check against MLAAttentionSpec leaves "
        "out SlidingWindowMLASpec\n"
        "bad.py:3:19: VSL001 isinstance() check against MLAAttentionSpec leaves "
        "out SlidingWindowMLASpec\n"
    )


def test_a_relative_import_is_resolved_against_the_files_package(tmp_path):
    write_plugin_package(tmp_path)
    out = flake8("--select", "VSL", "plugin/layers.py", cwd=tmp_path)
    # plugin.kv_cache_interface is not vLLM's module: only line 6 is reported.
    assert out.stdout == (
        "plugin/layers.py:6:23: VSL001 isinstance() check against "
        "MLAAttentionSpec leaves out SlidingWindowMLASpec\n"
    )


def test_a_parent_named_only_in_the_trees_hierarchy_is_checked(tmp_path):
    # The file names only CompressedSpec, which the built-in hierarchy does
    # not know: it is read only if the screen uses the tree's hierarchy.
    write_family_module(tmp_path, COMPRESSED_PARENT)
    (tmp_path / "w.py").write_text(
        "from vllm.v1.kv_cache_interface import CompressedSpec\n"
        "\n\n"
        "def check(spec):\n"
        "    if isinstance(spec, CompressedSpec):\n"
        '        raise ValueError("no windows")\n'
    )
    out = flake8("--select", "VSL", "w.py", cwd=tmp_path)
    assert out.stdout == (
        "w.py:5:25: VSL007 isinstance() check against CompressedSpec also admits "
        "SlidingWindowMLASpec, which has MLAAttentionSpec's layout\n"
    )


def test_an_unknown_encoding_cookie_is_a_vsl900_only_where_an_anchor_is_named(
    tmp_path,
):
    (tmp_path / "bad_cookie.py").write_text(
        "# -*- coding: no-such-codec -*-\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(s, MLAAttentionSpec)\n"
    )
    (tmp_path / "latin.py").write_bytes(b'x = "\xe9"\n')  # names no class
    out = flake8("--select", "VSL", "bad_cookie.py", "latin.py", cwd=tmp_path)
    assert out.stdout == (
        "bad_cookie.py:1:1: VSL900 cannot decode: unknown encoding: no-such-codec\n"
    )


def test_the_analysis_is_imported_once_and_then_frozen(unfrozen_heap, tmp_path):
    """In this process, as flake8 calls the plugin: the first file naming an
    anchor imports the analysis and freezes what is alive; a second file
    freezes nothing more."""
    import ast
    import gc

    from vllm_spec_lint.faces import flake8_plugin

    lines = [
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n",
        "a = isinstance(s, MLAAttentionSpec)\n",
    ]
    path = tmp_path / "bad.py"
    path.write_text("".join(lines))

    def codes() -> list[str]:
        plugin = flake8_plugin.Flake8Plugin(ast.parse("".join(lines)), str(path), lines)
        return [message.split()[0] for _, _, message, _ in plugin.run()]

    flake8_plugin._analysis.cache_clear()
    try:
        assert codes() == ["VSL001"]
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert codes() == ["VSL001"]
        assert gc.get_freeze_count() == frozen
    finally:
        flake8_plugin._analysis.cache_clear()
