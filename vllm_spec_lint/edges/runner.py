"""The edge around the analysis core: reading files, finding the class
hierarchy in the scanned tree, and running the core over many files."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from vllm_spec_lint.core.analysis import (
    FileAnalysis,
    analyze_slice,
    analyze_source,
    might_have_findings,
    screen_source,
)
from vllm_spec_lint.core.findings import PARSE_ERROR_CODE, Finding, parse_error, wanted
from vllm_spec_lint.core.last_analysis import LastAnalysis
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.cache import (
    ClassBasesCache,
    CleanFiles,
    PairingCache,
    ResultCache,
    holds_results,
)
from vllm_spec_lint.edges.discovery import (
    forget_packages,
    iter_python_files,
    module_name_for,
)
from vllm_spec_lint.edges.files import (
    WriteRefused,
    decode_source,
    ends_with_path,
    pause_point,
    read_source,
    write_atomically,
)
from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy
from vllm_spec_lint.edges.pairing import TreePairing, with_pairing
from vllm_spec_lint.edges.results import FileResult
from vllm_spec_lint.edges.spec_classes import with_spec_classes
from vllm_spec_lint.edges.workers import Analyses
from vllm_spec_lint.model.hierarchy import ClassHierarchy, read_class_bases, short_name
from vllm_spec_lint.repair.formatting import FormatterChoice
from vllm_spec_lint.repair.formatting import choose as choose_formatter


@dataclass
class CheckRun:
    results: list[FileResult]
    hierarchy: ClassHierarchy
    warnings: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def suppressed(self) -> list[Finding]:
        return [f for r in self.results for f in r.suppressed]


@dataclass(frozen=True)
class Mode:
    """What a run does to each file."""

    fix: bool = False
    unsafe: bool = False
    write: bool = False
    # What lays out fixed statements (repair/formatting.py), when fixing.
    formatter: FormatterChoice | None = None
    # Tests on a builder's own spec wait for backend pairing (edges/pairing.py)
    # before they are fixed: all of them (the first pass of a tree), or those
    # it found deliberate.
    defer_own_specs: bool = False
    deliberate: frozenset[tuple[str, ...]] = frozenset()

    def fixes(self, finding: Finding) -> bool:
        """Whether a fix run may fix ``finding`` now."""
        if not finding.own_spec:
            return True
        return not self.defer_own_specs and finding.own_spec not in self.deliberate


def _read(
    name: str,
    config: Config,
    hierarchy: ClassHierarchy,
    clean: CleanFiles | None,
    source: bytes | None = None,
    keep: Callable[[str, bytes], None] | None = None,
) -> FileResult | bytes:
    """The file's bytes (``source`` when read already) when it needs
    analysing, else its result already; ``keep`` is given the bytes read."""
    info = None
    if clean is not None:
        try:
            info = os.stat(name)
        except OSError:
            pass  # the reader says why
        if info is not None and clean.is_clean(name, info):
            return FileResult(name, [])
    try:
        source = read_source(name) if source is None else source
    except OSError as e:
        reason = e.strerror or str(e)
        return FileResult(name, [parse_error(name, f"cannot read: {reason}")])
    if keep is not None:
        keep(name, source)
    screened = _screen(name, source, config, hierarchy)
    if isinstance(screened, FileResult) and not screened.findings:
        if info is not None:
            clean.mark_clean(name, info)
    elif clean is not None:
        clean.forget(name)
    return screened


def _screen(
    name: str, source: bytes, config: Config, hierarchy: ClassHierarchy
) -> FileResult | bytes:
    """The bytes when they need analysing, else the result already: VSL900
    for bytes that are no Python source text at all (any file), none for
    bytes that name no anchor, VSL900 for bytes over the size limit."""
    not_text = _not_source_text(source)
    if not_text is not None:
        return FileResult(name, [parse_error(name, not_text)])
    if not might_have_findings(source, config, hierarchy):
        return FileResult(name, [])
    if len(source) > config.max_file_size_mb * 2**20:
        size = len(source) / 2**20
        message = (
            f"not analysed: {size:.1f} MiB is over the "
            f"{config.max_file_size_mb} MiB limit (max-file-size)"
        )
        return FileResult(name, [parse_error(name, message)])
    return source


def _not_source_text(source: bytes) -> str | None:
    """Why ``source`` cannot be a Python file whatever it names (a NUL byte,
    bytes its encoding cannot decode), or None. Every file is asked, not only
    those that name an anchor (a binary file named ``.py`` must not pass as
    checked); ASCII text, nearly every file, costs one scan."""
    if b"\0" in source:
        return "cannot parse: source code string cannot contain null bytes"
    if source.isascii():
        return None
    try:
        decode_source(source)
    except (SyntaxError, UnicodeDecodeError) as e:
        return f"cannot decode: {e}"
    return None


def analyze_file(
    path: Path,
    source: bytes,
    config: Config,
    hierarchy: ClassHierarchy,
    mode: Mode,
    last: LastAnalysis | None = None,
) -> FileResult:
    """Analyse (and with ``mode.fix``, fix) one file; runs in a worker.
    ``last``: the file's last analysis, when it is checked again and again."""
    name = str(path)
    pause_point("analyse", path)
    try:
        return _analyze_file(path, source, config, hierarchy, mode, last)
    except Exception as e:  # one odd file must not stop the run
        return _internal_error(name, e)


def _internal_error(name: str, error: Exception) -> FileResult:
    message = f"internal error, please report: {type(error).__name__}: {error}"
    return FileResult(name, [parse_error(name, message)])


def screen_file(
    path: Path, source: bytes, config: Config, hierarchy: ClassHierarchy
) -> FileResult | object:
    """A check's first half of :func:`analyze_file`, without libcst: the
    file's result, or its slice for :func:`finish_file`."""
    name = str(path)
    pause_point("analyse", path)
    try:
        text, _ = decode_source(source)
    except (SyntaxError, UnicodeDecodeError) as e:
        return FileResult(name, [parse_error(name, f"cannot decode: {e}")])
    try:
        screened = screen_source(
            text, name, config, hierarchy, module_name=module_name_for(path)
        )
    except Exception as e:  # one odd file must not stop the run
        return _internal_error(name, e)
    if isinstance(screened, FileAnalysis):
        return FileResult(name, screened.findings, suppressed=screened.suppressed)
    return screened


def finish_file(
    path: Path, source: bytes, relevant, config: Config, hierarchy: ClassHierarchy
) -> FileResult:
    """A check's second half of :func:`analyze_file`: the rules over the
    slice :func:`screen_file` returned; runs in a worker."""
    name = str(path)
    try:
        text, _ = decode_source(source)
        analysis = analyze_slice(
            relevant, text, name, config, hierarchy, module_name=module_name_for(path)
        )
    except Exception as e:  # one odd file must not stop the run
        return _internal_error(name, e)
    return FileResult(name, analysis.findings, suppressed=analysis.suppressed)


def _analyze_file(
    path: Path,
    source: bytes,
    config: Config,
    hierarchy: ClassHierarchy,
    mode: Mode,
    last: LastAnalysis | None,
) -> FileResult:
    name = str(path)
    try:
        text, encoding = decode_source(source)
    except (SyntaxError, UnicodeDecodeError) as e:
        return FileResult(name, [parse_error(name, f"cannot decode: {e}")])
    module_name = module_name_for(path)
    if not mode.fix:
        analysis = analyze_source(
            text, name, config, hierarchy, module_name=module_name, last=last
        )
        return FileResult(name, analysis.findings, suppressed=analysis.suppressed)
    from vllm_spec_lint.core.fixing import fix_source
    from vllm_spec_lint.repair.formatting import FormatError

    try:
        outcome = fix_source(
            text,
            name,
            config,
            hierarchy,
            module_name=module_name,
            unsafe=mode.unsafe,
            formatter=mode.formatter.for_file(name) if mode.formatter else None,
            select=mode.fixes,
        )
    except FormatError as e:
        analysis = analyze_source(
            text, name, config, hierarchy, module_name=module_name
        )
        return FileResult(
            name,
            analysis.findings,
            failure=f"not fixed: the formatter failed: {e}",
            suppressed=analysis.suppressed,
        )
    result = FileResult(name, outcome.remaining, failure=outcome.failure)
    if outcome.failure is None and outcome.text != text:
        result.original = source
        result.fixed_source = outcome.text.encode(encoding)
        result.fixed = outcome.fixed
    return result


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``written`` files had been fixed on disk by then
    (each whole: a file is written in one step or not at all)."""

    def __init__(self, written: int):
        super().__init__(written)
        self.written = written


class _FixWriter:
    """Writes fixed files in the main process, so that an interrupted run
    knows what it wrote and its workers can be ended at any point."""

    def __init__(self) -> None:
        self.written = 0

    def write(self, result: FileResult, config: Config, hierarchy) -> None:
        """Write ``result``'s fixed source; on failure the result says so and
        holds the file's findings as they stand."""
        import signal

        # Ctrl-C waits for the write in progress: the count stays exact.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            write_atomically(Path(result.path), result.original, result.fixed_source)
            self.written += 1
            return
        except (WriteRefused, OSError) as e:
            failure = f"not written: {e}"
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        text, _ = decode_source(result.original)
        result.failure = failure
        result.findings = analyze_source(
            text,
            result.path,
            config,
            hierarchy,
            module_name=module_name_for(result.path),
        ).findings
        result.fixed = ()


def run_source(
    name: str,
    source: bytes,
    config: Config,
    *,
    fix: bool = False,
    unsafe: bool = False,
    force_exclude: bool = False,
    hierarchy: ClassHierarchy | None = None,
    last: LastAnalysis | None = None,
) -> CheckRun:
    """One source that is not read from disk (standard input, an editor's
    buffer), reported under ``name``: the hierarchy (read here unless given)
    and exclusions as for a file at ``name``. Nothing is written or cached,
    but ``last`` (the buffer's last analysis) is reused and kept."""
    path = Path(name)
    forget_packages()
    warnings: list[str] = []
    if hierarchy is None:
        hierarchy = load_hierarchy([path], [], config, warnings)
    config, hierarchy = with_spec_classes(config, [], hierarchy, warnings)
    if force_exclude and not list(
        iter_python_files([path], config, force_exclude=True)
    ):
        return CheckRun([], hierarchy, warnings)
    mode = Mode(fix, unsafe, False, _formatter(fix, path, config, warnings))
    result = _screen(name, source, config, hierarchy)
    if isinstance(result, bytes):
        result = analyze_file(path, source, config, hierarchy, mode, last)
    return CheckRun([result], hierarchy, warnings)


def _workers_start_early(
    files: list[str], config: Config, whole_tree: bool, use_cache: bool
) -> bool:
    """Whether the workers start before the hierarchy is read, to import
    the analysis while this process reads it and the files: when discovery
    reads every file first, and over a tree holding a family's own module
    (a vLLM checkout) with nothing cached, whose files naming the anchor
    are then analysed. Not otherwise: a run may analyse nothing at all (a
    warm one, a tree without the anchor), and would wait for idle workers."""
    if len(files) < 2:
        return False
    if config.discover_families:
        return True
    if not whole_tree or (use_cache and holds_results(config.root)):
        return False
    own = [f.module_path for f in config.families]
    return any(ends_with_path(name, path) for name in files for path in own)


def _formatter(
    fix: bool, start: Path, config: Config, warnings: list[str]
) -> FormatterChoice | None:
    """What lays out fixed statements, when fixing: the configured formatter,
    or for ``auto`` the one the project at ``start`` uses."""
    if not fix:
        return None
    return choose_formatter(
        config.fix_formatter, start.absolute(), config.line_length, warnings
    )


def run(
    paths: list[Path],
    config: Config,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = False,
    progress: Callable[[int, int], None] | None = None,
    force_exclude: bool = False,
    jobs: int | None = None,
    use_cache: bool = True,
    follow_links: bool = False,
    on_result: Callable[[FileResult], None] | None = None,
) -> CheckRun:
    """Check (and with ``fix``, fix; with ``write``, write) the Python files
    under ``paths``. Ctrl-C stops it at once: RunInterrupted.

    ``on_result`` is given each analysed file's result as it comes in
    (while this process waits for the workers), before backend pairing's
    verdicts, which may still move findings with an ``own_spec`` to the
    suppressed."""
    analyses = Analyses(jobs or os.cpu_count() or 1)
    writer = _FixWriter()
    try:
        return _run(
            paths, config, analyses, writer, Mode(fix, unsafe, write), progress,
            force_exclude=force_exclude, use_cache=use_cache, follow_links=follow_links,
            on_result=on_result,
        )  # fmt: skip
    except KeyboardInterrupt:
        analyses.stop()
        raise RunInterrupted(writer.written) from None
    except BaseException:
        # An internal error: no worker outlives the run (a worker holds the
        # command's output streams open, and its caller would wait on them).
        analyses.stop()
        raise


def _run(
    paths: list[Path],
    config: Config,
    analyses: Analyses,
    writer: _FixWriter,
    mode: Mode,
    progress: Callable[[int, int], None] | None,
    *,
    force_exclude: bool,
    use_cache: bool,
    follow_links: bool,
    on_result: Callable[[FileResult], None] | None,
) -> CheckRun:
    forget_packages()
    files = list(
        iter_python_files(
            paths, config, force_exclude=force_exclude, follow_links=follow_links
        )
    )
    warnings: list[str] = []
    # Backend pairing reads the whole tree; a run given files (pre-commit's)
    # sees a few, and keeps reporting as flake8 and the editor do.
    whole_tree = bool(paths) and all(Path(p).is_dir() for p in paths)
    # This process runs the pairing meanwhile.
    analyses.busy_here = whole_tree
    if _workers_start_early(files, config, whole_tree, use_cache):
        analyses.start(import_here=False)
    hierarchy = load_hierarchy(
        paths,
        files,
        config,
        warnings,
        class_bases=ClassBasesCache(config.root) if use_cache else read_class_bases,
    )
    # Reading spec classes may read every file first; the analysis takes the bytes.
    preread: dict[str, bytes] = {}

    def read_and_keep(name: str) -> bytes:
        preread[name] = read_source(name)
        return preread[name]

    config, hierarchy = with_spec_classes(
        config, files, hierarchy, warnings, read_and_keep
    )
    fix, unsafe = mode.fix, mode.unsafe
    start = paths[0] if paths else Path(".")
    mode = replace(
        mode,
        formatter=_formatter(fix, start, config, warnings),
        defer_own_specs=fix and whole_tree,
    )
    cache = ResultCache(config.root, config, hierarchy) if use_cache else None
    clean = CleanFiles(config.root, config, hierarchy) if use_cache else None
    results: list[FileResult | None] = [None] * len(files)
    analyses.task = functools.partial(
        analyze_file, config=config, hierarchy=hierarchy, mode=mode
    )
    if not fix:
        analyses.screen = functools.partial(
            screen_file, config=config, hierarchy=hierarchy
        )
        analyses.finish = functools.partial(
            finish_file, config=config, hierarchy=hierarchy
        )
    analysed: list[tuple[int, str | None]] = []  # (index, cache key)
    pairing = None
    if whole_tree:
        pairing = TreePairing(
            files,
            hierarchy,
            {short_name(f.anchor).encode() for f in config.families},
            {short_name(c).encode() for f in config.families for c in f.companions},
            PairingCache(config.root, config, hierarchy) if use_cache else None,
            {m for f in config.families for m in f.modules},
        )
    held_sources: dict[int, bytes] = {}
    done = 0

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(files))

    for index, name in enumerate(files):
        read = _read(
            name, config, hierarchy, clean, preread.pop(name, None),
            pairing.keep if pairing is not None else None,
        )  # fmt: skip
        key = None
        if isinstance(read, bytes) and cache is not None:
            key = cache.key(name, module_name_for(name), read)
            hit = cache.get(key, name)
            # A fix run can use an entry only when it holds nothing to fix.
            if hit is not None and not (fix and any(wanted(f, unsafe) for f in hit[0])):
                read = FileResult(name, hit[0], suppressed=hit[1])
        if isinstance(read, FileResult):
            results[index] = read
            advance()
        else:
            analyses.add(Path(name), read)
            analysed.append((index, key))
            if pairing is not None:
                pairing.guess(name, read)
            if mode.defer_own_specs:
                held_sources[index] = read
    if pairing is not None and analyses.pool is not None:
        # This process screens its share of the files no worker has started
        # (as one of the workers: the pass it runs next costs about what
        # their libcst part does), runs the pass while they go on, then
        # takes back what they have not started yet.
        analyses.help(share=1 / (analyses.workers + 1))
        pairing.start()
    analyses.help()
    # A fix that waits for backend pairing holds its file back until then.
    held: list[int] = []
    for (index, key), result in zip(analysed, analyses.results(), strict=True):
        results[index] = result
        if on_result is not None:
            on_result(result)
        if (
            pairing is not None
            and mode.defer_own_specs
            and any(f.own_spec for f in result.findings)
        ):
            held.append(index)
            continue
        if mode.write and result.fixed_source is not None:
            writer.write(result, config, hierarchy)
        advance()
        if cache is not None and key is not None and result.fixed_source is None:
            if not any(f.code == PARSE_ERROR_CODE for f in result.findings):
                cache.put(key, result.findings, result.suppressed)
    if clean is not None:
        clean.save()
    own_specs = {f.own_spec for r in results for f in r.findings if f.own_spec}
    decided = pairing.decide(own_specs) if pairing is not None else {}
    for index in held:
        result = results[index]
        waiting = {f.own_spec for f in result.findings if f.own_spec}
        if not waiting <= decided.keys():  # some are fixed after all
            source = held_sources[index]
            again = replace(mode, defer_own_specs=False, deliberate=frozenset(decided))
            result = results[index] = analyze_file(
                Path(result.path), source, config, hierarchy, again
            )
        if mode.write and result.fixed_source is not None:
            writer.write(result, config, hierarchy)
        advance()
    for result in results:
        with_pairing(result, decided, config.strict)
    return CheckRun(results, hierarchy, warnings)
