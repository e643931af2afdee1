"""One scan for several names (core/name_search.py): the screen's and
backend pairing's question, whether a file holds any of them."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.name_search import NameSearch

INDEXER_NAMES = [b"FastIndexerBackend", b"IndexerCache", b"_RECORDABLE_BUILDERS"]


@pytest.mark.parametrize(
    "source, found",
    [
        (b"x = FastIndexerBackend", True),
        (b"IndexerCache()", True),  # at the start
        (b"BUILDERS = _RECORDABLE_BUILDERS", True),  # at the end
        (b"from a import (\n    IndexerCache,\n)\n", True),
        (b"SlowIndexerBackend", False),
        (b"FastIndexerBacken", False),  # a name cut short
        (b"IndexerCach", False),
        (b"", False),
    ],
)
def test_a_source_holds_a_name_wherever_it_occurs(source, found):
    assert NameSearch(INDEXER_NAMES).found_in(source) is found


def test_a_name_is_found_where_a_longer_one_failed_over_it():
    # "abcd" is tried at 0 and fails at "x"; "bcx" starts inside it.
    assert NameSearch([b"abcd", b"bcx"]).found_in(b"abcx")
    assert NameSearch([b"abcd", b"bcx"]).found_in(b"zzabcd")
    assert not NameSearch([b"abcd", b"bcx"]).found_in(b"abcbcd")


def test_a_name_inside_another_is_found_on_its_own():
    search = NameSearch([b"IndexerBackend", b"FastIndexerBackend"])
    assert search.found_in(b"IndexerBackend")
    assert search.found_in(b"FastIndexerBackend")
    assert not search.found_in(b"IndexerBackenX")


def test_the_last_of_many_names_is_found():
    # Past some twenty names the automaton's standard kind goes another way.
    names = [f"Backend{i:02}Cache".encode() for i in range(40)]
    search = NameSearch(names)
    assert search.found_in(b"x = Backend39Cache")
    assert search.found_in(b"x = Backend00Cache")
    assert not search.found_in(b"x = Backend40Cache")


def test_no_names_are_found_nowhere():
    assert not NameSearch([]).found_in(b"anything at all")


def test_the_names_are_kept_once_each_in_order():
    names = NameSearch([b"SlidingWindowSpec", b"MLAAttentionSpec", b"MLAAttentionSpec"])
    assert names.names == (b"MLAAttentionSpec", b"SlidingWindowSpec")


def test_names_are_given_by_any_iterable_once_through():
    search = NameSearch(n for n in [b"IndexerCache"])
    assert search.names == (b"IndexerCache",)
    assert search.found_in(b"IndexerCache")
