"""Language identification on short text: accuracy, speed and weight of candidate libraries.

Every detector is restricted to the ten shipped locales (en de fr es pt ru ar hi fa zh)
and asked for one of them. Texts: the UD first-person sentences
(``../shared/data/external/first_person``, 5-40 tokens, both labels, flags ignored) and
the golden set's questions and answers (``src/guardlex/corpus/golden``: many are 3-8
words, the hard case). Printed per detector: accuracy per language on each set, mean µs
per text, and installed size of the distribution (files listed in its RECORD).

    python benchmarks/bench_langid.py            # every detector that is installed
    python benchmarks/bench_langid.py --quick    # 60 texts per language
    python benchmarks/bench_langid.py --only guardlex py3langid

``guardlex`` is ``guardlex.langid`` as shipped (script stage from the locale data, then
the bundled n-gram model); ``scripts+py3langid`` and friends put the same script stage in
front of a library, so the libraries are compared on the cases a model has to decide.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
UD = REPO.parent / "shared" / "data" / "external" / "first_person"
GOLDEN = REPO / "src" / "guardlex" / "corpus" / "golden"
LOCALES = ("en", "de", "fr", "es", "pt", "ru", "ar", "hi", "fa", "zh")

Detect = Callable[[str], str]


def ud_texts(per_lang: int | None) -> list[tuple[str, str]]:
    out = []
    for code in LOCALES:
        path = UD / f"first_person_ud_{code}.jsonl"
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        out.extend((code, r["text"]) for r in rows[:per_lang])
    return out


def golden_texts(per_lang: int | None) -> list[tuple[str, str]]:
    seen: dict[str, list[str]] = {c: [] for c in LOCALES}
    for path in sorted(GOLDEN.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in data.get("cases") or []:
            code = case.get("locale")
            if code not in seen:
                continue
            for key in ("text", "previous", "answer"):
                text = case.get(key)
                if isinstance(text, str) and text.strip() and text not in seen[code]:
                    seen[code].append(text)
    return [(c, t) for c in LOCALES for t in seen[c][:per_lang]]


def dist_size(name: str) -> str:
    if name == "guardlex":  # an editable install lists no files: the model is what it adds
        from guardlex.langid.ngram import MODEL_FILE

        model = REPO / "src" / "guardlex" / "langid" / "data" / MODEL_FILE
        return f"model {model.stat().st_size / 1e6:.2f} MB, no dependency"
    try:
        files = metadata.files(name) or []
    except metadata.PackageNotFoundError:
        return "-"
    total = 0
    for f in files:
        p = Path(str(f.locate()))
        if p.is_file():
            total += p.stat().st_size
    return f"{total / 1e6:.1f} MB"


def _guardlex() -> Detect:
    from guardlex import load_packs

    packs = load_packs()
    return packs.detect_locale


def _guardlex_model_only() -> Detect:
    from guardlex.langid import NgramDetector

    det = NgramDetector()
    return lambda text: det.detect(text, LOCALES)


def _py3langid() -> Detect:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE)
    ident.set_languages(list(LOCALES))
    return lambda text: ident.classify(text)[0]


def _langid() -> Detect:
    from langid.langid import LanguageIdentifier, model

    ident = LanguageIdentifier.from_modelstring(model)
    ident.set_languages(list(LOCALES))
    return lambda text: ident.classify(text)[0]


def _pycld2() -> Detect:
    import pycld2

    def detect(text: str) -> str:
        try:
            _ok, _n, details = pycld2.detect(text)
        except pycld2.error:
            return "en"
        for _name, code, _pct, _score in details:
            code = code.split("-")[0]
            if code in LOCALES:
                return code
        return "en"

    return detect


def _lingua() -> Detect:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    langs = [IsoCode639_1.from_str(c) for c in LOCALES]
    det = LanguageDetectorBuilder.from_iso_codes_639_1(*langs).build()

    def detect(text: str) -> str:
        lang = det.detect_language_of(text)
        return lang.iso_code_639_1.name.lower() if lang is not None else "en"

    return detect


def _with_scripts(inner: Callable[[], Detect]) -> Callable[[], Detect]:
    def make() -> Detect:
        from guardlex.langid import script_candidates
        from guardlex.rules import load_packs

        packs = load_packs()
        scripts = packs.locale_scripts() if hasattr(packs, "locale_scripts") else None
        det = inner()

        def detect(text: str) -> str:
            cands = script_candidates(text, scripts) if scripts else list(LOCALES)
            return cands[0] if len(cands) == 1 else det(text)

        return detect

    return make


DETECTORS: dict[str, tuple[Callable[[], Detect], str]] = {
    "guardlex": (_guardlex, "guardlex"),
    "guardlex-model": (_guardlex_model_only, "guardlex"),
    "py3langid": (_py3langid, "py3langid"),
    "langid": (_langid, "langid"),
    "pycld2": (_pycld2, "pycld2"),
    "lingua": (_lingua, "lingua-language-detector"),
}


def run(name: str, detect: Detect, sets: dict[str, list[tuple[str, str]]]) -> None:
    for set_name, items in sets.items():
        right = dict.fromkeys(LOCALES, 0)
        total = dict.fromkeys(LOCALES, 0)
        t0 = time.perf_counter()
        for code, text in items:
            total[code] += 1
            right[code] += detect(text) == code
        us = (time.perf_counter() - t0) / max(1, len(items)) * 1e6
        per = " ".join(f"{c}:{right[c] / total[c]:.2f}" for c in LOCALES if total[c])
        acc = sum(right.values()) / max(1, len(items))
        print(f"  {set_name:7} all:{acc:.3f} {us:7.1f} µs/text  {per}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args(argv)
    per_lang = 60 if args.quick else None
    sets: dict[str, list[tuple[str, str]]] = {"golden": golden_texts(per_lang)}
    if UD.is_dir():
        sets["ud"] = ud_texts(per_lang)
    for set_name, items in sets.items():
        print(f"{set_name}: {len(items)} texts")
    for name, (make, dist) in DETECTORS.items():
        if args.only and name not in args.only:
            continue
        try:
            t0 = time.perf_counter()
            detect: Any = make()
            detect("warm up")
            load_ms = (time.perf_counter() - t0) * 1e3
        except ImportError as exc:
            print(f"{name}: not installed ({exc})")
            continue
        print(f"{name}  (installed {dist_size(dist)}, load {load_ms:.0f} ms)")
        run(name, detect, sets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
