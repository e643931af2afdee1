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
# The shortest ending shared by names that is looked for instead of them:
# short needles match too often to pay.
_SHARED_ENDING = 12


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
        self.dotted: list[str] | None = None
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
        """Summarize the files that hold one of ``names``. A search costs
        about the same whatever it looks for: names that share a long ending
        (``...IndexerMetadataBuilder``) are looked for by it, and only a
        file that holds the ending is searched for the names."""
        groups: dict[bytes, list[bytes]] = {}
        for name in names:
            ending = _shared_ending(name, names).encode()
            groups.setdefault(ending, []).append(name.encode())
        for file in self.files:
            if file in self.summarized:
                continue
            source = self._bytes(file)
            if source is None:
                continue
            if any(
                ending in source and any(n in source for n in group)
                for ending, group in groups.items()
            ):
                if not self._summarize(file, source):
                    return False
        return True

    def read_modules(self, modules: set[str]) -> bool:
        """The files defining ``modules`` (bases a lookup needs), if scanned."""
        self.modules_read |= modules  # asked once, found or not
        if self.dotted is None:  # "a/b/c.py" -> ".a.b.c", ".a.b" for a package
            self.dotted = [
                "."
                + os.path.splitext(os.path.abspath(f))[0]
                .removesuffix(os.sep + "__init__")
                .replace(os.sep, ".")
                for f in self.files
            ]
        endings = tuple("." + m for m in modules)
        for name, dotted in zip(self.files, self.dotted, strict=True):
            if name not in self.summarized and dotted.endswith(endings):
                source = self._bytes(name)
                if source is not None and not self._summarize(name, source):
                    return False
        return True


def _shared_ending(name: str, names: set[str]) -> str:
    """The longest ending of ``name`` at least _SHARED_ENDING long that the
    most other ``names`` share; ``name`` itself when none does."""
    best, count = name, 1
    for size in range(_SHARED_ENDING, len(name)):
        ending = name[-size:]
        sharing = sum(1 for n in names if n.endswith(ending))
        if sharing < 2:
            break
        if sharing >= count:
            best, count = ending, sharing
    return best


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
