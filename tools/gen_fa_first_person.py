"""Generate ``locales/fa/first_person.yaml`` from hazm's verb list and conjugator.

Persian marks person with verb endings, and a rule broad enough to catch every
first-person ending would also catch ordinary words (مردم "people" ends like "I died").
So the Persian lexicon lists conjugated first-person forms explicitly:

* lemmas: hazm's ``verbs.dat`` (past#present stems), ranked by the frequency hazm's
  ``words.dat`` gives the infinitive; the ``TOP_LEMMAS`` most frequent infinitives are
  kept, with every stem pair hazm lists for them;
* tenses: the ones whose person ending sits on one word (simple and imperfective past,
  present perfect, simple, subjunctive and imperfective present, each with its negative),
  in hazm's ``Conjugation``; compound tenses end in one of these words anyway (خواهم کرد,
  دیده شدم, کرده بودم), so they need no entry of their own;
* colloquial present forms from hazm's informal verb list ``iverbs.dat`` (میخوام، میرم،
  میگم، بتونم ...), with the same prefixes;
* spellings: each form is written joined (میکنم) and split (می کنم, which is also what
  ``guardlex.normalise`` makes of می‌کنم), then normalised;
* the filter: a form is dropped when hazm's lexicon ``words.dat`` tags the same
  normalised string as a non-verb (مردم "people", دهم "tenth", رستم, چشم "eye" ...).

Run ``python tools/gen_fa_first_person.py`` to rewrite the file, ``--check`` to compare.
A test compares the committed file with this script's output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "guardlex" / "locales" / "fa" / "first_person.yaml"
ZWNJ = "\u200c"
TOP_LEMMAS = 200
#: How many of words.dat's most frequent nouns get the first-person possessive enclitics.
TOP_NOUNS = 3000
#: The enclitics ("my", "our") after a consonant, and after a long vowel ا/و (with ی).
ENCLITICS = ("م", "مان")
ENCLITICS_AFTER_VOWEL = ("یم", "یمان")

# The hand-written part (standalone pronouns, the copula, exceptions, examples) is
# language data: it lives in locales/fa/locale.yaml under ``first_person_seed``.
LOCALE_DIR = ROOT / "src" / "guardlex" / "locales" / "fa"


def seed() -> tuple[list[str], list[str], list[str], dict[str, list[str]]]:
    """(pronouns, copula, exceptions, examples) from ``first_person_seed`` of locale.yaml."""
    from guardlex.rules.locale_info import load_locale_info

    data = load_locale_info(LOCALE_DIR).first_person_seed
    examples = data.get("examples") or {}
    return (
        list(data.get("pronouns") or ()),
        list(data.get("verb_forms") or ()),
        list(data.get("exceptions") or ()),
        {k: list(examples.get(k) or ()) for k in ("match", "no_match")},
    )


def quotes() -> list[tuple[str, str]]:
    """Quotation-mark pairs from ``first_person_seed`` of locale.yaml."""
    from guardlex.rules.locale_info import load_locale_info

    data = load_locale_info(LOCALE_DIR).first_person_seed
    return [(str(a), str(b)) for a, b in data.get("quotes") or ()]


# Conjugation method -> positions of (1st singular, 1st plural) in its output.
PAST_TENSES = {
    "perfective_past": (0, 3),
    "negative_perfective_past": (0, 3),
    "imperfective_past": (0, 3),
    "negative_imperfective_past": (0, 3),
    "present_perfect": (0, 4),
    "negative_present_perfect": (0, 4),
}
PRESENT_TENSES = {
    "perfective_present": (0, 3),
    "negative_perfective_present": (0, 3),
    "subjunctive_perfective_present": (0, 3),
    "imperfective_present": (0, 3),
    "negative_imperfective_present": (0, 3),
}


def fix_prefix(form: str, stem: str) -> str:
    """Apply the spelling rule hazm skips: ن/ب before a stem in آ or ا take a ی.

    Only a prefix hazm added is rewritten (نآمدم -> نیامدم, بانداختم -> بینداختم); a stem
    that itself begins with ب or ن (باشم، نوشتم) is left alone.
    """
    for prefix in ("ن", "ب"):
        if not form.startswith(prefix + stem):
            continue
        rest = form[len(prefix) + 1 :]
        if stem.startswith("آ"):
            return prefix + "یا" + rest
        if stem.startswith("ا"):
            return prefix + "ی" + rest
    return form


def spellings(form: str, normalise: Callable[[str], str]) -> set[str]:
    """The joined and the split spelling of a form, both normalised."""
    return {normalise(form.replace(ZWNJ, "")), normalise(form.replace(ZWNJ, " "))}


def select_lemmas(
    verbs: Iterable[str], freq: dict[str, int], top: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """Stem pairs of the ``top`` most frequent infinitives (ties broken alphabetically)."""
    pairs: list[tuple[str, str]] = []
    for line in verbs:
        past, _, present = line.partition("#")
        past, present = past.strip(), present.strip()
        if past and present:
            pairs.append((past, present))
    infinitives = sorted(
        {p + "ن" for p, _ in pairs if freq.get(p + "ن", 0) > 0},
        key=lambda inf: (-freq[inf], inf),
    )[:top]
    keep = set(infinitives)
    return [(p, s) for p, s in pairs if p + "ن" in keep], infinitives


def formal_forms(pairs: Iterable[tuple[str, str]]) -> set[str]:
    """First-person forms of every selected stem pair, in hazm's spelling (with ZWNJ)."""
    from hazm import Conjugation

    conj = Conjugation()
    out: set[str] = set()
    for past, present in pairs:
        for name, idx in PAST_TENSES.items():
            forms = getattr(conj, name)(past)
            out.update(fix_prefix(forms[i], past) for i in idx)
        if present == "است":  # بود#است: the copula, listed by hand
            continue
        for name, idx in PRESENT_TENSES.items():
            forms = getattr(conj, name)(present)
            out.update(fix_prefix(forms[i], present) for i in idx)
    return out


def informal_forms(lines: Iterable[str]) -> set[str]:
    """Colloquial present forms (میخوام، نمیدونم، بگم) from hazm's informal verb list."""
    out: set[str] = set()
    for line in lines:
        parts = line.split()
        if len(parts) < 2:
            continue
        stem = parts[1]
        for ending in ("م", "یم"):
            out.add("می" + ZWNJ + stem + ending)
            out.add("نمی" + ZWNJ + stem + ending)
            # colloquial stems in آ/ا have a long ā (آ، ار from آوردن): بیام، بیارم
            bare = stem[1:] if stem[0] in "آا" else None
            out.add("ب" + stem + ending if bare is None else "بیا" + bare + ending)
            if stem.startswith("آ"):  # colloquial spelling: میام، نمیایم
                out.add("میا" + stem[1:] + ending)
                out.add("نمیا" + stem[1:] + ending)
    return out


def nonverbs(normalise: Callable[[str], str]) -> dict[str, str]:
    """Normalised words hazm's lexicon tags with a part of speech (never V), with the tags."""
    from hazm import words_list

    out: dict[str, str] = {}
    for word, _freq, tags in words_list():
        real = [t for t in tags if t and t != "0"]
        if real:
            out.setdefault(normalise(word), ",".join(real))
    return out


def possessed_nouns(
    words: Iterable[tuple[str, int, Iterable[str]]], normalise: Callable[[str], str]
) -> tuple[set[str], int]:
    """Frequent nouns with the first-person possessive enclitic (کتابم, تیممان, دانشجویم).

    A form is kept only where it can be told apart from ordinary words: it must not
    itself be a word of the lexicon (قدم, مردم, چشم are words, not "my قد"). Nouns
    ending in ه or ی take the enclitic after a ZWNJ (خانه‌ام), which normalisation
    splits into two words; the separate ام is the copula, listed by hand.
    """
    rows = [(w, f, [t for t in tags if t and t != "0"]) for w, f, tags in words]
    known = {normalise(w) for w, _f, _t in rows}
    nouns = sorted(
        (
            (w, f)
            for w, f, tags in rows
            if "N" in tags
            and not {"ADV", "P", "CONJ", "PRO", "DET", "NUM"} & set(tags)
            and len(w) >= 3
            and " " not in w
            and ZWNJ not in w
        ),
        key=lambda x: (-x[1], x[0]),
    )[:TOP_NOUNS]
    out: set[str] = set()
    dropped = 0
    for noun, _f in nouns:
        if noun.endswith(("ه", "ی", "ي")):
            continue
        endings = ENCLITICS_AFTER_VOWEL if noun.endswith(("ا", "و")) else ENCLITICS
        for ending in endings:
            form = normalise(noun + ending)
            if form in known:
                dropped += 1
            else:
                out.add(form)
    return out, dropped


def generate() -> str:
    """The full text of ``locales/fa/first_person.yaml``."""
    import hazm
    from hazm.utils import informal_verbs, verbs_list

    from guardlex.normalise import normalise

    freq = {w: f for w, f, _ in hazm.words_list()}
    pairs, _infinitives = select_lemmas(verbs_list(), freq, TOP_LEMMAS)
    with open(informal_verbs, encoding="utf-8") as fh:
        informal = informal_forms(fh.read().splitlines())
    candidates: set[str] = set()
    for form in formal_forms(pairs) | informal:
        candidates |= spellings(form, normalise)
    blocked = nonverbs(normalise)
    dropped = sorted(c for c in candidates if c in blocked)
    forms = sorted(c for c in candidates if c not in blocked)
    seed_pronouns, copula, seed_exceptions, examples = seed()
    possessed, possessed_dropped = possessed_nouns(hazm.words_list(), normalise)
    forms = sorted(set(forms) | {normalise(c) for c in copula} | (possessed - blocked.keys()))
    pronouns = [normalise(p) for p in seed_pronouns]
    exceptions = [normalise(e) for e in seed_exceptions]

    def yaml_list(items: Iterable[str], indent: str = "  ") -> str:
        return "\n".join(f"{indent}- {item}" for item in items)

    header = [
        "# yaml-language-server: $schema=../../rules/schemas/first_person.schema.json",
        "#",
        "# GENERATED by tools/gen_fa_first_person.py; do not edit by hand (edit",
        "# first_person_seed in locale.yaml and rerun it).",
        "#",
        f"# Source: hazm {version('hazm')} data files verbs.dat (stem pairs), words.dat",
        "# (infinitive frequencies and part-of-speech tags) and iverbs.dat (colloquial stems).",
        f"# Lemmas: the {TOP_LEMMAS} most frequent infinitives in words.dat"
        f" ({len(pairs)} stem pairs).",
        "# Tenses (1st person singular and plural, hazm Conjugation):",
        *(f"#   {name}" for name in [*PAST_TENSES, *PRESENT_TENSES]),
        "# plus colloquial present with می/نمی/ب from iverbs.dat, and the copula by hand.",
        "# Spellings: joined (میکنم) and split (می کنم), normalised with guardlex.normalise.",
        f"# Possessives: the {TOP_NOUNS} most frequent nouns of words.dat (not also adverbs,",
        "# numbers, …) with the enclitics ـم/ـمان",
        f"# (ـیم/ـیمان after ا/و): {len(possessed)} forms; {possessed_dropped} dropped because"
        " the form",
        "# is itself a word of words.dat (قدم، مردم، چشم).",
        f"# Filter: {len(dropped)} forms dropped because words.dat tags them as non-verbs:",
    ]
    line = "#  "
    for word in dropped:
        if len(line) + len(word) + 1 > 88:
            header.append(line)
            line = "#  "
        line += " " + word
    header.append(line)
    body = [
        "locale: fa",
        "schema_version: 1",
        f"source: hazm {version('hazm')} (verbs.dat, words.dat, iverbs.dat)",
        "generated_by: tools/gen_fa_first_person.py",
        "pronouns:",
        yaml_list(pronouns),
        "verb_forms:",
        yaml_list(forms),
        "exceptions:",
        yaml_list(exceptions),
        "# quotation marks [opening, closing]: first person inside a closed quotation is",
        "# quoted speech or a title, not the writer speaking (guardlex.rules.first_person)",
        "quotes:",
        *(
            f"  - [{json.dumps(a, ensure_ascii=False)}, {json.dumps(b, ensure_ascii=False)}]"
            for a, b in quotes()
        ),
        "examples:",
        "  match:",
        yaml_list(examples["match"], "    "),
        "  no_match:",
        yaml_list(examples["no_match"], "    "),
    ]
    return "\n".join(header + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the file, or with ``--check`` report whether it is up to date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date; run python tools/gen_fa_first_person.py")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
