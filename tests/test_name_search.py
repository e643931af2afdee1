"""One scan for several names (core/name_search.py): the screen's and
backend pairing's question, whether a file holds any of them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


CHAIN = [b"DeepseekV4IndexerBackend", b"GlmIndexerBackend", b"QSAMetadataBuilder"]


@pytest.mark.parametrize(
    "source, found",
    [
        (b"return DeepseekV4IndexerBackend", True),
        (b"x = GlmIndexerBackend()", True),
        (b"QSAMetadataBuilder", True),
        (b"DeepseekV4IndexerBackend"[:-1], False),  # its end cut short
        (b"class IndexerBackend: ...", False),  # an end, and no name
        (b"OtherMetadataBuilder and DeepseekV4", False),
        (b"DeepseekV4 = rBackend", False),  # the end apart from the name
    ],
)
def test_names_that_share_their_ends_are_found_only_whole(source, found):
    assert NameSearch(CHAIN).found_in(source) is found


def _any_in(names, source):
    return any(name in source for name in names)


@settings(max_examples=400, deadline=None)
@given(
    names=st.lists(
        st.builds(
            bytes.__add__,
            st.sampled_from([b"", b"Deep", b"Glm", b"V4", b"x"]),
            st.sampled_from([b"Backend", b"IndexerBackend", b"Cache", b"c", b"B"]),
        ),
        max_size=6,
    ),
    pieces=st.lists(
        st.sampled_from(
            [
                b"Deep",
                b"Glm",
                b"V4",
                b"x",
                b"Backend",
                b"Indexer",
                b"Cache",
                b" ",
                b"c",
                b"B",
                b"\n",
                b"r",
            ]
        ),
        max_size=12,
    ),  # fmt: skip
)
def test_a_name_is_found_exactly_when_the_text_holds_it(names, pieces):
    source = b"".join(pieces)
    assert NameSearch(names).found_in(source) is _any_in(names, source)
