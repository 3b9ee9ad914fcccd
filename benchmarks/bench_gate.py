"""Latency of the sentence gate: ``check`` per sentence and the streaming overhead per chunk.

Usage::

    python benchmarks/bench_gate.py            # 7 rounds over 300 distinct sentences
    python benchmarks/bench_gate.py --quick    # 3 rounds

The gate adds no more than the wait for the end of a sentence if checking one is cheap:
the target is a median under 50 µs per sentence on one core, with sources of a few
kilobytes. Sentences are generated deterministically in five languages (each one
distinct, so no cache helps), most with values and markers; sources are three texts of
about 2 KB. Printed, all medians in µs:

* ``check`` per locale (all ten) with the string checks (``faithful=False``) and with the
  faithfulness audit on top (the default), each with and without the forbidden-content
  check (``forbidden=False`` is the path before it existed, measured in the same run),
  against a naive baseline that re-normalises and re-tokenises the cited sources on
  every check, with the ratio;
* the parts of one check: normalising the sentence, extracting its values, the packs'
  first-person scan and ``count_words`` (parts owned by other modules are shown so a
  miss is attributed to the right place);
* streaming: the cost per chunk of feeding an answer in 4-character chunks, with the
  sentence checks excluded (segmentation and bookkeeping only) and included.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from guardlex import load_packs
from guardlex.gates import SentenceGate
from guardlex.gates._text import count_words, normalise, value_keys, values
from guardlex.gates.segment import Segmenter
from guardlex.gates.types import Verdict

TARGET_US = 50.0
LOCALES = ("en", "de", "fr", "es", "pt", "ru", "zh", "fa", "ar", "hi")
# locales whose packs fail to load (a pack being edited) are left out, with a note

SOURCE_SENTENCES = [
    "The Standard plan includes 20 seats; extra seats cost 8 per seat per month, excluding tax.",
    "Enterprise: unlimited seats. Daily proration is not supported.",
    "Recall rose from 0.71 to 0.84 on a test set of 1,200 questions in 2024.",
    "Support answers within 4 hours on weekdays; write to support@example.com.",
    "El plan Estándar incluye 20 puestos; cada puesto adicional cuesta 8 euros al mes.",
    "Тариф «Стандарт» включает 20 мест; дополнительное место стоит 1 500 рублей в месяц.",
    "标准版包含 20 个席位，超出部分 8 元/席位/月，价格不含税。企业版不限席位。",
    "طرح پایه ۲۰ صندلی دارد و هر صندلی اضافه ماهانه ۸ دلار است. مالیات شامل نمی‌شود.",
    "Documentation lives at https://example.com/docs and the changelog lists 37 releases.",
    "Der Tarif Standard enthält 20 Plätze; jeder weitere Platz kostet 8 EUR pro Monat.",
    "Le forfait Standard comprend 20 sièges ; chaque siège supplémentaire coûte 8 euros par mois.",
    "O plano Padrão inclui 20 assentos; cada assento extra custa 8 reais por mês.",
    "تشمل الباقة القياسية 20 مقعدا، ويكلف كل مقعد إضافي 8 دولارات شهريا.",
    "स्टैंडर्ड प्लान में 20 सीटें हैं; हर अतिरिक्त सीट 8 रुपये प्रति महीना है।",
    "Dana Reyes charges 900 EUR per day; her phone number is +49 170 1234567.",
]

TEMPLATES = {
    "en": [
        "The Standard plan includes {n} seats [{s}].",
        "Extra seats cost {n} per seat per month, excluding tax [{s}].",
        "Recall rose from 0.71 to 0.84 on {n} questions [{s}].",
        "In {y}, the team shipped {n} releases, see https://example.com/docs [{s}].",
        "Support answers within {n} hours on weekdays [{s}][{t}].",
        "In short, the plan fits small teams of about {n} people [{s}].",
    ],
    "es": [
        "El plan Estándar incluye {n} puestos [{s}].",
        "Cada puesto adicional cuesta {n} euros al mes [{s}].",
    ],
    "ru": [
        "Тариф «Стандарт» включает {n} мест [{s}].",
        "Дополнительное место стоит {n} рублей в месяц [{s}].",
    ],
    "zh": ["标准版包含 {n} 个席位[{s}]。", "超出部分 {n} 元/席位/月，价格不含税[{s}]。"],
    "fa": ["طرح پایه {n} صندلی دارد [{s}].", "هر صندلی اضافه ماهانه {n} دلار است [{s}]."],
    "de": [
        "Der Tarif Standard enthält {n} Plätze [{s}].",
        "Jeder weitere Platz kostet {n} EUR pro Monat [{s}].",
    ],
    "fr": [
        "Le forfait Standard comprend {n} sièges [{s}].",
        "Chaque siège supplémentaire coûte {n} euros par mois [{s}].",
    ],
    "pt": [
        "O plano Padrão inclui {n} assentos [{s}].",
        "Cada assento extra custa {n} reais por mês [{s}].",
    ],
    "ar": ["تشمل الباقة القياسية {n} مقعدا [{s}].", "يكلف كل مقعد إضافي {n} دولارات شهريا [{s}]."],
    "hi": ["स्टैंडर्ड प्लान में {n} सीटें हैं [{s}]।", "हर अतिरिक्त सीट {n} रुपये प्रति महीना है [{s}]।"],
}
#: answers that state a rate of the subject (stopped by forbidden_content), a few per locale
FORBIDDEN = {
    "en": "She charges {n} EUR per day [{s}].",
    "de": "Sie berechnet {n} EUR pro Tag [{s}].",
    "es": "Ella cobra {n} euros por día [{s}].",
    "ru": "Она берёт {n} евро в день [{s}].",
    "zh": "她每天收费 {n} 欧元[{s}]。",
}


def make_sources(rng: random.Random) -> list[str]:
    """Three sources of about 2 KB: the policy sentences plus numbered filler."""
    out = []
    for k in range(3):
        parts = list(SOURCE_SENTENCES)
        rng.shuffle(parts)
        filler = [
            f"Item {k}-{i} lists {rng.randint(2, 9999)} records and {rng.randint(2, 500)} users."
            for i in range(18)
        ]
        out.append(" ".join(parts + filler))
    return out


def make_sentences(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Distinct (locale, sentence) pairs; most values are in the sources, some are not."""
    out = []
    for i in range(count):
        locale = LOCALES[i % len(LOCALES)]
        template = rng.choice(TEMPLATES[locale])
        if locale in FORBIDDEN and i % 20 == 0:
            template = FORBIDDEN[locale]
        n = rng.choice(["20", "8", "1,200", "4", "37", str(100 + i)])
        sentence = template.format(n=n, y=rng.choice(["2024", "2023"]), s=rng.randint(1, 3), t=3)
        out.append((locale, sentence + " " * (i % 3)))
    return out


class NaiveGate(SentenceGate):
    """The obvious implementation: re-normalise and re-tokenise the sources on every check."""

    def _verdict(self, sentence: str, answer_locale: str | None = None) -> Verdict:
        self._keys = [value_keys(normalise(s)) for s in self.sources]
        return super()._verdict(sentence, answer_locale)


class _NoFirstPerson:
    """The packs with the first-person scan stubbed out, to attribute the check's cost."""

    def __init__(self, packs: Any) -> None:
        self._packs = packs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._packs, name)

    def first_person(self, text: str, locale: str | None = None) -> None:
        return None


def median_us(fn: Callable[[Any], Any], items: Sequence[Any], rounds: int) -> float:
    """Median over rounds of the per-item median time of ``fn(item)``, in µs."""
    per_round = []
    for _ in range(rounds):
        times = []
        for item in items:
            t0 = time.perf_counter_ns()
            fn(item)
            times.append(time.perf_counter_ns() - t0)
        per_round.append(statistics.median(times) / 1000)
    return statistics.median(per_round)


def _packs() -> tuple[Any, tuple[str, ...]]:
    from guardlex.errors import GuardlexError

    usable = []
    for loc in LOCALES:
        try:
            load_packs(locales=[loc])
        except GuardlexError as exc:
            print(f"note: locale {loc} left out, its pack does not load: {exc}")
            continue
        usable.append(loc)
    if "en" not in usable:
        raise SystemExit("bench_gate: the en pack does not load; fix it first")
    return load_packs(locales=usable), tuple(usable)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 7
    rng = random.Random(20240501)
    sources = make_sources(rng)
    sentences = make_sentences(rng, 300)
    packs, locales = _packs()
    sentences = [(loc, s) for loc, s in sentences if loc in locales]
    print(
        f"sources: {len(sources)} x ~{sum(map(len, sources)) // len(sources)} chars; "
        f"sentences: {len(sentences)} distinct; rounds: {rounds}; locales: {', '.join(locales)}"
    )

    def gate(loc: str, **kw: Any) -> SentenceGate:
        return SentenceGate(sources, packs=packs, locale=loc, **kw)

    # the old path (checks as before this release: forbidden content off) beside the new one
    variants = {
        "strict, old (no forbidden)": {"faithful": False, "forbidden": False},
        "strict + forbidden": {"faithful": False},
        "audit, old (no forbidden)": {"forbidden": False},
        "audit + forbidden (default)": {},
    }
    built = {name: {loc: gate(loc, **kw) for loc in locales} for name, kw in variants.items()}
    gates = built["strict + forbidden"]
    naive = {loc: NaiveGate(sources, packs=packs, locale=loc, faithful=False) for loc in locales}
    own_gates = {
        loc: SentenceGate(sources, packs=_NoFirstPerson(packs), locale=loc, faithful=False)
        for loc in locales
    }

    # warm up compiled patterns and the packs' lazy state
    for loc, s in sentences:
        for g in built.values():
            g[loc].check(s)

    by_locale = {loc: [ls for ls in sentences if ls[0] == loc] for loc in locales}
    table: dict[str, dict[str, float]] = {}
    for name, g in built.items():
        row = {"all": median_us(lambda ls, g=g: g[ls[0]].check(ls[1]), sentences, rounds)}
        for loc in locales:
            row[loc] = median_us(lambda ls, g=g: g[ls[0]].check(ls[1]), by_locale[loc], rounds)
        table[name] = row
    stopped = sum(gates[loc].check(s).reason == "forbidden_content" for loc, s in sentences)
    passed = sum(gates[loc].check(s).ok for loc, s in sentences)
    print(
        f"\ncheck per sentence, median µs ({passed}/{len(sentences)} pass the string checks; "
        f"{stopped} stopped as forbidden_content)"
    )
    print(f"  {'':<28}" + "".join(f"{c:>7}" for c in ["all", *locales]))
    for name, row in table.items():
        print(f"  {name:<28}" + "".join(f"{row[c]:7.1f}" for c in ["all", *locales]))
    strict = table["strict + forbidden"]["all"]
    print(
        f"  target < {TARGET_US:.0f} for the string checks: "
        f"{'met' if strict < TARGET_US else 'MISSED'}"
    )
    base = median_us(lambda ls: naive[ls[0]].check(ls[1]), sentences, rounds)
    own = median_us(lambda ls: own_gates[ls[0]].check(ls[1]), sentences, rounds)
    print(f"  ... of which the gate's own work (first-person scan stubbed out) {own:.1f}")
    print(f"  naive baseline            {base:8.1f}   ratio naive/gate = {base / strict:.1f}x")

    plain = [s for _, s in sentences]
    print("\nparts of one check (median µs)")
    print(f"  normalise(sentence)       {median_us(normalise, plain, rounds):8.1f}")
    print(
        f"  values(normalised)        "
        f"{median_us(lambda s: values(normalise(s)), plain, rounds):8.1f}  (incl. normalise)"
    )
    fp = median_us(lambda ls: packs.first_person(ls[1], locale=ls[0]), sentences, rounds)
    print(f"  packs.first_person        {fp:8.1f}  (guardlex.rules)")
    print(
        f"  count_words               {median_us(count_words, plain, rounds):8.1f}  "
        "(guardlex.normalise; only for sentences without a marker)"
    )

    # an answer the gate releases to the end, so every chunk is fed and every sentence checked
    answer = "".join(
        s.strip() + " " for loc, s in sentences if loc == "en" and gates["en"].check(s).ok
    )
    chunks = [answer[i : i + 4] for i in range(0, len(answer), 4)]
    seg_times = []
    gate_times = []
    for _ in range(rounds):
        seg = Segmenter(gates["en"]._vocab.is_abbreviation)
        t0 = time.perf_counter_ns()
        for c in chunks:
            seg.feed(c)
        seg.finish()
        seg_times.append((time.perf_counter_ns() - t0) / len(chunks) / 1000)
        run = SentenceGate(sources, packs=packs, locale="en", faithful=False).open()
        t0 = time.perf_counter_ns()
        for c in chunks:
            run.feed(c)
        run.finish()
        gate_times.append((time.perf_counter_ns() - t0) / len(chunks) / 1000)
    print(
        f"\nstreaming, {len(chunks)} chunks of 4 characters (mean µs per chunk, median of rounds)"
    )
    print(f"  segmentation only         {statistics.median(seg_times):8.2f}")
    print(f"  whole gate (with checks)  {statistics.median(gate_times):8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
