"""Hard edges a new user met: ordinary inputs that crashed the tool, a
Ctrl-C that did not stop it, values one face refused and another took.
Each test is one such input, run as the user ran it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import BAD, REPO, run_cli

# -- .gitignore lines read as git reads them ---------------------------------

# Files a tree holds, and .gitignore lines git accepts; for each line, the
# files git still lists (`git ls-files --others --exclude-standard`).
GITIGNORE_FILES = ("a.py", "ax.py", "b1.py", "Up.py", "[x.py", "foo.py", "_p.py")
GITIGNORE_LINES = [
    "[z-a]",  # a range that runs backwards: git matches nothing
    "foo\\",  # a trailing backslash: git matches nothing
    "[",  # an unclosed bracket: git matches nothing
    "[[:alpha:]]x.py",  # a POSIX class: git matches ax.py
    "b[[:digit:]].py",
    "[[:upper:]]*.py",
    "[[:punct:]]*.py",  # [x.py and _p.py
    "[[]x.py",  # a '[' inside brackets is itself
    "[[:nope:]].py",  # an unknown class: git matches nothing
    "[!a-z]*.py",
]


@pytest.fixture
def git_tree(tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    tree = tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    for name in GITIGNORE_FILES:
        (tree / name).write_text(BAD)
    return tree


def _git_lists(tree: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=tree, capture_output=True, check=True, text=True,
    )  # fmt: skip
    return sorted(n for n in out.stdout.split("\0") if n.endswith(".py"))


@pytest.mark.parametrize("line", GITIGNORE_LINES)
def test_a_gitignore_line_git_accepts_excludes_what_git_excludes(git_tree, line):
    (git_tree / ".gitignore").write_text(line + "\n")
    out = run_cli("check", "--show-files", cwd=git_tree)
    assert (out.returncode, out.stderr) == (0, "")
    assert sorted(out.stdout.splitlines()) == _git_lists(git_tree)


@pytest.mark.parametrize(
    "line, listed",
    [
        ("[z-a]", GITIGNORE_FILES),
        ("foo\\", GITIGNORE_FILES),
        ("[[:alpha:]]x.py", ("a.py", "b1.py", "Up.py", "[x.py", "foo.py", "_p.py")),
        ("[[:punct:]]*.py", ("a.py", "ax.py", "b1.py", "Up.py", "foo.py")),
    ],
)
def test_a_gitignore_line_lists_these_files(git_tree, line, listed):
    """The same cases with git's answer written out."""
    (git_tree / ".gitignore").write_text(line + "\n")
    out = run_cli("check", "--show-files", cwd=git_tree)
    assert sorted(out.stdout.splitlines()) == sorted(listed)


def test_an_odd_gitignore_line_warns_of_nothing_and_the_check_runs(git_tree):
    (git_tree / ".gitignore").write_text("[z-a]\nfoo\\\n[[:alpha:]]x\n")
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", "-q", "a.py",
        cwd=git_tree, env={"PYTHONWARNINGS": "default"},
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr == ""
    assert out.stdout.startswith("a.py:2:40: VSL001 ")


# -- patterns of our own are refused in one line -------------------------------

PATTERN_ERRORS = [
    (
        ["--exclude", "[z-a]"],
        {},
        "error: argument --exclude: '[z-a]' is not a glob: the range 'z-a' runs "
        "backwards (see 'vllm-spec-lint check --help')",
    ),
    (
        ["--extend-exclude", "foo\\"],
        {},
        "error: argument --extend-exclude: 'foo\\\\' is not a glob: ends with a "
        "backslash that escapes nothing (see 'vllm-spec-lint check --help')",
    ),
    (
        [],
        {"pyproject.toml": '[tool.vllm-spec-lint]\nexclude = ["[z-a]"]\n'},
        "error: {root}/pyproject.toml: invalid value for 'exclude': '[z-a]' is not "
        "a glob: the range 'z-a' runs backwards",
    ),
    (
        [],
        {"setup.cfg": "[vllm-spec-lint]\nextend-exclude = docs, [\n"},
        "error: {root}/setup.cfg: invalid value for 'extend-exclude': '[' is not a "
        "glob: a '[' that is never closed",
    ),
    (
        [],
        {
            "pyproject.toml": "[tool.vllm-spec-lint.per-file-ignores]\n"
            '"[" = ["VSL001"]\n'
        },
        "error: {root}/pyproject.toml: invalid value for 'per-file-ignores.[': not "
        "a glob: a '[' that is never closed",
    ),
    (
        [],
        {
            "pyproject.toml": "[tool.vllm-spec-lint.per-file-ignores]\n"
            '"[[:nope:]].py" = ["VSL001"]\n'
        },
        "error: {root}/pyproject.toml: invalid value for 'per-file-ignores."
        "[[:nope:]].py': not a glob: unknown character class '[:nope:]'",
    ),
]


@pytest.mark.fast
@pytest.mark.parametrize(
    "args, files, message", PATTERN_ERRORS, ids=[str(i) for i in range(6)]
)
def test_a_bad_pattern_of_ours_is_one_line_naming_where(args, files, message, tmp_path):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "a.py").write_text(BAD)
    out = run_cli("check", *args, ".", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == message.format(root=tmp_path) + "\n"


# -- the same values refused on the command line and in the settings ------------

VALUE_ERRORS = [
    (["--line-length", "0"], "argument --line-length: '0': expected an integer "
     "from 1 to 320"),
    (["--line-length", "-5"], "argument --line-length: '-5': expected an integer "
     "from 1 to 320"),
    (["--line-length", "99999"], "argument --line-length: '99999': expected an "
     "integer from 1 to 320"),
    (["--jobs", "-3"], "argument --jobs/-j: '-3': expected 1 or more"),
    (["-j", "0"], "argument --jobs/-j: '0': expected 1 or more"),
]  # fmt: skip


@pytest.mark.fast
@pytest.mark.parametrize("args, reason", VALUE_ERRORS)
def test_a_value_out_of_range_on_the_command_line_is_refused(args, reason, tmp_path):
    out = run_cli("check", *args, ".", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == f"error: {reason} (see 'vllm-spec-lint check --help')\n"


SETTING_ERRORS = [
    ("line-length = true", "'line-length': expected an integer from 1 to 320"),
    ("line-length = 88.5", "'line-length': expected an integer from 1 to 320"),
    ("line-length = 0", "'line-length': expected an integer from 1 to 320"),
    ('line-length = "88"', "'line-length': expected an integer from 1 to 320"),
    ('select = "VSL001"', "'select': expected a list of strings"),
    ('extend-ignore = "VSL001"', "'extend-ignore': expected a list of strings"),
    ('exclude = "docs"', "'exclude': expected a list of strings"),
    ("max-file-size = true", "'max-file-size': expected a size in MiB"),
]


@pytest.mark.fast
@pytest.mark.parametrize("setting, reason", SETTING_ERRORS)
def test_a_toml_value_of_the_wrong_type_is_refused(setting, reason, tmp_path):
    (tmp_path / "pyproject.toml").write_text(f"[tool.vllm-spec-lint]\n{setting}\n")
    out = run_cli("check", ".", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == (
        f"error: {tmp_path}/pyproject.toml: invalid value for {reason}\n"
    )


@pytest.mark.fast
def test_setup_cfg_values_are_text_and_read_as_such(tmp_path):
    """In an INI file every value is text: a number and a list are spelled so."""
    (tmp_path / "setup.cfg").write_text(
        "[vllm-spec-lint]\nline-length = 120\nselect = VSL001, VSL002\n"
        "max-file-size = 2\n"
    )
    (tmp_path / "a.py").write_text(BAD)
    out = run_cli("check", "--output-format", "concise", "-q", ".", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (1, "")
    assert out.stdout.startswith("a.py:2:40: VSL001 ")


# -- Ctrl-C ------------------------------------------------------------------------

LAYOUT = REPO / "examples" / "vllm" / "v1" / "core" / "layout.py"


def _interrupt_at(folder: Path, name: str, marker: Path, *args: str):
    """Run ``ARGS`` until a worker pauses analysing ``name``, then press
    Ctrl-C (SIGINT to the whole process group, as a terminal sends it). The
    completed process; its ``pid`` is the process group's id. The command
    starts with SIGINT's default action, as from a terminal, whatever this
    process does with it (mutmut's test processes ignore it, and an ignored
    signal stays ignored across exec)."""
    run = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", *args],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "VSL_TEST_PAUSE": f"analyse:{name}:{marker}"},
    )  # fmt: skip
    try:
        while not marker.exists():
            assert run.poll() is None, run.communicate()
            time.sleep(0.05)  # polling for an event; no result depends on it
        os.killpg(run.pid, signal.SIGINT)
        stdout, stderr = run.communicate(timeout=20)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    done = subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr)
    done.pid = run.pid
    return done


def _group_is_gone(group: int) -> bool:
    for _ in range(200):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)  # waiting for an event; no result depends on it
    return False


@pytest.fixture
def fix_tree(tmp_path) -> tuple[Path, bytes, bytes]:
    """Sixty copies of the examples' layout module, and the module before
    and after `fix --unsafe-fixes` (made in a folder of its own)."""
    folder = tmp_path / "tree"
    folder.mkdir()
    source = LAYOUT.read_bytes()
    for i in range(60):
        (folder / f"layout_{i:03d}.py").write_bytes(source)
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "layout.py").write_bytes(source)
    done = run_cli("fix", "--unsafe-fixes", "--no-cache", "-q", ".", cwd=reference)
    assert done.returncode == 0, done.stderr
    fixed = (reference / "layout.py").read_bytes()
    assert fixed != source
    return folder, source, fixed


def test_ctrl_c_stops_a_fix_at_once_leaving_every_file_whole(fix_tree, tmp_path):
    """Files are fixed by two workers and written in name order by the main
    process. While a worker is held on the 31st, Ctrl-C: the files written
    are a run from the first (at most the thirty before the held one, as
    many as the message says), every other file is as it was, and no
    temporary file or worker is left."""
    folder, original, fixed = fix_tree
    out = _interrupt_at(
        folder, "layout_030.py", tmp_path / "paused",
        "fix", "--unsafe-fixes", "--no-cache", "-j", "2", ".",
    )  # fmt: skip
    assert out.returncode == 130
    last = out.stderr.splitlines()[-1]
    said = re.fullmatch(
        r"error: interrupted(?:; (\d+) files? already fixed and written, no other "
        r"file changed)?",
        last,
    )
    assert said, last
    written = int(said.group(1) or 0)
    assert written <= 30
    assert "Traceback" not in out.stderr
    contents = [(folder / f"layout_{i:03d}.py").read_bytes() for i in range(60)]
    assert contents == [fixed] * written + [original] * (60 - written)
    assert sorted(p.name for p in folder.iterdir()) == [
        f"layout_{i:03d}.py" for i in range(60)
    ]  # no temporary file left behind
    assert _group_is_gone(out.pid), "a worker outlived the interrupted run"


def test_ctrl_c_stops_a_check_with_130(fix_tree, tmp_path):
    folder, original, _ = fix_tree
    out = _interrupt_at(
        folder, "layout_010.py", tmp_path / "paused", "check", "--no-cache", "-j", "2",
    )  # fmt: skip
    assert out.returncode == 130
    assert out.stderr == "error: interrupted\n"
    assert out.stdout == ""
    assert {p.read_bytes() for p in folder.glob("layout_*.py")} == {original}


def test_ctrl_c_in_one_process_stops_as_well(fix_tree, tmp_path):
    """With one job the file is analysed in the main process itself."""
    folder, original, fixed = fix_tree
    out = _interrupt_at(
        folder, "layout_005.py", tmp_path / "paused",
        "fix", "--unsafe-fixes", "--no-cache", "-j", "1", ".",
    )  # fmt: skip
    assert out.returncode == 130
    assert out.stderr == (
        "error: interrupted; 5 files already fixed and written, no other file changed\n"
    )
    contents = [(folder / f"layout_{i:03d}.py").read_bytes() for i in range(60)]
    assert contents == [fixed] * 5 + [original] * 55


# -- links that lead nowhere ---------------------------------------------------------


def _dangling(folder: Path) -> None:
    (folder / "dangling.py").symlink_to(folder / "gone.py")


def _looping(folder: Path) -> None:
    (folder / "loop.py").symlink_to(folder / "loop.py")


def _binary(folder: Path) -> None:
    (folder / "blob.py").write_bytes(BINARY)


# Bytes as a binary file holds them (a compiled module, an image), fixed here.
BINARY = bytes(range(256)) * 4

# What a folder holds, and the line it must give: reported at its path,
# never passed over as if checked.
UNREADABLE = [
    (_dangling, "dangling.py:1:1: VSL900 cannot read: No such file or directory"),
    (_looping, "loop.py:1:1: VSL900 cannot read: Too many levels of symbolic links"),
    (
        _binary,
        "blob.py:1:1: VSL900 cannot parse: source code string cannot contain null "
        "bytes",
    ),
]


@pytest.mark.fast
@pytest.mark.parametrize(
    "make, line", UNREADABLE, ids=["dangling-link", "link-loop", "binary"]
)
def test_a_file_in_a_folder_that_cannot_be_read_is_reported_at_its_path(
    tmp_path, make, line
):
    make(tmp_path)
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
    )
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == line
    assert "No Python files found" not in out.stderr
    assert "All checks passed!" not in out.stdout


@pytest.mark.fast
def test_a_dangling_link_leading_outside_is_passed_over_unless_followed(tmp_path):
    """A link out of the checked tree is not the tree's file (as before);
    with --follow-links it is, and reported."""
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "out.py").symlink_to(tmp_path / "elsewhere" / "x.py")
    quiet = run_cli("check", "--no-cache", ".", cwd=tmp_path / "tree")
    assert quiet.returncode == 0
    followed = run_cli(
        "check", "--output-format", "concise", "--no-cache", "--follow-links", ".",
        cwd=tmp_path / "tree",
    )  # fmt: skip
    assert followed.returncode == 1
    assert followed.stdout.splitlines()[0] == (
        "out.py:1:1: VSL900 cannot read: No such file or directory"
    )


# -- statistics, read-only files, stale entries ---------------------------------------


@pytest.mark.fast
def test_statistics_as_json_are_ruffs_objects(examples):
    import json

    out = run_cli(
        "check", "--statistics", "--output-format", "json", "--no-cache", ".",
        cwd=examples,
    )  # fmt: skip
    assert out.returncode == 1
    assert json.loads(out.stdout) == [
        {"code": "VSL001", "name": "isinstance-leaves-out-companion", "count": 2,
         "fixable": False, "fixable_count": 0},
        {"code": "VSL002", "name": "exact-type-leaves-out-companion", "count": 1,
         "fixable": False, "fixable_count": 0},
        {"code": "VSL003", "name": "match-class-leaves-out-companion", "count": 1,
         "fixable": False, "fixable_count": 0},
        {"code": "VSL004", "name": "constant-leaves-out-companion", "count": 1,
         "fixable": False, "fixable_count": 0},
    ]  # fmt: skip


@pytest.mark.fast
def test_statistics_as_json_count_the_fixes_unsafe_fixes_would_make(examples):
    import json

    out = run_cli(
        "check", "--statistics", "--output-format", "json", "--unsafe-fixes",
        "--no-cache", "--select", "VSL001", ".", cwd=examples,
    )  # fmt: skip
    assert json.loads(out.stdout) == [
        {"code": "VSL001", "name": "isinstance-leaves-out-companion", "count": 2,
         "fixable": True, "fixable_count": 2},
    ]  # fmt: skip


@pytest.mark.fast
def test_fix_on_a_read_only_file_does_not_offer_fix_again(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "a.py").chmod(0o444)
    out = run_cli(
        "fix", "--unsafe-fixes", "--output-format", "concise", "--no-cache", ".",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr == "error: a.py: not written: the file is read-only\n"
    assert out.stdout == (
        "a.py:2:40: VSL001 isinstance() check against MLAAttentionSpec leaves out "
        "SlidingWindowMLASpec\n"
        "Found 1 error.\n"
    )
    assert (tmp_path / "a.py").read_text() == BAD


@pytest.mark.fast
def test_show_stale_names_only_entries_under_the_checked_path(examples):
    """A baseline of the whole tree, then a check of one folder in which
    nothing changed: no entry is stale; fixing the worker makes its entry,
    and only its entry, stale."""
    written = run_cli("check", "--write-baseline", "baseline.json", ".", cwd=examples)
    assert written.returncode == 0
    nixl = "vllm/distributed/kv_transfer/kv_connector/v1/nixl"
    args = ("check", "--baseline", "baseline.json", "--show-stale", "--no-cache")
    out = run_cli(*args, nixl, cwd=examples)
    assert (out.returncode, out.stderr) == (0, "")
    run_cli("codemod", "nixl-mla-region", cwd=examples)
    for where in (nixl, "."):
        out = run_cli(*args, where, cwd=examples)
        assert out.returncode == 0
        assert out.stderr == (
            f"stale: {nixl}/base_worker.py: VSL001 "
            "'is_mla_region = isinstance(layer_spec, MLAAttentionSpec)'\n"
        )
    out = run_cli(*args, "vllm/v1", cwd=examples)
    assert (out.returncode, out.stderr) == (0, "")


# -- flake8 and check agree ----------------------------------------------------------

NOT_UTF8 = (
    b"from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    b"x = '\xff'\n"
    b"ok = isinstance(s, MLAAttentionSpec)\n"
)


def test_flake8_and_check_both_report_a_file_that_is_not_utf8(tmp_path):
    from tests.conftest import run_flake8

    (tmp_path / "bytes.py").write_bytes(NOT_UTF8)
    reason = (
        "VSL900 cannot decode: 'utf-8' codec can't decode byte 0xff in position "
        "61: invalid start byte"
    )
    out = run_flake8("--select", "VSL", "bytes.py", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (1, f"bytes.py:1:1: {reason}\n")
    out = run_cli("check", "--output-format", "concise", "-q", "bytes.py", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (1, f"bytes.py:1:1: {reason}\n")


def test_a_declared_latin1_file_is_read_by_both_as_declared(tmp_path):
    from tests.conftest import run_flake8

    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + NOT_UTF8)
    out = run_flake8("--select", "VSL", "latin.py", cwd=tmp_path)
    assert out.stdout.split(" ", 2)[:2] == ["latin.py:4:20:", "VSL001"]
    out = run_cli("check", "--output-format", "concise", "-q", "latin.py", cwd=tmp_path)
    assert out.stdout.split(" ", 2)[:2] == ["latin.py:4:20:", "VSL001"]


def test_flake8_with_a_vllm_source_that_is_not_there_exits_2(tmp_path):
    from tests.conftest import run_flake8

    (tmp_path / "a.py").write_text(BAD)
    missing = tmp_path / "nowhere"
    out = run_flake8("--select", "VSL", "--vsl-vllm-source", str(missing), "a.py",
                     cwd=tmp_path)  # fmt: skip
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        f"vllm-spec-lint: {missing}: no vllm/v1/kv_cache_interface.py there "
        "(expected a vLLM checkout or a site-packages folder)\n"
    )


# -- --explain-suppressions accounts for every site --strict adds ------------------

SHARED_WINDOW = """\
from vllm.v1.kv_cache_interface import SlidingWindowSpec


def window_of(spec):
    if isinstance(spec, SlidingWindowSpec):
        return spec.sliding_window
    return 0
"""


@pytest.mark.fast
def test_a_shared_vsl007_site_is_explained_in_a_file_naming_only_the_parent(tmp_path):
    (tmp_path / "window.py").write_text(SHARED_WINDOW)
    args = ("check", "--output-format", "concise", "--no-cache", "-q", ".")
    strict = run_cli(*args, "--strict", cwd=tmp_path)
    assert strict.stdout == (
        "window.py:5:25: VSL007 isinstance() check against SlidingWindowSpec also "
        "admits SlidingWindowMLASpec, which has MLAAttentionSpec's layout [strict; "
        "shared: the test does not reject the class; SlidingWindowMLASpec shares "
        "what it is about here]\n"
    )
    explained = run_cli(*args, "--explain-suppressions", cwd=tmp_path)
    assert explained.returncode == 0
    assert explained.stdout == (
        "window.py:5:25: VSL007 not reported: shared: the test does not reject "
        "the class; SlidingWindowMLASpec shares what it is about here\n"
    )


def _sites(text: str) -> set[str]:
    return {" ".join(line.split(" ", 2)[:2]) for line in text.splitlines()}


@pytest.mark.release
def test_every_site_strict_adds_on_a_release_is_explained():
    from tests.conftest import fetch_release

    tree = fetch_release("vllm", "0.34.0")
    args = ("check", "--output-format", "concise", "--no-cache", "-q", ".")
    default = _sites(run_cli(*args, cwd=tree).stdout)
    strict = _sites(run_cli(*args, "--strict", cwd=tree).stdout)
    explained_out = run_cli(*args, "--explain-suppressions", cwd=tree).stdout
    explained = _sites(
        "\n".join(line for line in explained_out.splitlines() if "not reported" in line)
    )
    assert len(strict - default) >= 38
    assert explained == strict - default


# -- every pin in the docs resolves here, to a commit that installs as today ---------

PIN = re.compile(r"(?:rev: |@ git\+https://\S+@)([0-9a-f]{40})\b")
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout


def test_every_pin_in_the_docs_is_a_commit_here_with_todays_hooks_and_dependencies():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone holds no history to resolve pins in")
    pins = {
        (doc.relative_to(REPO).as_posix(), pin)
        for doc in DOCS
        for pin in PIN.findall(doc.read_text())
    }
    assert {doc for doc, _ in pins} >= {"README.md", "docs/usage.md"}
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    dependencies = _dependencies((REPO / "pyproject.toml").read_text())
    for doc, pin in sorted(pins):
        assert _git("cat-file", "-t", pin).strip() == "commit", (doc, pin)
        assert _git("show", f"{pin}:.pre-commit-hooks.yaml") == hooks, (doc, pin)
        at_pin = _dependencies(_git("show", f"{pin}:pyproject.toml"))
        assert at_pin == dependencies, (doc, pin)


def _dependencies(pyproject: str) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    return tomllib.loads(pyproject)["project"]["dependencies"]


def test_no_doc_tells_to_install_a_release_that_is_not_published():
    for doc in DOCS:
        text = doc.read_text()
        assert "pip install vllm-spec-lint" not in text, doc
        assert not re.search(r"rev: v\d", text), doc


# -- what is no Python text at all is VSL900, whatever it names ----------------------


@pytest.mark.fast
def test_bytes_on_stdin_that_are_no_text_are_vsl900(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "vllm_spec_lint", "check", "--output-format",
         "concise", "-q", "--stdin-filename", "piped.py"],
        input=bytes(range(128, 256)), capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stdout.decode() == (
        "piped.py:1:1: VSL900 cannot decode: 'utf-8' codec can't decode byte 0x80 "
        "in position 0: invalid start byte\n"
    )


@pytest.mark.fast
def test_a_text_file_with_another_encodings_bytes_is_vsl900_without_an_anchor(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"name = 'caf\xe9'\n")
    (tmp_path / "declared.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    )
    out = run_cli("check", "--output-format", "concise", "--no-cache", "-q", ".",
                  cwd=tmp_path)  # fmt: skip
    assert out.stdout == (
        "latin.py:1:1: VSL900 cannot decode: 'utf-8' codec can't decode byte 0xe9 "
        "in position 11: invalid continuation byte\n"
    )


# -- libcst's runner, as docs/fixing.md says to call it -------------------------------


def test_the_libcst_runner_lines_in_the_docs_work_in_a_tree_without_its_settings(
    examples,
):
    """Each line of the docs' block, as written (PATH the file to fix), in a
    copy of the examples that has no .libcst.codemod.yaml."""
    text = (REPO / "docs" / "fixing.md").read_text()
    after = text[text.index("libcst's own runner") :]
    block = re.search(r"```sh\n(.*?)```", after, re.S).group(1)
    lines = block.splitlines()
    assert [line.split()[-2].rpartition(".")[2] for line in lines] == [
        "AddSlidingWindowMLA",
        "NixlMlaRegion",
    ]
    assert not (examples / ".libcst.codemod.yaml").exists()
    worker = (
        examples / "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"
    )
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
    for line in lines:
        before = worker.read_text()
        out = subprocess.run(
            line.replace(" PATH", f" {worker}"), shell=True, cwd=examples,
            capture_output=True, text=True, env={**os.environ, "PATH": path},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert "Could not find" not in out.stderr
        assert " - Transformed 1 files successfully." in out.stderr
        assert worker.read_text() != before
        shutil.copy(REPO / "examples" / worker.relative_to(examples), worker)


# -- docs/precision.md's counts are today's ---------------------------------------------


@pytest.mark.release
def test_the_precision_pages_counts_are_what_check_finds_on_each_release():
    from scripts import precision_counts
    from tests.conftest import fetch_release

    rows = {
        version: precision_counts.counts(fetch_release("vllm", version))
        for version in precision_counts.VERSIONS
    }
    page = precision_counts.page_table(precision_counts.PAGE.read_text())
    assert page == precision_counts.table(rows), (
        "docs/precision.md is stale: run scripts/precision_counts.py"
    )


# -- what check shows of a fix is what fix writes --------------------------------------

LONG_LINE = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec


def register(layer_specs):
    for layer_spec in layer_specs:
        is_mla_region_for_this_layer = isinstance(layer_spec, MLAAttentionSpec)
        print(is_mla_region_for_this_layer)
"""
LONG_LINE_FIXED = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec


def register(layer_specs):
    for layer_spec in layer_specs:
        is_mla_region_for_this_layer = isinstance(
            layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)
        )
        print(is_mla_region_for_this_layer)
"""


def _applied(text: str, edits: list[dict]) -> str:
    """JSON edits applied as a client applies them: by (row, column)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position):
        return starts[position["row"] - 1] + position["column"] - 1

    for edit in sorted(edits, key=lambda e: offset(e["location"]), reverse=True):
        start, end = offset(edit["location"]), offset(edit["end_location"])
        text = text[:start] + edit["content"] + text[end:]
    return text


def test_fix_writes_the_wrapped_statement(tmp_path):
    (tmp_path / "w.py").write_text(LONG_LINE)
    run_cli("fix", "--unsafe-fixes", "--no-cache", "-q", "w.py", cwd=tmp_path)
    assert (tmp_path / "w.py").read_text() == LONG_LINE_FIXED


def test_json_edits_of_a_check_give_what_fix_writes(tmp_path):
    import json

    (tmp_path / "w.py").write_text(LONG_LINE)
    out = run_cli(
        "check", "--output-format", "json", "--no-cache", "w.py", cwd=tmp_path
    )
    [finding] = json.loads(out.stdout)
    assert _applied(LONG_LINE, finding["fix"]["edits"]) == LONG_LINE_FIXED


def test_the_full_reports_preview_shows_the_wrapped_lines(tmp_path):
    (tmp_path / "w.py").write_text(LONG_LINE)
    out = run_cli("check", "--no-cache", "w.py", cwd=tmp_path)
    preview = out.stdout[out.stdout.index("help: ") :].split("note: ")[0]
    assert preview == (
        "help: Add SlidingWindowMLASpec\n"
        "  |\n"
        "  - from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "1 + from vllm.v1.kv_cache_interface import MLAAttentionSpec, "
        "SlidingWindowMLASpec\n"
        "2 |\n"
        "  ...\n"
        "5 |     for layer_spec in layer_specs:\n"
        "  -         is_mla_region_for_this_layer = isinstance(layer_spec, "
        "MLAAttentionSpec)\n"
        "6 +         is_mla_region_for_this_layer = isinstance(\n"
        "7 +             layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "8 +         )\n"
        "9 |         print(is_mla_region_for_this_layer)\n"
        "  |\n"
    )


def test_two_findings_in_a_file_each_preview_their_own_statement(tmp_path):
    import json

    text = LONG_LINE + (
        "\n\ndef other(spec):\n    return isinstance(spec, MLAAttentionSpec)\n"
    )
    (tmp_path / "w.py").write_text(text)
    out = run_cli(
        "check", "--output-format", "json", "--no-cache", "w.py", cwd=tmp_path
    )
    first, second = json.loads(out.stdout)
    assert [e["location"]["row"] for e in first["fix"]["edits"]] == [1, 6]
    assert [e["location"]["row"] for e in second["fix"]["edits"]] == [1, 11]
    # The short statement's edit is as narrow as the rule's own.
    assert second["fix"]["edits"][1] == {
        "content": "(MLAAttentionSpec, SlidingWindowMLASpec)",
        "location": {"row": 11, "column": 29},
        "end_location": {"row": 11, "column": 45},
    }
    # Both applied (the shared import once) give what fix writes.
    edits = first["fix"]["edits"] + second["fix"]["edits"][1:]
    assert _applied(text, edits) == LONG_LINE_FIXED + (
        "\n\ndef other(spec):\n"
        "    return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )


@pytest.mark.fast
def test_a_link_into_a_sibling_folder_whose_name_extends_the_roots_is_outside(tmp_path):
    """`proj_old` starts with `proj` but is not inside it: a link from
    `proj` into it leads outside the checked tree and is passed over."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj_old").mkdir()
    (tmp_path / "proj_old" / "old.py").write_text(BAD)
    (tmp_path / "proj" / "link.py").symlink_to(tmp_path / "proj_old" / "old.py")
    (tmp_path / "proj" / "own.py").write_text(BAD)
    out = run_cli("check", "--show-files", ".", cwd=tmp_path / "proj")
    assert out.stdout.splitlines() == ["own.py"]


def test_a_warm_check_shows_its_laid_out_fixes_without_running_the_formatter(
    tmp_path, monkeypatch, capsys
):
    """The laid-out fixes are cached by the file's text, its fixes, the
    formatter and the settings files above it: a second check calls no
    formatter; a changed settings file, or --no-cache, does."""
    from tests.conftest import fake_black
    from vllm_spec_lint.faces import cli

    project = tmp_path / "project"
    project.mkdir()
    (project / "w.py").write_text(LONG_LINE)
    calls = tmp_path / "calls"
    fake_black(monkeypatch, tmp_path, f"echo call >> {calls}\ncat\n")
    monkeypatch.chdir(project)

    def check(*extra: str) -> int:
        cli.main(["check", "--fix-formatter", "black", *extra, "w.py"])
        capsys.readouterr()
        return len(calls.read_text().splitlines()) if calls.exists() else 0

    assert check() == 1
    assert check() == 1
    (project / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert check() == 2
    assert check() == 2
    assert check("--no-cache") == 3
