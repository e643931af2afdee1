from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.fetch_sources import FetchError, IndexUnreachable, fetch_sources
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import Family

REPO = Path(__file__).resolve().parent.parent


def findings(source: str, *, module: str | None = None, config: Config | None = None):
    """(code, row, column) of every finding in a dedented source."""
    result = analyze_source(
        textwrap.dedent(source), "example.py", config or Config(), module_name=module
    )
    return [(f.code, *f.location) for f in result.findings]


def codes(source: str, **kwargs) -> list[str]:
    return [code for code, _, _ in findings(source, **kwargs)]


@pytest.fixture(autouse=True)
def cold_caches():
    """Each test starts with the package's module-level caches empty, as a
    new process does. Under mutmut every mutant's run is forked from a
    process that already ran the suite: a full cache skips the code that
    fills it, whose mutants then survive every test. (Functions under
    ``functools.cache`` are not mutated.)"""
    from vllm_spec_lint.core import analysis
    from vllm_spec_lint.model import syntax

    syntax._FIELDS.clear()
    analysis._SCREENED.clear()


@pytest.fixture(autouse=True, scope="session")
def code_cache_folder(tmp_path_factory) -> Iterator[Path]:
    """The tool's code cache (edges/code_cache.py) in a folder of the
    suite's own for the whole session, never the user's ``~/.cache``: the
    commands the tests run (and the processes they start) share it."""
    from vllm_spec_lint.edges.code_cache import FOLDER_VARIABLE

    folder = tmp_path_factory.mktemp("code-cache")
    before = os.environ.get(FOLDER_VARIABLE)
    os.environ[FOLDER_VARIABLE] = str(folder)
    yield folder
    if before is None:
        del os.environ[FOLDER_VARIABLE]
    else:
        os.environ[FOLDER_VARIABLE] = before


@pytest.fixture
def replaced_files(monkeypatch) -> list[tuple[Path, Path]]:
    """Every ``os.replace`` the test makes, as (source, target), in order;
    each still made."""
    replaced: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def recorded(source, target):
        replaced.append((Path(source), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recorded)
    return replaced


@pytest.fixture
def examples(tmp_path) -> Path:
    """A copy of the example tree (5 findings, the NIXL worker, no
    settings), without a cache a developer's own run may have left."""
    tree = tmp_path / "examples"
    no_cache = shutil.ignore_patterns(".vllm_spec_lint_cache")
    shutil.copytree(REPO / "examples", tree, ignore=no_cache)
    return tree


# The NIXL worker's bug in two lines (VSL001 at 2:40), and its fix unformatted.
BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)
FIXED = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "is_mla_region = isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
)


# The MLA family with a second companion (a chunked MLA spec), for the
# messages, fixes and reasons that name every companion.
THREE_MEMBER_MLA = Family(
    "mla",
    "vllm.v1.kv_cache_interface",
    ("MLAAttentionSpec", "SlidingWindowMLASpec", "ChunkedMLASpec"),
)


# vLLM's spec classes as they are: the companion beside the anchor.
SPEC_CLASSES = (
    "class KVCacheSpec: ...\n"
    "class AttentionSpec(KVCacheSpec): ...\n"
    "class FullAttentionSpec(AttentionSpec): ...\n"
    "class MLAAttentionSpec(FullAttentionSpec): ...\n"
    "class SlidingWindowSpec(AttentionSpec): ...\n"
    "class SlidingWindowMLASpec(SlidingWindowSpec): ...\n"
)


def write_family_module(root: Path, text: str) -> Path:
    """``root``'s vllm/v1/kv_cache_interface.py, holding ``text``; its path."""
    kci = root / "vllm" / "v1" / "kv_cache_interface.py"
    kci.parent.mkdir(parents=True, exist_ok=True)
    kci.write_text(text)
    return kci


def write_covering_hierarchy(root: Path) -> Path:
    """A family module under ``root`` in which the companion derives from
    the anchor, so nothing leaves it out; its path."""
    return write_family_module(
        root,
        "class KVCacheSpec: ...\n"
        "class AttentionSpec(KVCacheSpec): ...\n"
        "class MLAAttentionSpec(AttentionSpec): ...\n"
        "class SlidingWindowMLASpec(MLAAttentionSpec): ...\n",
    )


def write_plugin_package(root: Path) -> Path:
    """A package ``plugin`` with a ``kv_cache_interface`` of its own, and
    ``plugin/layers.py`` testing against its class (line 5) and vLLM's (line
    6); the path of ``layers.py``."""
    package = root / "plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kv_cache_interface.py").write_text("class MLAAttentionSpec: ...\n")
    layers = package / "layers.py"
    layers.write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as VllmMLA\n"
        "\n"
        "from .kv_cache_interface import MLAAttentionSpec\n"
        "\n"
        "ours = isinstance(s, MLAAttentionSpec)\n"
        "vllms = isinstance(s, VllmMLA)\n"
    )
    return layers


# A family module in which the companion derives from CompressedSpec, a
# parent the built-in hierarchy does not know.
COMPRESSED_PARENT = (
    "class KVCacheSpec: ...\n"
    "class AttentionSpec(KVCacheSpec): ...\n"
    "class FullAttentionSpec(AttentionSpec): ...\n"
    "class MLAAttentionSpec(FullAttentionSpec): ...\n"
    "class CompressedSpec(AttentionSpec): ...\n"
    "class SlidingWindowMLASpec(CompressedSpec): ...\n"
)


def fake_black(monkeypatch, folder: Path, script: str) -> None:
    """A shell ``script`` installed as black, the only formatter found (for
    failures a real formatter will not produce on demand)."""
    from vllm_spec_lint.repair import formatting

    program = folder / "black"
    program.write_text("#!/bin/sh\n" + script)
    program.chmod(0o755)
    monkeypatch.setattr(
        formatting, "find_executable", lambda kind: {"black": str(program)}.get(kind)
    )


def failing_disk(monkeypatch) -> None:
    """Every file write fails as a full or failing disk makes it fail: with
    an I/O error at the flush to disk (``os.fsync``, which only the tool's
    writes call), after the temporary file was made."""
    import errno

    def fsync(descriptor: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)


def count_slice_analyses(monkeypatch) -> list[str]:
    """The slice texts libcst and the rules are run on from now on (one
    entry per run), the analysis going on as before."""
    from vllm_spec_lint.core import analysis

    analysed: list[str] = []
    real = analysis._analyze_slice

    def counted(*args):
        analysed.append(args[0].text)
        return real(*args)

    monkeypatch.setattr(analysis, "_analyze_slice", counted)
    return analysed


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str | None] | None = None,
    python: str | None = None,
):
    """``python -m vllm_spec_lint ARGS``; ``env`` changes the environment
    (``None`` removes a variable); ``python`` is another interpreter."""
    return _run_module(
        "vllm_spec_lint", "vllm_spec_lint.faces.cli", args, cwd, input, env, python
    )


class _Left(Exception):
    """``os._exit`` in this process: the status it was given."""


def run_here(monkeypatch, *args: str):
    """``cli.run()`` with ``args`` in this process (one file: no worker is
    forked), ``os._exit`` replaced by raising the status; the status."""
    from vllm_spec_lint.faces import cli

    def leave(status):
        raise _Left(status)

    monkeypatch.setattr(os, "_exit", leave)
    monkeypatch.setattr(sys, "argv", ["vllm-spec-lint", *args])
    with pytest.raises(_Left) as left:
        cli.run()
    return left.value.args[0]


def run_flake8(
    *args: str, cwd: Path, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess:
    """``python -m flake8 ARGS`` in ``cwd``; ``env`` as for ``run_cli``."""
    return _run_module("flake8", "flake8.main.cli", args, cwd, None, env, None)


# Variables the tool reads while it runs (not at interpreter start, as
# PYTHONPATH is): a test that sets only these can run in this process.
READ_WHILE_RUNNING = {"VIRTUAL_ENV", "PATH", "COLUMNS"}


def _run_module(module, entry, args, cwd, input, env, python):
    """``python -m MODULE ARGS``. Under mutation testing (mutmut sets
    MUTANT_UNDER_TEST) it is ``ENTRY.main`` in this process, where the
    mutants live, unless the interpreter or what it reads at start
    differs."""
    env = env or {}
    if (
        os.environ.get("MUTANT_UNDER_TEST")
        and python is None
        and set(env) <= READ_WHILE_RUNNING
    ):
        main = importlib.import_module(entry).main
        return _in_process(main, [module, *args], cwd, input, env)
    return subprocess.run(
        [python or sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=600,
        env=_changed_environment(env),
    )


def _changed_environment(env: dict[str, str | None]) -> dict[str, str]:
    environment = dict(os.environ)
    for key, value in env.items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    return environment


def interpreter_without_tools(folder: Path) -> tuple[str, dict[str, str]]:
    """A Python of a fresh virtual environment with nothing installed beside
    it (no ruff, black or yapf in its scripts folder), and the environment
    that lets it import this package and its dependencies from ours: where
    the tool finds no formatter, whatever the test suite's venv holds."""
    venv = folder / "bare-venv"
    if not venv.exists():
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
        )
    site = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return str(venv / "bin" / "python"), {
        "PYTHONPATH": os.pathsep.join([str(REPO), *site]),
        "VIRTUAL_ENV": str(venv),
    }


def _in_process(
    main,
    argv: list[str],
    cwd: Path | None,
    input: str | None,
    env: dict[str, str | None] | None = None,
):
    """``main(argv[1:])`` as a process would run it: in ``cwd``, with its
    own standard streams, environment changes and exit status."""
    import contextlib
    import io
    from unittest import mock

    def stream(data: bytes = b""):
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="")

    stdin, stdout, stderr = stream((input or "").encode()), stream(), stream()
    environment = _changed_environment(env or {})
    before = os.getcwd()
    try:
        os.chdir(cwd or before)
        with (
            mock.patch.dict(os.environ, environment, clear=True),
            mock.patch.object(sys, "stdin", stdin),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
            # One process: worker processes would not report which mutant ran.
            mock.patch.object(os, "cpu_count", return_value=1),
        ):
            try:
                status = main(argv[1:])
            except SystemExit as e:  # what the interpreter makes of it
                status = e.code if isinstance(e.code, int) else int(bool(e.code))
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
    finally:
        os.chdir(before)
    stdout.flush()
    stderr.flush()
    return subprocess.CompletedProcess(
        argv,
        status,
        stdout.buffer.getvalue().decode("utf-8"),
        stderr.buffer.getvalue().decode("utf-8"),
    )


def fetch_vllm(version: str) -> Path:
    """The unpacked sources of a vLLM release (``scripts/fetch_sources.py``)."""
    return fetch_release("vllm", version)


_running: list[pytest.Item] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before the item's fixtures: a module-scoped fixture that fetches a
    # release is set up for the first test that asks for it.
    _running[:] = [item]


def fetch_release(name: str, version: str) -> Path:
    """A release's Python sources. Skips only when the package index cannot
    be reached, and says so; with ``VSL_REQUIRE_RELEASES=1`` (CI) that skip
    is a failure. Any other failure to fetch fails the test. Only a test
    marked ``release`` may ask: mutation runs leave those out (a real
    release costs seconds to a minute a run, and every surviving mutant
    would pay it)."""
    if _running and _running[0].get_closest_marker("release") is None:
        pytest.fail(f"{_running[0].nodeid} fetches a release: mark it release")
    try:
        return fetch_sources(f"{name}=={version}")
    except IndexUnreachable as e:
        skip_unreachable(e)
    except FetchError as e:
        pytest.fail(str(e))


def skip_unreachable(error: IndexUnreachable):
    """Skip, saying why; fail instead under CI's VSL_REQUIRE_RELEASES=1."""
    if os.environ.get("VSL_REQUIRE_RELEASES") == "1":
        pytest.fail(f"VSL_REQUIRE_RELEASES=1 and {error}")
    pytest.skip(str(error))


def last_check(text: str, *, exclude: str | None = None):
    """The semantic model of ``text`` and its last class test naming
    MLAAttentionSpec (and not ``exclude``), for the model's own tests."""
    import libcst as cst

    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.semantic_model import SemanticModel
    from vllm_spec_lint.model.syntax import code_of, walk

    module = cst.parse_module(text)
    model = SemanticModel(
        module, text, families=Config().families, hierarchy=ClassHierarchy.default()
    )
    checks = [
        test
        for node in walk(module)
        if isinstance(node, (cst.Call, cst.Comparison))
        and (test := model.tests.type_test(node))
        and "MLAAttentionSpec" in code_of(test.classinfo)
        and (exclude is None or exclude not in code_of(test.classinfo))
    ]
    return model, checks[-1]


@pytest.fixture
def unfrozen_heap():
    """Nothing frozen for the test (mutmut's runner freezes its heap before
    forking); afterwards frozen again if it was."""
    import gc

    was_frozen = gc.get_freeze_count() > 0
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was_frozen:
        gc.freeze()
