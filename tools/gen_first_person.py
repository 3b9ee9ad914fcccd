"""Generate ``locales/<es|pt|ru>/first_person.generated.yaml``: first-person verb forms.

Spanish and Portuguese drop the subject pronoun ("Trabajé tres años en Quillmark",
"Moro em Lisboa"), and Russian verbs carry the person in their ending ("смотрю",
"устраиваем"), so the lexicons need the conjugated forms, which nobody should type by
hand. Sources, all in the ``tools`` extra (never at run time):

* es, pt: the conjugator verbecc (its conjugation tables; lemmas are its infinitives
  ranked by wordfreq frequency). Forms of the 1st person singular and plural of every
  simple tense and of the 1st plural imperative ("digamos"); Spanish enclitic object
  forms of the infinitive, gerund and imperative ("dime", "cuéntenos", "ayudarme",
  "dámelo"). A form is dropped when, after ``guardlex.normalise`` (which strips accents),
  it equals a non-first-person form of any of the ``COLLISION_LEMMAS`` most frequent
  verbs with the same spelling even with accents (había is also 3sg), when wordfreq
  does not know it, or when the hand-written file lists it under ``disabled``; when
  only the accents tell them apart (trabajo/trabajó, trabajé/trabaje) the form is kept
  and listed under ``as_written``, so it counts only as the text spells it. A form
  that simplemma lemmatises to something other than a verb, and every 1sg present form
  (after accent stripping, inicio is also início), is a homograph (trabajo "work",
  estudio "study"): it goes into the context group ``noun-homographs``, whose
  conditions (not after an article, a determiner or a preposition) are written by hand
  in ``first_person.yaml``; homographs that are function words (como, bajo, sobre) are
  listed under ``disabled`` there (the script prints the stopwords among them).
* ru: pymorphy3 with its OpenCorpora dictionary. The verbs among the ``RU_WORDS`` most
  frequent words in wordfreq give the lemmas; every first-person form of their lexemes
  (present/future, 1pl imperative "пойдём") is kept when every parse pymorphy3 gives it
  with a score of at least ``RU_MIN_SCORE`` is a first-person verb form (or the short
  passive participle a 1pl present is always spelled as: устраиваем).

Run ``python tools/gen_first_person.py [es pt ru]`` to rewrite the files, ``--check`` to
compare them with a fresh build (the test suite does, when the tools are installed).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "src" / "guardlex" / "locales"
LEMMAS = {"es": 1200, "pt": 1200}
COLLISION_LEMMAS = 4000
CLITIC_LEMMAS = 400
ES_CLITICS = ("me", "nos", "melo", "mela", "melos", "melas", "noslo", "nosla", "noslos", "noslas")
RU_WORDS = 200_000
RU_MIN_SCORE = 0.05
VERB_ENDINGS = {"es": ("ar", "er", "ir", "ír"), "pt": ("ar", "er", "ir", "or", "ôr")}


def _hand(code: str) -> dict[str, Any]:
    path = LOCALES / code / "first_person.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _stopwords(code: str) -> set[str]:
    from guardlex.normalise import normalise

    path = LOCALES / code / "stopwords.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {normalise(w) for w in data.get("words") or ()}


def _alts(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(v) for v in items if v and str(v) != "-" and " " not in str(v)]


def _slots(table: Any) -> list[list[str]]:
    return [_alts(v) for v in table]


def romance(code: str) -> dict[str, Any]:
    """verb_forms and the noun-homograph group of es or pt."""
    import simplemma
    from verbecc import Conjugator
    from wordfreq import zipf_frequency

    from guardlex.normalise import normalise

    logging.getLogger("verbecc").setLevel(logging.ERROR)
    cg = Conjugator(code)
    ranked = sorted(cg.get_infinitives(), key=lambda v: (-zipf_frequency(v, code), v))
    first: dict[str, str] = {}  # normalised form -> (accented form, lemma) kept
    lemma_of: dict[str, str] = {}
    other_raw: dict[str, set[str]] = {}  # normalised -> spellings of non-1st forms
    clitics: set[str] = set()
    present: set[str] = set()  # 1sg present indicative: trabajo, estudio, acordo ...
    preterite: set[str] = set()  # 1sg preterite: trabajé, escribí ...
    for rank, inf in enumerate(ranked[:COLLISION_LEMMAS]):
        try:
            moods = cg.conjugate(inf, include_alternates=True, conjugate_pronouns=False)["moods"]
        except Exception:  # verbecc raises on a few defective entries
            continue
        keep = rank < LEMMAS[code]
        bases: list[str] = [inf]
        for mood, tenses in moods.items():
            for tense, table in tenses.items():
                slots = _slots(table)
                if mood.startswith("imperativo"):
                    if tense != "afirmativo":
                        continue
                    we = 3 if len(slots) == 6 else 2
                    you = [i for i in range(len(slots)) if i != we and i < len(slots)]
                    bases += [f for i in you for f in slots[i] if i in (0, 1, len(slots) - 1)]
                elif len(slots) == 6:
                    we = None
                    firsts = (0, 3)
                    if mood == "infinitivo":  # personal infinitive: slot 0 is the infinitive
                        firsts = (3,)
                    for i, forms in enumerate(slots):
                        for f in forms:
                            if i == 3 and not f.endswith("mos"):
                                continue  # verbecc 1.9.7 truncates some pt 1pl forms
                            if i in firsts and keep:
                                first.setdefault(normalise(f), f)
                                lemma_of.setdefault(normalise(f), inf)
                                if i == 0 and tense == "presente" and mood == "indicativo":
                                    present.add(normalise(f))
                                if i == 0 and tense.startswith("pretérito-perfe"):
                                    preterite.add(normalise(f))
                            elif i not in firsts:
                                other_raw.setdefault(normalise(f), set()).add(f.casefold())
                    continue
                else:
                    for forms in slots:
                        [other_raw.setdefault(normalise(f), set()).add(f.casefold()) for f in forms]
                        if mood.startswith("ger"):
                            bases += forms[:1]
                    continue
                for i, forms in enumerate(slots):
                    for f in forms:
                        if i == we and keep:
                            first.setdefault(normalise(f), f)
                            lemma_of.setdefault(normalise(f), inf)
                        elif i != we:
                            other_raw.setdefault(normalise(f), set()).add(f.casefold())
        if code == "es" and rank < CLITIC_LEMMAS:
            for base in bases:
                for suffix in ES_CLITICS:
                    clitics.add(normalise(base) + suffix)
    hand = _hand(code)
    disabled = {normalise(w) for w in hand.get("disabled") or ()}
    listed = {normalise(w) for k in ("pronouns", "verb_forms") for w in hand.get(k) or ()}
    stop = _stopwords(code)  # reported, not filtered: stopwords-iso lists trabajo
    plain: set[str] = set()
    homographs: set[str] = set()
    other = set(other_raw)
    as_written: set[str] = set()
    stop_homographs: set[str] = set()
    for norm, form in first.items():
        if norm in disabled or norm in listed or " " in norm:
            continue
        if norm in other:
            # trabajo = trabajó, trabajé = trabaje once accents go; the text keeps them
            if form.casefold() in other_raw[norm] or zipf_frequency(form, code) <= 0:
                continue  # spelled alike even with accents (había): not first person
            as_written.add(form.casefold())
        if zipf_frequency(form, code) <= 0:
            continue
        lemma = simplemma.lemmatize(form, lang=code)
        if lemma.endswith(VERB_ENDINGS[code]) and norm not in present and norm not in other:
            plain.add(norm)
        else:
            homographs.add(norm)
            if norm in stop:
                stop_homographs.add(norm)
    for form in clitics:
        if form in other or form in disabled or zipf_frequency(form, code) <= 0:
            continue
        plain.add(form)
    if stop_homographs:  # for the maintainer: function words belong in 'disabled'
        print(f"{code}: homographs that are stopwords: {' '.join(sorted(stop_homographs))}")
    return {
        # written as conjugated (accents kept); the loader normalises
        "verb_forms": sorted({first.get(n, n) for n in plain}),
        "contexts": [
            {"id": "noun-homographs", "words": sorted({first.get(n, n) for n in homographs})}
        ],
        # every generated form counts only as spelled, accents kept: préstamos (loans) is
        # not prestamos (we lend) even where no verb form collides
        "as_written": sorted(
            as_written | {first[n].casefold() for n in plain | homographs if n in first}
        ),
        "_source": (
            f"verbecc {version('verbecc')} (conjugation tables), wordfreq {version('wordfreq')}"
            f" (ranking and filter), simplemma {version('simplemma')} (homographs)"
        ),
    }


def _ru_first(parse: Any) -> bool:
    """A first-person verb reading, or the short present passive participle that every
    1pl present in -ем/-им is also spelled as (устраиваем "is arranged", bookish)."""
    tag = parse.tag
    if tag.POS == "VERB":
        return bool(tag.person == "1per")
    return bool(tag.POS == "PRTS" and "pres" in tag and "pssv" in tag)


def russian() -> dict[str, Any]:
    """First-person verb forms of the frequent Russian words."""
    import pymorphy3
    from wordfreq import top_n_list

    from guardlex.normalise import normalise

    morph = pymorphy3.MorphAnalyzer()
    hand = _hand("ru")
    disabled = {normalise(w) for w in hand.get("disabled") or ()}
    listed = {normalise(w) for k in ("pronouns", "verb_forms") for w in hand.get(k) or ()}
    lemmas: set[str] = set()
    for word in top_n_list("ru", RU_WORDS):
        for p in morph.parse(word):
            if p.tag.POS in ("VERB", "INFN") and p.score >= RU_MIN_SCORE:
                lemmas.add(p.normal_form)
    candidates: set[str] = set()
    for lemma in lemmas:
        for p in morph.parse(lemma):
            if p.tag.POS == "INFN" and p.normal_form == lemma:
                candidates.update(f.word for f in p.lexeme if f.tag.person == "1per")
                break
    out: set[str] = set()
    for word in candidates:
        parses = [p for p in morph.parse(word) if p.score >= RU_MIN_SCORE]
        if parses and all(_ru_first(p) for p in parses):
            norm = normalise(word)
            if norm not in disabled and norm not in listed:
                out.add(norm)
    dicts = version("pymorphy3-dicts-ru")
    return {
        "verb_forms": sorted(out),
        "contexts": [],
        "as_written": [],
        "_source": (
            f"pymorphy3 {version('pymorphy3')} with pymorphy3-dicts-ru {dicts} (OpenCorpora),"
            f" wordfreq {version('wordfreq')}"
            f" (lemmas: the verbs of its {RU_WORDS} most frequent words)"
        ),
    }


def render(code: str, data: dict[str, Any]) -> str:
    """The file text: provenance header, then the lists."""

    def block(items: Iterable[str], indent: str) -> list[str]:
        return [f"{indent}- {w}" for w in items]

    lines = [
        "# yaml-language-server: $schema=../../rules/schemas/first_person.schema.json",
        "#",
        "# GENERATED by tools/gen_first_person.py; do not edit by hand. Hand-written entries,",
        "# the conditions of the context groups and the 'disabled' words live in",
        "# first_person.yaml beside this file; the loader merges both.",
        f"# Source: {data['_source']}.",
        f"# {len(data['verb_forms'])} verb forms,"
        f" {sum(len(g['words']) for g in data['contexts'])} in context groups.",
        f"locale: {code}",
        "schema_version: 1",
        f"source: {json.dumps(data['_source'], ensure_ascii=False)}",
        "generated_by: tools/gen_first_person.py",
        "verb_forms:",
        *block(data["verb_forms"], "  "),
    ]
    if data["as_written"]:
        lines += ["as_written:", *block(data["as_written"], "  ")]
    groups = [g for g in data["contexts"] if g["words"]]
    if groups:
        lines.append("contexts:")
        for g in groups:
            lines += [f"  - id: {g['id']}", "    words:", *block(g["words"], "      ")]
    return "\n".join(lines) + "\n"


def generate(code: str) -> str:
    return render(code, russian() if code == "ru" else romance(code))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locales", nargs="*", default=["es", "pt", "ru"])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = 0
    for code in args.locales:
        out = LOCALES / code / "first_person.generated.yaml"
        text = generate(code)
        if args.check:
            if not out.exists() or out.read_text(encoding="utf-8") != text:
                print(f"{out} is out of date; run python tools/gen_first_person.py {code}")
                stale += 1
            continue
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
