"""Reading ``locale.yaml``: the facts about a locale that code needs but must not hold.

Scripts, writing direction, the fallback locale, detection hints, titles, the example
subject name and money words live in each locale folder's ``locale.yaml`` (schema
``schemas/locale.schema.json``), so a new locale is a folder, never a Python edit. This
module reads them into a frozen :class:`LocaleInfo` and offers the few generic
operations built on them (which letters a locale writes, the fallback chain, the root
locale); ``guardlex.langid`` tells the reader's language from them.

Locales are discovered like every other pack file: the shipped ``guardlex/locales``,
the ``guardlex.packs`` entry points, then extra ``paths``. When several folders provide
one locale, a later ``locale.yaml`` replaces the top-level keys it sets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import regex

from guardlex.errors import PackError
from guardlex.rules._schema import load_schema, read_pack_file, validate

LOCALE_FILE = "locale.yaml"
_TIMEOUT = 1.0


@dataclass(frozen=True)
class LocaleInfo:
    """The facts of one locale, as ``locale.yaml`` states them (merged over sources).

    ``scripts`` are ISO 15924 codes (``Latn``, ``Arab``, ``Hani``...). ``fallback`` is
    ``None`` only for the root locale. Word lists are as written (natural orthography);
    callers normalise them with the one normaliser. ``path`` is the last file read, or
    ``""`` when the locale has no ``locale.yaml`` (then every list is empty and the
    linter reports the missing file).
    """

    code: str
    name: str = ""
    scripts: tuple[str, ...] = ()
    direction: str = "ltr"
    fallback: str | None = None
    hints: tuple[str, ...] = ()
    letters: tuple[str, ...] = ()
    letter_weight: int = 1
    romanized: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    titles_after: tuple[str, ...] = ()
    example_subject: str = ""
    example_subject_spellings: tuple[str, ...] = ()
    currency: tuple[str, ...] = ()
    magnitudes: tuple[str, ...] = ()
    price_words: tuple[str, ...] = ()
    name_min_words: int = 1
    closings: tuple[str, ...] = ()
    continuations: tuple[str, ...] = ()
    #: phrases that ask about the present (``follow_ups.now``: "and now?", "最近呢？")
    now: tuple[str, ...] = ()
    #: letter pairs a typo may change into each other (``typos.changes``), as written
    #: (``Packs`` normalises them)
    typo_changes: tuple[tuple[str, str], ...] = ()
    first_person_seed: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, hash=False
    )
    path: str = ""

    @property
    def example_subjects(self) -> tuple[str, ...]:
        """The example subject name and its other spellings."""
        names = (self.example_subject, *self.example_subject_spellings)
        return tuple(n for n in names if n)

    @property
    def money_words(self) -> tuple[str, ...]:
        """Currency and magnitude words: what reads as money next to a number."""
        return (*self.currency, *self.magnitudes)

    def writes(self, text: str) -> int:
        """How many letters of ``text`` are in one of this locale's scripts."""
        pattern = script_pattern(self.scripts)
        return 0 if pattern is None else len(pattern.findall(text, timeout=_TIMEOUT))


@lru_cache(maxsize=256)
def script_pattern(scripts: tuple[str, ...]) -> regex.Pattern[str] | None:
    """A pattern matching one letter of any of the ISO 15924 ``scripts`` (None: no scripts)."""
    if not scripts:
        return None
    return regex.compile("[" + "".join(r"\p{sc=" + s + "}" for s in scripts) + "]")


def _words(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


def _from_data(code: str, data: Mapping[str, Any], path: str) -> LocaleInfo:
    detection = data.get("detection") or {}
    money = data.get("money") or {}
    seed = data.get("first_person_seed") or {}
    return LocaleInfo(
        code=code,
        name=str(data.get("name", "")),
        scripts=_words(data.get("scripts")),
        direction=str(data.get("direction", "ltr")),
        fallback=data.get("fallback"),
        hints=_words(detection.get("hints")),
        letters=_words(detection.get("letters")),
        letter_weight=int(detection.get("letter_weight", 1)),
        romanized=tuple(w.lower() for w in _words(detection.get("romanized"))),
        titles=_words(data.get("titles")),
        titles_after=_words(data.get("titles_after")),
        example_subject=str(data.get("example_subject", "")),
        example_subject_spellings=_words(data.get("example_subject_spellings")),
        currency=_words(money.get("currency")),
        magnitudes=_words(money.get("magnitudes")),
        price_words=_words(money.get("price_words")),
        name_min_words=int((data.get("names") or {}).get("min_words", 1)),
        closings=_words((data.get("follow_ups") or {}).get("closings")),
        continuations=_words((data.get("follow_ups") or {}).get("continuations")),
        now=_words((data.get("follow_ups") or {}).get("now")),
        typo_changes=tuple(
            (str(a), str(b)) for a, b in ((data.get("typos") or {}).get("changes") or ())
        ),
        first_person_seed=MappingProxyType(dict(seed)),
        path=path,
    )


def read_locale_data(path: Path, code: str) -> dict[str, Any]:
    """The checked content of one ``locale.yaml``; a problem is a ``PackError`` with its line."""
    pf = read_pack_file(path, "locale")
    problems = [(pf.line(p.path), p.message) for p in validate(pf.data, load_schema("locale"))]
    if pf.data.get("locale") not in (None, code):
        problems.append(
            (
                pf.line(("locale",)),
                f"'locale: {pf.data.get('locale')}' does not match the folder name '{code}'; "
                f"write 'locale: {code}' or move the file",
            )
        )
    if pf.data.get("fallback") == code:
        problems.append(
            (
                pf.line(("fallback",)),
                "a locale cannot fall back to itself; write another locale (usually en) "
                "or leave 'fallback' out in the root locale",
            )
        )
    if problems:
        line, message = problems[0]
        more = f" (and {len(problems) - 1} more; run 'guardlex lint')" if len(problems) > 1 else ""
        raise PackError(message + more, str(path), line)
    return pf.data


def load_locale_info(folder: str | Path, code: str | None = None) -> LocaleInfo:
    """The facts of the locale folder ``folder`` (its ``locale.yaml``), checked.

    ``code`` defaults to the folder's name. A folder without ``locale.yaml`` gives an
    empty :class:`LocaleInfo` (an extension folder that only adds rules has none).
    """
    folder = Path(folder)
    code = code or folder.name
    path = folder / LOCALE_FILE
    if not path.is_file():
        return LocaleInfo(code=code)
    return _from_data(code, read_locale_data(path, code), str(path))


def merge_locale_info(code: str, folders: Sequence[Path], *, shipped: bool = True) -> LocaleInfo:
    """One locale's facts over every folder that provides it, later keys replacing earlier.

    When none of ``folders`` has a ``locale.yaml`` (packs that only add rules to a
    locale guardlex ships, loaded without the shipped packs), the shipped facts of
    ``code`` apply, unless ``shipped`` is false.
    """
    merged: dict[str, Any] = {}
    last = ""
    for folder in folders:
        path = Path(folder) / LOCALE_FILE
        if path.is_file():
            merged.update(read_locale_data(path, code))
            last = str(path)
    if last:
        return _from_data(code, merged, last)
    if shipped:
        known = shipped_locale_infos().get(code)
        if known is not None:
            return known
    return LocaleInfo(code=code)


def locale_infos(
    paths: Sequence[str | Path] = (), *, entry_points: bool = True, shipped: bool = True
) -> dict[str, LocaleInfo]:
    """The facts of every discovered locale, by code (sorted), scanning like ``load_packs``."""
    from guardlex.rules.loader import discover

    found = discover(paths, entry_points=entry_points, shipped=shipped)
    return {code: merge_locale_info(code, found[code], shipped=False) for code in sorted(found)}


@lru_cache(maxsize=1)
def shipped_locale_infos() -> Mapping[str, LocaleInfo]:
    """The facts of the shipped locales only (cached; for tools and defaults)."""
    return MappingProxyType(locale_infos(entry_points=False))


def fallback_chain(code: str, infos: Mapping[str, LocaleInfo]) -> tuple[str, ...]:
    """``code``, then its fallback, then that one's fallback ... (no locale twice)."""
    chain = [code]
    info = infos.get(code)
    while info is not None and info.fallback and info.fallback not in chain:
        chain.append(info.fallback)
        info = infos.get(info.fallback)
    return tuple(chain)


def root_locale(infos: Mapping[str, LocaleInfo], order: Sequence[str] = ()) -> str | None:
    """The locale the others fall back to (the loaded one without a fallback, first in
    ``order``), or the first in ``order``; None when nothing is loaded."""
    codes = list(order) or sorted(infos)
    for code in codes:
        info = infos.get(code)
        if info is not None and info.path and not info.fallback:
            return code
    return codes[0] if codes else None


def example_subjects(infos: Iterable[LocaleInfo]) -> tuple[str, ...]:
    """Every example subject name and spelling of ``infos``, without repeats, in order."""
    out: list[str] = []
    for info in infos:
        for name in info.example_subjects:
            if name not in out:
                out.append(name)
    return tuple(out)


@lru_cache(maxsize=64)
def shipped_messages(code: str) -> Mapping[str, str]:
    """The ``messages.yaml`` texts of a shipped locale (empty when it has none): what a
    fallback locale provides when it is not loaded."""
    from guardlex.rules.loader import SHIPPED_DIR

    path = SHIPPED_DIR / code / "messages.yaml"
    if not path.is_file():
        return MappingProxyType({})
    messages = read_pack_file(path, "messages").data.get("messages") or {}
    return MappingProxyType({str(k): str(v) for k, v in messages.items()})
