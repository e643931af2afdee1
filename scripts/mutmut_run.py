"""``mutmut`` with its stats phase's frame walk memoized, and each mutant's
tests run fastest first.

    python scripts/mutmut_run.py run [MUTANT ...]     # what nox -s mutation runs

With ``max_stack_depth`` set (setup.cfg), mutmut's stats phase walks the
stack on every call of a mutated function and resolves each frame's file
name on disk to tell our frames from libcst's and pytest's. libcst's
visitors call deep, so a whole-package run spent hours resolving the same
few hundred paths. This wrapper answers the same question from a cache: the
answer for a file name does not change during a run.

mutmut hands pytest a mutant's tests in a set's order, and pytest (with
``-x``) stops at the first failure: a mutant a one-millisecond test kills
could wait behind a test of a minute. Sorted by the durations mutmut's stats
phase measured, a killed mutant costs about its cheapest killing test.
Everything else is mutmut's own command line. Written against mutmut 3.8
(noxfile pins it).
"""

from __future__ import annotations

import functools
import inspect
import sys
from pathlib import Path

import mutmut.mutation.trampoline
import mutmut.stats
from mutmut.__main__ import cli
from mutmut.configuration import config
from mutmut.runners.harness import PytestRunner
from mutmut.state import state


@functools.cache
def _frame_kind(filename: str) -> str:
    """'runner' stops the walk, 'ours' counts against the depth, 'other' is
    passed over: mutmut's own test for each, as in mutmut.stats, but for
    code compiled from a string (``<string>``: dataclasses' methods, made
    through the code cache), which has no file and is passed over too
    (mutmut's own walk stops the stats phase with FileNotFoundError)."""
    if "pytest" in filename or "hammett" in filename or "unittest" in filename:
        return "runner"
    try:
        file_path = Path(filename).resolve(strict=True)
    except OSError:
        return "other"
    if any(
        path in file_path.parents for path in config().resolved_mutated_source_paths
    ):
        return "ours"
    return "other"


def record_trampoline_hit(name: str, caller: str | None = None) -> None:
    if config().max_stack_depth != -1:
        frame = inspect.currentframe()
        budget = config().max_stack_depth
        while budget and frame:
            kind = _frame_kind(frame.f_code.co_filename)
            frame = frame.f_back
            if kind == "runner":
                break
            if kind == "ours":
                budget -= 1
        if not budget:
            return
    state()._stats.add(name)
    if caller is not None and config().track_dependencies:
        state().function_dependencies[name].add(caller)


mutmut.stats.record_trampoline_hit = record_trampoline_hit
mutmut.mutation.trampoline.record_trampoline_hit = record_trampoline_hit

_pytest_args = PytestRunner._pytest_args_regular_run


def _fastest_first(self, tests):
    durations = state().duration_by_test
    return _pytest_args(self, sorted(tests, key=lambda t: (durations.get(t, 0.0), t)))


PytestRunner._pytest_args_regular_run = _fastest_first

if __name__ == "__main__":
    sys.exit(cli())
