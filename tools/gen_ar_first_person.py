"""Generate ``locales/ar/first_person.generated.yaml``: Arabic first person on one word.

Arabic writes "we", "our", "my" and "me" as suffixes (فريقنا "our team", عملنا "we
worked", مدونتي "my blog", يجعلني "makes me") and "I"/"we" as verb prefixes (أعرف "I
know", نحتاج "we need"). A rule on the suffix alone would also catch ordinary words (هنا
"here", زمنا "a time", التي "which", أكبر "bigger"), so the forms are listed one by one,
generated from wordfreq's Arabic word list (frequencies; no Arabic morphology library
is packaged in a usable state) and kept only when they can be told apart:

* never on a word with the article (الروماني "the Roman", التي "which");
* ``-نا`` (we/our/us): the word minus ``نا`` (or with ت restored to ة: حياتنا -> حياة)
  is itself a frequent word (zipf >= ``STEM_ZIPF``), and the word is not much more
  frequent than that stem (كورونا, أحيانا "sometimes" are words of their own);
* ``-تي`` (my, on nouns in ة): the word minus ``تي`` plus ``ة`` is a frequent word
  (محطتي -> محطة); other ``-ي`` words are left out: a noun + ي is spelled like the
  adjective in ي (عربي "Arab", not "my Arab");
* ``-ني`` (me): on a present verb (ي-/ت-) whose form without ``ني`` is frequent
  (يجعلني -> يجعل); زمني "temporal" is not a verb;
* prefixes: for a frequent word in ي (3rd person present: يعرف) the 1st plural ن-
  (نعرف, also with the future س- and the conjunctions و- ف-) when attested and clearly
  rarer than the ي- form (نخيل "palms" is a word of its own); the 1st singular أ- only
  with the future (سأعرف): bare أفعل is also the past of the 4th form (أطلق "he
  launched"), the elative (أشبه "more like") and, normalised, the imperative (اجعل);
* the past 1sg of defective verbs in ``-يت`` (رأيت "I saw", قضيت): unlike ``-ت`` of
  sound verbs (عملت is also "she worked"), the feminine is spelled apart (رأت); kept
  when the masculine in ى (رأى) is a frequent word and more frequent than the spelling
  in ي (verbs in ي, بقي "he remained", make the feminine بقيت, spelled like the 1sg), the
  1pl (رأينا) attested and the feminine (رأت) frequent (ستريت "Street" is a name); not
  in the 4th form (أجريت "was held").

Everything is compared after ``guardlex.normalise``. ``disabled`` in the hand-written
``first_person.yaml`` removes what the rules still get wrong (أحيانا "sometimes").
Run ``python tools/gen_ar_first_person.py``; ``--check`` compares with a fresh build.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "src" / "guardlex" / "locales" / "ar"
OUT = FOLDER / "first_person.generated.yaml"
WORDS = 200_000
STEM_ZIPF = 2.5
STEM_SLACK = 0.5
PREFIX_MARGIN = 0.3
PROCLITICS = ("", "و", "ف")


def generate() -> str:
    from wordfreq import top_n_list, zipf_frequency

    from guardlex.normalise import normalise

    hand = yaml.safe_load((FOLDER / "first_person.yaml").read_text(encoding="utf-8")) or {}
    disabled = {normalise(w) for w in hand.get("disabled") or ()}
    listed = {normalise(w) for k in ("pronouns", "verb_forms") for w in hand.get(k) or ()}
    stop_data = yaml.safe_load((FOLDER / "stopwords.yaml").read_text(encoding="utf-8")) or {}
    stopwords = {normalise(w) for w in stop_data.get("words") or ()}
    words = top_n_list("ar", WORDS)
    zipf: dict[str, float] = {}
    for w in words:  # normalised spelling -> best frequency of any raw spelling
        n = normalise(w)
        zipf[n] = max(zipf.get(n, 0.0), zipf_frequency(w, "ar"))

    def freq(raw: str) -> float:
        return zipf.get(normalise(raw), 0.0)

    na, ti, ni, prefixed = set(), set(), set(), set()
    ta, marbuta = normalise("ت"), normalise("ة")
    suffix_na, suffix_ti, suffix_ni = normalise("نا"), normalise("تي"), normalise("ني")
    article = tuple(normalise(a) for a in ("ال", "وال", "فال", "بال", "كال", "لل"))
    imperfect = tuple(normalise(a) for a in ("ي", "ت"))
    # indefinite accusatives are written with tanween (أماناً "safety", زمناً): not -نا
    tanween = {normalise(w) for w in words if w.endswith("ً")}
    for n, fn in zipf.items():
        if n.startswith(article):
            continue  # the article never takes a possessive: الروماني is "the Roman"
        if len(n) >= 5 and n.endswith(suffix_na):
            stem = n[:-2]
            stems = [stem] + ([stem[:-1] + marbuta] if stem.endswith(ta) else [])
            if any(x in stopwords for x in stems):
                continue  # أمانا = أما + نا? a function word's -نا is hand-written (علينا)
            best = max(zipf.get(x, 0.0) for x in stems)
            # the stem is a word, and the word is not far more frequent than it
            # (كورونا, أحيانا are words of their own, not كورو + نا)
            if best >= STEM_ZIPF and fn <= best + STEM_SLACK and n not in tanween:
                na.add(n)
        if len(n) >= 5 and n.endswith(suffix_ti) and zipf.get(n[:-2] + marbuta, 0.0) >= STEM_ZIPF:
            ti.add(n)
        if (
            len(n) >= 5
            and n.endswith(suffix_ni)
            and n.startswith(imperfect)
            and zipf.get(n[:-2], 0.0) >= STEM_ZIPF
        ):
            ni.add(n)  # a present verb + ني: يجعلني; روماني "Roman" is not a verb
    # past 1sg of defective verbs: رأيت, قضيت, بقيت (the 3rd feminine is رأت, قضت), when
    # the 3rd masculine (رأى) is a frequent word
    past = set()
    for w in words:
        if len(w) < 4 or not w.endswith("يت") or w.startswith(("ال", "أ", "إ")):
            continue  # 4th form (أجريت is also "was held"); the article
        stem = w[:-2]
        masc = zipf_frequency(stem + "ى", "ar")
        if (
            masc >= STEM_ZIPF
            # a verb in ى (رأى, قضى); one in ي (بقي "he remained", نسي) makes its
            # feminine بقيت, spelled like the 1sg
            and masc >= zipf_frequency(stem + "ي", "ar")
            and zipf_frequency(stem + "ينا", "ar") > 0  # رأينا "we saw"
            and zipf_frequency(stem + "ت", "ar") >= STEM_ZIPF  # رأت "she saw"
        ):
            past.add(normalise(w))
    for w in words:
        if len(w) < 4 or not w.startswith("ي"):
            continue
        rest = w[1:]
        base = zipf_frequency(w, "ar")
        # 1pl ن-: attested and clearly rarer than the 3rd person (نخيل "palms" is not)
        f = zipf_frequency("ن" + rest, "ar")
        if 0 < f <= base - PREFIX_MARGIN:
            prefixed.add(normalise("ن" + rest))
            for pro in PROCLITICS:
                for form in (pro + "ن" + rest, pro + "سن" + rest):
                    if zipf_frequency(form, "ar") > 0:
                        prefixed.add(normalise(form))
        # 1sg أ-: only with the future س- (سأعرف). Bare أفعل is also the past of the
        # 4th form (أطلق "he launched"), the elative (أشبه "more like") and, once the
        # hamza is normalised away, the imperative (اجعل "make"); the frequent bare
        # forms are hand-written in first_person.yaml.
        for pro in PROCLITICS:
            if zipf_frequency(pro + "سأ" + rest, "ar") > 0:
                prefixed.add(normalise(pro + "سأ" + rest))
    forms = sorted((na | ti | ni | prefixed | past) - disabled - listed)
    source = (
        f"wordfreq {version('wordfreq')} Arabic word list ({WORDS} words, frequencies);"
        " rules in tools/gen_ar_first_person.py"
    )
    lines = [
        "# yaml-language-server: $schema=../../rules/schemas/first_person.schema.json",
        "#",
        "# GENERATED by tools/gen_ar_first_person.py; do not edit by hand (the hand-written",
        "# entries and the 'disabled' words live in first_person.yaml beside this file).",
        f"# Source: {source}.",
        f"# {len(forms)} forms (-نا {len(na)}, -تي {len(ti)}, -ني {len(ni)},"
        f" prefixed verbs {len(prefixed)}, past -يت {len(past)}, before removing disabled"
        " and listed words).",
        "locale: ar",
        "schema_version: 1",
        f"source: {json.dumps(source, ensure_ascii=False)}",
        "generated_by: tools/gen_ar_first_person.py",
        "verb_forms:",
        *(f"  - {w}" for w in forms),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        if not same:
            print(f"{OUT} is out of date; run python tools/gen_ar_first_person.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
