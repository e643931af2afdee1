"""The tree pass of backend pairing (model/pairing.py): after the analysis,
for the tests on a builder's own spec it reported, read the files that name
the builder's chain (its subclasses, the backends returning them, the layers
using those), follow the chain until it stops growing, and decide.

Only files that hold one of the chain's names (or define a base a lookup
needs) are parsed, with ``ast``; every file is searched for the names, since
an escape can be anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from vllm_spec_lint.core.name_search import NameSearch
from vllm_spec_lint.edges.cache import PairingCache
from vllm_spec_lint.edges.discovery import module_name_for
from vllm_spec_lint.edges.files import read_source
from vllm_spec_lint.model.ast_fields import CANNOT_PARSE, TOO_DEEP
from vllm_spec_lint.model.class_summaries import ModuleSummary, summarize
from vllm_spec_lint.model.hierarchy import ClassHierarchy, short_name
from vllm_spec_lint.model.pairing import Tree, chain_of, verdict

# The chain grows by a step per round: builder, subclasses and backends,
# layers, their subclasses and bases; more rounds than this is no vLLM.
_ROUNDS = 8


class Pairing:
    """The pass over one tree. :meth:`explore` may be given builders early,
    guessed (the runner guesses them while the workers analyse); the
    summaries it reads serve every later question, and :meth:`decide` reads
    only what the builders actually asked about add."""

    def __init__(
        self,
        files: list[str],
        hierarchy: ClassHierarchy,
        read: Callable[[str], bytes] = read_source,
    ):
        self.hierarchy = hierarchy
        self.reader = _Reader(files, read)
        self.builders: set[str] = set()
        self.searched: set[str] = set()
        self.tree = Tree([])
        # False once a file that names a chain does not parse, or the chain
        # will not stop growing: nothing is decided then.
        self.readable = True

    def explore(self, builders: Iterable[str]) -> None:
        """Read the files of the chains of ``builders`` (and of those before)."""
        new = set(builders) - self.builders
        if not new or not self.readable:
            return
        self.builders |= new
        names = self.searched | {short_name(b) for b in new}
        modules: set[str] = set()
        for _ in range(_ROUNDS):
            new_names = names - self.searched
            new_modules = modules - self.reader.modules_read
            if not new_names and not new_modules:
                return
            if not (
                self.reader.read_naming(new_names)
                and self.reader.read_modules(new_modules)
            ):
                self.readable = False  # a file naming the chain does not parse
                return
            self.searched |= new_names
            self.tree = Tree(self.reader.summaries)
            try:
                for builder in sorted(self.builders):
                    chain = chain_of(builder, self.tree)
                    chain_names = chain.names()
                    names |= chain_names
                    modules |= chain.missing_modules
                    names |= {
                        short_name(table)
                        for table, members in self.tree.tables.items()
                        if chain_names & set(members)
                    }
            except TOO_DEEP:
                # A statement naming it, too deep to walk: the summaries walk
                # a statement when a name it spells is asked about.
                self.readable = False
                return
        self.readable = False  # still growing

    def decide(
        self, own_specs: Iterable[tuple[str, ...]]
    ) -> dict[tuple[str, ...], str]:
        """For each (builder, companions left out) whose test is deliberate,
        why."""
        own_specs = sorted(set(own_specs))
        self.explore(o[0] for o in own_specs)
        if not self.readable:
            return {}
        decided = {}
        try:
            for own_spec in own_specs:
                reason = verdict(own_spec, self.tree, self.hierarchy)
                if reason is not None:
                    decided[own_spec] = reason
        except TOO_DEEP:
            self.readable = False
            return {}
        return decided


# A module-level class statement, in the text after a line break (a search
# for "^class" tries every position; one for the line break and "class" is
# several times faster); a class test of a builder's own spec (the classes
# it names follow, up to the closing parenthesis).
_CLASS = re.compile(rb"\nclass[ \t]+(\w+)")
_FIRST_CLASS = re.compile(rb"class[ \t]+(\w+)")  # on the first line
_OWN_SPEC_TEST = re.compile(
    rb"isinstance\(\s*(?:self\.)?kv_cache_spec\s*,\s*(\([^()]*\)|[\w.]+)"
)


def guess_builders(
    module: str | None, source: bytes, anchors: Iterable[bytes], companions=()
) -> list[str]:
    """The classes of ``source`` that may test their own spec against an
    anchor and none of its companions, from the text alone: a guess to
    start the pass early with. A wrong guess only costs time (a missed
    builder is read later, an extra one is read for nothing): the analysis
    says which builders to decide."""
    if module is None or b"kv_cache_spec" not in source:
        return []
    module = module.removesuffix(".__init__")
    first = _FIRST_CLASS.match(source)
    starts = ([first] if first else []) + list(_CLASS.finditer(source))
    ends = [s.start() for s in starts[1:]] + [len(source)] if starts else []
    guessed = []
    for match, end in zip(starts, ends, strict=True):
        for test in _OWN_SPEC_TEST.finditer(source, match.start(), end):
            named = test.group(1)
            if any(a in named for a in anchors) and not any(
                c in named for c in companions
            ):
                guessed.append(f"{module}.{match.group(1).decode()}")
                break
    return guessed


class _Reader:
    """Reads the files for the pass: each round looks at every file not in
    a summary yet for that round's names. The bytes are kept for the pass
    (read once, not once per round: a tenth of the pass's time on vLLM, for
    its size in memory while the pass runs)."""

    def __init__(self, files: list[str], read: Callable[[str], bytes]):
        self.files = files
        self.read = read
        self.summaries: list[ModuleSummary] = []
        self.summarized: set[str] = set()
        self.modules_read: set[str] = set()
        # A module's last name -> the files that may define it.
        self.by_last_name: dict[str, list[str]] | None = None
        self.contents: dict[str, bytes | None] = {}

    def _bytes(self, name: str) -> bytes | None:
        if name not in self.contents:
            try:
                self.contents[name] = self.read(name)
            except OSError:
                self.contents[name] = None  # the analysis reports it
        return self.contents[name]

    def _summarize(self, name: str, source: bytes) -> bool:
        self.summarized.add(name)
        self.contents.pop(name, None)  # never looked at again
        # A file no import can name still holds uses of the names (a script).
        module = module_name_for(name) or f"<{name}>"
        is_package = module.endswith(".__init__")
        module = module.removesuffix(".__init__")
        self.modules_read.add(module)
        try:
            self.summaries.append(summarize(source, module, is_package))
        except CANNOT_PARSE:
            return False  # unreadable, as CPython's parser or our walk says
        return True

    def read_naming(self, names: set[str]) -> bool:
        """Summarize the files that hold one of ``names``."""
        search = NameSearch(n.encode() for n in names)
        for file in self.files:
            if file in self.summarized:
                continue
            source = self._bytes(file)
            if source is not None and search.found_in(source):
                if not self._summarize(file, source):
                    return False
        return True

    def read_modules(self, modules: set[str]) -> bool:
        """The files defining ``modules`` (bases a lookup needs), if scanned."""
        self.modules_read |= modules  # asked once, found or not
        if self.by_last_name is None:  # "a/b/c.py" and "a/b/c/__init__.py": "c"
            self.by_last_name = {}
            for file in self.files:
                last = os.path.splitext(os.path.basename(file))[0]
                if last == "__init__":
                    last = os.path.basename(os.path.dirname(os.path.abspath(file)))
                self.by_last_name.setdefault(last, []).append(file)
        endings = tuple("." + m for m in modules)
        maybe = {
            file
            for module in modules
            for file in self.by_last_name.get(module.rpartition(".")[2], ())
        }
        for name in self.files:  # in the order of the files, as every pass
            if name in maybe and name not in self.summarized:
                if _dotted(name).endswith(endings):
                    source = self._bytes(name)
                    if source is not None and not self._summarize(name, source):
                        return False
        return True


def _dotted(file: str) -> str:
    """The file's path from the root as a dotted name, after a dot: ".a.b.c"
    for ``a/b/c.py`` and for ``a/b/c/__init__.py``. A module's name ends it."""
    path = os.path.splitext(os.path.abspath(file))[0]
    return "." + path.removesuffix(os.sep + "__init__").replace(os.sep, ".")


class TreePairing:
    """Backend pairing in one run over a tree. While the workers analyse,
    the pass starts with the builders guessed from the files' text (the
    main process would wait anyway); afterwards the verdicts on the tests
    the analysis found come from the cache, or from the pass, which reads
    only what the guess missed."""

    def __init__(
        self,
        files: list[str],
        hierarchy: ClassHierarchy,
        anchors: Iterable[bytes],
        companions: Iterable[bytes] = (),
        cache: PairingCache | None = None,
        spec_modules: Iterable[str] = (),
    ):
        self.files = files
        self.hierarchy = hierarchy
        self.anchors = tuple(anchors)
        self.companions = tuple(companions)
        # Where the spec classes live: their own tests are no builder's.
        self.spec_modules = frozenset(spec_modules)
        self.cache = cache
        self.guessed: list[str] = []
        # Files the run read already, for the pass (not read again).
        self.read_already: dict[str, bytes] = {}
        self._pairing: Pairing | None = None
        self._key: str | None = None
        self._entry: dict | None = None

    def guess(self, name: str, source: bytes) -> None:
        module = module_name_for(name)
        if module not in self.spec_modules:
            self.guessed += guess_builders(
                module, source, self.anchors, self.companions
            )

    def keep(self, name: str, source: bytes) -> None:
        """Bytes the run read: the pass takes them from here."""
        self.read_already[name] = source

    def start(self) -> None:
        if self.guessed and self._cached() is None:
            self._pass().explore(self.guessed)
            if not self._pairing.readable:
                # A guessed chain that cannot be read (a file naming it does
                # not parse, or it will not stop growing) must not leave the
                # builders the analysis asks about undecided: ``decide``
                # starts afresh, as it does without workers.
                self._pairing = None

    def decide(self, own_specs) -> dict[tuple[str, ...], str]:
        own_specs = set(own_specs)
        if not own_specs:
            return {}
        entry = dict(self._cached() or {})
        todo = own_specs - entry.keys()
        if todo:
            found = self._pass().decide(todo)
            entry.update({o: found.get(o) for o in todo})
            if self.cache is not None:
                self.cache.put(self._key, entry)
        return {o: entry[o] for o in own_specs if entry[o] is not None}

    def _pass(self) -> Pairing:
        if self._pairing is None:
            self._pairing = Pairing(self.files, self.hierarchy, self._read)
        return self._pairing

    def _read(self, name: str) -> bytes:
        source = self.read_already.pop(name, None)
        return read_source(name) if source is None else source

    def _cached(self) -> dict | None:
        if self.cache is not None and self._key is None:
            self._key = self.cache.key(self.files)
            self._entry = self.cache.get(self._key)
        return self._entry


def with_pairing(result, decided: dict[tuple[str, ...], str], strict: bool) -> None:
    """Apply the verdicts to one file's result: a deliberate test leaves the
    findings for the suppressed (tagged and kept, with an unsafe fix, in
    strict mode), as the file's own narrowing does."""
    if not decided or not any(f.own_spec in decided for f in result.findings):
        return
    kept = []
    for finding in result.findings:
        reason = decided.get(finding.own_spec) if finding.own_spec else None
        if reason is None:
            kept.append(finding)
            continue
        fix = finding.fix and replace(finding.fix, applicability="unsafe")
        tagged = replace(finding, suppressed_by=reason, fix=fix)
        if strict:
            kept.append(tagged)
        else:
            result.suppressed = sorted(
                [*result.suppressed, tagged], key=lambda f: (f.location, f.code)
            )
    result.findings = kept
