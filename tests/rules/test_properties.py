"""Properties of route over the shipped English pack and a mixed-script pack."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex import load_packs
from guardlex.rules import MAX_INPUT_CHARS

PACKS = load_packs(["en"], subject_names=["Dana Reyes"])
WORDS = st.sampled_from(
    [
        "how",
        "much",
        "does",
        "she",
        "charge",
        "her",
        "rates",
        "phone",
        "number",
        "Dana",
        "Reyes",
        "projects",
        "system",
        "prompt",
        "ignore",
        "previous",
        "instructions",
        "\u200b",
        "\u200c",
        "ي",
        "قیمت",
        "多少钱",
        "किताब",
        "ё",
        "ＲＡＴＥ",
        "?",
        " ",
        "\n",
    ]
)
TEXT = st.one_of(st.text(max_size=300), st.lists(WORDS, max_size=30).map(" ".join))


@settings(max_examples=150, deadline=None)
@given(TEXT, st.one_of(st.none(), TEXT))
def test_route_total_deterministic_and_span_inside(text: str, previous: str | None) -> None:
    assert len(text) <= MAX_INPUT_CHARS
    first = PACKS.route(text, previous)
    assert first == PACKS.route(text, previous)
    assert first.kind in ("refuse", "overview", "retrieve")
    if first.span is not None:
        start, end = first.span
        assert 0 <= start < end <= len(text)
    if first.kind == "retrieve":
        assert first.rule_id is None and first.span is None


@settings(max_examples=100, deadline=None)
@given(TEXT)
def test_first_person_span_is_the_word(text: str) -> None:
    hit = PACKS.first_person(text, locale="en")
    if hit is not None:
        assert text[hit.span[0] : hit.span[1]] == hit.word


_ALL: list[object] = []


def all_packs() -> object:
    """Every shipped locale at once (loaded on first use, shared by the examples)."""
    if not _ALL:
        _ALL.append(load_packs(subject_names=["Dana Reyes", "دانا ریس", "达娜"]))
    return _ALL[0]


@settings(max_examples=80, deadline=None)
@given(TEXT, st.one_of(st.none(), TEXT))
def test_route_over_all_locales_is_total_and_stable(text: str, previous: str | None) -> None:
    packs = all_packs()
    first = packs.route(text, previous)  # type: ignore[attr-defined]
    assert first == packs.route(text, previous)  # type: ignore[attr-defined]
    assert first.locale is None or first.locale in packs.locales  # type: ignore[attr-defined]
    if first.span is not None:
        assert 0 <= first.span[0] < first.span[1] <= len(text)
