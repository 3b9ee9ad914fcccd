"""Ordinal follow-ups resolve only when both the position and the list are unambiguous."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guardlex.runner.followups import (
    AMBIGUOUS_LIST,
    AMBIGUOUS_POSITION,
    NO_LIST,
    NO_ORDINAL,
    OUT_OF_RANGE,
    RESOLVED,
    answer_start,
    find_list,
    find_positions,
    resolve,
)

ORD = {
    1: ["first", "primero", "primera", "第一"],
    2: ["second", "segundo", "segunda", "第二"],
    3: ["third", "tercero", "第三"],
    10: ["tenth", "第十"],
}


def test_positions_are_whole_words() -> None:
    assert find_positions("tell me more about the second one", ORD) == {2}
    assert find_positions("háblame de la segunda", ORD) == {2}
    assert find_positions("第二个项目是什么？", ORD) == {2}
    assert find_positions("a secondhand idea", ORD) == set()  # not inside a longer word
    assert find_positions("the first and the third", ORD) == {1, 3}


def test_longer_han_ordinal_wins_its_span() -> None:
    assert find_positions("第十个", {1: ["十"], 10: ["第十"]}) == {10}


def test_numbered_and_bulleted_lists() -> None:
    assert find_list("Articles:\n1. Alpha\n2. Beta\n3. Gamma") == (
        ("Alpha", "Beta", "Gamma"),
        RESOLVED,
    )
    assert find_list("- Alpha\n- Beta") == (("Alpha", "Beta"), RESOLVED)
    # Two separate lists: which one does "the second" point into?
    assert find_list("1. A\n2. B\n\n- C\n- D")[1] == AMBIGUOUS_LIST
    assert find_list("1. A\n2. B\ntext\n1. C\n2. D")[1] == AMBIGUOUS_LIST
    assert find_list("1. A\n3. B")[1] == AMBIGUOUS_LIST  # numbering skips


def test_quoted_items_and_site_titles() -> None:
    assert find_list("She wrote «Hybrid search» and «Semantic caching».") == (
        ("Hybrid search", "Semantic caching"),
        RESOLVED,
    )
    titles = ["Semantic caching", "Sentence gates", "Unused title"]
    items, code = find_list("She covered sentence gates, then semantic caching.", titles)
    assert code == RESOLVED and items == ("Sentence gates", "Semantic caching")
    assert find_list("She has written a lot.", titles) == ((), NO_LIST)


def test_resolve_codes() -> None:
    prev = "1. Alpha\n2. Beta"
    ok = resolve("more on the second one", "q", prev, ORD)
    assert ok.code == RESOLVED and ok.item == "Beta" and ok.context == "Beta"
    assert resolve("more on the third one", "q", prev, ORD).code == OUT_OF_RANGE
    assert resolve("compare the first and the second", "q", prev, ORD).code == (AMBIGUOUS_POSITION)
    none = resolve("why?", "q", prev, ORD)
    assert none.code == NO_ORDINAL and none.context == "1. Alpha 2. Beta"
    assert resolve("the second one", "what did she write?", None, ORD).context == (
        "what did she write?"
    )


@given(st.text(max_size=400))
def test_answer_start_is_bounded_prefix(text: str) -> None:
    start = answer_start(text)
    assert len(start) <= 200
    assert " ".join(text.split()).startswith(start)


@given(
    st.lists(
        st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip),
        min_size=2,
        max_size=6,
    ),
    st.integers(1, 3),
)
def test_numbered_list_resolution_picks_that_item(items: list[str], pos: int) -> None:
    clean = [" ".join(i.split()) for i in items]
    answer = "\n".join(f"{n}. {item}" for n, item in enumerate(clean, start=1))
    word = {1: "first", 2: "second", 3: "third"}[pos]
    f = resolve(f"tell me about the {word} one", "q", answer, ORD)
    if pos <= len(clean):
        assert f.resolved and f.item == clean[pos - 1]
    else:
        assert f.code == OUT_OF_RANGE and f.item is None


def test_ordinal_followed_by_another_ordinal_word_names_the_position() -> None:
    lex = {1: ["first", "one"], 2: ["second", "two"]}
    assert find_positions("tell me more about the second one", lex) == {2}
    assert find_positions("the first and the second", lex) == {1, 2}
