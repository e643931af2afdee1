"""Plant realistic one-line bugs, one at a time, and see which the tests catch.

    python scripts/realistic_mutants.py                      # the whole package
    python scripts/realistic_mutants.py vllm_spec_lint/edges/pairing.py
    python scripts/realistic_mutants.py --report             # the table, no run
    python scripts/realistic_mutants.py MODULE --tests tests/test_pairing.py

mutmut changes operators and constants one at a time; the bugs people write
have other shapes (tests/test_no_false_greens.py pins a sample of each).
This makes every mutant of these shapes in the given modules:

- ``drop-operand``: ``a and b`` -> ``a`` or ``b`` (also ``or``);
- ``all-any``: ``all(...)`` <-> ``any(...)``;
- ``edge``: ``<=`` <-> ``<``, ``>=`` <-> ``>``;
- ``drop-element``: one element left out of a tuple, set or list of names,
  attributes or strings (a tuple of types, a set of names);
- ``drop-guard``: an ``if`` without ``else`` whose body ends in ``return``,
  ``raise``, ``continue`` or ``break`` removed;
- ``drop-separator``: ``x + os.sep`` (``os.path.sep``, ``"/"``) -> ``x``.

Each mutant is written into a copy of the repository made from the commit
(``git archive HEAD``: the working tree is never touched; one copy per job),
and its tests run there with ``pytest -x`` and ``MUTANT_UNDER_TEST`` set, so
the command line runs in the test's process, where the mutant is
(tests/conftest.py), with the pytest options of mutmut's settings
(setup.cfg). Each job's pytest has imported the suite once and forks per
mutant, with the mutated function's code swapped in (scripts/warm_pytest.py);
a mutant outside every function runs in a new pytest. A mutant that does not
compile is not made.

Which tests: the ones mutmut's stats phase found reaching the mutated
function (``mutants/mutmut-stats.json``, written by ``nox -s mutation``),
fastest first, so a whole-package run takes hours, not days; a mutant
outside every function gets the tests of every function of its module.
Without those stats, the tests that ran the mutant's line under coverage
(``--map-lines``, which records each test's duration too), the fastest 150;
for a mutant outside every function (run at import, under no test), the
tests that ran any line of its module.
``--tests`` names the tests instead, for every mutant. A mutant that
survives its mapped tests, or has none (its function is deeper than mutmut's
stack limit), is run against the test files about its module (named after it
or naming it), those that run the tool as a program included, and every test
that ran its line, before it counts as a survivor.

Verdicts are kept in ``mutation/realistic/<module>.json`` (written after
each mutant, so a stopped run goes on where it stopped): a verdict stands
while its function's code is unchanged; ``--again`` judges the survivors
again (after writing tests). A survivor no test can kill is listed in
``mutation/realistic/equivalent.json`` under its key, with the reason. The
table counts a timeout as killed and leaves the equivalent ones out.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import functools
import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "vllm_spec_lint"
VERDICTS = REPO / "mutation" / "realistic"
EQUIVALENT = VERDICTS / "equivalent.json"
STATS = REPO / "mutants" / "mutmut-stats.json"
LINES = REPO / "mutants" / "line-tests.json"  # written by --map-lines
DURATIONS = "test-durations.json"  # beside LINES, written with it
SHAPES = (
    "drop-operand",
    "all-any",
    "edge",
    "drop-element",
    "drop-guard",
    "drop-separator",
)
_EDGES = {
    cst.LessThanEqual: cst.LessThan,
    cst.LessThan: cst.LessThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
    cst.GreaterThan: cst.GreaterThanEqual,
}
# Seconds for a survivor's run on its module's test files (the longest, the
# command line's, takes about a minute): a mutant that loops is a timeout.
CONFIRM_BUDGET = 240
# Of the tests that ran a mutant's line, the fastest this many on a first run.
LINE_TESTS = 150
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
_SEPARATOR = "ǁ"  # mutmut's, between a class and its method's name


@dataclass(frozen=True)
class Mutant:
    module: str  # its path in the repository
    line: int
    shape: str
    key: str  # the shape, the code before and after: stable when lines move
    function: str | None  # mutmut's name for the function that holds it
    function_sha: str  # of that function's code (the module's, outside one)
    code: str  # the whole mutated module


class _Sites(cst.CSTVisitor):
    """Every node a shape can change, with the replacements it makes."""

    def __init__(self):
        self.sites: list[tuple[cst.CSTNode, str, object]] = []

    def visit_Assign(self, node):
        # `__all__` names what a star import takes, which the package never
        # does: leaving a name out of it changes nothing the tool does.
        return not any(
            isinstance(t.target, cst.Name) and t.target.value == "__all__"
            for t in node.targets
        )

    def visit_BooleanOperation(self, node):
        self.sites += [(node, "drop-operand", node.left)]
        self.sites += [(node, "drop-operand", node.right)]

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value in ("all", "any"):
            other = "any" if node.func.value == "all" else "all"
            self.sites += [(node, "all-any", node.with_changes(func=cst.Name(other)))]

    def visit_Comparison(self, node):
        for index, target in enumerate(node.comparisons):
            swapped = _EDGES.get(type(target.operator))
            if swapped is None:
                continue
            old = target.operator
            new = swapped(
                whitespace_before=old.whitespace_before,
                whitespace_after=old.whitespace_after,
            )
            targets = list(node.comparisons)
            targets[index] = target.with_changes(operator=new)
            self.sites += [(node, "edge", node.with_changes(comparisons=targets))]

    def _elements(self, node):
        elements = node.elements
        simple = (cst.Name, cst.Attribute, cst.SimpleString)
        if len(elements) < 2 or not all(
            isinstance(e, cst.Element) and isinstance(e.value, simple) for e in elements
        ):
            return
        for index in range(len(elements)):
            rest = [
                e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                for i, e in enumerate(elements)
                if i != index
            ]
            self.sites += [(node, "drop-element", node.with_changes(elements=rest))]

    visit_Tuple = visit_Set = visit_List = _elements

    def visit_If(self, node):
        if node.orelse is not None:
            return
        body = node.body.body
        last = body[-1] if body else None
        if isinstance(last, cst.SimpleStatementLine) and isinstance(
            last.body[-1], _EXITS
        ):
            self.sites += [(node, "drop-guard", cst.RemoveFromParent())]

    def visit_BinaryOperation(self, node):
        if not isinstance(node.operator, cst.Add):
            return
        right = node.right
        separator = (
            isinstance(right, cst.SimpleString) and right.evaluated_value == "/"
        ) or (
            isinstance(right, cst.Attribute)
            and right.attr.value == "sep"
            and isinstance(right.value, (cst.Name, cst.Attribute))
        )
        if separator:
            self.sites += [(node, "drop-separator", node.left)]


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement):
        self.target = target
        self.replacement = replacement

    def on_leave(self, original_node, updated_node):
        if original_node is self.target:
            return self.replacement
        return updated_node


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def functions(source: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, mutmut's name, code hash) of each function
    mutmut trampolines: the module's own functions and its classes' methods
    (a nested function belongs to the one holding it)."""
    found = []
    tree = ast.parse(source)
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)

    def add(node, name):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        code = ast.get_source_segment(source, node) or ""
        found.append((first, node.end_lineno, name, _sha(code)))

    for node in tree.body:
        if isinstance(node, defs):
            add(node, f"x_{node.name}")
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, defs):
                    add(member, f"x{_SEPARATOR}{node.name}{_SEPARATOR}{member.name}")
    return found


def _flat(node) -> str:
    if isinstance(node, cst.RemovalSentinel):
        return ""
    return " ".join(cst.Module([]).code_for_node(node).split())


def mutants(path: Path, shapes: set[str], name: Path) -> list[Mutant]:
    """Every mutant of the file at ``path``, named ``name`` (its path in the
    repository)."""
    source = path.read_text()
    wrapper = MetadataWrapper(cst.parse_module(source))
    sites = _Sites()
    wrapper.visit(sites)
    positions = wrapper.resolve(PositionProvider)
    spans = functions(source)
    seen: Counter = Counter()
    found = []
    for node, shape, replacement in sites.sites:
        if shape not in shapes:
            continue
        code = wrapper.module.visit(_Replace(node, replacement)).code
        try:
            compile(code, str(path), "exec")
        except SyntaxError:
            continue
        if code == source:
            continue
        line = positions[node].start.line
        key = f"{shape}: {_flat(node)} -> {_flat(replacement)}"
        seen[key] += 1
        if seen[key] > 1:
            key += f" (#{seen[key]})"
        function, function_sha = None, _sha(source)
        for first, last, mangled, digest in spans:
            if first <= line <= last:
                function, function_sha = mangled, digest
        found.append(Mutant(str(name), line, shape, key, function, function_sha, code))
    return found


def dotted(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


class TestMap:
    """mutmut's stats: the tests that reach each function, and their
    durations."""

    def __init__(self, stats: dict):
        self.tests = stats["tests_by_mangled_function_name"]
        self.durations = stats["duration_by_test"]

    @classmethod
    def read(cls, path: Path) -> TestMap:
        return cls(json.loads(path.read_text()))

    def select(self, mutant: Mutant) -> list[str]:
        prefix = dotted(mutant.module) + "."
        if mutant.function is not None:
            names = [prefix + mutant.function]
        else:
            names = [n for n in self.tests if n.startswith(prefix)]
            names = [n for n in names if "." not in n.removeprefix(prefix)]
        tests = {t for n in names for t in self.tests.get(n, ())}
        return sorted(tests, key=lambda t: (self.durations.get(t, 0.0), t))

    def budget(self, tests: list[str]) -> float:
        """Seconds a mutant's run may take: three times what its tests took
        under mutmut's tracing (slower than this run), and pytest's start. A
        mutant that loops runs no longer than that: a timeout is a kill."""
        return 30 + 3 * sum(self.durations.get(t, 1.0) for t in tests)


class LineTests:
    """The tests that ran each line under coverage (``--map-lines``), for a
    survivor's second run (or the first, without mutmut's stats): the
    fastest of them, by the durations the map recorded or mutmut's."""

    def __init__(self, lines: dict, known: set[str] | None, test_map: TestMap | None):
        self.lines = lines
        self.known = known  # today's tests (the map may name renamed ones)
        self.durations: Counter = Counter()  # by test function, all its cases
        for node, seconds in (test_map.durations if test_map else {}).items():
            self.durations[node.split("[", 1)[0]] += seconds

    @classmethod
    def read(cls, path: Path, existing: set[str] | None, test_map) -> LineTests:
        lines = json.loads(path.read_text()) if path.exists() else {}
        known = None if existing is None else {n.split("[", 1)[0] for n in existing}
        line_tests = cls(lines, known, test_map)
        durations = path.with_name(DURATIONS)
        if durations.exists():
            line_tests.durations = Counter(json.loads(durations.read_text()))
        return line_tests

    def budget(self, tests: list[str]) -> float:
        """As ``TestMap.budget``, by these durations (taken without tracing:
        five times theirs)."""
        return 30 + 5 * sum(self.durations.get(t, 1.0) for t in tests)

    def fastest(self, mutant: Mutant, every: bool = False) -> list[str]:
        """The tests that ran the mutant's line, fastest first: a model line
        runs under most of the suite, so a first run takes the
        ``LINE_TESTS`` fastest (-x stops at the first failure); a survivor's
        second run takes ``every`` one."""
        by_line = self.lines.get(mutant.module, {})
        if mutant.function is None:
            # A constant runs at import, under no test's context: the tests
            # that ran any line of its module are the ones that read it.
            tests = sorted({t for tests in by_line.values() for t in tests})
        else:
            tests = by_line.get(str(mutant.line), [])
        if self.known is not None:
            tests = [t for t in tests if t in self.known]
        ordered = sorted(tests, key=lambda t: self.durations.get(t, 1.0))
        return ordered if every else ordered[:LINE_TESTS]


class Verdicts:
    """The kept verdicts of one module, written after each change."""

    def __init__(self, module: str, folder: Path = VERDICTS):
        self.path = folder / f"{dotted(module)}.json"
        self.lock = threading.Lock()
        self.data = {"mutants": {}}
        if self.path.exists():
            self.data = json.loads(self.path.read_text())

    def standing(self, mutant: Mutant) -> str | None:
        kept = self.data["mutants"].get(mutant.key)
        if kept and kept["function_sha"] == mutant.function_sha:
            return kept["verdict"]
        return None

    def keep(self, mutant: Mutant, verdict: str, commit: str) -> None:
        with self.lock:
            self.data["mutants"][mutant.key] = {
                "line": mutant.line,
                "shape": mutant.shape,
                "function_sha": mutant.function_sha,
                "verdict": verdict,
                "commit": commit,
            }
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(".json.partial")
            text = json.dumps(self.data, indent=1, sort_keys=True, ensure_ascii=False)
            partial.write_text(text + "\n")
            partial.replace(self.path)

    def current(self, made: list[Mutant]) -> dict[str, str]:
        """The verdict of each of today's mutants (None: not judged)."""
        return {m.key: self.standing(m) for m in made}


def pytest_options() -> list[str]:
    """The pytest options of mutmut's settings: the same tests left out."""
    settings = configparser.ConfigParser()
    settings.read(REPO / "setup.cfg")
    lines = settings["mutmut"]["pytest_add_cli_args"].splitlines()
    return [line.strip() for line in lines if line.strip()]  # one per line


def _copy_of_head(folder: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)


class Job:
    """One copy of the last commit and a warm pytest on it
    (scripts/warm_pytest.py): the mutants of one job run there, one by
    one."""

    def __init__(self, copy: Path):
        self.copy = copy
        environment = dict(os.environ, PYTHONPATH=str(copy))
        self.server = subprocess.Popen(
            [sys.executable, str(REPO / "scripts" / "warm_pytest.py"), str(copy)],
            cwd=copy,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self.server.stdout.readline()
        if not ready:
            raise RuntimeError(f"the warm pytest in {copy} did not start")

    def judge(self, mutant: Mutant, args: list[str], timeout: float) -> str:
        request = {
            "module": mutant.module,
            "function": mutant.function,
            "code": mutant.code,
            "args": args,
            "timeout": timeout,
        }
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        line = self.server.stdout.readline()
        if not line:
            raise RuntimeError(f"the warm pytest in {self.copy} has ended")
        answer = json.loads(line)
        status = answer["status"]
        if status == "cold":
            return _judge_cold(mutant, self.copy, args, timeout)
        return _verdict(status, answer["tail"])

    def close(self) -> None:
        """Ends the server, and a mutant's run still going (a run stopped
        part-way): none is left behind."""
        self.server.terminate()
        self.server.wait()


def _verdict(status, tail: str) -> str:
    if status == "timeout":
        return "timeout"
    if status in (4, 5):  # a test not found: stale stats
        raise RuntimeError(f"pytest could not run the tests:\n{tail}")
    # 1: a test failed; 2, 3: pytest stopped (the mutant broke an import).
    return "killed" if status else "survived"


def _judge_cold(mutant: Mutant, copy: Path, args: list[str], timeout: float) -> str:
    """A mutant the warm pytest cannot swap in (outside a function): a new
    pytest process on the mutated copy."""
    target = copy / mutant.module
    original = target.read_text()
    target.write_text(mutant.code)
    environment = dict(os.environ, MUTANT_UNDER_TEST="realistic", PYTHONPATH=str(copy))
    command = [sys.executable, "-m", "pytest", *args]
    try:
        out = subprocess.run(
            command, cwd=copy, env=environment, capture_output=True, timeout=timeout
        )
        return _verdict(out.returncode, out.stdout.decode(errors="replace")[-2000:])
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        target.write_text(original)
        os.utime(target)  # never the mutant's time: no stale byte code


def run(args) -> dict[str, Verdicts]:
    shapes = set(args.shape or SHAPES)
    # Without mutmut's stats, the line map picks every mutant's tests.
    test_map = (
        None if args.tests or not args.stats.exists() else TestMap.read(args.stats)
    )
    base = ["-x", "-q", *pytest_options()]
    base += ["-k", args.keyword] if args.keyword else []
    confirm = ["-x", "-q", "-p", "no:cacheprovider", "-m", "not release"]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
        text=True, check=True,
    ).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="vsl-mutants-") as folder:
        copies = []
        for job in range(args.jobs):
            copy = Path(folder) / str(job)
            copy.mkdir()
            _copy_of_head(copy)
            copies.append(copy)
        # mutmut's map may name tests renamed since: only today's are run.
        existing = None if args.tests else _collected(copies[0], base)
        line_tests = LineTests.read(args.lines, existing, test_map)
        kept, work = _to_judge(args, shapes, test_map, existing, commit, line_tests)
        print(f"{len(work)} mutants to judge", flush=True)
        jobs: queue.Queue = queue.Queue()
        for copy in copies:
            jobs.put(Job(copy))

        def judge(item):
            mutant, tests = item
            job = jobs.get()
            try:
                timeout = (test_map or line_tests).budget(tests) if tests else 900
                verdict = "survived"
                if tests:
                    verdict = job.judge(mutant, base + tests, timeout)
                if verdict == "survived" and not args.tests:
                    # mutmut's map leaves out the tests that run the tool as
                    # a program (setup.cfg), and functions deeper than its
                    # stack limit: the test files about the module, and the
                    # tests that ran the line, every one of them (a slow
                    # test of the command line may be the one that notices).
                    every = line_tests.fastest(mutant, every=True)
                    # From the copy: tests written since the run began are
                    # not in it.
                    related = [*related_tests(mutant.module, copies[0]), *every]
                    budget = CONFIRM_BUDGET + line_tests.budget(every)
                    verdict = job.judge(mutant, confirm + related, budget)
            finally:
                jobs.put(job)
            kept[mutant.module].keep(mutant, verdict, commit)
            print(f"{mutant.module}:{mutant.line} {mutant.key}: {verdict}", flush=True)

        try:
            with ThreadPoolExecutor(args.jobs) as pool:
                list(pool.map(judge, work))
        finally:
            while not jobs.empty():
                jobs.get().close()
    return kept


def map_lines(out: Path) -> None:
    """Which tests run each line of the package: the suite under coverage
    with each test's name as its context (mutmut's map stops 12 frames
    below a test, so a model module's lines are missing from it). With
    ``MUTANT_UNDER_TEST`` the command line runs in the test's process."""
    import coverage

    with tempfile.TemporaryDirectory(prefix="vsl-lines-") as folder:
        rcfile = Path(folder) / "coveragerc"
        data_file = Path(folder) / "coverage.db"
        junit = Path(folder) / "junit.xml"
        rcfile.write_text(
            "[run]\nsource = vllm_spec_lint\ndynamic_context = test_function\n"
            f"data_file = {data_file}\n"
        )
        environment = dict(os.environ, MUTANT_UNDER_TEST="realistic")
        subprocess.run(
            [sys.executable, "-m", "coverage", "run", f"--rcfile={rcfile}", "-m",
             "pytest", "-q", *pytest_options(), f"--junitxml={junit}", "tests"],
            cwd=REPO, env=environment, check=False,
        )  # fmt: skip
        data = coverage.CoverageData(basename=str(data_file))
        data.read()
        lines: dict[str, dict[str, list[str]]] = {}
        for measured in data.measured_files():
            module = Path(measured).resolve().relative_to(REPO).as_posix()
            by_line = data.contexts_by_lineno(measured)
            lines[module] = {
                str(line): sorted({_node_id(c) for c in contexts if c})
                for line, contexts in by_line.items()
            }
        durations = junit_durations(junit)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(lines, sort_keys=True) + "\n")
    out.with_name(DURATIONS).write_text(json.dumps(durations, sort_keys=True) + "\n")


def junit_durations(report: Path) -> dict[str, float]:
    """Seconds per test function (its cases added up) from pytest's JUnit
    XML report, by the node ids the line map uses."""
    durations: Counter = Counter()
    for case in ElementTree.parse(report).iter("testcase"):
        function = case.get("name", "").split("[", 1)[0]
        node = _node_id(f"{case.get('classname')}.{function}")
        durations[node] += float(case.get("time") or 0.0)
    return dict(durations)


def _node_id(context: str) -> str:
    """``tests.test_cli.test_x`` (coverage's context) -> pytest's
    ``tests/test_cli.py::test_x``."""
    parts = context.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (REPO / path).is_file():
            return path.as_posix() + "::" + "::".join(parts[cut:])
    return context


@functools.cache
def related_tests(module: str, root: Path | None = None) -> list[str]:
    """The test files about ``module`` in the tree at ``root``: named after
    it, or naming it. A survivor of mutmut's map is run against these, the
    programs included."""
    root = REPO if root is None else root
    stem, name = Path(module).stem, dotted(module)
    found = []
    for path in sorted((root / "tests").glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if stem in path.stem or name in text or f"import {stem}\n" in text:
            found.append(path.relative_to(root).as_posix())
    return found


def _collected(copy: Path, base: list[str]) -> set[str]:
    """The node ids of the tests pytest collects in ``copy``."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *base, "--collect-only"],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    return {line for line in out.stdout.splitlines() if "::" in line}


def _to_judge(args, shapes, test_map, existing, commit, line_tests=None):
    """Each module's kept verdicts, and the mutants to judge with their
    tests: ``--tests``, mutmut's map, or the line map's."""
    kept: dict[str, Verdicts] = {}
    work: list[tuple[Mutant, list[str]]] = []
    again = ("survived", "no tests") if args.again else ()
    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    for module in args.modules or default_modules():
        relative = str((REPO / module).resolve().relative_to(REPO))
        verdicts = kept[relative] = Verdicts(relative, args.verdicts)
        listed = equivalent.get(relative, {})
        for mutant in mutants(REPO / relative, shapes, Path(relative)):
            standing = verdicts.standing(mutant)
            named = f"{mutant.module}:{mutant.line}" in (args.only or ())
            if args.only and not named:
                continue
            if standing and not named and standing not in again:
                continue
            if standing and not named and mutant.key in listed:
                continue  # judged equivalent: --again leaves it
            if args.tests:
                tests = args.tests
            elif test_map is not None:
                tests = test_map.select(mutant)
            else:
                tests = line_tests.fastest(mutant) if line_tests else []
            if existing is not None:
                tests = [t for t in tests if t in existing]
            if not tests and not related_tests(relative):
                verdicts.keep(mutant, "no tests", commit)
                continue
            work.append((mutant, tests))
    return kept, work


def default_modules() -> list[str]:
    """Every module mutmut mutates: the package less its markers and entry."""
    return [
        str(path.relative_to(REPO))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in ("__init__.py", "__main__.py")
    ]


def report(modules: list[str], shapes: set[str], folder: Path) -> int:
    """The table of today's mutants' kept verdicts; 1 while a module is
    under 90 %, has unjudged mutants or unjudged survivors."""
    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    columns = "mutants killed survived no-tests timeout equivalent score"
    print("| module | " + " | ".join(columns.split()).replace("-", " ") + " |")
    print("|---|---|---|---|---|---|---|---|")
    totals: Counter = Counter()
    survivors = []
    failing = False
    for module in modules:
        relative = str((REPO / module).resolve().relative_to(REPO))
        made = mutants(REPO / relative, shapes, Path(relative))
        verdicts = Verdicts(relative, folder).current(made)
        listed = equivalent.get(relative, {})
        counts: Counter = Counter()
        for mutant in made:
            verdict = verdicts[mutant.key] or "not judged"
            if verdict in ("survived", "no tests") and mutant.key in listed:
                verdict = "equivalent"
            counts[verdict] += 1
            if verdict in ("survived", "no tests"):
                survivors.append((mutant, verdict))
        judged = len(made) - counts["equivalent"] - counts["not judged"]
        killed = counts["killed"] + counts["timeout"]
        score = f"{100 * killed / judged:.1f} %" if judged else "-"
        failing |= bool(counts["not judged"]) or (judged and killed < 0.9 * judged)
        totals.update(counts)
        totals["mutants"] += len(made)
        print(
            f"| {relative} | {len(made)} | {counts['killed']} | "
            f"{counts['survived']} | {counts['no tests']} | {counts['timeout']} | "
            f"{counts['equivalent']} | {score} |"
            + (f" {counts['not judged']} not judged" if counts["not judged"] else "")
        )
    judged = totals["mutants"] - totals["equivalent"] - totals["not judged"]
    killed = totals["killed"] + totals["timeout"]
    score = f"{100 * killed / judged:.1f} %" if judged else "-"
    print(
        f"| all | {totals['mutants']} | {totals['killed']} | {totals['survived']} | "
        f"{totals['no tests']} | {totals['timeout']} | {totals['equivalent']} | "
        f"{score} |"
    )
    for mutant, verdict in survivors:
        print(f"{verdict}: {mutant.module}:{mutant.line} {mutant.key}")
    return 1 if failing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="default: the whole package")
    parser.add_argument("--tests", action="append", help="these tests for every mutant")
    parser.add_argument("--stats", type=Path, default=STATS)
    parser.add_argument("--verdicts", type=Path, default=VERDICTS)
    parser.add_argument(
        "--lines", type=Path, default=LINES, help="the tests that run each line"
    )
    parser.add_argument(
        "--map-lines", action="store_true", help="write --lines, then stop"
    )
    parser.add_argument("--shape", action="append", choices=SHAPES)
    parser.add_argument("-k", dest="keyword", help="pytest's -k")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--again", action="store_true", help="judge the survivors again"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="PATH:LINE",
        help="only the mutants on these lines, judged again",
    )
    parser.add_argument(
        "--report", action="store_true", help="print the kept verdicts only"
    )
    args = parser.parse_args(argv)
    # Stopped from outside: the jobs' servers end too (run's finally).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.map_lines:
        map_lines(args.lines)
        return 0
    if not args.report:
        run(args)
    modules = args.modules or default_modules()
    return report(modules, set(args.shape or SHAPES), args.verdicts)


if __name__ == "__main__":
    sys.exit(main())
