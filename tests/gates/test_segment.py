"""Sentence segmentation: ten languages, the traps, and independence from chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.gates._vocab import vocab_for
from guardlex.gates.segment import Segmenter, split_sentences


@pytest.fixture(scope="module")
def is_abbr(packs):
    return vocab_for(packs).is_abbreviation


CASES = [
    # (id, text, expected sentences)
    (
        "en-decimal-url-email",
        "Recall rose to 0.84 on example.com/docs. Write to team@example.org. Done.",
        ["Recall rose to 0.84 on example.com/docs.", "Write to team@example.org.", "Done."],
    ),
    (
        "en-abbreviation-initial",
        "Dr. Smith met J. R. Tolkien, e.g. at Oxford. Then he left!",
        ["Dr. Smith met J. R. Tolkien, e.g. at Oxford.", "Then he left!"],
    ),
    (
        "en-marker-after-stop",
        "The preprint appeared in 2023.[2] Next it was cited. [1][3] Last one?",
        ["The preprint appeared in 2023.[2]", "Next it was cited. [1][3]", "Last one?"],
    ),
    (
        "en-url-query-question-mark",
        "See https://x.org/a?b=1 for details. Ok.",
        ["See https://x.org/a?b=1 for details.", "Ok."],
    ),
    (
        "en-ellipsis-quote",
        'He said "yes." Then… nothing. Wait… It ended.',
        ['He said "yes."', "Then… nothing.", "Wait…", "It ended."],
    ),
    (
        "en-lower-case-start-and-short-number",
        "i am sure they are. houston won't be too bad. One is for 21. American food too.",
        [
            "i am sure they are.",
            "houston won't be too bad.",
            "One is for 21.",
            "American food too.",
        ],
    ),
    (
        "zh-ascii-question-mark",
        "你们是哪国家?你是穆斯林?是的。",
        ["你们是哪国家?", "你是穆斯林?", "是的。"],
    ),
    (
        "de-abbreviation-ordinal",
        "Das gilt z. B. ab dem 2. Mai 2024. Danach nicht mehr.",
        ["Das gilt z. B. ab dem 2. Mai 2024.", "Danach nicht mehr."],
    ),
    (
        "ru-abbreviation",
        "Это, т. е. тариф «Про», стоит 900 руб. в месяц. Да.",
        ["Это, т. е. тариф «Про», стоит 900 руб. в месяц.", "Да."],
    ),
    (
        "es-abbreviation-inverted-question",
        "La Dra. Pérez cobra 3,5 euros, p. ej. por hora. ¿Y después? Nada.",
        ["La Dra. Pérez cobra 3,5 euros, p. ej. por hora.", "¿Y después?", "Nada."],
    ),
    (
        "zh-no-spaces",
        "标准版包含 20 个席位。超出部分 8 元/席位/月[1]。企业版不限席位！真的吗？是的",
        [
            "标准版包含 20 个席位。",
            "超出部分 8 元/席位/月[1]。",
            "企业版不限席位！",
            "真的吗？",
            "是的",
        ],
    ),
    (
        "fa-persian-decimal-question",
        "قیمت ۳٫۵ دلار است. آیا مالیات شامل می‌شود؟ خیر",
        ["قیمت ۳٫۵ دلار است.", "آیا مالیات شامل می‌شود؟", "خیر"],
    ),
    (
        "ar-question-mark",
        "تشمل الباقة 6 مستخدمين. هل تشمل الضريبة؟ لا.",
        ["تشمل الباقة 6 مستخدمين.", "هل تشمل الضريبة؟", "لا."],
    ),
    (
        "hi-danda",
        "यह योजना 20 सीटें देती है। क्या कर शामिल है? नहीं।",
        ["यह योजना 20 सीटें देती है।", "क्या कर शामिल है?", "नहीं।"],
    ),
    (
        "fr-guillemets",
        "Le forfait coûte 12 €. « Vraiment ? » Oui.",
        ["Le forfait coûte 12 €.", "« Vraiment ? »", "Oui."],
    ),
    (
        "pt-decimal-comma",
        "O plano custa 7,50 reais por mês. Inclui 3 usuários.",
        ["O plano custa 7,50 reais por mês.", "Inclui 3 usuários."],
    ),
    (
        "list-lines",
        "Plans:\n1. Standard: 20 seats [1]\n2. Enterprise: unlimited [1]\n",
        ["Plans:", "1. Standard: 20 seats [1]", "2. Enterprise: unlimited [1]"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sentences(text, expected, is_abbr):
    assert split_sentences(text, is_abbr) == expected


def _run(chunks: list[str], is_abbr) -> tuple[list[str], str]:
    seg = Segmenter(is_abbr)
    out: list[str] = []
    for chunk in chunks:
        out.extend(seg.feed(chunk))
    more, tail = seg.finish()
    return out + more, tail


def test_unfinished_tail_is_reported(is_abbr):
    out, tail = _run(["Complete. Unfinished sent"], is_abbr)
    assert out == ["Complete."]
    assert tail.strip() == "Unfinished sent"


def test_waits_for_lookahead_before_deciding(is_abbr):
    seg = Segmenter(is_abbr)
    # "... 2023." could still be followed by a marker: nothing is decided yet
    assert seg.feed("It appeared in 2023.") == []
    assert seg.feed(" ") == []
    assert seg.feed("[") == []
    assert seg.feed("2]") == []
    assert seg.feed(" N") == ["It appeared in 2023. [2]"]


def test_abbreviation_at_end_of_text_ends_the_sentence(is_abbr):
    assert split_sentences("Tools, docs, etc.", is_abbr) == ["Tools, docs, etc."]


def test_whitespace_is_kept_with_the_following_sentence(is_abbr):
    out, _ = _run(["One.  Two.\nThree."], is_abbr)
    assert out == ["One.", "  Two.", "\nThree."]
    assert "".join(out) == "One.  Two.\nThree."


_ALPHABET = st.sampled_from(
    [
        *"ab Z.!?…。？؟।[]12,3\n\"')»",
        *["Dr.", "z. B.", "[1]", "[2][3]", "3.5", "a@b.de", "x.org/v2", "۳٫۵", "т. е."],
        *["etc.", "2. Mai", "21.", "...", "… ", "(...)", "бі. ", "बी. सी.", "?你", "usw. "],
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(_ALPHABET, min_size=0, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_chunking_invariance(pieces, cuts, packs):
    is_abbr = vocab_for(packs).is_abbreviation
    text = "".join(pieces)
    whole = _run([text], is_abbr)
    assert _run(list(text), is_abbr) == whole
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert _run(chunks, is_abbr) == whole
    # nothing is lost: sentences plus tail rebuild the text up to trailing space
    sentences, tail = whole
    assert ("".join(sentences) + tail).rstrip() == text.rstrip() or not text.strip()
