"""Invariants of the normaliser, checked on generated text (hypothesis)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from guardlex.normalise import (
    MAX_VARIANTS,
    confusable_fold,
    count_words,
    explain,
    keywords,
    normalise,
    normalise_with_offsets,
    variants,
    visible_text,
)
from guardlex.normalise.steps import STEPS

# Arbitrary text, plus text drawn from the characters where the steps interact:
# Arabic letters and marks, ZWNJ and other format characters, Latin letters with
# combining marks, Cyrillic, Greek, Han, digits of many scripts and odd spaces.
_INTERESTING = (
    "aeioucnszAEIOUCNSZßẞİıΣσςΐΰ"
    "يىكةأإٱۀآاهیکبپ\u064b\u064e\u0650\u0651\u0652\u0653\u0654\u0655\u0670\u0640"
    "\u200c\u200d\u200b\u200e\u200f\u202a\u202e\u2066\u2069\u00ad\ufeff\u2060"
    "\u0301\u0308\u0327\u0306\u0303\u20dd\u034f"
    "ёЁйиеопсхaрcуΑαοΟκ"
    "學價请問乾發后〇々"
    "०१९۰۹٠٩٫٬①²𝟘０９"
    " \u00a0\u202f\u3000\t\n\u2028\x1c\x00\x07"
    "ﻙﻱﷲﬁｶﾞㄱㅏ가\u1161\u11a8क़\u093c"
    # the evasion defences: tags, other ignorables, fillers, look-alikes, letter shapes,
    # stress marks, parenthesized and enclosed letters
    "\U000e0041\U000e0020\U000e0001\U000e007f\U000e0100\ufe0f\u2064\u180e"
    "\u115f\u1160\u3164\uffa0\u2800ᴀʀɪɑıɡȷօհꮲᏒ⒫⒜🅟ⓟھہۃەےۓڪںۆ"
    "\u0300\u0301\u0340\u0341ѐѝЀЍ"
)
texts = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(_INTERESTING), max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
)
#: Any ``str`` at all, lone surrogates included.
any_str = st.one_of(
    st.text(alphabet=st.characters(categories=["Cs"]), max_size=10),
    st.text(alphabet=st.one_of(st.characters(categories=["Cs"]), st.sampled_from(_INTERESTING))),
    st.text(alphabet=st.characters(exclude_categories=[]), max_size=60),
)


def _chain(text: str) -> str:
    """The reference: the step functions run one after another until stable."""
    for _ in range(6):
        before = text
        for _, func in STEPS:
            text = func(text)
        if text == before:
            break
    return text


@settings(max_examples=400)
@given(texts)
@example("ΐ")
@example("и\u200b\u0306")
@example("a\u200c\u0301")
@example("ب\u200c\u064e\u200cپ")
@example("ｶ\u200bﾞ")
def test_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@settings(max_examples=300)
@given(texts)
@example("phоne")
@example("ЁЛКА ёлка")
def test_fused_pipeline_equals_the_chain_of_steps(text: str) -> None:
    assert normalise(text) == _chain(text)
    steps = explain(text)
    assert (steps[-1].after if steps else text) == normalise(text)


@settings(max_examples=300)
@given(texts)
def test_output_has_no_format_chars_foreign_digits_or_stray_spaces(text: str) -> None:
    out = normalise(text)
    for ch in out:
        cat = unicodedata.category(ch)
        assert cat != "Cf", (text, out)
        assert cat != "Nd" or ch.isascii(), (text, out)
    assert "  " not in out
    assert out == out.strip(" ")
    assert not any(ch.isspace() and ch != " " for ch in out)


@settings(max_examples=300)
@given(texts)
@example("  Ｃafé\u0301 می\u200cخواهم  ")
@example("ﷺ x")
def test_offsets(text: str) -> None:
    n = normalise_with_offsets(text)
    assert n.text == normalise(text)
    assert len(n.offsets) == len(n.text) == len(n.ends)
    assert list(n.offsets) == sorted(n.offsets)
    for i, ch in enumerate(n.text):
        a, b = n.source_span(i, i + 1)
        assert 0 <= a < b <= len(text)
        # The output character is what its source span normalises to (or part of it).
        assert ch in normalise(text[a:b]) or ch == " " or _folded(text[a:b], ch), (text, i)


def _folded(source: str, ch: str) -> bool:
    """Homoglyph folding depends on the whole token, not only on the source span."""
    return ch.isalpha() and any(c.isalpha() for c in normalise(source))


@given(st.one_of(st.integers(), st.none(), st.binary(), st.lists(st.text())))
def test_non_str_is_a_type_error_naming_the_type(value: object) -> None:
    for func in (normalise, normalise_with_offsets, explain):
        with pytest.raises(TypeError, match=type(value).__name__):
            func(value)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(any_str)
@example("a\ud800b")
@example("\udcff\u200c\ud800")
@example("价\ud800格")
def test_every_public_function_is_total_on_any_str(text: str) -> None:
    out = normalise(text)
    assert normalise(out) == out
    assert normalise_with_offsets(text).text == out
    assert isinstance(count_words(text), int)
    assert all(isinstance(k, str) for k in keywords(text))
    got = variants(text, {"price", "charge"})
    assert got[0] == out and 1 <= len(got) <= MAX_VARIANTS
    assert visible_text(text) == visible_text(visible_text(text))
    assert len(confusable_fold(text, {"price"})) == len(out)
    explain(text)


@settings(max_examples=300)
@given(texts)
@example("ب\u200c\u200fپ")
@example("how\u3164much is\u3164it")
def test_normalise_reads_exactly_the_visible_text(text: str) -> None:
    assert normalise(visible_text(text)) == normalise(text)


@settings(max_examples=200)
@given(texts)
def test_variants_are_distinct_deterministic_and_normalised_first(text: str) -> None:
    got = variants(text)
    assert got == variants(text)
    assert got[0] == normalise(text)
    assert len(set(got)) == len(got) <= MAX_VARIANTS


@settings(max_examples=200)
@given(texts)
def test_confusable_fold_changes_letters_only(text: str) -> None:
    out = normalise(text)
    folded = confusable_fold(text, {"phone", "price", "cop", "how", "charge"})
    assert len(folded) == len(out)
    for a, b in zip(out, folded, strict=True):
        assert a == b or (a.isalpha() and b.isascii() and b.isalpha())
