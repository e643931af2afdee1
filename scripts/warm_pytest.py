"""A pytest process that has imported the suite once and forks a child to run
each mutant's tests (scripts/realistic_mutants.py starts one per job).

    python scripts/warm_pytest.py COPY        # then one JSON request per line

Starting pytest, importing libcst, the package and the test modules took
most of a mutant's run when each ran in a new process. Here they are
imported once (a ``--collect-only`` of the whole suite), and each request
is a fork: the child swaps the mutated function's code into the function
object itself, so every module that imported it sees the mutant, clears
the package's ``functools`` caches, and runs ``pytest.main``; a mutated
module constant replaces the old value in the module and wherever it was
imported. The mutated
module is also written to disk for the request's duration, for the tests
that run the tool as a program. mutmut runs its mutants the same way
(forked from a process that ran its stats phase).

A request: ``{"module": path in the copy, "function": mutmut's name or
null, "code": the mutated module, "args": pytest's arguments, "timeout":
seconds}``. The answer: ``{"status": pytest's exit status, or "timeout",
or "cold" when the mutant cannot be swapped in (a class body or a
statement outside every function, another number of free variables), "tail": the end of
pytest's output}``.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import tempfile
import time
import types
from pathlib import Path

_SEPARATOR = "ǁ"  # mutmut's, between a class and its method's name


def _function(module: types.ModuleType, mangled: str):
    """The function object mutmut's name ``mangled`` names, or None."""
    if mangled.startswith("x_"):
        holder, name = module.__dict__, mangled[2:]
    else:
        _, class_name, name = mangled.split(_SEPARATOR)
        cls = module.__dict__.get(class_name)
        holder = getattr(cls, "__dict__", {})
    found = holder.get(name)
    found = getattr(found, "fget", found)  # a property
    found = getattr(found, "__func__", found)  # a static or class method
    while not isinstance(found, types.FunctionType) and hasattr(found, "__wrapped__"):
        found = found.__wrapped__  # functools.cache and friends
    return found if isinstance(found, types.FunctionType) else None


def _code(code: types.CodeType, qualname: str, name: str):
    """The code object of ``qualname`` compiled in ``code``, or None."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            own = getattr(const, "co_qualname", const.co_name)
            if own == qualname or (own == name and not hasattr(const, "co_qualname")):
                return const
            inner = _code(const, qualname, name)
            if inner is not None:
                return inner
    return None


def _swap_constants(module: types.ModuleType, code: str) -> bool:
    """A mutant outside every function: the module's constants that differ
    when the mutated module runs, put in its place and wherever they were
    imported. False when no constant differs (a class body, a statement)."""
    fresh = {"__name__": module.__name__, "__file__": module.__file__}
    exec(compile(code, module.__file__, "exec"), fresh)  # noqa: S102
    kinds = (types.FunctionType, type, types.ModuleType)
    changed = {
        name: (module.__dict__[name], value)
        for name, value in fresh.items()
        if name in module.__dict__
        and not name.startswith("__")
        and not isinstance(value, kinds)
        and not _same(module.__dict__[name], value)
    }
    if not changed:
        return False
    here = os.getcwd() + os.sep  # the copy: the package and the tests
    for holder in list(sys.modules.values()):
        if (getattr(holder, "__file__", None) or "").startswith(here):
            for old, new in changed.values():
                for key, value in list(vars(holder).items()):
                    if value is old:
                        setattr(holder, key, new)
    return True


def _same(old, new) -> bool:
    try:
        return type(old) is type(new) and bool(old == new)
    except Exception:  # noqa: BLE001 - objects that cannot be compared differ
        return False


def _swap(request: dict) -> bool:
    """Put the mutant's function code in place; False when it cannot be."""
    dotted = request["module"].removesuffix(".py").replace("/", ".")
    module = importlib.import_module(dotted)
    if not request.get("function"):
        return _swap_constants(module, request["code"])
    original = _function(module, request["function"])
    if original is None:
        return False
    compiled = compile(request["code"], module.__file__, "exec")
    qualname = getattr(original.__code__, "co_qualname", original.__qualname__)
    mutated = _code(compiled, qualname, original.__code__.co_name)
    if mutated is None or mutated.co_freevars != original.__code__.co_freevars:
        return False
    original.__code__ = mutated
    return True


def _clear_caches() -> None:
    """Empty every ``functools`` cache of the package (its functions and its
    classes' methods): the collection ran some of them in this process,
    before the mutant."""
    for name, module in list(sys.modules.items()):
        if name.startswith("vllm_spec_lint"):
            for value in list(vars(module).values()):
                members = vars(value).values() if isinstance(value, type) else ()
                for candidate in (value, *members):
                    clear = getattr(candidate, "cache_clear", None)
                    if callable(clear):
                        clear()


def _write(path: Path, text: str, stamp: float) -> None:
    """Write ``text`` with its own modification time: a program the tests
    start must not take a cached byte code of the other text."""
    path.write_text(text)
    os.utime(path, (stamp, stamp))


def _child(request: dict, output: str) -> None:
    import pytest

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.setpgid(0, 0)
    descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    if not _swap(request):
        os._exit(200)
    _clear_caches()
    try:
        status = pytest.main(request["args"])
    except BaseException:  # noqa: BLE001 - the child must end here
        status = 3
    sys.stdout.flush()
    os._exit(int(status))


def answer(request: dict, copy: Path, stamp: float) -> dict:
    target = copy / request["module"]
    original = target.read_text()
    descriptor, output = tempfile.mkstemp(prefix="vsl-warm-", suffix=".log")
    os.close(descriptor)
    _write(target, request["code"], stamp)
    global _running
    pid = None
    try:
        pid = _running = os.fork()
        if pid == 0:
            _child(request, output)
        deadline = time.monotonic() + request["timeout"]
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"status": "timeout", "tail": ""}
            time.sleep(0.02)
        code = os.waitstatus_to_exitcode(status)
        try:
            tail = Path(output).read_text(errors="replace")[-2000:]
        except FileNotFoundError:  # the tests under the mutant removed it
            tail = ""
        return {"status": "cold" if code == 200 else code, "tail": tail}
    finally:
        _write(target, original, stamp + 1)
        Path(output).unlink(missing_ok=True)
        _running = None
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)  # whatever the tests left running
            except (ProcessLookupError, PermissionError):
                pass


# The child running a mutant's tests, if any: stopped with this process.
_running: int | None = None


def _stop(signum, frame) -> None:
    """Terminated (the run was stopped): the child and whatever it started
    go too, a mutant that loops included."""
    if _running:
        try:
            os.killpg(_running, signal.SIGKILL)
            # Reaped before the server ends: gone once its caller's wait
            # returns, not merely dying.
            os.waitpid(_running, 0)
        except (ProcessLookupError, PermissionError, ChildProcessError):
            pass
    os._exit(128 + signum)


def main() -> int:
    import pytest

    signal.signal(signal.SIGTERM, _stop)

    copy = Path(sys.argv[1]).resolve()
    os.chdir(copy)
    sys.path.insert(0, str(copy))
    os.environ["MUTANT_UNDER_TEST"] = "realistic"
    quiet = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(1)
    os.dup2(quiet, 1)
    pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider"])  # testpaths
    os.dup2(saved, 1)
    package = sys.modules.get("vllm_spec_lint")
    if package is not None and not package.__file__.startswith(str(copy) + os.sep):
        sys.exit(f"the suite imported {package.__file__}, not the copy in {copy}")
    print(json.dumps({"ready": True}), flush=True)
    stamp = time.time() - 10**6  # every write a second later than the last
    for line in sys.stdin:
        stamp += 2
        print(json.dumps(answer(json.loads(line), copy, stamp)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
