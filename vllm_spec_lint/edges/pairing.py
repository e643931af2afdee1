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
from collections.abc import Callable, Iterable
from dataclasses import replace

from vllm_spec_lint.edges.discovery import module_name_for
from vllm_spec_lint.edges.files import read_source
from vllm_spec_lint.model.class_summaries import ModuleSummary, summarize
from vllm_spec_lint.model.hierarchy import ClassHierarchy, short_name
from vllm_spec_lint.model.pairing import Tree, chain_of, verdict

# The chain grows by a step per round: builder, subclasses and backends,
# layers, their subclasses and bases; more rounds than this is no vLLM.
_ROUNDS = 8
_ENDING = 6


def decide(
    own_specs: Iterable[tuple[str, ...]],
    files: list[str],
    hierarchy: ClassHierarchy,
    read: Callable[[str], bytes] = read_source,
) -> dict[tuple[str, ...], str]:
    """For each (builder, companions left out) whose test is deliberate, why."""
    own_specs = sorted(set(own_specs))
    if not own_specs:
        return {}
    reader = _Reader(files, read)
    names = {short_name(o[0]) for o in own_specs}
    modules: set[str] = set()
    searched: set[str] = set()
    tree = Tree([])
    for _ in range(_ROUNDS):
        new_names, new_modules = names - searched, modules - reader.modules_read
        if not new_names and not new_modules:
            break
        if not reader.read_naming(new_names) or not reader.read_modules(new_modules):
            return {}  # a file that names the chain does not parse: unknown
        searched |= new_names
        tree = Tree(reader.summaries)
        names, modules = set(names), set(modules)
        for own_spec in own_specs:
            chain = chain_of(own_spec[0], tree)
            chain_names = chain.names()
            names |= chain_names
            modules |= chain.missing_modules
            names |= {
                short_name(table)
                for table, members in tree.tables.items()
                if chain_names & set(members)
            }
    else:
        return {}  # still growing: unknown
    decided = {}
    for own_spec in own_specs:
        reason = verdict(own_spec, tree, hierarchy)
        if reason is not None:
            decided[own_spec] = reason
    return decided


class _Reader:
    def __init__(self, files: list[str], read: Callable[[str], bytes]):
        self.files = files
        self.read = read
        self.contents: dict[str, bytes | None] = {}
        self.summaries: list[ModuleSummary] = []
        self.summarized: set[str] = set()
        self.modules_read: set[str] = set()
        # A name's ending -> the files that hold it.
        self.holding: dict[bytes, list[str]] = {}

    def _bytes(self, name: str) -> bytes | None:
        if name not in self.contents:
            try:
                self.contents[name] = self.read(name)
            except OSError:
                self.contents[name] = None  # the analysis reports it
        return self.contents[name]

    def _summarize(self, name: str, source: bytes) -> bool:
        if name in self.summarized:
            return True
        self.summarized.add(name)
        module = module_name_for(name)
        if module is None:
            return True
        is_package = module.endswith(".__init__")
        module = module.removesuffix(".__init__")
        self.modules_read.add(module)
        try:
            self.summaries.append(summarize(source, module, is_package))
        except (SyntaxError, ValueError, RecursionError):
            return False
        return True

    def read_naming(self, names: set[str]) -> bool:
        """Summarize the files that hold one of ``names``. Names are looked
        for by their ending first: a search of every file costs the same for
        any needle, and chains share endings (``...Builder``, ``...Backend``)."""
        groups: dict[bytes, list[bytes]] = {}
        for name in names:
            groups.setdefault(name[-_ENDING:].encode(), []).append(name.encode())
        for ending, needles in groups.items():
            if ending not in self.holding:
                self.holding[ending] = [
                    f for f in self.files if ending in (self._bytes(f) or b"")
                ]
            for name in self.holding[ending]:
                source = self._bytes(name)
                if name in self.summarized or not any(n in source for n in needles):
                    continue
                if not self._summarize(name, source):
                    return False
        return True

    def read_modules(self, modules: set[str]) -> bool:
        """The files defining ``modules`` (bases a lookup needs), if scanned."""
        self.modules_read |= modules  # asked once, found or not
        suffixes = tuple(
            os.sep + m.replace(".", os.sep) + tail
            for m in modules
            for tail in (".py", os.sep + "__init__.py")
        )
        for name in self.files:
            if name not in self.summarized and os.path.abspath(name).endswith(suffixes):
                source = self._bytes(name)
                if source is not None and not self._summarize(name, source):
                    return False
        return True


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
