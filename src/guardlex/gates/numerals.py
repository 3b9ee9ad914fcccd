"""Numbers written without digits: Chinese numerals (一千九百五十, 两万, 三点五, 2万) and
number words (twenty, vingt, zwanzig), read as value tokens.

Which characters and words are numbers is locale data (``lexicon.yaml``: ``numeral_digits``,
``numeral_multipliers``, ``numeral_point``, ``number_words``); this module only combines
them. A run that does not parse as a well-formed numeral (万一 "in case", 千万 "by all
means") is not a number.

Such values are riskier than digits ("一" is in 一起 and 统一, "two" is in "the two
plans"), so callers choose: ``min_han`` characters for a Han run on its own, and number
words only where a unit follows them (the faithfulness analysis) or as source readings.
"""

from __future__ import annotations

from fractions import Fraction

from guardlex.gates._text import Value, _canon_decimal
from guardlex.gates._vocab import Vocab, Word, words_of

_HAN_START = "\u3400"


def _canon(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    head, _, tail = text.partition(".")
    return _canon_decimal(head, tail)


def parse_han(run: str, vocab: Vocab) -> Fraction | None:
    """The value of a Chinese numeral (``一千九百五十`` -> 1950, ``两万`` -> 20000,
    ``三点五`` -> 3.5, ``二〇二五`` -> 2025), or ``None`` when it is not well formed."""
    digits, mults = vocab.numeral_digits, vocab.numeral_multipliers
    whole, frac = run, ""
    for point in vocab.numeral_points:
        if point in run:
            whole, _, frac = run.partition(point)
            break
    if frac and not all(ch in digits for ch in frac):
        return None
    if not whole or (frac == "" and whole != run):
        return None
    if all(ch in digits for ch in whole):
        # positional (二〇二五): only when it is clearly a number, not 一一 "one by one"
        if len(whole) > 1 and len(whole) < 3 and not any(digits[ch] == 0 for ch in whole):
            return None
        value = Fraction(int("".join(str(digits[ch]) for ch in whole)))
    else:
        first = whole[0]
        if first not in digits and mults.get(first) != 10:
            return None  # 万一, 千万, 百: a multiplier needs a digit before it (十一 is 11)
        total = section = 0
        number: int | None = None
        last_small = 10**9
        for ch in whole:
            if ch in digits:
                if number is not None and number != 0:
                    return None  # two digits in a row (一二千)
                number = digits[ch]
                continue
            m = mults.get(ch)
            if m is None:
                return None
            if m >= 10_000:
                section = (section + (number or 0)) * m
                if section == 0:
                    return None
                total += section
                section, number, last_small = 0, None, 10**9
                continue
            if number is None:
                if m != 10 or section:
                    return None
                number = 1  # 十五 is 15
            if m >= last_small:
                return None  # 一百一千
            section += number * m
            number, last_small = None, m
        value = Fraction(total + section + (number or 0))
    if frac:
        value += Fraction(int("".join(str(digits[ch]) for ch in frac)), 10 ** len(frac))
    return value


def _is_numeral(ch: str, vocab: Vocab) -> bool:
    return (
        ch in vocab.numeral_digits
        or ch in vocab.numeral_multipliers
        or (ch in vocab.numeral_points)
    )


def han_values(norm: str, vocab: Vocab, *, min_chars: int = 2) -> list[Value]:
    """Chinese numerals in normalised text, and digits with a multiplier (``2万``,
    ``3.5万``). A run needs ``min_chars`` characters to count on its own (``五`` alone is
    left to the callers that see a unit after it)."""
    if not vocab.numeral_digits or not norm or max(norm) < _HAN_START:
        return []
    out: list[Value] = []
    n = len(norm)
    i = 0
    while i < n:
        if not _is_numeral(norm[i], vocab):
            i += 1
            continue
        j = i
        while j < n and _is_numeral(norm[j], vocab):
            j += 1
        # a point is part of a numeral only between digits: 一点 is "a little"
        while j > i and norm[j - 1] in vocab.numeral_points:
            j -= 1
        run = norm[i:j]
        digit_before = i > 0 and norm[i - 1].isdigit()
        if digit_before and run[0] in vocab.numeral_multipliers:
            # 2万, 3.5万: digits times a multiplier
            k = i
            while k > 0 and (norm[k - 1].isdigit() or norm[k - 1] == "."):
                k -= 1
            m = vocab.numeral_multipliers[run[0]]
            try:
                value = Fraction(norm[k:i]) * m
            except (ValueError, ZeroDivisionError):
                value = None
            if value is not None:
                out.append(Value("number", norm[k : i + 1], frozenset({_canon(value)}), k, i + 1))
            i += 1
            continue
        if j - i >= min_chars and not digit_before:
            value = parse_han(run, vocab)
            if value is not None:
                out.append(Value("number", run, frozenset({_canon(value)}), i, j))
        i = max(j, i + 1)
    return out


def word_values(norm: str, vocab: Vocab, words: list[Word] | None = None) -> list[Value]:
    """Number words in normalised text (``twenty``, ``twenty-five``, ``two hundred``,
    ``vingt``), each with its value."""
    table = vocab.number_words
    if not table:
        return []
    words = words_of(norm) if words is None else words
    out: list[Value] = []
    i = 0
    while i < len(words):
        start, end, word = words[i]
        if word not in table:
            i += 1
            continue
        total, current = 0, 0
        j = i
        while j < len(words) and words[j][2] in table:
            if j > i and norm[words[j - 1][1] : words[j][0]] not in (" ", "-"):
                break
            v = int(table[words[j][2]])
            if v >= 100 and str(v).rstrip("0") == "1":
                if v >= 1000:
                    total += max(current, 1) * v
                    current = 0
                else:
                    current = max(current, 1) * v
            elif (
                (current and current % 10 == 0 and v < 10 and current % 100 != 0)
                or not current
                or (current >= 100 and v < 100)
            ):
                current += v
            else:
                break
            end = words[j][1]
            j += 1
        value = total + current
        out.append(Value("number", norm[start:end], frozenset({str(value)}), start, end))
        i = j
    return out


def is_word_number(v: Value) -> bool:
    """Whether a value was written without digits (a number word or a Han numeral)."""
    return not any(ch.isdigit() for ch in v.text)


def with_numerals(
    norm: str,
    found: list[Value],
    vocab: Vocab,
    *,
    min_han: int = 2,
    words: bool = False,
) -> list[Value]:
    """``found`` (the digit values of ``norm``) with the numerals and, with ``words``,
    the number words added; a numeral replaces the digits it contains (``2万``)."""
    extra = han_values(norm, vocab, min_chars=min_han)
    if words:
        extra.extend(word_values(norm, vocab))
    if not extra:
        return found
    have = {(v.start, v.end) for v in found}
    extra = [v for v in extra if (v.start, v.end) not in have]
    if not extra:
        return found
    spans = [(v.start, v.end) for v in extra]
    kept = [v for v in found if not any(a <= v.start and v.end <= b for a, b in spans)]
    return sorted([*kept, *extra], key=lambda v: (v.start, v.end))
