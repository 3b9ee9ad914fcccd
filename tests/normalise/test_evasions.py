"""Disguised questions: each evasion class is reproduced in every locale where it applies,
and the normaliser (or one of the variants a router checks) must read the plain question.

"Read the plain question" means: ``normalise(disguised) == normalise(plain)`` for the
defences inside ``normalise``, and ``normalise(plain) in variants(disguised, words)`` for
the ones a router checks as variants (refusal wins).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import regex
import yaml

from guardlex.normalise import (
    confusable_fold,
    normalise,
    normalise_with_offsets,
    strip_nukta,
    variants,
    visible_text,
)

REPO = Path(__file__).resolve().parents[2]
LOCALES_DIR = REPO / "src" / "guardlex" / "locales"
EXTERNAL = REPO.parent / "shared" / "data" / "external" / "first_person"

#: A question the packs refuse in plain form, and its key word (the one a disguise hits).
PLAIN: dict[str, tuple[str, str]] = {
    "en": ("How much does she charge per hour?", "charge"),
    "es": ("¿Cuánto cobra por una hora de consultoría?", "cobra"),
    "pt": ("Quanto ela cobra por uma consultoria?", "cobra"),
    "fr": ("Combien coûte une journée de conseil ?", "coûte"),
    "de": ("Wie viel kostet eine Beratung bei ihr?", "kostet"),
    "ru": ("Сколько стоит её консультация?", "стоит"),
    "hi": ("उनकी एक घंटे की फ़ीस कितनी है?", "कितनी"),
    "zh": ("她的咨询费用是多少？", "费用"),
    "fa": ("قیمت مشاوره با ایشان چقدر است؟", "قیمت"),
    "ar": ("كم سعر الاستشارة معها؟", "الاستشارة"),
}
ALL = sorted(PLAIN)
LATIN = ["de", "en", "es", "fr", "pt"]
SPACED = [loc for loc in ALL if loc != "zh"]  # locales that put spaces between words


@cache
def latin_words() -> frozenset[str]:
    """Normalised words of the Latin-script packs: stopwords and the words of the rules
    (what the router passes to ``confusable_fold``)."""
    words: set[str] = set()
    for loc in LATIN:
        d = LOCALES_DIR / loc
        stop = yaml.safe_load((d / "stopwords.yaml").read_text("utf-8"))
        words.update(normalise(str(w)) for w in stop.get("words") or ())
        for name in ("refusal.yaml", "overview.yaml", "concepts.yaml", "lexicon.yaml"):
            if (d / name).exists():
                text = normalise((d / name).read_text("utf-8"))
                words.update(regex.findall(r"[a-z]{3,}", text, timeout=10))
    return frozenset(words)


@cache
def all_words() -> frozenset[str]:
    """Normalised words of all ten packs (what the router passes to ``variants``)."""
    words: set[str] = set(latin_words())
    for loc in ALL:
        d = LOCALES_DIR / loc
        stop = yaml.safe_load((d / "stopwords.yaml").read_text("utf-8"))
        words.update(normalise(str(w)) for w in stop.get("words") or ())
        for name in ("refusal.yaml", "overview.yaml", "concepts.yaml", "lexicon.yaml"):
            if (d / name).exists():
                text = normalise((d / name).read_text("utf-8"))
                words.update(regex.findall(r"[\p{L}\p{M}]{2,}", text, timeout=10))
    return frozenset(words)


def _read(loc: str) -> str:
    return PLAIN[loc][0]


@cache
def _refused_cases(loc: str) -> tuple[str, ...]:
    """The locale's refused routing questions, for disguises its PLAIN question lacks."""
    path = REPO / "tests" / "data" / "routing" / f"{loc}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return tuple(
        c["text"]
        for c in data.get("cases") or []
        if isinstance(c, dict) and c.get("expect") == "refuse" and not c.get("previous")
    )


def _holding(loc: str, letter: str) -> str | None:
    """The PLAIN question if it holds the letter, else the first refused case that does."""
    if letter in _read(loc):
        return _read(loc)
    return next((s for s in _refused_cases(loc) if letter in s), None)


def _reads_back(original: str, disguised: str) -> None:
    """A router checking the disguised question's variants reads the original."""
    plain = normalise(original)
    got = variants(disguised, all_words())
    assert plain in got or strip_nukta(plain) in got, (disguised, got)


def _refused_as_plain(loc: str, disguised: str) -> None:
    _reads_back(_read(loc), disguised)


def _in_key(loc: str, func: Callable[[str], str]) -> str:
    text, key = PLAIN[loc]
    assert key in text
    return text.replace(key, func(key), 1)


def _middle(word: str, insert: str) -> str:
    k = max(1, len(word) // 2)
    return word[:k] + insert + word[k:]


# ------------------------------------------------------------ inside normalise itself


def _tags(s: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in s)


def _ascii_fold(s: str) -> str:
    return normalise(s)  # the Latin locales' questions normalise to ASCII


@pytest.mark.parametrize("loc", LATIN)
def test_tag_encoded_payload_is_read_as_text(loc: str) -> None:
    benign = "What are her office hours? "
    payload = _ascii_fold(_read(loc)).replace("¿", "")  # tags spell ASCII only
    assert payload.isascii()
    disguised = benign + _tags(payload)
    assert normalise(payload) in normalise(disguised)
    assert visible_text(disguised) == benign + payload
    assert normalise(visible_text(disguised)) == normalise(disguised)


@pytest.mark.parametrize("loc", ALL)
@pytest.mark.parametrize(
    "junk", ["\U000e0001", "\U000e007f", "\ufe0f", "\u034f", "\u2064", "\u200b", "\u180e"]
)
def test_invisible_characters_inside_words_are_dropped(loc: str, junk: str) -> None:
    text = _read(loc)
    disguised = junk.join(text)
    assert normalise(disguised) == normalise(text)
    assert normalise_with_offsets(disguised).text == normalise(text)


@pytest.mark.parametrize("loc", SPACED)
@pytest.mark.parametrize("blank", ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800"])
def test_fillers_as_the_spaces(loc: str, blank: str) -> None:
    disguised = _read(loc).replace(" ", blank)
    assert normalise(disguised) == normalise(_read(loc))
    assert normalise_with_offsets(disguised).text == normalise(_read(loc))


@pytest.mark.parametrize("loc", ALL)
@pytest.mark.parametrize("blank", ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800"])
def test_fillers_inside_a_word(loc: str, blank: str) -> None:
    disguised = _in_key(loc, lambda w: _middle(w, blank))
    if loc != "zh":  # with no spaces at all, one filler reads as a space ...
        assert normalise(disguised) == normalise(_read(loc))
    _refused_as_plain(loc, disguised)  # ... and the other reading is a variant


@pytest.mark.parametrize("loc", SPACED)
@pytest.mark.parametrize("blank", ["\u3164", "\u2800"])
def test_fillers_as_spaces_and_inside_a_word_at_once(loc: str, blank: str) -> None:
    text, key = PLAIN[loc]
    disguised = text.replace(key, _middle(key, blank), 1)
    first = disguised.index(" ")
    disguised = disguised[:first] + blank + disguised[first + 1 :]
    _refused_as_plain(loc, disguised)


_SMALL_CAPS = dict(zip("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ", strict=True))
_ARMENIAN = {"o": "օ", "h": "հ", "n": "ո", "u": "ս", "g": "ց", "q": "զ"}
_CHEROKEE = {"a": "Ꭺ", "e": "Ꭼ", "i": "Ꭵ", "r": "Ꭱ", "s": "Ꮪ", "t": "Ꭲ", "c": "Ꮯ", "p": "Ꮲ"}
_SPECIAL = {"a": "ɑ", "i": "ı", "g": "ɡ", "j": "ȷ"}


def _swap(table: dict[str, str]) -> Callable[[str], str]:
    return lambda s: "".join(table.get(c, c) for c in s)


def _parenthesized(s: str) -> str:
    return "".join(chr(0x249C + ord(c) - 97) if "a" <= c <= "z" else c for c in s)


def _circled(s: str) -> str:
    return "".join(chr(0x24D0 + ord(c) - 97) if "a" <= c <= "z" else c for c in s)


def _negative_squared(s: str) -> str:
    return "".join(chr(0x1F170 + ord(c) - 97) if "a" <= c <= "z" else c for c in s)


@pytest.mark.parametrize("loc", LATIN)
@pytest.mark.parametrize(
    "disguise",
    [
        _swap(_SMALL_CAPS),
        _swap(_ARMENIAN),
        _swap(_CHEROKEE),
        _swap(_SPECIAL),
        _parenthesized,
        _circled,
        _negative_squared,
    ],
    ids=["small-caps", "armenian", "cherokee", "dotless-script", "paren", "circled", "neg-sq"],
)
def test_latin_look_alikes(loc: str, disguise: Callable[[str], str]) -> None:
    plain = _ascii_fold(_read(loc))
    disguised = disguise(plain)
    assert disguised != plain
    assert normalise(disguised) == normalise(_read(loc))
    assert normalise_with_offsets(disguised).text == normalise(_read(loc))


@pytest.mark.parametrize("loc", ["ru"])
@pytest.mark.parametrize("mark", ["\u0301", "\u0300"])
def test_russian_stress_marks(loc: str, mark: str) -> None:
    text = _read(loc)
    disguised = regex.sub(r"([аеиоуыэюяАЕИОУЫЭЮЯ])", rf"\1{mark}", text, timeout=5)
    assert disguised != text
    assert normalise(disguised) == normalise(text)
    assert normalise_with_offsets(disguised).text == normalise(text)
    assert normalise("Какой й\u0301од") == "какой йод"  # й keeps its breve


_SHAPES = [("ه", "ھ"), ("ه", "ە"), ("ی", "ے"), ("ک", "ڪ"), ("ة", "ۃ"), ("ي", "ے")]
# each shape is tried on a question holding its letter (ی is Persian, ي Arabic)
_SHAPE_CASES = [
    (loc, s, d) for loc in ("fa", "ar") for s, d in _SHAPES if _holding(loc, s) is not None
]


def test_every_letter_shape_is_tried() -> None:
    assert {(s, d) for _, s, d in _SHAPE_CASES} == set(_SHAPES)


@pytest.mark.parametrize(("loc", "src", "dst"), _SHAPE_CASES)
def test_urdu_and_kurdish_letter_shapes(loc: str, src: str, dst: str) -> None:
    text = _holding(loc, src)
    assert text is not None
    disguised = text.replace(src, dst)
    assert normalise(disguised) == normalise(text)


def test_hindi_nukta_precomposed_and_omitted() -> None:
    text = _read("hi")
    precomposed = text.replace("फ़", "\u095e")  # फ़ as one code point
    assert precomposed != text
    assert normalise(precomposed) == normalise(text)
    omitted = text.replace("\u093c", "")
    assert strip_nukta(normalise(text)) == normalise(omitted)
    assert normalise(omitted) in variants(text)  # spurious nukta: the variant drops it
    _refused_as_plain("hi", omitted)


# ------------------------------------------------------------------ Cyrillic / Greek

_CYR = dict(zip("acehijkmoprstxyb", "асеһіјкморгѕтхув", strict=True))
_GRK = dict(zip("aiknoptuvxy", "αικηορτυνχγ", strict=True))


@pytest.mark.parametrize("loc", LATIN)
@pytest.mark.parametrize("table", [_CYR, _GRK], ids=["cyrillic", "greek"])
def test_latin_word_in_cyrillic_or_greek_look_alikes(loc: str, table: dict[str, str]) -> None:
    plain = _ascii_fold(_read(loc))
    _, key = PLAIN[loc]
    key = normalise(key)
    assert key in latin_words()
    disguised = plain.replace(key, _swap(table)(key), 1)
    assert disguised != plain
    folded = confusable_fold(disguised, latin_words())
    assert folded == normalise(plain)
    assert len(folded) == len(normalise(disguised))
    _refused_as_plain(loc, disguised)


def test_whole_question_in_cyrillic_look_alikes() -> None:
    disguised = "Ноw muсh dоеs shе сһаrgе?"
    assert confusable_fold(disguised, latin_words()) == "how much does she charge?"


def _sentences(loc: str) -> list[str]:
    path = EXTERNAL / f"first_person_ud_{loc}.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not available")
    return [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line]


def test_russian_sentences_are_never_folded() -> None:
    sentences = _sentences("ru")
    assert len(sentences) > 300
    changed = [s for s in sentences if confusable_fold(s, latin_words()) != normalise(s)]
    assert changed == []


@pytest.mark.parametrize(
    "text",
    [
        "Сор и море",
        "А он?",
        "Кто там? Это мы.",
        "Καλημέρα, τι κάνεις; Ο κόσμος είναι μεγάλος.",
        "Το νερό είναι κρύο",
        "Ресторан ΚΑΦΕ рядом",
    ],
)
def test_genuine_russian_and_greek_words_stay(text: str) -> None:
    assert confusable_fold(text, latin_words() | {"cop", "mope", "kto", "tam"}) == normalise(text)


@pytest.mark.parametrize("loc", [loc for loc in ALL if loc != "ru"])
def test_other_locales_sentences_are_untouched_by_confusable_fold(loc: str) -> None:
    for s in _sentences(loc)[:300]:
        assert confusable_fold(s, latin_words()) == normalise(s)


# ----------------------------------------------------------------- checked as variants


@pytest.mark.parametrize("loc", ["fa", "ar"])
def test_zwnj_inside_a_persian_or_arabic_word(loc: str) -> None:
    disguised = _in_key(loc, lambda w: _middle(w, "\u200c"))
    assert normalise(disguised) != normalise(_read(loc))  # step 6 splits it ...
    _refused_as_plain(loc, disguised)  # ... the joined reading is a variant


@pytest.mark.parametrize("sep", [" ", "\u3000", "·", "，", "、", "・"])
def test_separators_between_chinese_characters(sep: str) -> None:
    _refused_as_plain("zh", _in_key("zh", lambda w: sep.join(w)))
    text = _read("zh")
    _refused_as_plain("zh", sep.join(text[:-1]) + text[-1])  # every character apart


def test_ordinary_chinese_punctuation_is_kept_in_the_normalised_text() -> None:
    text = "你好，世界。我想问一下，价格是多少？"
    assert variants(text)[0] == normalise(text)
    assert normalise(text) == "你好,世界。我想问一下,价格是多少?"


def _spaced(w: str) -> str:
    return " ".join(_graphemes(w))


def _graphemes(w: str) -> list[str]:
    return regex.findall(r"\X", w, timeout=5)


@pytest.mark.parametrize("loc", ALL)
@pytest.mark.parametrize(
    "disguise",
    [
        _spaced,
        lambda w: ".".join(_graphemes(w)),
        lambda w: "-".join(_graphemes(w)),
        lambda w: _middle(w, "-"),
        lambda w: _middle(w, "."),
        lambda w: _middle(w, "\n"),
        lambda w: _middle(w, "\r\n"),
    ],
    ids=["spaced", "dotted", "dashed", "inner-dash", "inner-dot", "line-break", "crlf"],
)
def test_spacing_separators_and_line_breaks(loc: str, disguise: Callable[[str], str]) -> None:
    _refused_as_plain(loc, _in_key(loc, disguise))


@pytest.mark.parametrize("loc", SPACED)
@pytest.mark.parametrize("gap", [" ", "  ", "   "])
def test_whole_question_spaced_out(loc: str, gap: str) -> None:
    """With wider gaps between words the words come back exactly; with one space
    everywhere they are found again with the packs' words (ambiguities such as "una
    hora" / "un ahora" aside: the key word must come back as a word)."""
    text = _read(loc)
    disguised = gap.join(" ".join(_graphemes(w)) for w in text.split())
    got = variants(disguised, all_words())
    plain = normalise(text)

    def squeeze(s: str) -> str:
        return regex.sub(r" (?=[?؟!.,])", "", s, timeout=5)

    if gap != " ":
        assert squeeze(plain) in {squeeze(v) for v in got}, got
    key = normalise(PLAIN[loc][1])
    assert any(key in regex.findall(r"[\p{L}\p{M}]+", v, timeout=5) for v in got), got
    assert any(v.replace(" ", "") == plain.replace(" ", "") for v in got), got


_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "$", "t": "7"}


def _leet_table(which: str) -> dict[str, str]:
    return {"i": "!"} if which == "!" else {which: _LEET[which]}


def _leet_target(loc: str, which: str) -> tuple[str, str, str] | None:
    """The question, its accent-folded form and the word of it the swap changes:
    PLAIN's key word when it holds the letter, else the first word of four letters or
    more holding it inside, in a refused case of the locale (a leading "!" reads as
    punctuation: "!s she" stays as typed)."""
    letter = "i" if which == "!" else which
    key = normalise(PLAIN[loc][1])
    if letter in key:
        return _read(loc), _ascii_fold(_read(loc)), key
    for case in _refused_cases(loc):
        folded = _ascii_fold(normalise(case))
        word = next(
            (w for w in folded.split() if w.isalpha() and len(w) >= 4 and letter in w[1:-1]),
            None,
        )
        if word is not None:
            return case, folded, word
    return None


_LEET_CASES = [
    (loc, which)
    for loc in LATIN
    for which in ["a", "e", "i", "o", "s", "t", "!"]
    if _leet_target(loc, which) is not None
]


def test_every_leet_swap_is_tried_in_every_latin_locale() -> None:
    assert len(_LEET_CASES) == len(LATIN) * 7


@pytest.mark.parametrize(("loc", "which"), _LEET_CASES)
def test_leetspeak(loc: str, which: str) -> None:
    target = _leet_target(loc, which)
    assert target is not None
    original, folded, word = target
    _reads_back(original, folded.replace(word, _swap(_leet_table(which))(word), 1))


# one extra letter is undone only where no other letter of the question is doubled
_REPEAT_CASES = [
    (loc, times)
    for loc in ALL
    for times in (2, 3, 5)
    if times > 2 or not regex.search(r"(\p{L})\1", normalise(_read(loc)), timeout=5)
]


@pytest.mark.parametrize(("loc", "times"), _REPEAT_CASES)
def test_repeated_letters(loc: str, times: int) -> None:
    def repeat(w: str) -> str:
        k = next(i for i, c in enumerate(w) if c.isalpha() and regex.match(r"\p{L}", c))
        return w[: k + 1] + w[k] * (times - 1) + w[k + 1 :]

    _refused_as_plain(loc, _in_key(loc, repeat))


@pytest.mark.parametrize("loc", ALL)
@pytest.mark.parametrize(
    "encode",
    [
        lambda w: "".join(f"&#x{ord(c):x};" for c in w),
        lambda w: "".join(f"&#{ord(c)};" for c in w),
        lambda w: urllib.parse.quote(w),
        lambda w: urllib.parse.quote(urllib.parse.quote(w)),
        lambda w: "&amp;#x" + f"{ord(w[0]):x};" + w[1:],
    ],
    ids=["hex-entity", "dec-entity", "percent", "double-percent", "double-entity"],
)
def test_html_entities_and_percent_encoding(loc: str, encode: Callable[[str], str]) -> None:
    _refused_as_plain(loc, _in_key(loc, encode))


def test_variants_are_bounded_deterministic_and_start_with_normalise() -> None:
    text = "Ｈow m-u-c-h d0es she c h a r g e?\n&amp; %70rice priiice\u3164"
    got = variants(text, latin_words())
    assert got[0] == normalise(text)
    assert len(got) == len(set(got)) <= 12
    assert got == variants(text, latin_words())
    assert variants("") == ("",)
    assert variants("what") == ("what",)


@pytest.mark.parametrize(
    ("spaced", "words", "want"),
    [
        (
            "w h a t a r e h e r r a t e",
            {"what", "are", "her", "ar", "eher", "rate"},
            "what are her rate",
        ),
        (
            "w i e v i e l n i m m t d i e s o",
            {"wieviel", "nimmt", "die", "di", "so", "eso"},
            "wieviel nimmt die so",
        ),
        ("a c h a d o e l o n", {"acha", "ach", "ado", "do", "elon"}, "acha do elon"),
    ],
)
def test_a_spaced_run_splits_into_words_read_left_to_right(
    spaced: str, words: set[str], want: str
) -> None:
    """As few words as the run holds; among as few, the later words shortest: a word of
    another loaded locale ("eher", "eso") does not pull letters from the word before."""
    assert want in variants(spaced, words)
