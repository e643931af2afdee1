"""Hostile inputs, faults while fixing, and never running scanned code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from vllm_spec_lint.edges.files import ReportNotWritten, write_atomically, write_report

BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)
FIXED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
    "is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "good.py").write_text(BAD)
    return tmp_path


def _check(tree, *paths, extra=()):
    out = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--format",
        "json",
        *extra,
        *(paths or (".",)),
        cwd=tree,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _errors(findings):
    return {
        Path(f["filename"]).name: f["message"]
        for f in findings
        if f["code"] == "VSL900"
    }


# -- hostile inputs --------------------------------------------------------------


@pytest.mark.parametrize(
    "name, data, error",
    [
        ("empty.py", b"", None),
        ("bom.py", b"\xef\xbb\xbf", None),
        ("bom_anchor.py", b"\xef\xbb\xbf# MLAAttentionSpec\n", None),
        ("nul.py", b"MLAAttentionSpec = 1\n\x00\n", "cannot parse"),
        ("utf8.py", b"# MLAAttentionSpec \xff\xfe\n", "cannot decode"),
        ("cookie.py", b"# coding: no-such-codec\nMLAAttentionSpec\n", "cannot decode"),
        (
            "deep.py",
            b"MLAAttentionSpec = " + b"(" * 50_000 + b"1" + b")" * 50_000 + b"\n",
            "cannot parse",
        ),
        (
            "deep_list.py",
            b"MLAAttentionSpec = " + b"[" * 50_000 + b"]" * 50_000 + b"\n",
            "cannot parse",
        ),
    ],
)
def test_hostile_file_gets_a_clear_vsl900_and_the_run_goes_on(tree, name, data, error):
    (tree / name).write_bytes(data)
    findings = _check(tree)
    assert [f["code"] for f in findings if f["filename"].endswith("good.py")] == [
        "VSL001"
    ]
    if error is None:
        assert name not in _errors(findings)
    else:
        assert _errors(findings)[name].startswith(error)


@pytest.mark.parametrize(
    "text, position, message",
    [
        (
            "MLAAttentionSpec = " + "-" * 100_000 + "1\n",
            (1, 1),
            "cannot parse: nested too deeply",
        ),
        pytest.param(
            # CPython's parser recurses per term of a long sum: RecursionError.
            "MLAAttentionSpec = " + "+".join(["1"] * 200_000) + "\n",
            (1, 1),
            "cannot parse: nested too deeply",
            marks=pytest.mark.skipif(
                sys.version_info >= (3, 13),
                reason="CPython 3.13.0's parser crashes (SIGSEGV) on this sum",
            ),
        ),
        (
            "MLAAttentionSpec = 1\n\x00\n",
            (1, 1),
            "cannot parse: source code string cannot contain null bytes",
        ),
        (
            "MLAAttentionSpec = (1 +\n",
            (1, 20),
            "cannot parse: '(' was never closed",
        ),
        (
            # An editor's buffer can hold one; Python's compiler refuses it.
            "x = '\ud800'\nMLAAttentionSpec\n",
            (1, 1),
            "cannot parse: 'utf-8' codec can't encode character '\\ud800' in "
            "position 5: surrogates not allowed",
        ),
    ],
    ids=[
        "nested-too-deeply",
        "a-sum-too-long",
        "null-byte",
        "syntax-error",
        "lone-surrogate",
    ],
)
def test_what_cannot_be_parsed_is_told_where_and_why(text, position, message):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    [finding] = analyze_source(text, "hostile.py", Config()).findings
    assert (finding.code, finding.path, finding.location, finding.message) == (
        "VSL900",
        "hostile.py",
        position,
        message,
    )


# A helper libcst never sees (the slice leaves it out), so rows after it
# differ between the file and what libcst parses.
HELPER_FIRST = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "\n"
    "\n"
    "def helper():\n"
    "    return 1\n"
    "\n"
    "\n"
)
CHECK = "ok = isinstance(s, MLAAttentionSpec) and "


def _only_finding(text):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    [finding] = analyze_source(text, "deep.py", Config()).findings
    return finding.code, finding.path, finding.location, finding.message


def test_what_libcst_cannot_parse_after_python_did_is_told_where_and_why():
    # CPython joins 5,000 adjacent strings; libcst's parser refuses them.
    text = HELPER_FIRST + CHECK + " ".join(["'a'"] * 5000) + "\n"
    assert _only_finding(text) == (
        "VSL900",
        "deep.py",
        (8, 1),  # the file's row, not the slice's (4)
        'cannot parse: parser error: expected one of STRING, f", t"',
    )


@pytest.mark.parametrize(
    "expression",
    [
        # CPython keeps an `and` chain flat; libcst nests it, and past a few
        # thousand levels its parser crashes the process.
        " and ".join(["x"] * 997),
        "-" * 998 + "1",
    ],
    ids=["and-chain", "unary-minus"],
)
def test_statements_nested_deeper_than_libcst_takes_are_refused_at_their_row(
    expression,
):
    assert _only_finding(HELPER_FIRST + CHECK + expression + "\n") == (
        "VSL900",
        "deep.py",
        (8, 1),
        "cannot parse: nested too deeply",
    )


def test_a_statement_of_fewer_characters_than_levels_is_measured():
    # 999 characters, 1,001 levels: the statement, 998 minus signs, the
    # name and its context.
    deep = "-" * 998 + "x"
    text = HELPER_FIRST + "ok = isinstance(s, MLAAttentionSpec)\n" + deep
    assert _only_finding(text)[2:] == ((9, 1), "cannot parse: nested too deeply")


def test_a_nested_statement_on_the_first_line_is_refused():
    text = CHECK + "-" * 1200 + "1\nx = 1\n"
    assert _only_finding(text)[2:] == ((1, 1), "cannot parse: nested too deeply")


def test_a_nested_statement_spread_over_many_short_lines_is_refused():
    # Measured by all its lines, not by its first.
    chain = "\n    and ".join(["x"] * 998)
    text = HELPER_FIRST + CHECK + "(\n    " + chain + "\n)\n"
    assert _only_finding(text)[2:] == ((8, 1), "cannot parse: nested too deeply")


def test_a_nested_statement_on_the_last_line_without_a_line_break_is_refused():
    text = HELPER_FIRST + CHECK + "-" * 1200 + "1"
    assert _only_finding(text)[2:] == ((8, 1), "cannot parse: nested too deeply")


@pytest.mark.parametrize(
    "expression",
    # One level fewer than above: not refused.
    [" and ".join(["x"] * 996), "-" * 997 + "1"],
    ids=["and-chain", "unary-minus"],
)
def test_nesting_libcst_takes_but_the_rules_cannot_walk_is_told(expression):
    # libcst parses it; positions and the rules' walks recurse once a level.
    assert _only_finding(HELPER_FIRST + CHECK + expression + "\n") == (
        "VSL900",
        "deep.py",
        (1, 1),
        "cannot analyse: nested too deeply",
    )


def test_a_nested_definition_the_slice_leaves_out_is_not_measured():
    text = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def helper():\n"
        "    return " + "-" * 1200 + "1\n\n\n"
        "ok = isinstance(s, MLAAttentionSpec)\n"
    )
    assert _only_finding(text)[0::2] == ("VSL001", (8, 20))


def test_a_chain_too_long_for_libcst_is_reported_by_the_command_line(tree):
    # Before the nesting guard this run ended in a segmentation fault.
    (tree / "chain.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        + CHECK
        + " and ".join(["x"] * 20_000)
        + "\n"
    )
    findings = _check(tree)
    assert _errors(findings) == {"chain.py": "cannot parse: nested too deeply"}
    assert "VSL001" in {f["code"] for f in findings}  # good.py, as ever


def test_very_deep_expression_in_a_worker(tree):
    for i in range(3):
        (tree / f"deep{i}.py").write_text("MLAAttentionSpec = " + "-" * 100_000 + "1\n")
    findings = _check(tree, extra=("-j", "2"))
    assert len(_errors(findings)) == 3
    assert "VSL001" in {f["code"] for f in findings}


def test_fifty_megabyte_file(tree):
    filler = "def helper_{0}(x):\n    return x + {0}\n\n\n"
    body = "".join(filler.format(i) for i in range(1_100_000))
    (tree / "huge.py").write_text(body + BAD)
    (tree / "huge_plain.py").write_text(body)
    assert (tree / "huge.py").stat().st_size > 50_000_000
    findings = _check(tree)
    assert _errors(findings) == {
        "huge.py": "not analysed: 48.2 MiB is over the 10 MiB limit (max-file-size)"
    }
    assert "VSL001" in {f["code"] for f in findings}  # good.py, as ever


def test_a_raised_size_limit_analyses_a_large_file(tree):
    filler = "def helper_{0}(x):\n    return x + {0}\n\n\n"
    (tree / "big.py").write_text("".join(filler.format(i) for i in range(50_000)) + BAD)
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nmax-file-size = 1\n")
    assert "over the 1 MiB limit" in _errors(_check(tree))["big.py"]
    (tree / "pyproject.toml").write_text("[tool.vllm-spec-lint]\nmax-file-size = 5\n")
    findings = _check(tree, "big.py")
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("VSL001", 200003)]


def test_file_deleted_between_discovery_and_reading(tree):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.runner import run

    vanishing = tree / "vanishing.py"
    vanishing.write_text(BAD)
    import vllm_spec_lint.edges.runner as runner

    real = runner.iter_python_files

    def discover_then_delete(*args, **kwargs):
        files = list(real(*args, **kwargs))
        vanishing.unlink()
        return files

    runner.iter_python_files = discover_then_delete
    try:
        result = run([tree], Config(root=tree), use_cache=False, jobs=1)
    finally:
        runner.iter_python_files = real
    by_name = {Path(r.path).name: r for r in result.results}
    assert (
        by_name["vanishing.py"].findings[0].message
        == "cannot read: No such file or directory"
    )
    assert by_name["good.py"].findings[0].code == "VSL001"


def test_pipes_devices_and_link_loops_never_block(tree):
    os.mkfifo(tree / "pipe.py")
    os.symlink("/dev/zero", tree / "device.py")
    os.symlink(tree / "loop_b.py", tree / "loop_a.py")
    os.symlink(tree / "loop_a.py", tree / "loop_b.py")
    (tree / "folder").mkdir()
    os.symlink(tree, tree / "folder" / "up")  # a folder loop
    findings = _check(tree)  # would hang on the pipe or device if opened
    # A pipe or device in a folder is passed over; a file-name link that
    # loops is reported at its path, as ruff's E902 does.
    assert _errors(findings) == {
        "loop_a.py": "cannot read: Too many levels of symbolic links",
        "loop_b.py": "cannot read: Too many levels of symbolic links",
    }
    assert {Path(f["filename"]).name for f in findings} == {
        "good.py",
        "loop_a.py",
        "loop_b.py",
    }
    named = _check(tree, "pipe.py", "device.py", "good.py")
    assert _errors(named) == {
        "pipe.py": "cannot read: not a regular file: pipe.py",
        "device.py": "cannot read: not a regular file: device.py",
    }


def test_links_outside_the_roots_are_not_followed_unless_asked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.py").write_text(BAD)
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside / "elsewhere.py", root / "link.py")
    os.symlink(outside, root / "linked_folder")
    assert _check(root) == []
    followed = _check(root, extra=("--follow-links",))
    assert {Path(f["filename"]).name for f in followed} == {"link.py", "elsewhere.py"}


def test_a_link_to_a_file_inside_the_roots_is_checked(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text(BAD)
    os.symlink(tmp_path / "sub" / "b.py", tmp_path / "link.py")
    names = sorted(Path(f["filename"]).relative_to(tmp_path) for f in _check(tmp_path))
    assert names == [Path("link.py"), Path("sub/b.py")]


@pytest.mark.parametrize(
    "name", ["with space.py", "ünïcödé.py", "new\nline.py", 'quote"s.py', "50%,a:b.py"]
)
def test_odd_file_names_in_every_format(tree, name):
    (tree / name).write_text(BAD)
    findings = _check(tree)
    assert name in {Path(f["filename"]).name for f in findings}
    github = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--format",
        "github",
        ".",
        cwd=tree,
    ).stdout
    assert len(github.splitlines()) == 2  # one line per finding, whatever the name
    sarif = json.loads(
        run_cli(
            "check",
            "--output-format",
            "concise",
            "--no-cache",
            "--format",
            "sarif",
            ".",
            cwd=tree,
        ).stdout
    )
    assert len(sarif["runs"][0]["results"]) == 2


# -- nothing lost under faults -----------------------------------------------------


def _fix_tree(tmp_path: Path, files: int) -> tuple[Path, bytes, bytes]:
    folder = tmp_path / "tree"
    folder.mkdir()
    source = (REPO / "examples/vllm/v1/core/layout.py").read_bytes()
    for i in range(files):
        (folder / f"layout_{i:03d}.py").write_bytes(source)
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "layout.py").write_bytes(source)
    assert (
        run_cli(
            "fix",
            "--output-format",
            "concise",
            "--unsafe-fixes",
            "--no-cache",
            ".",
            cwd=reference,
        ).returncode
        == 0
    )  # every fix made, VSL002's too
    return folder, source, (reference / "layout.py").read_bytes()


def _assert_whole(folder: Path, original: bytes, fixed: bytes) -> None:
    for path in folder.glob("layout_*.py"):
        assert path.read_bytes() in (original, fixed), path


def test_two_fix_runs_at_once(tmp_path):
    folder, original, fixed = _fix_tree(tmp_path, 40)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "vllm_spec_lint", "fix", "--unsafe-fixes", "--no-cache", "."],
            cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]  # fmt: skip
    for run in runs:
        run.wait(timeout=600)
    _assert_whole(folder, original, fixed)
    assert {p.read_bytes() for p in folder.glob("layout_*.py")} == {fixed}


# (phase, file): where the run is killed. Files are fixed in name order by
# two workers, so the others are anywhere in their own writes then.
KILL_POINTS = [
    ("read", "layout_000.py"),
    ("temp-written", "layout_000.py"),
    ("replaced", "layout_000.py"),
    ("temp-written", "layout_031.py"),
    ("read", "layout_059.py"),
    ("replaced", "layout_059.py"),
]


def _kill_at(folder: Path, phase: str, name: str, marker: Path) -> None:
    """Run ``fix`` until it pauses writing ``name`` at ``phase``, then SIGKILL
    it (and its workers)."""
    run = subprocess.Popen(
        [sys.executable, "-m", "vllm_spec_lint", "fix", "--unsafe-fixes", "--no-cache", "-j", "2", "."],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "VSL_TEST_PAUSE": f"{phase}:{name}:{marker}"},
    )  # fmt: skip
    try:
        while not marker.exists():
            assert run.poll() is None, "the run ended before reaching its pause"
            time.sleep(0.05)  # polling for an event; no result depends on it
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    marker.unlink()


@pytest.mark.parametrize("phase, name", KILL_POINTS)
def test_fix_killed_while_writing(tmp_path, phase, name):
    folder, original, fixed = _fix_tree(tmp_path, 60)
    _kill_at(folder, phase, name, tmp_path / "paused")
    _assert_whole(folder, original, fixed)
    expected = fixed if phase == "replaced" else original
    assert (folder / name).read_bytes() == expected
    # What a kill can leave besides the files: only our own temporary files.
    left = {p.name for p in folder.iterdir()} - {
        f"layout_{i:03d}.py" for i in range(60)
    }
    assert all(n.startswith(".layout_") and n.endswith(".vsl-tmp") for n in left), left
    if phase == "temp-written":
        assert any(n.startswith(f".{name}.") for n in left)
    # A later run finishes the job.
    run_cli(
        "fix",
        "--output-format",
        "concise",
        "--unsafe-fixes",
        "--no-cache",
        ".",
        cwd=folder,
    )
    assert {p.read_bytes() for p in folder.glob("layout_*.py")} == {fixed}


def test_full_disk_while_writing_leaves_the_original(tmp_path):
    path = tmp_path / "w.py"
    path.write_text(BAD)
    code = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from vllm_spec_lint.edges.files import write_atomically\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))\n"
        "p = Path(sys.argv[1])\n"
        "try:\n"
        "    write_atomically(p, p.read_bytes(), sys.argv[2].encode())\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), FIXED], capture_output=True, text=True
    )
    assert out.stdout.startswith("refused"), out.stderr
    assert path.read_text() == BAD
    assert os.listdir(tmp_path) == ["w.py"]


def test_write_atomically_keeps_links_pointing_at_the_fixed_file(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(BAD)
    link = tmp_path / "link.py"
    os.symlink(real, link)
    write_atomically(link, BAD.encode(), FIXED.encode())
    assert link.is_symlink() and real.read_text() == FIXED


@pytest.fixture
def umask_027():
    before = os.umask(0o027)
    yield
    os.umask(before)


def test_a_report_is_written_beside_itself_then_moved_in_place(
    tmp_path, replaced_files, umask_027
):
    """The temporary file is in the report's folder (a move across file
    systems would not be one step), named after it, and the report gets the
    permissions the umask gives a new file."""
    moves = replaced_files
    report = tmp_path / "out" / "report.txt"
    write_report(report, "VSL001 \u00e9\n")
    [(temporary, target)] = moves
    assert target == report and temporary.parent == report.parent
    assert temporary.name.startswith(".report.txt.")
    assert temporary.name.endswith(".vsl-tmp")
    assert report.read_bytes() == "VSL001 \u00e9\n".encode()
    assert report.stat().st_mode & 0o777 == 0o640
    assert os.listdir(report.parent) == ["report.txt"]


def test_a_report_is_utf_8_whatever_the_locale_says(tmp_path):
    """Under a C locale (an ASCII one, as in many containers) too."""
    import locale

    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        write_report(tmp_path / "report.txt", "VSL001 \u00e9\n")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert (tmp_path / "report.txt").read_bytes() == b"VSL001 \xc3\xa9\n"


def test_a_report_that_fails_half_way_leaves_the_old_one(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_report(report, "new \ud800\n")
    assert report.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_a_report_that_cannot_be_written_says_why_in_words(tmp_path):
    (tmp_path / "README.md").write_text("")
    with pytest.raises(ReportNotWritten) as raised:
        write_report(tmp_path / "README.md" / "report.txt", "x")
    assert str(raised.value) == (
        f"{tmp_path / 'README.md' / 'report.txt'}: cannot write the report: File exists"
    )


# -- never running scanned code ------------------------------------------------------


def test_scanned_code_is_never_imported_or_run(tmp_path):
    marker = tmp_path / "marker"
    package = tmp_path / "vllm"
    package.mkdir()
    payload = f"open({str(marker)!r}, 'w').write('ran')\n"
    (package / "__init__.py").write_text(payload)
    (package / "evil.py").write_text(payload + BAD)
    (tmp_path / "conftest.py").write_text(payload)
    (tmp_path / "setup.py").write_text(payload)
    for command in (
        ("check",),
        ("fix", "--unsafe-fixes"),
        ("codemod", "add-sliding-window-mla"),
        ("families",),
    ):
        run_cli(*command, ".", cwd=tmp_path)
    subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "VSL", "."],
        cwd=tmp_path,
        capture_output=True,
    )
    assert not marker.exists()


def test_configuration_is_data_only(tmp_path):
    (tmp_path / "setup.cfg").write_text(
        "[vllm-spec-lint]\nexclude = %(here)s/x\n    __import__('os')\n"
    )
    (tmp_path / "good.py").write_text(BAD)
    out = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert out.returncode == 1 and "good.py:3:40: VSL001" in out.stdout


def _die(path, source):
    os._exit(1)  # as a worker killed by the kernel's out-of-memory killer


def test_a_worker_that_dies_is_reported_on_each_file_it_left_and_the_run_ends():
    from vllm_spec_lint.core.findings import parse_error
    from vllm_spec_lint.edges.runner import FileResult
    from vllm_spec_lint.edges.workers import Analyses

    analyses = Analyses(2)
    analyses.task = _die
    analyses.add(Path("a.py"), b"x = 1\n")
    analyses.add(Path("b.py"), b"x = 1\n")
    died = "the analysis process died on this file"
    assert list(analyses.results()) == [
        FileResult("a.py", [parse_error("a.py", died)]),
        FileResult("b.py", [parse_error("b.py", died)]),
    ]
