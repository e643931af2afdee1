"""scripts/realistic_mutants.py: the mutants it plants, the tests it picks
for each from mutmut's map, the verdicts it keeps and the table it
prints."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import realistic_mutants as rm  # noqa: E402

MODULE = """\
import os

KINDS = ("a", "b")


def outer(x, y):
    def inner():
        return x and y

    return inner() or all(x)


class Box:
    @staticmethod
    def within(path, root):
        if not path:
            return False
        return path.startswith(root + os.sep) and len(path) <= 9
"""


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "pkg" / "mod.py"
    path.parent.mkdir()
    path.write_text(MODULE)
    return path


def _made(path):
    return rm.mutants(path, set(rm.SHAPES), Path("pkg/mod.py"))


def test_every_shape_is_planted_with_its_function_and_a_key_of_its_code(module):
    made = _made(module)
    assert [(m.line, m.function, m.key) for m in made] == [
        (3, None, 'drop-element: ("a", "b") -> ("b",)'),
        (3, None, 'drop-element: ("a", "b") -> ("a",)'),
        (8, "x_outer", "drop-operand: x and y -> x"),
        (8, "x_outer", "drop-operand: x and y -> y"),
        (10, "x_outer", "drop-operand: inner() or all(x) -> inner()"),
        (10, "x_outer", "drop-operand: inner() or all(x) -> all(x)"),
        (10, "x_outer", "all-any: all(x) -> any(x)"),
        (16, "xǁBoxǁwithin", "drop-guard: if not path: return False -> "),
        (
            18,
            "xǁBoxǁwithin",
            "drop-operand: path.startswith(root + os.sep) and len(path) <= 9"
            " -> path.startswith(root + os.sep)",
        ),
        (
            18,
            "xǁBoxǁwithin",
            "drop-operand: path.startswith(root + os.sep) and len(path) <= 9"
            " -> len(path) <= 9",
        ),
        (18, "xǁBoxǁwithin", "drop-separator: root + os.sep -> root"),
        (18, "xǁBoxǁwithin", "edge: len(path) <= 9 -> len(path) < 9"),
    ]
    # Each is the module with that one change, and compiles.
    dropped = made[10].code
    assert dropped == MODULE.replace("root + os.sep", "root")
    for mutant in made:
        compile(mutant.code, "mod.py", "exec")


def test_a_verdict_stands_while_its_function_is_unchanged(module, tmp_path):
    kept = rm.Verdicts("pkg/mod.py", tmp_path / "verdicts")
    made = _made(module)
    for mutant in made:
        kept.keep(mutant, "killed", "abc1234")
    saved = tmp_path / "verdicts" / "pkg.mod.json"
    again = rm.Verdicts("pkg/mod.py", tmp_path / "verdicts")
    assert json.loads(saved.read_text()) == again.data
    # An edit of `within` alone: `outer`'s verdicts stand, `within`'s and
    # the module-level ones (the module changed) do not.
    module.write_text(MODULE.replace("<= 9", "<= 10"))
    standing = {m.key: again.standing(m) for m in _made(module)}
    assert standing == {
        'drop-element: ("a", "b") -> ("b",)': None,
        'drop-element: ("a", "b") -> ("a",)': None,
        "drop-operand: x and y -> x": "killed",
        "drop-operand: x and y -> y": "killed",
        "drop-operand: inner() or all(x) -> inner()": "killed",
        "drop-operand: inner() or all(x) -> all(x)": "killed",
        "all-any: all(x) -> any(x)": "killed",
        "drop-guard: if not path: return False -> ": None,
        "drop-operand: path.startswith(root + os.sep) and len(path) <= 10"
        " -> path.startswith(root + os.sep)": None,
        "drop-operand: path.startswith(root + os.sep) and len(path) <= 10"
        " -> len(path) <= 10": None,
        "drop-separator: root + os.sep -> root": None,
        "edge: len(path) <= 10 -> len(path) < 10": None,
    }


def test_no_mutant_leaves_a_name_out_of_all(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text('__all__ = ["a", "b"]\nKINDS = ("a", "b")\n')
    made = rm.mutants(path, set(rm.SHAPES), Path("mod.py"))
    assert [(m.line, m.key) for m in made] == [
        (2, 'drop-element: ("a", "b") -> ("b",)'),
        (2, 'drop-element: ("a", "b") -> ("a",)'),
    ]


def test_a_mutants_tests_are_its_functions_fastest_first():
    stats = {
        "tests_by_mangled_function_name": {
            "pkg.mod.x_outer": ["t::slow", "t::fast"],
            "pkg.mod.xǁBoxǁwithin": ["t::box"],
            "pkg.mod_other.x_outer": ["t::elsewhere"],
        },
        "duration_by_test": {"t::slow": 2.0, "t::fast": 0.1, "t::box": 1.0},
    }
    test_map = rm.TestMap(stats)

    def mutant(function):
        return rm.Mutant("pkg/mod.py", 1, "edge", "k", function, "sha", "")

    assert test_map.select(mutant("x_outer")) == ["t::fast", "t::slow"]
    assert test_map.select(mutant("x_unknown")) == []
    # Outside every function: every function's tests of that module alone.
    assert test_map.select(mutant(None)) == ["t::fast", "t::box", "t::slow"]
    assert test_map.budget(["t::fast", "t::slow"]) == 30 + 3 * 2.1


def _job_on_small(folder: Path, mod: str) -> rm.Job:
    """A warm pytest on a project of one module, ``mod`` (its ``small``), and
    one test: ``small(3)`` holds."""
    (folder / "mod.py").write_text(mod)
    (folder / "test_mod.py").write_text(
        "from mod import small\n\n\ndef test_small():\n    assert small(3)\n"
    )
    return rm.Job(folder)


def test_a_mutant_the_tests_notice_is_killed_one_they_miss_survives(tmp_path):
    """Through the warm pytest (scripts/warm_pytest.py): the function's code
    is swapped in a forked child, and the file on disk is the mutant's for
    the run only."""
    original = "LIMIT = 3\n\n\ndef small(n):\n    return n <= LIMIT\n"
    job = _job_on_small(tmp_path, original)
    options = ["-x", "-q", "-p", "no:cacheprovider"]

    def judge(code, tests, function="x_small"):
        mutant = rm.Mutant("mod.py", 5, "edge", "k", function, "sha", code)
        return job.judge(mutant, options + tests, timeout=120)

    try:
        edge = original.replace("<=", "<")
        assert judge(edge, ["test_mod.py::test_small"]) == "killed"
        looser = original.replace("n <= LIMIT", "n <= LIMIT + 1")
        assert judge(looser, ["test_mod.py::test_small"]) == "survived"
        # Each mutant alone: the next child has the original code again.
        assert judge(original, ["test_mod.py::test_small"]) == "survived"
        # A constant outside every function: the new value, where it is read.
        assert judge(original.replace("3", "2", 1), [], function=None) == "killed"
        assert (tmp_path / "mod.py").read_text() == original
        with pytest.raises(RuntimeError, match="could not run the tests"):
            judge(edge, ["test_mod.py::test_gone"])
    finally:
        job.close()


def test_a_mutant_that_cannot_be_swapped_in_runs_in_a_new_pytest(tmp_path):
    original = "class Limits:\n    LIMIT = 3\n\n\ndef small(n):\n    return n <= Limits.LIMIT\n"
    job = _job_on_small(tmp_path, original)
    try:
        # A class attribute: no module constant differs, so not swapped.
        mutant = rm.Mutant(
            "mod.py", 2, "edge", "k", None, "sha", original.replace("3", "2", 1)
        )
        assert job.judge(mutant, ["-q", "test_mod.py"], timeout=120) == "killed"
        assert (tmp_path / "mod.py").read_text() == original
    finally:
        job.close()


def test_the_report_scores_judged_mutants_less_the_equivalent_ones(
    module, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(rm, "REPO", tmp_path)
    folder = tmp_path / "verdicts"
    kept = rm.Verdicts("pkg/mod.py", folder)
    made = _made(module)
    for mutant in made[:10]:
        kept.keep(mutant, "killed", "abc1234")
    kept.keep(made[10], "survived", "abc1234")
    kept.keep(made[11], "timeout", "abc1234")
    monkeypatch.setattr(rm, "EQUIVALENT", tmp_path / "equivalent.json")
    assert rm.report(["pkg/mod.py"], set(rm.SHAPES), folder) == 0
    out = capsys.readouterr().out
    assert "| pkg/mod.py | 12 | 10 | 1 | 0 | 1 | 0 | 91.7 % |" in out
    assert "survived: pkg/mod.py:18 drop-separator: root + os.sep -> root" in out
    (tmp_path / "equivalent.json").write_text(
        json.dumps({"pkg/mod.py": {made[10].key: "the same files either way"}})
    )
    assert rm.report(["pkg/mod.py"], set(rm.SHAPES), folder) == 0
    out = capsys.readouterr().out
    assert "| pkg/mod.py | 12 | 10 | 0 | 0 | 1 | 1 | 100.0 % |" in out
    assert "survived:" not in out
    # Under 90 %, or a mutant not judged: exit 1.
    kept.keep(made[0], "survived", "abc1234")
    kept.keep(made[1], "survived", "abc1234")
    assert rm.report(["pkg/mod.py"], set(rm.SHAPES), folder) == 1
    capsys.readouterr()
    # `outer` edited: its five mutants and the module's own two are new.
    module.write_text(MODULE.replace("x and y", "y and x"))
    assert rm.report(["pkg/mod.py"], set(rm.SHAPES), folder) == 1
    assert "| 100.0 % | 7 not judged" in capsys.readouterr().out


def test_mutmuts_pytest_options_are_taken_one_per_line():
    options = rm.pytest_options()
    # "not release" is one argument of -m, as mutmut passes it.
    assert options[options.index("-m") + 1] == "not release"
    assert "--ignore=tests/test_lsp.py" in options


def test_a_survivor_is_tried_on_the_test_files_about_its_module():
    # test_lsp.py runs the server as a program, which mutmut's map leaves out.
    related = rm.related_tests("vllm_spec_lint/faces/lsp.py")
    assert {"tests/test_lsp.py", "tests/test_lsp_in_process.py"} <= set(related)
    assert "tests/test_globs.py" not in related
    assert "tests/test_globs.py" in rm.related_tests("vllm_spec_lint/core/globs.py")


def test_the_related_test_files_are_those_of_the_tree_the_mutant_runs_in(tmp_path):
    # A copy made when the run began lacks the test files written since.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_old.py").write_text(
        "from vllm_spec_lint.core import globs\n"
    )
    (tmp_path / "tests" / "test_unrelated.py").write_text("import os\n")
    assert rm.related_tests("vllm_spec_lint/core/globs.py", tmp_path) == [
        "tests/test_old.py"
    ]


def test_again_judges_the_survivors_but_not_the_ones_listed_as_equivalent(
    module, tmp_path, monkeypatch
):
    monkeypatch.setattr(rm, "REPO", tmp_path)
    monkeypatch.setattr(rm, "EQUIVALENT", tmp_path / "equivalent.json")
    kept = rm.Verdicts("pkg/mod.py", tmp_path / "verdicts")
    for mutant in _made(module):
        survived = mutant.key.startswith("drop-operand: x and y")
        kept.keep(mutant, "survived" if survived else "killed", "abc1234")
    listed = {"pkg/mod.py": {"drop-operand: x and y -> x": "the reason"}}
    (tmp_path / "equivalent.json").write_text(json.dumps(listed))
    args = argparse.Namespace(
        modules=["pkg/mod.py"],
        only=None,
        again=True,
        tests=["tests/test_mod.py"],
        verdicts=tmp_path / "verdicts",
    )
    _, work = rm._to_judge(args, set(rm.SHAPES), None, None, "abc1234")
    assert [(m.key, tests) for m, tests in work] == [
        ("drop-operand: x and y -> y", ["tests/test_mod.py"])
    ]


def test_a_survivors_line_tests_are_todays_fastest_by_test_function(monkeypatch):
    monkeypatch.setattr(rm, "LINE_TESTS", 2)
    test_map = rm.TestMap(
        {
            "tests_by_mangled_function_name": {},
            "duration_by_test": {"t.py::a[1]": 3.0, "t.py::a[2]": 3.0, "t.py::b": 0.5},
        }
    )
    lines = {"pkg/mod.py": {"5": ["t.py::a", "t.py::b", "t.py::c", "t.py::gone"]}}
    existing = {"t.py::a[1]", "t.py::a[2]", "t.py::b", "t.py::c"}
    line_tests = rm.LineTests.read(Path("/nonexistent"), existing, test_map)
    assert line_tests.lines == {}
    line_tests.lines = lines
    mutant = rm.Mutant("pkg/mod.py", 5, "edge", "k", "x_f", "sha", "")
    # b (0.5 s), then c (unknown: 1 s); a's cases add up to 6 s; gone is gone.
    assert line_tests.fastest(mutant) == ["t.py::b", "t.py::c"]
    # A survivor's second run: every one of today's, fastest first.
    assert line_tests.fastest(mutant, every=True) == ["t.py::b", "t.py::c", "t.py::a"]
    other_line = rm.Mutant("pkg/mod.py", 6, "edge", "k", "x_f", "sha", "")
    assert line_tests.fastest(other_line) == []
    # Outside every function (a constant, read at import): the tests of
    # every line of its module.
    line_tests.lines = {"pkg/mod.py": {"5": ["t.py::c"], "9": ["t.py::b"]}}
    constant = rm.Mutant("pkg/mod.py", 2, "drop-element", "k", None, "sha", "")
    assert line_tests.fastest(constant) == ["t.py::b", "t.py::c"]


def test_closing_a_job_ends_a_mutant_that_loops(tmp_path):
    original = "def small(n):\n    return n <= 3\n"
    job = _job_on_small(tmp_path, original)
    looping = "def small(n):\n    while True:\n        pass\n"
    mutant = rm.Mutant("mod.py", 2, "drop-guard", "k", "x_small", "sha", looping)
    outcome = []

    def judge():
        try:
            job.judge(mutant, ["-q", "test_mod.py"], timeout=600)
        except RuntimeError as error:
            outcome.append(str(error))

    worker = threading.Thread(target=judge, daemon=True)
    worker.start()
    # The server answers only when the child ends: wait until it has forked.
    children = Path(f"/proc/{job.server.pid}/task/{job.server.pid}/children")
    while not children.read_text().split():
        worker.join(0.05)
    [child] = children.read_text().split()
    job.close()
    worker.join(10)
    assert outcome == [f"the warm pytest in {tmp_path} has ended"]
    assert not Path(f"/proc/{child}").exists()


def test_the_line_maps_durations_are_per_test_function_from_pytests_report(
    tmp_path, monkeypatch
):
    """A real pytest's JUnit report: a parametrized test's cases add up
    under its function's node id, a method's under its class's."""
    monkeypatch.setattr(rm, "REPO", tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_t.py").write_text(
        "import time\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_a(n):\n    time.sleep(0.05)\n\n\n"
        "class TestB:\n    def test_b(self):\n        pass\n"
    )
    report = tmp_path / "junit.xml"
    run = rm.subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--junitxml={report}", "tests"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout
    durations = rm.junit_durations(report)
    assert sorted(durations) == [
        "tests/test_t.py::TestB::test_b",
        "tests/test_t.py::test_a",
    ]
    # Each case sleeps 0.05 s: only both together reach 0.1 s.
    assert durations["tests/test_t.py::test_a"] >= 0.1


def test_without_mutmuts_stats_a_mutants_tests_are_its_lines_fastest(
    module, tmp_path, monkeypatch
):
    monkeypatch.setattr(rm, "REPO", tmp_path)
    monkeypatch.setattr(rm, "EQUIVALENT", tmp_path / "equivalent.json")
    lines = {"pkg/mod.py": {"8": ["t.py::slow", "t.py::fast"]}}
    (tmp_path / "line-tests.json").write_text(json.dumps(lines))
    durations = {"t.py::slow": 2.0, "t.py::fast": 0.5}
    (tmp_path / rm.DURATIONS).write_text(json.dumps(durations))
    line_tests = rm.LineTests.read(tmp_path / "line-tests.json", None, None)
    args = argparse.Namespace(
        modules=["pkg/mod.py"],
        only=None,
        again=False,
        tests=None,
        verdicts=tmp_path / "verdicts",
    )
    kept, work = rm._to_judge(args, {"drop-operand"}, None, None, "abc", line_tests)
    # Line 8 (x and y): its tests, fastest first; lines 10 and 18 ran under
    # none, and no test file is about their module.
    assert {m.line: tests for m, tests in work} == {8: ["t.py::fast", "t.py::slow"]}
    verdicts = kept["pkg/mod.py"].data["mutants"].values()
    assert {(v["line"], v["verdict"]) for v in verdicts} == {
        (10, "no tests"),
        (18, "no tests"),
    }
    assert line_tests.budget(["t.py::fast", "t.py::slow"]) == 30 + 5 * 2.5
