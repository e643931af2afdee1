"""Whether bytes hold any of several names, in one scan of them.

A tree pass asks this of every file: the screen (does a file name an
anchor?) and backend pairing's rounds (does it name the chain?). One
``bytes.find`` per name reads vLLM's 50 MB at about 2 GB/s, once per name;
an Aho-Corasick automaton with a vectorised prefilter (ahocorasick-rs) reads
them once for all the names, several times faster than one find (measured
in docs/performance.md).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, AhoCorasick, BytesAhoCorasick

# How many of a name's last bytes stand for it in a first scan (NameSearch).
ENDING = 8


class NameSearch:
    """The names, ready to be looked for in any number of texts.

    A scan slows with each name and with each place in the text where a
    name's first bytes occur. The names of a chain start alike and alike
    with many of vLLM's words ("DeepseekV4IndexerBackend", ...), and end
    alike ("...IndexerBackend"): their last bytes are fewer names, which
    seldom occur. So when the names share their ends, a text is first
    scanned for those; only one that holds an end is scanned for the names
    (on 0.33.0, a round of backend pairing's, 12 names, went from 20 to 6
    ms).
    """

    def __init__(self, names: Iterable[bytes]):
        self.names = tuple(sorted(set(names)))
        # Any match means a name is there; leftmost-first keeps the
        # prefilter fast with many names (the standard kind loses it past
        # about twenty on vLLM's names).
        self._automaton = BytesAhoCorasick(
            self.names, matchkind=MATCHKIND_LEFTMOST_FIRST
        )
        ends = sorted({name[-ENDING:] for name in self.names})
        self._ends = None
        if len(ends) < len(self.names):
            self._ends = BytesAhoCorasick(ends, matchkind=MATCHKIND_LEFTMOST_FIRST)

    def found_in(self, source: bytes) -> bool:
        """Whether ``source`` holds one of the names anywhere."""
        # A text holding a name holds its end: the first scan finds a match
        # (leftmost-first reports one wherever any occurs).
        if self._ends is not None and not self._ends.find_matches_as_indexes(source):
            return False
        return bool(self._automaton.find_matches_as_indexes(source))


def occurrences(text: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """(index in ``words``, offset) of each occurrence in ``text``, in
    order, overlapping none before it (the earliest starting, and of those
    the first in ``words``)."""
    return [(w, at) for w, at, _ in _automaton(words).find_matches_as_indexes(text)]


@functools.lru_cache(maxsize=16)
def _automaton(words: tuple[str, ...]) -> AhoCorasick:
    return AhoCorasick(words, matchkind=MATCHKIND_LEFTMOST_FIRST)
