"""The worker pool (edges/workers.py): when it starts, where the analysis
is imported, how it stops, and what the main process takes back."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from vllm_spec_lint.core.findings import parse_error
from vllm_spec_lint.edges import code_cache, workers
from vllm_spec_lint.edges.code_cache import FOLDER_VARIABLE
from vllm_spec_lint.edges.results import FileResult


def test_a_worker_leaves_ctrl_c_to_the_main_process(monkeypatch):
    import signal

    monkeypatch.setenv(FOLDER_VARIABLE, "")  # no code cache to start here
    before = signal.getsignal(signal.SIGINT)
    try:
        workers._start_worker()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_worker_compiles_through_the_code_cache_it_saves_to(monkeypatch, tmp_path):
    """As a spawned worker starts, in this process: the code cache is put in
    use before the analysis is imported, which saves what it compiled."""
    import dataclasses
    import signal

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    monkeypatch.setattr(code_cache, "_active", None)

    def imports_the_analysis() -> None:
        dataclasses.make_dataclass("MadeInTheWorker", [("only_there", int)])
        code_cache.save_compiled()

    monkeypatch.setattr(workers, "_load_analysis", imports_the_analysis)
    try:
        workers._start_worker()
        assert isinstance(vars(dataclasses)["exec"].__self__, code_cache.DataclassCode)
    finally:
        if code_cache._active is not None:
            code_cache._stop()
    [saved] = tmp_path.iterdir()
    kept = code_cache.DataclassCode(saved)._read()
    assert any("only_there" in source for source in kept)


def test_a_forked_worker_keeps_the_code_cache_it_was_given(monkeypatch, tmp_path):
    import dataclasses

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    with code_cache.compiled_dataclasses() as given:
        assert code_cache.start() is None
        assert vars(dataclasses)["exec"].__self__ is given
    assert "exec" not in vars(dataclasses)


def _in_use_here() -> bool:
    from vllm_spec_lint.edges import code_cache

    return code_cache._active is not None


def test_a_spawned_pool_s_workers_compile_through_the_code_cache(tmp_path, monkeypatch):
    """Where workers are spawned (macOS, Windows), not forked: each starts
    the code cache itself, and saves what importing the analysis compiled."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        1, mp_context=context, initializer=workers._start_worker
    ) as pool:
        assert pool.submit(_in_use_here).result(timeout=300) is True
    [saved] = tmp_path.iterdir()
    assert len(code_cache.DataclassCode(saved)._read()) > 100  # libcst's


def _ignores_ctrl_c() -> bool:
    import signal

    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_the_pools_workers_leave_ctrl_c_to_the_main_process():
    import signal

    # As in a terminal's process, whatever the test runner does with it
    # (mutmut's test processes ignore it).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        analyses = workers.Analyses(2)
        analyses.start()
        try:
            assert analyses.pool.submit(_ignores_ctrl_c).result() is True
        finally:
            analyses.stop()
        assert _ignores_ctrl_c() is False  # this process takes it
    finally:
        signal.signal(signal.SIGINT, before)


def _blocked(path, source):
    import threading

    threading.Event().wait()  # never set: only stop() ends this worker


def test_stopping_ends_the_workers_at_once():
    analyses = workers.Analyses(2)
    analyses.task = _blocked
    for name in ("a.py", "b.py", "c.py", "d.py"):
        analyses.add(Path(name), b"")
    pool = analyses.pool
    processes = list(pool._processes.values())
    assert len(processes) == 2
    import threading
    from multiprocessing.connection import wait

    # In a thread: a stop() that waited for the blocked workers would hang
    # the test, not fail it.
    stopping = threading.Thread(target=analyses.stop, daemon=True)
    try:
        stopping.start()
        stopping.join(10)  # stop() takes milliseconds
        assert not stopping.is_alive()
        for worker in processes:
            # Ready once the process has ended (stop(), not this wait, ends
            # it); not is_alive(): the pool's own thread may reap it first,
            # and a reaped worker's is_alive() says True.
            assert wait([worker.sentinel], 60) == [worker.sentinel]
        assert analyses.pool is None
    finally:
        for worker in processes:
            worker.kill()  # a stop() that failed leaves them blocked


def test_the_pool_starts_once_and_never_for_one_job():
    alone = workers.Analyses(1)
    alone.start()
    assert alone.pool is None
    pooled = workers.Analyses(2)
    try:
        pooled.start()
        first = pooled.pool
        pooled.start()
        assert first is not None and pooled.pool is first
    finally:
        pooled.stop()


def test_a_pool_started_without_importing_here_leaves_the_analysis_to_workers():
    """So discovery reads files while the workers import libcst; this
    process has not imported it (a fresh interpreter: this one has)."""
    code = (
        "import sys\n"
        "from vllm_spec_lint.edges import workers\n"
        "pool = workers.Analyses(2)\n"
        "pool.start(import_here=False)\n"
        "print('libcst' in sys.modules, 'vllm_spec_lint.rules' in sys.modules)\n"
        "pool.stop()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "False False\n", "")


# -- what the main process takes back ------------------------------------------
# The pool's callables run in a forked worker: module-level functions. Files
# tell them apart by their bytes; each result says where it was made.


def _in_a_worker(path, source):
    """The whole analysis, in a worker: the first file holds it until the
    test says go (the names of both markers are the file's bytes)."""
    if source.startswith(b"hold:"):
        started, go = source.decode().split(":")[1:3]  # then padding, if any
        Path(started).touch()
        while not Path(go).exists():
            time.sleep(0.01)  # waiting for an event; no result depends on it
    return FileResult(str(path), [parse_error(str(path), "analysed in a worker")])


def _screened(path, source):
    if source == b"candidates":
        return f"slice of {path}"
    return FileResult(str(path), [parse_error(str(path), "screened here")])


def _finished(path, source, relevant):
    message = f"finished in a worker from the {relevant}"
    return FileResult(str(path), [parse_error(str(path), message)])


def _wait_for(marker: Path) -> None:
    """Until ``marker`` exists. A minute without it fails the test (no file
    reached a worker) instead of hanging the suite."""
    for _ in range(6000):
        if marker.exists():
            return
        time.sleep(0.01)  # waiting for an event; no result depends on it
    pytest.fail(f"no worker started: {marker} never came")


def _said(results) -> list[tuple[str, str]]:
    return [(r.path, r.findings[0].message) for r in results]


def _held_pool(
    tmp_path,
    names: list[str],
    sources: list[bytes] | None = None,
    held_size: int = 0,
):
    """A pool of one worker beside this process's own work, given the files
    ``names`` with ``sources`` after the first (by default, the last has
    candidates); the worker is held on the first (padded to ``held_size``
    bytes) until ``go`` exists. The pool and the two markers."""
    started, go = tmp_path / "started", tmp_path / "go"
    analyses = workers.Analyses(2)
    analyses.busy_here = True
    analyses.task, analyses.screen, analyses.finish = (
        _in_a_worker, _screened, _finished,
    )  # fmt: skip
    held = f"hold:{started}:{go}:".encode()
    analyses.add(Path(names[0]), held + b"x" * (held_size - len(held)))
    if sources is None:
        sources = [b"no candidates"] * (len(names) - 2) + [b"candidates"]
    for name, source in zip(names[1:], sources, strict=True):
        analyses.add(Path(name), source)
    return analyses, started, go


def _assert_taken_back_from_the_end(places: list[str]) -> None:
    """Where each file was done: "screened here" from some file on to the
    last, and the worker's queue holds two files at most besides the
    first."""
    taken = places.count("screened here")
    assert taken >= len(places) - 2
    assert (
        places
        == ["analysed in a worker"] * (len(places) - taken) + ["screened here"] * taken
    )


def test_the_main_process_takes_back_the_files_no_worker_started(tmp_path):
    """A worker is held on the first file; the main process, its own work
    done, screens files from the last back to the first one a worker has
    (two at most are queued for it besides), hands a file with candidates
    back as a slice, and the results come in the order of the files."""
    names = [f"{letter}.py" for letter in "abcdefgh"]
    analyses, started, go = _held_pool(tmp_path, names)
    try:
        _wait_for(started)
        assert analyses.workers == 1
        analyses.help()
        go.touch()
        said = _said(analyses.results())
    finally:
        analyses.stop()
    assert [path for path, _ in said] == names
    assert said[0] == ("a.py", "analysed in a worker")
    assert said[-1] == ("h.py", "finished in a worker from the slice of h.py")
    _assert_taken_back_from_the_end([message for _, message in said[1:-1]])


def test_a_share_takes_back_that_part_of_the_waiting_bytes_then_the_rest(tmp_path):
    """Three quarters of the bytes no worker has started (the last two
    files' 1,000 and a few small ones; the held file's 5,000 are started):
    the last file alone is less, the last two are more, so those two are
    taken back; a second call with the whole share takes back the others
    still waiting, from the last back."""
    names = [f"{letter}.py" for letter in "abcdefgh"]
    sources = [b"no" * 5] * 5 + [b"no" * 250] * 2
    analyses, started, go = _held_pool(tmp_path, names, sources, held_size=5000)
    try:
        _wait_for(started)
        analyses.help(share=0.75)
        taken_first = [
            h[0].name for h in analyses.handles if isinstance(h[2], FileResult)
        ]
        analyses.help()
        go.touch()
        said = _said(analyses.results())
    finally:
        analyses.stop()
    assert taken_first == ["g.py", "h.py"]
    places = [message for _, message in said[1:]]
    _assert_taken_back_from_the_end(places)


def test_any_share_above_none_takes_back_a_file(tmp_path):
    names = [f"{letter}.py" for letter in "abcde"]
    analyses, started, go = _held_pool(tmp_path, names)
    try:
        _wait_for(started)
        analyses.help(share=1e-9)
        go.touch()
        said = _said(analyses.results())
    finally:
        analyses.stop()
    # The last file, taken back, has candidates: its slice went back.
    assert said[-1] == ("e.py", "finished in a worker from the slice of e.py")
    assert said[:-1] == [(name, "analysed in a worker") for name in names[:-1]]


def test_no_share_takes_nothing_back(tmp_path):
    names = [f"{letter}.py" for letter in "abcde"]
    analyses, started, go = _held_pool(tmp_path, names)
    try:
        _wait_for(started)
        analyses.help(share=0)
        go.touch()
        said = _said(analyses.results())
    finally:
        analyses.stop()
    assert said == [(name, "analysed in a worker") for name in names]


def test_nothing_is_taken_back_without_work_of_its_own_or_in_a_fix(tmp_path):
    """Files named (no pairing here): every job is a worker's. A fix has no
    screen: its files are fixed whole in the workers."""
    for busy, screen in ((False, _screened), (True, None)):
        analyses = workers.Analyses(2)
        analyses.busy_here = busy
        analyses.task, analyses.screen, analyses.finish = (
            _in_a_worker, screen, _finished,
        )  # fmt: skip
        for name in ("a.py", "b.py", "c.py"):
            analyses.add(Path(name), b"no candidates")
        analyses.help()
        assert _said(analyses.results()) == [
            (name, "analysed in a worker") for name in ("a.py", "b.py", "c.py")
        ]


def test_a_pool_broken_before_a_slice_is_handed_back_reports_that_file(
    tmp_path, monkeypatch
):
    """The workers die after the main process took a file with candidates
    back: its slice cannot be handed back, and the file says why; the run
    goes on."""
    from concurrent.futures.process import BrokenProcessPool

    names = ["a.py", "b.py", "c.py", "d.py", "e.py"]
    analyses, started, go = _held_pool(tmp_path, names)

    def broken(*args, **kwargs):
        raise BrokenProcessPool("gone")

    try:
        _wait_for(started)
        monkeypatch.setattr(analyses.pool, "submit", broken)
        analyses.help()
        go.touch()
        said = _said(analyses.results())
    finally:
        analyses.stop()
    assert said[0] == ("a.py", "analysed in a worker")
    assert said[-1] == ("e.py", "the analysis process died on this file")


def test_a_stopped_pools_thread_prints_no_cancelled_futures_error():
    """CPython 3.11's pool thread can fail to mark a future cancelled by
    the stop broken (InvalidStateError): that error from that thread is not
    handed to the hook that prints it; from any other thread it still is,
    and so is any other error from the pool's thread."""
    import threading
    from concurrent.futures import InvalidStateError

    analyses = workers.Analyses(2)
    analyses.task = _in_a_worker
    for name in ("a.py", "b.py"):
        analyses.add(Path(name), b"no candidates")
    pool_thread = analyses.pool._executor_manager_thread
    other_thread = threading.Thread(target=int)
    before = threading.excepthook
    shown = []
    threading.excepthook = lambda args: shown.append(
        (args.exc_type, args.thread is pool_thread)
    )
    try:
        analyses.stop()
        for error, thread in (
            (InvalidStateError("CANCELLED"), pool_thread),
            (InvalidStateError("CANCELLED"), other_thread),
            (ValueError("shown"), pool_thread),
        ):
            args = (type(error), error, None, thread)
            threading.excepthook(threading.ExceptHookArgs(args))
    finally:
        threading.excepthook = before
    assert shown == [(InvalidStateError, False), (ValueError, True)]


def test_the_hook_that_quiets_a_stopped_pools_thread_is_installed_once():
    """Each stop adds its pool's thread to those quieted; the hook itself
    is installed at the first and stays the same after later ones (not a
    chain that grows by one per stop)."""
    import threading

    before = threading.excepthook
    threading.excepthook = lambda args: None
    try:
        hooks = []
        for _ in range(2):
            analyses = workers.Analyses(2)
            analyses.task = _in_a_worker
            for name in ("a.py", "b.py"):
                analyses.add(Path(name), b"no candidates")
            analyses.stop()
            hooks.append(threading.excepthook)
        assert hooks[0] is hooks[1]
        assert hooks[0].quiets_cancelled_futures is True
    finally:
        threading.excepthook = before


def test_a_stopped_pools_thread_is_not_woken_at_exit():
    """concurrent.futures wakes every pool's thread at exit; a stopped
    pool's may have closed its pipe by then, so it is not among them."""
    from concurrent.futures import process

    analyses = workers.Analyses(2)
    analyses.task = _in_a_worker
    for name in ("a.py", "b.py"):
        analyses.add(Path(name), b"no candidates")
    pool_thread = analyses.pool._executor_manager_thread
    assert pool_thread in process._threads_wakeups
    analyses.stop()
    assert pool_thread not in process._threads_wakeups
