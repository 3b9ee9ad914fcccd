"""normalise_with_offsets: spans in the normalised text map back to the input."""

from __future__ import annotations

import pytest

from guardlex.normalise import Normalised, normalise, normalise_with_offsets


def _source_of(text: str, needle: str) -> str:
    n = normalise_with_offsets(text)
    start = n.text.index(needle)
    a, b = n.source_span(start, start + len(needle))
    return text[a:b]


@pytest.mark.parametrize(
    ("text", "needle", "source"),
    [
        ("Wie viel kostet die STRASSE?", "strasse", "STRASSE"),
        ("Was kostet die Straße?", "strasse", "Straße"),  # one ß, two letters out
        ("¿Cuánto cuesta?", "cuanto", "Cuánto"),
        ("Cuánto\u0301 es", "cuanto", "Cuánto\u0301"),  # the removed mark is covered
        ("  می\u200cخواهم  بدانم", "خواهم بدانم", "خواهم  بدانم"),
        ("قيمت كتاب", "کتاب", "كتاب"),
        ("pr\u200bice list", "price", "pr\u200bice"),
        ("ＧＰＴ－４ price", "gpt-4", "ＧＰＴ－４"),
        ("请問價格", "价格", "價格"),
        ("What is her phоne?", "phone", "phоne"),
        ("ﷺ x", "صلی", "ﷺ"),  # a ligature spelled out maps to the ligature
    ],
)
def test_spans_map_back_to_the_original(text: str, needle: str, source: str) -> None:
    assert _source_of(text, needle) == source


def test_offsets_shape() -> None:
    n = normalise_with_offsets("  Цена\u00a0за ﻙ ")
    assert n == Normalised("цена за ک", (2, 3, 4, 5, 6, 7, 8, 9, 10))
    assert n.text == normalise("  Цена\u00a0за ﻙ ")
    assert n.source_span(0, 0) == (2, 2)
    assert n.source_span(9, 9) == (11, 11)  # after the last source character, not the space
    with pytest.raises(ValueError, match="outside"):
        n.source_span(3, 20)


def test_a_normalised_built_by_hand_still_maps_spans() -> None:
    n = Normalised("ab", (0, 2))
    assert n.source_span(0, 1) == (0, 2)
    assert n.source_span(1, 2) == (2, 3)


def test_empty_and_all_removed() -> None:
    assert normalise_with_offsets("") == Normalised("", ())
    n = normalise_with_offsets("\u200b \u200f")
    assert n.text == "" and n.offsets == () and n.source_span(0, 0) == (0, 0)
