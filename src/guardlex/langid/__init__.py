"""Language identification restricted to the loaded locales.

Two stages. First the scripts each locale writes (``locale.yaml`` ``scripts``): the
scripts of the text's letters (each with at least ``MIXED_SHARE`` of the letters of the
most frequent one) pick the locales that write them, and when that is one loaded locale
(a Han text: zh, Devanagari: hi, Cyrillic: ru with the shipped packs) it is the answer,
before any model runs. Otherwise a :class:`Detector` chooses among
those candidates. The default detector, ``"ngram"``, is a restricted copy of py3langid's
byte n-gram model shipped inside guardlex (``tools/gen_langid_model.py``; no numpy, no
runtime dependency), so the result does not depend on which extras are installed. A
candidate the detector does not know (a new locale folder for a language outside its
model) is scored by the locale's ``detection`` hints and letters and its stopwords, and
wins when that score beats the detector's choice: a new locale is identified without a
Python edit.

Another detector plugs in through :func:`register` and is selected per ``Packs`` with
``packs.language_detector = guardlex.langid.get("name")``. ``"lingua"`` is registered
(it needs the ``lingua`` extra: accurate on short text, but a 100 MB wheel). Choice and
figures: ``docs/langid.md`` and ``benchmarks/bench_langid.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import regex

from guardlex.langid.ngram import NgramModel, model

__all__ = [
    "DEFAULT_DETECTOR",
    "Detector",
    "NgramDetector",
    "detector_names",
    "get",
    "identify",
    "register",
]

#: Name of the detector every ``Packs`` uses unless told otherwise.
DEFAULT_DETECTOR = "ngram"
#: A script takes part when it has at least this share of the letters of the best one.
MIXED_SHARE = 0.15
_TIMEOUT = 1.0
_WORD = regex.compile(r"\w+")


@runtime_checkable
class Detector(Protocol):
    """Chooses the language of ``text`` among ``candidates`` (locale codes, >= 1).

    ``languages`` is the set of codes the detector can tell apart (None: any); a
    detector must return one of ``candidates``.
    """

    @property
    def name(self) -> str: ...

    @property
    def languages(self) -> frozenset[str] | None: ...

    def detect(self, text: str, candidates: Sequence[str]) -> str: ...


class NgramDetector:
    """The bundled byte n-gram model (py3langid's, restricted; see ``ngram``)."""

    name = "ngram"

    def __init__(self, ngram_model: NgramModel | None = None) -> None:
        self._model = ngram_model

    @property
    def model(self) -> NgramModel:
        if self._model is None:
            self._model = model()
        return self._model

    @property
    def languages(self) -> frozenset[str]:
        return frozenset(self.model.languages)

    def detect(self, text: str, candidates: Sequence[str]) -> str:
        scores = self.model.scores(text, candidates)
        if not scores:
            return candidates[0]
        return max(candidates, key=lambda c: (scores.get(c, float("-inf")), -candidates.index(c)))


class LinguaDetector:
    """lingua-language-detector, restricted to the candidates (``pip install guardlex[lingua]``)."""

    name = "lingua"

    def __init__(self) -> None:
        import lingua  # the extra; ImportError tells the caller to install it

        self._lingua = lingua
        self._built: dict[tuple[str, ...], Any] = {}
        known = {lang.iso_code_639_1.name.lower() for lang in lingua.Language.all()}
        self.languages: frozenset[str] | None = frozenset(known)

    def detect(self, text: str, candidates: Sequence[str]) -> str:
        key = tuple(sorted(c for c in candidates if self.languages and c in self.languages))
        if len(key) < 2:
            return key[0] if key else candidates[0]
        det = self._built.get(key)
        if det is None:
            lg = self._lingua
            codes = [lg.IsoCode639_1.from_str(c) for c in key]
            det = lg.LanguageDetectorBuilder.from_iso_codes_639_1(*codes).build()
            self._built[key] = det
        lang = det.detect_language_of(text)
        code = lang.iso_code_639_1.name.lower() if lang is not None else candidates[0]
        return code if code in candidates else candidates[0]


_FACTORIES: dict[str, Callable[[], Detector]] = {
    "ngram": NgramDetector,
    "lingua": LinguaDetector,
}
_INSTANCES: dict[str, Detector] = {}
_LOCK = threading.Lock()


def register(name: str, factory: Callable[[], Detector]) -> None:
    """Make ``factory`` available as ``get(name)`` (replaces a detector of that name)."""
    with _LOCK:
        _FACTORIES[name] = factory
        _INSTANCES.pop(name, None)


def detector_names() -> tuple[str, ...]:
    """Registered detector names (whether or not their libraries are installed)."""
    return tuple(sorted(_FACTORIES))


def get(name: str = DEFAULT_DETECTOR) -> Detector:
    """The shared instance of a registered detector (KeyError for an unknown name)."""
    det = _INSTANCES.get(name)
    if det is None:
        with _LOCK:
            det = _INSTANCES.get(name)
            if det is None:
                det = _FACTORIES[name]()
                _INSTANCES[name] = det
    return det


class _Info(Protocol):
    @property
    def scripts(self) -> tuple[str, ...]: ...
    @property
    def hints(self) -> tuple[str, ...]: ...
    @property
    def letters(self) -> tuple[str, ...]: ...
    @property
    def letter_weight(self) -> int: ...
    @property
    def romanized(self) -> tuple[str, ...]: ...

    def writes(self, text: str) -> int: ...


#: Fewest distinct romanized words (``locale.yaml`` ``detection.romanized``) that make a
#: text in Latin letters a candidate for a locale of another script ("kya aap free ho").
ROMANIZED_MIN = 2


def identify(
    text: str,
    infos: Mapping[str, _Info],
    order: Sequence[str],
    *,
    default: str,
    detector: Detector | None = None,
    word_score: Callable[[str], int] | None = None,
    long_word_score: Callable[[str], int] | None = None,
) -> str:
    """The locale of ``text`` among ``order`` (see the module docstring).

    ``infos`` holds each locale's ``scripts``, ``hints``, ``letters``, ``letter_weight``
    and ``romanized`` words (``guardlex.rules.locale_info.LocaleInfo``);
    ``word_score(code)`` is the caller's count of the locale's stopwords in the text,
    used only for candidates the detector does not know. Text in no loaded script gives
    ``default``. A text in Latin letters that holds at least ``ROMANIZED_MIN`` distinct
    romanized words of a locale written in another script (Hindi, Persian or Arabic
    typed in Latin letters) is that locale's when those words are at least as many as
    the stopwords of three or more letters (``long_word_score``, else ``word_score``) and
    hints of the locale identified otherwise.
    """
    choice = _identify(
        text, infos, order, default=default, detector=detector, word_score=word_score
    )
    best, hits = None, 0
    words: list[str] | None = None
    for code in order:
        info = infos.get(code)
        romanized = info.romanized if info is not None else ()
        if not romanized or code == choice:
            continue
        if words is None:
            words = _WORD.findall(text.lower(), timeout=_TIMEOUT)
        known = frozenset(romanized)
        n = sum(1 for w in words if w in known)  # per word, as the stopwords are counted
        if n > hits and len(known.intersection(words)) >= ROMANIZED_MIN:
            best, hits = code, n
    if best is None or infos[best].writes(text):
        return choice
    info = infos.get(choice)
    count = long_word_score or word_score
    rival = (count(choice) if count else 0) + (
        sum(1 for h in info.hints if h.lower() in (words or ())) if info is not None else 0
    )
    return best if hits >= rival else choice


def _identify(
    text: str,
    infos: Mapping[str, _Info],
    order: Sequence[str],
    *,
    default: str,
    detector: Detector | None = None,
    word_score: Callable[[str], int] | None = None,
) -> str:
    """``identify`` before the romanized stage: scripts, then the detector."""
    counts: dict[tuple[str, ...], int] = {}
    for code in order:
        info = infos.get(code)
        if info is not None and info.scripts and info.scripts not in counts:
            counts[info.scripts] = info.writes(text)
    if not counts or max(counts.values()) == 0:
        return default
    top = max(counts.values())
    # every script with a real share of the letters: "Dana 的收费是多少" is Chinese with a
    # Latin name, so the model chooses among both scripts' locales; a stray "RAG" in a
    # Russian sentence (under MIXED_SHARE of the letters) does not make it a candidate
    present = {s for s, n in counts.items() if n and n >= MIXED_SHARE * top}
    candidates = [c for c in order if c in infos and infos[c].scripts in present]
    if len(candidates) == 1:
        return candidates[0]
    det = detector if detector is not None else get()
    langs = det.languages
    known = [c for c in candidates if langs is None or c in langs]
    unknown = [c for c in candidates if c not in known]
    choice = det.detect(text, known) if known else None
    if not unknown and choice is not None:
        return choice
    # candidates outside the model: the locale data's own evidence decides
    lowered = text.lower()
    words = set(_WORD.findall(lowered, timeout=_TIMEOUT))

    def evidence(code: str) -> int:
        info = infos[code]
        letters = sum(lowered.count(ch) for ch in info.letters)
        hints = sum(1 for h in info.hints if h.lower() in words)
        return (word_score(code) if word_score else 0) + hints + info.letter_weight * letters

    scored = {c: evidence(c) for c in candidates}
    rival = max(unknown, key=lambda c: (scored[c], c == default, -candidates.index(c)))
    if choice is None:
        return max(candidates, key=lambda c: (scored[c], c == default, -candidates.index(c)))
    return rival if scored[rival] > scored[choice] else choice
