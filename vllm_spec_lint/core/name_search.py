"""Whether bytes hold any of several names, in one scan of them.

A tree pass asks this of every file: the screen (does a file name an
anchor?) and backend pairing's rounds (does it name the chain?). One
``bytes.find`` per name reads vLLM's 50 MB at about 2 GB/s, once per name;
an Aho-Corasick automaton with a vectorised prefilter (ahocorasick-rs) reads
them once for all the names, several times faster than one find (measured
in docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, BytesAhoCorasick


class NameSearch:
    """The names, ready to be looked for in any number of texts."""

    def __init__(self, names: Iterable[bytes]):
        self.names = tuple(sorted(set(names)))
        # Any match means a name is there; leftmost-first keeps the
        # prefilter fast with many names (the standard kind loses it past
        # about twenty on vLLM's names).
        self._automaton = BytesAhoCorasick(
            self.names, matchkind=MATCHKIND_LEFTMOST_FIRST
        )

    def found_in(self, source: bytes) -> bool:
        """Whether ``source`` holds one of the names anywhere."""
        return bool(self._automaton.find_matches_as_indexes(source))
