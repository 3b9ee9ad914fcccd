"""Follow-up questions: resolve "the second one" against the previous answer's list.

An ordinal is resolved only when both the position and the list can be read without
doubt: exactly one position named in the follow-up, exactly one list in the previous
answer (numbered or bulleted lines, else quoted items, else the site's own titles in the
order the answer names them), and the position inside it. Otherwise the start of the
previous answer is added to the query instead: a guess about which item was meant would
send the reader evidence about the wrong thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import regex

from guardlex.runner import _engine
from guardlex.runner._regex import REGEX_TIMEOUT

_NUMBERED = regex.compile(r"^\s*(\d{1,2})[.)]\s+(\S.*?)\s*$")
_BULLET = regex.compile(r"^\s*[-*•·–]\s+(\S.*?)\s*$")
_QUOTED = regex.compile(
    r"«([^»]{2,200})»|“([^”]{2,200})”|\"([^\"]{2,200})\"|「([^」]{2,200})」|『([^』]{2,200})』"
)
CONTEXT_CHARS = 200

#: Stable codes for logs and the evaluation.
RESOLVED = "RESOLVED"
NO_PREVIOUS = "NO_PREVIOUS"
NO_ORDINAL = "NO_ORDINAL"
AMBIGUOUS_POSITION = "AMBIGUOUS_POSITION"
NO_LIST = "NO_LIST"
AMBIGUOUS_LIST = "AMBIGUOUS_LIST"
OUT_OF_RANGE = "OUT_OF_RANGE"


@dataclass(frozen=True)
class FollowUp:
    """How a follow-up was read. ``context`` is what gets added to the query."""

    code: str
    position: int | None = None
    items: tuple[str, ...] = ()
    item: str | None = None
    context: str = ""

    @property
    def resolved(self) -> bool:
        return self.code == RESOLVED


def _word_pattern(word: str) -> str:
    esc = regex.escape(word)
    if all(_engine.has_han(ch) for ch in word if not ch.isspace()):
        return esc
    return rf"(?<!\w){esc}(?!\w)"


def find_positions(text: str, ordinals: Mapping[int, Sequence[str]]) -> set[int]:
    """Every position (1-10) whose ordinal word occurs in ``text`` as a whole word."""
    norm = _engine.normalise(text)
    found: set[int] = set()
    spans: list[tuple[int, int, int]] = []
    for pos, words in ordinals.items():
        for w in words:
            if not w:
                continue
            for m in regex.finditer(_word_pattern(w), norm, timeout=REGEX_TIMEOUT):
                spans.append((m.start(), m.end(), pos))
    # A longer ordinal containing a shorter one ("第十" holds "十") wins its span, and of
    # two ordinal words side by side the first one names the position: in "the second
    # one", "one" is the noun the ordinal qualifies, not position 1.
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    covered_until = -1
    previous_end = -10
    for start, end, pos in spans:
        if start < covered_until:
            continue
        adjacent = norm[previous_end:start].strip() == "" and previous_end >= 0
        covered_until = end
        previous_end = end
        if adjacent:
            continue
        found.add(pos)
    return found


def find_list(answer: str, titles: Iterable[str] = ()) -> tuple[tuple[str, ...], str]:
    """The one list in ``answer`` (items, ``RESOLVED``), or ``()`` with why not."""
    lines = answer.splitlines()
    numbered_runs: list[list[str]] = []
    for line in lines:
        m = _NUMBERED.match(line, timeout=REGEX_TIMEOUT)
        if not m:
            continue
        n = int(m.group(1))
        if n == 1:
            numbered_runs.append([m.group(2)])
        elif numbered_runs and n == len(numbered_runs[-1]) + 1:
            numbered_runs[-1].append(m.group(2))
        else:
            return (), AMBIGUOUS_LIST  # numbering that skips or repeats: which item is "2"?
    bullets = [m.group(1) for line in lines if (m := _BULLET.match(line, timeout=REGEX_TIMEOUT))]
    structural = [run for run in numbered_runs if len(run) >= 2]
    if len(bullets) >= 2:
        structural.append(bullets)
    if len(structural) > 1:
        return (), AMBIGUOUS_LIST
    if structural:
        return tuple(structural[0]), RESOLVED
    quoted = [
        next(g for g in m.groups() if g) for m in _QUOTED.finditer(answer, timeout=REGEX_TIMEOUT)
    ]
    norm_answer = _engine.normalise(answer)
    named: list[tuple[int, str]] = []
    for title in dict.fromkeys(titles):
        nt = _engine.normalise(title)
        if len(nt) < 3:
            continue
        m = regex.search(_word_pattern(nt), norm_answer, timeout=REGEX_TIMEOUT)
        if m:
            named.append((m.start(), title))
    named.sort()
    by_title = [t for _, t in named]
    if len(quoted) >= 2 and len(by_title) >= 2 and len(quoted) != len(by_title):
        return (), AMBIGUOUS_LIST
    if len(quoted) >= 2:
        return tuple(quoted), RESOLVED
    if len(by_title) >= 2:
        return tuple(by_title), RESOLVED
    return (), NO_LIST


#: Longest site title the model's prompt may carry for a resolved follow-up.
MAX_TITLE_CHARS = 200


def site_title(item: str, titles: Iterable[str]) -> str | None:
    """The site's own title that ``item`` names (the longest one it contains), or None.

    A resolved follow-up tells the model which item the reader means. The previous answer
    is untrusted (a reader can pass any text as it), so its words never reach the
    prompt: only a title the site itself gives, found in the item as whole words.
    """
    norm_item = _engine.normalise(item)
    best: tuple[int, str] | None = None
    for title in dict.fromkeys(titles):
        if not title or len(title) > MAX_TITLE_CHARS:
            continue
        nt = _engine.normalise(title)
        if len(nt) < 3:
            continue
        if (best is None or len(nt) > best[0]) and regex.search(
            _word_pattern(nt), norm_item, timeout=REGEX_TIMEOUT
        ):
            best = (len(nt), title)
    return None if best is None else best[1]


def answer_start(previous_answer: str, limit: int = CONTEXT_CHARS) -> str:
    """The first line of the previous answer, cut at a word boundary near ``limit``."""
    text = " ".join(previous_answer.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit]


def resolve(
    text: str,
    previous: str | None,
    previous_answer: str | None,
    ordinals: Mapping[int, Sequence[str]],
    titles: Iterable[str] = (),
) -> FollowUp:
    """Read a follow-up. Only an unambiguous position in an unambiguous list resolves."""
    fallback = answer_start(previous_answer) if previous_answer else (previous or "")
    if not previous_answer and not previous:
        return FollowUp(NO_PREVIOUS)
    positions = find_positions(text, ordinals)
    if not positions:
        return FollowUp(NO_ORDINAL, context=fallback)
    if len(positions) > 1:
        return FollowUp(AMBIGUOUS_POSITION, context=fallback)
    pos = next(iter(positions))
    if not previous_answer:
        return FollowUp(NO_LIST, position=pos, context=fallback)
    items, code = find_list(previous_answer, titles)
    if code != RESOLVED:
        return FollowUp(code, position=pos, context=fallback)
    if pos > len(items):
        return FollowUp(OUT_OF_RANGE, position=pos, items=items, context=fallback)
    item = items[pos - 1]
    return FollowUp(RESOLVED, position=pos, items=items, item=item, context=item)
