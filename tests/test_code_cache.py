"""The code cache of dataclass methods (edges/code_cache.py): where it
lives, that a class made through it is the class made without it (on every
supported Python: these tests are in the fast set), and that the command
line and its workers fill it."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_here
from vllm_spec_lint.edges import code_cache
from vllm_spec_lint.edges.code_cache import (
    FOLDER_VARIABLE,
    DataclassCode,
    cache_folder,
    compiled_dataclasses,
)

pytestmark = pytest.mark.fast

CACHE_FILE = (
    f"dataclass-code-{sys.implementation.cache_tag}-O{sys.flags.optimize}.marshal"
)


def test_the_folder_is_the_variable_then_xdg_cache_home_then_home_cache(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(FOLDER_VARIABLE, raising=False)
    assert cache_folder() == tmp_path / "home" / ".cache" / "vllm-spec-lint"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty: as if unset
    assert cache_folder() == tmp_path / "home" / ".cache" / "vllm-spec-lint"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "vllm-spec-lint"
    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path / "chosen"))
    assert cache_folder() == tmp_path / "chosen"


def test_an_empty_variable_or_no_home_folder_means_no_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(FOLDER_VARIABLE, "")
    assert cache_folder() is None
    with compiled_dataclasses() as code:
        assert code is None
        assert "exec" not in vars(dataclasses)
    monkeypatch.delenv(FOLDER_VARIABLE)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    # What expanduser gives back when there is no home folder to expand to.
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)
    assert cache_folder() is None


# Classes of every kind dataclasses writes methods for, and what each
# method's code is made of; run with and without the cache.
_CLASSES = """
import dataclasses, json, sys
from vllm_spec_lint.edges.code_cache import compiled_dataclasses

def classes():
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        name: str
        rows: tuple = ()
        extra: list = dataclasses.field(default_factory=list, compare=False)

    @dataclasses.dataclass(order=True, slots=True, kw_only=True)
    class Ordered:
        first: int
        second: float = 0.5

    @dataclasses.dataclass(eq=False, repr=False)
    class Plain:
        value: object = None
        _: dataclasses.KW_ONLY
        flag: bool = False

        def __post_init__(self):
            self.seen = True

    return Frozen, Ordered, Plain

def code_of(code):
    return [
        code.co_name, code.co_filename, code.co_flags, code.co_argcount,
        code.co_kwonlyargcount, code.co_names, code.co_varnames,
        code.co_freevars, code.co_code.hex(), [constant(c) for c in code.co_consts],
    ]

def constant(value):
    # A frozenset's order follows string hashes, which differ per process.
    if isinstance(value, frozenset):
        return sorted(map(repr, value))
    return code_of(value) if hasattr(value, "co_code") else repr(value)

def methods(cls):
    return {
        name: code_of(function.__code__)
        for name, function in sorted(vars(cls).items())
        if callable(function) and hasattr(function, "__code__")
    }

def behaviour(Frozen, Ordered, Plain):
    frozen = Frozen("a", (1,), [2])
    try:
        frozen.name = "b"
        stays = False
    except dataclasses.FrozenInstanceError:
        stays = True
    return [
        repr(frozen), frozen == Frozen("a", (1,), [3]), hash(frozen) == hash(Frozen("a", (1,))),
        stays, Ordered(first=1) < Ordered(first=2), repr(Ordered(first=3)),
        Plain() == Plain(), Plain(flag=True).flag, Plain().seen, Frozen.__match_args__,
    ]

if sys.argv[1] == "plain":
    made, compiled = classes(), None
else:
    with compiled_dataclasses() as cache:
        made = classes()
        compiled = cache.compiled
        cache.save()
print(json.dumps({
    "methods": [methods(cls) for cls in made],
    "behaviour": behaviour(*made),
    "compiled": compiled,
}))
"""


def _python(script: str, *args: str, folder: Path) -> str:
    """What ``script`` prints, run by a Python of its own with its code
    cache in ``folder``; it must succeed."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=folder,  # the installed package (under mutmut, not its mutants)
        env={**os.environ, FOLDER_VARIABLE: str(folder)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _classes_namespace() -> dict:
    """_CLASSES' definitions, compiled as a file of their own: not with this
    module's annotations."""
    namespace: dict = {}
    source = _CLASSES.split("if sys.argv")[0]
    exec(compile(source, "<classes>", "exec", 0, True), namespace)
    return namespace


def test_a_class_made_through_the_cache_is_the_class_made_without_it(tmp_path):
    """Each method's code (its bytecode, constants, names, flags) and the
    class's behaviour, without the cache, on a first run that compiles
    (one source per method: 3 + 6 + 3) and on a second that compiles
    nothing."""
    plain, first, second = (
        json.loads(_python(_CLASSES, mode, folder=tmp_path))
        for mode in ("plain", "cached", "cached")
    )
    assert plain["methods"] == first["methods"] == second["methods"]
    assert plain["behaviour"] == first["behaviour"] == second["behaviour"]
    assert (
        plain["behaviour"][:4]
        == ["classes.<locals>.Frozen(name='a', rows=(1,), extra=[2])"] + [True] * 3
    )
    assert (first["compiled"], second["compiled"]) == (len(_methods_made()), 0)


def _methods_made() -> set[str]:
    """The sources dataclasses compiles for _CLASSES' classes, counted here
    (one per generated method, however it batches them)."""
    made: list[str] = []

    def counting(source, globals=None, locals=None):
        made.append(source)
        exec(source, globals, locals)

    namespace = _classes_namespace()
    dataclasses.exec = counting
    try:
        namespace["classes"]()
    finally:
        del dataclasses.exec
    return set(made)


_LIBCST = """
import sys
from vllm_spec_lint.edges.code_cache import compiled_dataclasses

with compiled_dataclasses() as cache:
    import libcst
    compiled = cache.compiled
    cache.save()
module = libcst.parse_module("x = isinstance(s, (A, B))\\n")
name = module.body[0].body[0].targets[0].target
try:
    name.value = "y"
    frozen = False
except Exception:
    frozen = True
print(compiled, module.code == "x = isinstance(s, (A, B))\\n", frozen,
      name == name, name.deep_equals(libcst.Name("x")),
      repr(name) == repr(libcst.Name("x")))
"""


def _made_in_this_process(cache: DataclassCode | None) -> list[dict]:
    """_CLASSES' classes' methods, made here, through ``cache`` if given."""
    namespace = _classes_namespace()
    if cache is not None:
        dataclasses.exec = cache.exec
    try:
        return [namespace["methods"](cls) for cls in namespace["classes"]()]
    finally:
        vars(dataclasses).pop("exec", None)


def test_in_one_process_a_class_made_through_the_cache_is_the_class_made_without_it(
    tmp_path,
):
    """As above, in this process (where mutation testing's mutants are):
    compiled, then read back."""
    plain = _made_in_this_process(None)
    first = DataclassCode(tmp_path / "code.marshal")
    assert _made_in_this_process(first) == plain
    assert first.compiled == len(_methods_made())
    first.save()
    second = DataclassCode(tmp_path / "code.marshal")
    assert _made_in_this_process(second) == plain
    assert second.compiled == 0


def test_libcst_imported_a_second_time_compiles_nothing_and_parses_alike(tmp_path):
    first, second = (_python(_LIBCST, folder=tmp_path).split() for _ in range(2))
    # libcst's 223 classes: a source per method, or per class from 3.13 on
    # (classes alike share one).
    assert int(first[0]) > 100
    assert second == ["0", "True", "True", "True", "True", "True"]
    assert first[1:] == second[1:]


def test_what_two_processes_compiled_is_kept_together(tmp_path):
    path = tmp_path / "not" / "there" / "yet" / "code.marshal"
    one, other = DataclassCode(path), DataclassCode(path)
    one.code_for("a = 1\n")
    assert one.code_for("a = 1\n") is one.code_for("a = 1\n")
    assert one.compiled == 1  # asked three times, compiled once
    other.code_for("b = 2\n")  # read before ``one`` saved: an empty file
    one.save()
    other.save()
    again = DataclassCode(path)
    again.code_for("a = 1\n")
    again.code_for("b = 2\n")
    assert (one.compiled, other.compiled, again.compiled) == (0, 0, 0)


def test_a_file_over_the_limit_keeps_only_this_process_s_code(tmp_path, monkeypatch):
    monkeypatch.setattr(code_cache, "MAX_SOURCES", 3)
    path = tmp_path / "code.marshal"
    for sources in (("a = 1\n", "b = 2\n"), ("c = 3\n",), ("d = 4\n",)):
        code = DataclassCode(path)
        for source in sources:
            code.code_for(source)
        code.save()
        kept = set(DataclassCode(path)._read())
        if sources == ("c = 3\n",):  # three: at the limit, all kept
            assert kept == {"a = 1\n", "b = 2\n", "c = 3\n"}
    assert kept == {"d = 4\n"}  # four: over it, only what this process asked


def test_the_temporary_file_is_made_beside_the_cache_file(tmp_path, monkeypatch):
    """Not in the system's temporary folder (another file system, where
    ``os.replace`` fails): here one that does not exist."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    path = tmp_path / "code.marshal"
    code = DataclassCode(path)
    code.code_for("a = 1\n")
    code.save()
    assert set(DataclassCode(path)._read()) == {"a = 1\n"}


def test_a_save_that_fails_leaves_no_temporary_file(tmp_path, monkeypatch):
    def refused(source, target):
        raise PermissionError(target)

    monkeypatch.setattr(os, "replace", refused)
    code = DataclassCode(tmp_path / "code.marshal")
    code.code_for("a = 1\n")
    code.save()  # no error: nothing saved, and nothing left behind
    assert (os.listdir(tmp_path), code.compiled) == ([], 1)


def _saved(path: Path, sources: tuple[str, ...]) -> bytes:
    code = DataclassCode(path)
    for source in sources:
        code.code_for(source)
    code.save()
    return path.read_bytes()


# Where the header ends: the bytecode format's magic number is its last 4
# bytes; the payload's checksum follows it.
_END = len(code_cache._HEADER)
_LIST = marshal.dumps(["a = 1\n"])


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"not a cache file", id="not-ours"),
        pytest.param(lambda data: data[:-7], id="cut-short"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 1]), id="a-bit-off"),
        pytest.param(
            lambda data: data[: _END - 4] + b"\0\0\r\n" + data[_END:],
            id="another-bytecode-format",
        ),
        pytest.param(
            lambda data: data[:_END] + bytes(4) + data[_END + 4 :], id="checksum-off"
        ),
        pytest.param(
            lambda data: data[:_END] + code_cache._checksum(_LIST) + _LIST,
            id="a-list-not-a-table",
        ),
    ],
)
def test_a_damaged_or_foreign_file_is_compiled_again_and_rewritten(tmp_path, damage):
    path = tmp_path / "code.marshal"
    path.write_bytes(damage(_saved(path, ("a = 1\n",))))
    code = DataclassCode(path)
    namespace: dict = {}
    code.exec("a = 1\n", namespace)
    assert (code.compiled, namespace["a"]) == (1, 1)
    code.save()
    again = DataclassCode(path)
    again.code_for("a = 1\n")
    assert again.compiled == 0


def test_a_folder_that_cannot_be_made_keeps_nothing_and_says_nothing(
    examples, tmp_path
):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    code = DataclassCode(blocked / "code.marshal")
    code.code_for("a = 1\n")
    code.save()  # no error: a read-only home still runs
    assert code.compiled == 1
    out = run_cli(
        "check", "--no-cache", ".", cwd=examples,
        env={FOLDER_VARIABLE: str(blocked / "cache")},
    )  # fmt: skip
    assert (out.returncode, out.stderr) == (1, "")
    assert "Found 5 errors." in out.stdout


def test_the_command_line_fills_the_code_cache_even_with_no_cache(examples, tmp_path):
    """``--no-cache`` is about the files checked: no results are kept in the
    tree, while the tool's own code is kept in its folder."""
    folder = tmp_path / "code-cache"
    out = run_cli(
        "check", "--no-cache", "--jobs", "1", ".", cwd=examples,
        env={FOLDER_VARIABLE: str(folder)},
    )  # fmt: skip
    assert out.returncode == 1
    assert os.listdir(folder) == [CACHE_FILE]
    assert not (examples / ".vllm_spec_lint_cache").exists()
    kept = DataclassCode(folder / CACHE_FILE)
    assert len(kept._read()) > 100  # libcst's classes among them


def test_a_worker_saves_the_code_it_compiled(tmp_path):
    """Over a tree with two jobs, the one worker imports libcst and the main
    process never does: libcst's code is in the cache only if the worker
    saved it."""
    tree, folder = tmp_path / "tree", tmp_path / "code-cache"
    tree.mkdir()
    for name in ("a.py", "b.py"):
        (tree / name).write_text(
            "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
            "def f(spec):\n"
            "    return isinstance(spec, MLAAttentionSpec)\n"
        )
    out = run_cli(
        "check", "--no-cache", "--jobs", "2", ".", cwd=tree,
        env={FOLDER_VARIABLE: str(folder)},
    )  # fmt: skip
    assert out.returncode == 1 and "Found 2 errors." in out.stdout
    script = textwrap.dedent("""
        from vllm_spec_lint.edges.code_cache import compiled_dataclasses
        with compiled_dataclasses() as cache:
            import libcst
        print(cache.compiled)
    """)
    assert _python(script, folder=folder) == "0\n"  # compiled nothing


def _makes_a_class(status: int):
    def main() -> int:
        dataclasses.make_dataclass("Made", [("field_only_this_test_has", int)])
        assert isinstance(vars(dataclasses)["exec"].__self__, DataclassCode)
        return status

    return main


def test_a_run_saves_what_it_compiled_and_leaves_dataclasses_as_it_was(
    monkeypatch, tmp_path
):
    from vllm_spec_lint.faces import cli

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    monkeypatch.setattr(cli, "main", _makes_a_class(1))
    assert run_here(monkeypatch) == 1
    assert "exec" not in vars(dataclasses)
    kept = DataclassCode(tmp_path / CACHE_FILE)._read()
    assert any("field_only_this_test_has" in source for source in kept)


def test_an_interrupted_run_saves_nothing(monkeypatch, tmp_path):
    from vllm_spec_lint.faces import cli

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    monkeypatch.setattr(cli, "main", _makes_a_class(130))
    assert run_here(monkeypatch) == 130
    assert "exec" not in vars(dataclasses)
    assert os.listdir(tmp_path) == []
