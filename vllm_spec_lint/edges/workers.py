"""The worker processes of a run: files are analysed as they are read, in
a pool started at the second file to analyse, while the main process reads
on; over a whole tree, the main process then takes back its share of the
files no worker has started, runs the backend pairing, and takes back what
no worker has started yet."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

from vllm_spec_lint.core.findings import parse_error
from vllm_spec_lint.edges.results import FileResult


def _load_analysis() -> None:
    """Import the analysis (libcst): in the main process before forking two
    workers or more, else in each worker as it starts; then save the code
    the import compiled (edges/code_cache.py), as a worker's run ends
    without saving it."""
    import libcst  # noqa: F401

    import vllm_spec_lint.model.semantic_model  # noqa: F401
    import vllm_spec_lint.rules  # noqa: F401
    from vllm_spec_lint.edges.code_cache import save_compiled

    save_compiled()


def _start_worker() -> None:
    """A worker leaves Ctrl-C to the main process, which stops it (a worker
    that took it would report it as the file's outcome and go on). A
    spawned worker starts afresh: its imports compile through the code
    cache too (a forked one has the main process's already)."""
    import signal

    from vllm_spec_lint.edges import code_cache

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    code_cache.start()
    _load_analysis()


class Analyses:
    """Analyses files as they are read, results in the order they came: in
    this process when there is one file (or ``jobs`` is 1); from a second
    file on, in a pool of worker processes started then. The pool may start
    before the settings are known; ``task`` is set once they are, and in a
    check (not a fix) ``screen`` and ``finish``, its two halves: the file's
    result or its slice, without libcst; the result from the slice."""

    task: Callable[[Path, bytes], FileResult]
    screen: Callable[[Path, bytes], object] | None = None
    finish: Callable[[Path, bytes, object], FileResult] | None = None

    def __init__(self, jobs: int):
        self.jobs = jobs
        # Whether this process has work of its own while the workers run (a
        # whole tree's backend pairing): one of the ``jobs`` is left to it.
        self.busy_here = False
        self.pool = None
        # Per file: its path, its bytes, and its outcome so far: None (to be
        # analysed here), a Future, or a FileResult.
        self.handles: list[list] = []
        # The first of the files taken back so far (``help`` takes them
        # from the last back), or None.
        self.taken_back_from: int | None = None

    @property
    def workers(self) -> int:
        return self.jobs - 1 if self.busy_here else self.jobs

    def start(self, *, import_here: bool = True) -> None:
        """Start the worker pool now. The analysis (libcst: a fifth of a cold
        run's CPU) is imported where it is paid once: here, before forking
        workers that share it, when there are two or more; a lone worker
        imports it while this process goes on. ``import_here=False``: each
        worker imports it (they start before this process reads the files)."""
        if self.jobs > 1 and self.pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            fork = sys.platform.startswith("linux")
            if fork and import_here and self.workers > 1:
                _load_analysis()
            context = multiprocessing.get_context("fork" if fork else "spawn")
            self.pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_start_worker
            )
            self.pool.submit(int)  # the processes start at the first task

    def add(self, path: Path, source: bytes) -> None:
        if self.jobs > 1 and self.pool is None and self.handles:
            self.start()
            first = self.handles[0]
            first[2] = self.pool.submit(self.task, first[0], first[1])
        future = None
        if self.pool is not None:
            future = self.pool.submit(self.task, path, source)
        self.handles.append([path, source, future])

    def help(self, share: float = 1.0) -> None:
        """Take back files no worker has started, last first, up to
        ``share`` of their bytes, and screen them here (CPython's parser and
        the slicer; libcst is not imported here): a file without candidates
        is done, the others go back to the workers as slices. The workers go
        on from the first file: with the whole share, they meet where the
        work ends."""
        if self.pool is None or self.screen is None or not self.busy_here:
            return
        from concurrent.futures.process import BrokenProcessPool

        end = (
            len(self.handles) if self.taken_back_from is None else self.taken_back_from
        )
        waiting = [
            len(source)
            for _, source, future in self.handles[:end]
            if not (future.running() or future.done())
        ]
        budget = share * sum(waiting)
        taken = 0
        for index in range(end - 1, -1, -1):
            path, source, future = self.handles[index]
            if taken >= budget or not future.cancel():
                return  # a worker has it, and every file before it
            self.taken_back_from = index
            taken += len(source)
            screened = self.screen(path, source)
            if not isinstance(screened, FileResult):
                try:
                    screened = self.pool.submit(self.finish, path, source, screened)
                except BrokenProcessPool:  # a worker died since
                    screened = _died(path)
            self.handles[index][2] = screened

    def results(self) -> Iterator[FileResult]:
        if self.pool is None:
            for path, source, _ in self.handles:
                yield self.task(path, source)
            return
        from concurrent.futures.process import BrokenProcessPool

        try:
            for path, _, outcome in self.handles:
                if isinstance(outcome, FileResult):
                    yield outcome
                    continue
                try:
                    yield outcome.result()
                except BrokenProcessPool:
                    yield _died(path)
        except BaseException:
            self.stop()
            raise
        self.pool.shutdown()

    def stop(self) -> None:
        """Stop at once: queued files are dropped and the workers ended
        (they write nothing, so nothing is left half-done)."""
        if self.pool is not None:
            workers = list((self.pool._processes or {}).values())
            pool_thread = self.pool._executor_manager_thread
            _quiet_cancelled_futures_breaking(pool_thread)
            self.pool.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
            _not_woken_at_exit(pool_thread)
            self.pool = None


# The manager thread of each pool this process stopped.
_stopped_pool_threads: weakref.WeakSet = weakref.WeakSet()


def _quiet_cancelled_futures_breaking(pool_thread) -> None:
    """Ending the workers breaks the pool, and the pool's own thread then
    marks each queued future broken; on CPython 3.11 one cancelled just
    before raises InvalidStateError in that thread, which Python prints as
    a traceback after "error: interrupted". The run is stopping and nothing
    waits for those futures: that error, from that thread, is not printed
    (any other is, and that error from any other thread)."""
    import threading

    if pool_thread is not None:
        _stopped_pool_threads.add(pool_thread)
    shown = threading.excepthook
    if getattr(shown, "quiets_cancelled_futures", False):
        return

    def hook(args) -> None:
        from concurrent.futures import InvalidStateError

        stopping = args.thread in _stopped_pool_threads
        if not (stopping and issubclass(args.exc_type, InvalidStateError)):
            shown(args)

    hook.quiets_cancelled_futures = True
    threading.excepthook = hook


def _not_woken_at_exit(pool_thread) -> None:
    """At exit, concurrent.futures wakes each pool's thread through a pipe;
    a stopped pool's thread may close that pipe at the same moment (it ends
    with its workers), and the write then fails with "Bad file descriptor",
    printed after "error: interrupted" (CPython 3.11 checks, then writes,
    unlocked). That thread needs no waking: it is left out."""
    from concurrent.futures import process

    if pool_thread is not None:  # None: it had ended already
        process._threads_wakeups.pop(pool_thread, None)


def _died(path: Path) -> FileResult:
    message = "the analysis process died on this file"
    return FileResult(str(path), [parse_error(str(path), message)])
