"""Generate ``locales/<code>/concepts.generated.yaml``: inflected word families.

A concept lists every way of saying one idea; for a verb that is every person, tense and
spelling, which nobody should type by hand (Russian берёт/возьмёт/просите, Spanish
cobra/cobraría/cobrase, Persian می‌گیرد/بگیرد). The spec ``tools/concepts/<code>.yaml``
(language data, like the packs) names each idea and its lemmas; this script asks a
well-kept library for the forms and writes the concept ``gen_<idea>``:

* ``ru``: pymorphy3 with its OpenCorpora dictionary: every form of the lemma's lexeme,
  restricted by ``only`` (a list of grammeme sets: a form is kept when its tag holds
  every grammeme of one set, e.g. ``[[VERB, 3per]]``);
* ``es``, ``pt``, ``fr``: verbecc's conjugation tables: the one-word forms of the
  ``tenses`` given as ``mood/tense`` (default: every simple tense), for the ``persons``
  given (``1s 2s 3s 1p 2p 3p``, default all), plus the infinitive, gerund and
  participles unless ``nonfinite: false``;
* ``fa``: hazm's ``Conjugation``: lemmas are stem pairs ``past#present`` as in hazm's verb
  list, ``tenses`` are its method names (each past tense on the past stem, each present
  tense on the present stem), ``persons`` as above; every form is written joined and
  split at the zero-width non-joiner (میگیرد, می گیرد), as the Persian first-person
  generator does.

Every form is normalised with ``guardlex.normalise`` (the loader would do it anyway; the
linter warns about terms normalisation rewrites) and written as one alternative of a
term. A hand-written concept uses the generated one as a term (``- <gen_charge_v>``).
A wrong spec (an unknown lemma, tense, person or grammeme, a lemma with no forms left, a
``gen_`` name the hand-written ``concepts.yaml`` also defines) is reported with its entry
and nothing is written.

Run ``python tools/gen_concepts.py [CODE ...]`` (needs the ``tools`` extra) to rewrite the
files, ``--check`` to compare them with a fresh build; a test does the same.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "src" / "guardlex" / "locales"
SPECS = Path(__file__).resolve().parent / "concepts"
PERSONS = ("1s", "2s", "3s", "1p", "2p", "3p")
#: Alternatives per generated term: short lines a reviewer can read in a diff.
PER_TERM = 12
LIBRARY = {"ru": "pymorphy3", "es": "verbecc", "pt": "verbecc", "fr": "verbecc", "fa": "hazm"}


class SpecError(ValueError):
    """A spec entry the library cannot satisfy (named with its file and entry)."""


def load_spec(code: str) -> dict[str, Any]:
    """The spec of one locale, checked for shape; a ``SpecError`` names what is wrong."""
    path = SPECS / f"{code}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SPECS.glob("*.yaml")))
        raise SpecError(f"no spec {path} (specs exist for: {known})")
    spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if spec.get("locale") != code:
        raise SpecError(f"{path}: 'locale: {spec.get('locale')}' should be 'locale: {code}'")
    if code not in LIBRARY:
        raise SpecError(f"{path}: no generator library for locale {code!r}")
    entries = spec.get("concepts")
    if not isinstance(entries, dict) or not entries:
        raise SpecError(f"{path}: 'concepts:' must map idea names to entries")
    for idea, entry in entries.items():
        where = f"{path.name}, entry '{idea}'"
        if not isinstance(entry, dict) or not entry.get("lemmas") or not entry.get("about"):
            raise SpecError(f"{where}: every entry needs 'about' and a list of 'lemmas'")
        for p in entry.get("persons") or ():
            if p not in PERSONS:
                raise SpecError(f"{where}: unknown person {p!r} (use {' '.join(PERSONS)})")
    return spec


def _persons(entry: dict[str, Any]) -> list[int]:
    return [PERSONS.index(p) for p in entry.get("persons") or PERSONS]


def russian(idea: str, entry: dict[str, Any]) -> set[str]:
    """Forms of each lemma's lexeme whose tag holds one of the ``only`` grammeme sets."""
    import pymorphy3

    morph = _cached("morph", pymorphy3.MorphAnalyzer)
    known = morph.TagClass.KNOWN_GRAMMEMES
    only = [set(g) for g in entry.get("only") or [[]]]
    for g in set().union(*only) - known:
        raise SpecError(f"ru.yaml, entry '{idea}': unknown pymorphy3 grammeme {g!r}")
    out: set[str] = set()
    for lemma in entry["lemmas"]:
        parses = [p for p in morph.parse(lemma) if p.normal_form == lemma and p.is_known]
        if not parses:
            raise SpecError(f"ru.yaml, entry '{idea}': pymorphy3 does not know the lemma {lemma!r}")
        forms = {f.word for f in parses[0].lexeme if any(g <= f.tag.grammemes for g in only)}
        if not forms:
            raise SpecError(f"ru.yaml, entry '{idea}': no form of {lemma!r} is {only}")
        out |= forms
    return out


def romance(code: str, idea: str, entry: dict[str, Any]) -> set[str]:
    """One-word forms of the chosen tenses and persons (and the non-finite forms)."""
    from verbecc import Conjugator

    logging.getLogger("verbecc").setLevel(logging.ERROR)
    cg = _cached(f"verbecc-{code}", lambda: Conjugator(code))
    infinitives = _cached(f"infinitives-{code}", lambda: set(cg.get_infinitives()))
    wanted = set(entry.get("tenses") or ())
    persons = _persons(entry)
    nonfinite = entry.get("nonfinite", True)
    out: set[str] = set()
    seen: set[str] = set()
    for lemma in entry["lemmas"]:
        if lemma not in infinitives:
            raise SpecError(f"{code}.yaml, entry '{idea}': verbecc does not know {lemma!r}")
        moods = cg.conjugate(lemma, include_alternates=True, conjugate_pronouns=False)["moods"]
        for mood, tenses in moods.items():
            for tense, table in tenses.items():
                name = f"{mood}/{tense}"
                seen.add(name)
                rows = [r if isinstance(r, list) else [r] for r in table]
                if any(not isinstance(f, str) or len(f) < 2 for r in rows for f in r):
                    continue  # compound tenses (verbecc returns them spelled out or split)
                if len(rows) != 6:  # infinitive, gerund, participles, imperative
                    if name in wanted if mood.startswith("imp") else nonfinite:
                        out.update(f for r in rows for f in r)
                    continue
                if wanted and name not in wanted:
                    continue
                out.update(f for i in persons for f in rows[i] if " " not in f)
    for name in wanted - seen:
        raise SpecError(f"{code}.yaml, entry '{idea}': verbecc has no tense {name!r}")
    return out


def persian(idea: str, entry: dict[str, Any]) -> set[str]:
    """hazm's conjugations of each stem pair, joined and split at the ZWNJ."""
    from hazm import Conjugation
    from hazm.utils import verbs_list

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gen_fa_first_person import fix_prefix  # one spelling rule, shared

    conj = _cached("hazm", Conjugation)
    pairs = _cached("hazm-verbs", lambda: {v.strip() for v in verbs_list()})
    persons = _persons(entry)
    out: set[str] = set()
    for lemma in entry["lemmas"]:
        if lemma not in pairs:
            raise SpecError(f"fa.yaml, entry '{idea}': hazm's verb list has no {lemma!r}")
        past, _, present = lemma.partition("#")
        for tense in entry.get("tenses") or ():
            method = getattr(conj, tense, None)
            if method is None:
                raise SpecError(f"fa.yaml, entry '{idea}': hazm has no tense {tense!r}")
            # present-stem tenses end in "present" (imperfective_present, perfective_present)
            # or "present_progressive"; the others are built on the past stem
            on_present = tense.endswith(("present", "present_progressive"))
            stem = present if on_present else past
            forms = method(stem)
            if len(forms) != 6:
                raise SpecError(f"fa.yaml, entry '{idea}': {tense} has no six persons")
            out.update(fix_prefix(forms[i], stem) for i in persons)
    zwnj = "\u200c"
    return {s for f in out for s in (f.replace(zwnj, ""), f.replace(zwnj, " "))}


_CACHE: dict[str, Any] = {}


def _cached(key: str, make: Callable[[], Any]) -> Any:
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def forms_of(code: str, idea: str, entry: dict[str, Any]) -> list[str]:
    """The normalised forms of one entry, sorted, ``exclude`` dropped."""
    from guardlex.normalise import normalise

    if code == "ru":
        raw = russian(idea, entry)
    elif code == "fa":
        raw = persian(idea, entry)
    else:
        raw = romance(code, idea, entry)
    drop = {normalise(w) for w in entry.get("exclude") or ()}
    forms = {normalise(f) for f in raw} - drop - {""}
    if not forms:
        raise SpecError(f"{code}.yaml, entry '{idea}': no forms left")
    return sorted(forms)


def _source(code: str) -> str:
    lib = LIBRARY[code]
    if lib == "pymorphy3":
        return (
            f"pymorphy3 {version('pymorphy3')} with pymorphy3-dicts-ru "
            f"{version('pymorphy3-dicts-ru')} (OpenCorpora)"
        )
    if lib == "hazm":
        return f"hazm {version('hazm')} (verb list and Conjugation)"
    return f"verbecc {version('verbecc')} (conjugation tables)"


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def generate(code: str) -> str:
    """The full text of ``locales/<code>/concepts.generated.yaml``."""
    spec = load_spec(code)
    hand_path = LOCALES / code / "concepts.yaml"
    hand = yaml.safe_load(hand_path.read_text(encoding="utf-8")) if hand_path.is_file() else {}
    hand_names = set((hand or {}).get("concepts") or ())
    source = f"tools/gen_concepts.py from tools/concepts/{code}.yaml; {_source(code)}"
    lines = [
        "# yaml-language-server: $schema=../../rules/schemas/concepts.schema.json",
        "#",
        f"# GENERATED by tools/gen_concepts.py from tools/concepts/{code}.yaml; do not edit.",
        "# Add a lemma to the spec and run: python tools/gen_concepts.py " + code,
        f"locale: {code}",
        "schema_version: 2",
        f"source: {json.dumps(source, ensure_ascii=False)}",
        "concepts:",
    ]
    for idea, entry in spec["concepts"].items():
        name = f"gen_{idea}"
        if name in hand_names:
            raise SpecError(
                f"{code}.yaml, entry '{idea}': concepts.yaml also defines '{name}'; "
                "rename one (the generated file would replace the hand-written concept)"
            )
        forms = forms_of(code, idea, entry)
        about = f"{entry['about']} Generated: {len(forms)} forms of {', '.join(entry['lemmas'])}."
        lines += [f"  {name}:", f"    about: {json.dumps(about, ensure_ascii=False)}", "    terms:"]
        lines += [f'      - "({" | ".join(c)})"' for c in _chunks(forms, PER_TERM)]
        ex = entry.get("examples")
        if ex:
            lines.append(f"    examples: {json.dumps(ex, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "locales", nargs="*", metavar="CODE", help="locales to build (default: every spec)"
    )
    parser.add_argument(
        "--check", action="store_true", help="compare the committed files, write nothing"
    )
    args = parser.parse_args(argv)
    codes = args.locales or sorted(p.stem for p in SPECS.glob("*.yaml"))
    stale = 0
    for code in codes:
        out = LOCALES / code / "concepts.generated.yaml"
        try:
            text = generate(code)
        except SpecError as exc:
            print(f"gen_concepts: {exc}", file=sys.stderr)
            return 2
        if args.check:
            if not out.is_file() or out.read_text(encoding="utf-8") != text:
                print(f"{out} is out of date; run python tools/gen_concepts.py {code}")
                stale += 1
            continue
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out} ({text.count(chr(10))} lines)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
