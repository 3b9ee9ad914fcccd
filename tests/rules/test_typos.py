"""Typo tolerance (guardlex.rules.typos): a slip in a pack word is read as that word."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from guardlex.rules.typos import Typos

from .conftest import PackWriter
from .test_builtins import pack_root
from .test_template_matching import r2

TARGETS = ["charge", "salary", "married", "dating", "зарплата"]
REAL = [["rating", "charged", "salads", "marred"], ["зарплатой"]]


def typos() -> Typos:
    return Typos(TARGETS, known=["reyes"], real=REAL)


def test_slips_are_read_as_the_one_pack_word_they_miss() -> None:
    t = typos()
    assert t.correct("chrage") == "charge"  # two letters swapped
    assert t.correct("salry") == "salary"  # a letter left out
    assert t.correct("sallary") == "salary"  # a letter too many
    assert t.correct("зарплта") == "зарплата"
    assert t.reading("how much does she chrage, and her salry?") == (
        "how much does she charge, and her salary?"
    )


def test_words_and_ambiguous_or_inflected_forms_are_left_alone() -> None:
    t = typos()
    assert t.correct("charge") is None  # a pack word
    assert t.correct("rating") is None  # a real word
    assert t.correct("reyes") is None  # a known word (a name)
    assert t.correct("ratng") is None  # "rating" (real) or "dating" (pack): ambiguous
    assert t.correct("chargx") is None  # the last letter is never changed
    assert t.correct("xharge") is None  # nor the first
    assert t.correct("salery") is None  # a changed letter is no slip
    assert t.correct("sala") is None  # too short
    assert t.correct("薪水薪水薪水") is None
    assert t.reading("nothing to fix here") is None


def test_a_letter_pair_of_the_locale_may_be_changed_inside_a_word() -> None:
    # locale.yaml typos.changes: Russian unstressed vowels typed for each other
    t = Typos(
        ["стоимость", "напиши", "плотные"],
        known=[],
        real=[["платные", "сколько"]],
        changes=[("е", "и"), ("о", "а")],
    )
    assert t.correct("стаимость") == "стоимость"  # о typed as а
    assert t.correct("напеши") == "напиши"  # и typed as е, both ways
    assert t.correct("платные") is None  # a real word is never a typo
    assert t.correct("напишы") is None  # a pair the locale does not list
    assert t.correct("стоимосте") is None  # never the last letter
    assert typos().correct("salery") is None  # no pairs listed: a changed letter is no slip


def test_a_slip_is_preferred_to_a_changed_letter() -> None:
    # English vowels typed for each other (en locale.yaml): "salery" is "salary", but
    # "opinon" stays "opinion" (a letter left out) although a change reaches "opinan"
    t = Typos(
        ["salary", "opinion", "opinan", "married", "banker", "binker"],
        known=[],
        real=[["celery", "opinions"]],
        changes=[("a", "e"), ("a", "o"), ("e", "i")],
    )
    assert t.correct("salery") == "salary"  # no slip reaches a word: the change does
    assert t.correct("opinon") == "opinion"  # the slip wins over the change to "opinan"
    assert t.correct("merried") == "married"
    assert t.correct("opinian") == "opinan"  # a letter too many: a slip, no change tried
    assert t.correct("benker") is None  # changes reach two pack words: ambiguous
    # a slip that reaches only a real word is no typo, and no change is tried then
    assert t.correct("celeryy") is None


def test_a_script_without_real_words_is_never_corrected() -> None:
    t = Typos(["зарплата", "salary"], known=[], real=[["salads"]])
    assert t.correct("зарплта") is None
    assert t.correct("salry") == "salary"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_reading_is_total_and_changes_only_words(text: str) -> None:
    t = typos()
    got = t.reading(text)
    assert got is None or (got != text and len(got.split()) == len(text.split()))


def _packs(write_pack: PackWriter, words: list[str] | None) -> Path:
    concepts = {
        "price": {"about": "What work costs.", "terms": ["(charge | rate)"]},
        "about_work": {"about": "Her published work.", "terms": ["(article | post)"]},
    }
    rules = [r2("price", when={"all": ["<price>"], "none": ["<about_work>"]})]
    locale = {"name": "Test", "scripts": ["Latn"], "direction": "ltr", "example_subject": "Dana"}
    root = pack_root(write_pack, "ty", rules, concepts, locale, {"pronouns": ["she"]})
    (root / "ty" / "words.txt").unlink(missing_ok=True)
    if words is not None:
        (root / "ty" / "words.txt").write_text(
            "# real words\n" + "".join(f"{w}\n" for w in words), encoding="utf-8"
        )
    return root


def test_route_reads_a_slip_in_a_trigger_word(write_pack: PackWriter) -> None:
    from guardlex import load_packs

    root = _packs(write_pack, ["does", "much", "charged"])
    packs = load_packs(["ty"], subject_names=["Dana Reyes"], paths=[root], shipped=False)
    route = packs.route("how much does she chrage per day?")
    assert (route.kind, route.rule_id, route.span) == ("refuse", "price", None)
    assert packs.route("how much does she charge per day?").span is not None
    # the rule's own guard in the question as typed still blocks the reading
    assert packs.route("what does her artcle say she would chrage?").kind == "retrieve"
    assert packs.route("her post says she chrage?").kind == "retrieve"
    # without a list of real words the script is not corrected at all
    bare = load_packs(
        ["ty"], subject_names=["Dana Reyes"], paths=[_packs(write_pack, None)], shipped=False
    )
    assert bare.route("how much does she chrage per day?").kind == "retrieve"


def test_the_shipped_english_vowels_read_common_misspellings() -> None:
    from guardlex import load_packs

    packs = load_packs(["en"], subject_names=["Dana Reyes"])
    for text, category in [
        ("what is her salery", "personal_data"),
        ("what relegion is she", "personal_data"),
        ("summerize this text for me", "task"),
        ("what's her opinon on llms", "speculation"),  # a slip, not a change to "opinan"
    ]:
        route = packs.route(text)
        assert (route.kind, route.category) == ("refuse", category), text
    assert packs.route("what did her article say about celery").kind == "retrieve"
