"""Computed numbers: plain arithmetic parsed by a small parser (never ``eval``), and the
check that a computed number's inputs are quoted and its formula gives it."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from fractions import Fraction

import regex

from guardlex.gates._text import (
    _GROUPING,
    TIMEOUT,
    normalise,
    number_readings,
)
from guardlex.gates.errors import FormulaError
from guardlex.gates.faith.analysis import Analysis
from guardlex.gates.types import (
    FORMULA_INPUT_NOT_IN_QUOTE,
    FORMULA_MISMATCH,
    Violation,
)

# -- formulas ------------------------------------------------------------------------

_FORMULA_TOKEN = regex.compile(r"\s*(?:(\d+(?:[.,]\d+)*)|([-+*/×÷x()]))")
_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "×": operator.mul,
    "x": operator.mul,
    "/": operator.truediv,
    "÷": operator.truediv,
}


#: Deepest nesting of brackets and signs ``evaluate`` reads (a parser's recursion is
#: bounded by it, so a deep formula is a ``FormulaError``, never a ``RecursionError``).
MAX_FORMULA_DEPTH = 100


def _fraction(token: str) -> Fraction:
    readings = number_readings(token)
    if len(readings) != 1:
        raise FormulaError(f"not a number in a formula: {token!r}")
    return Fraction(sorted(readings[0])[0])


def evaluate(formula: str) -> tuple[Fraction, list[str]]:
    """Evaluate plain arithmetic (never ``eval``); return the result and the input numbers.

    >>> evaluate("3 × 8")
    (Fraction(24, 1), ['3', '8'])
    """
    norm = normalise(formula)
    tokens: list[str] = []
    pos = 0
    while pos < len(norm):
        m = _FORMULA_TOKEN.match(norm, pos, timeout=TIMEOUT)
        if not m or m.end() == pos:
            if norm[pos:].strip() == "":
                break
            raise FormulaError(f"cannot read the formula {formula!r} at {norm[pos : pos + 10]!r}")
        tokens.append(m.group(1) or m.group(2))
        pos = m.end()
    inputs = [t for t in tokens if t[0].isdigit()]
    index = 0

    def peek() -> str | None:
        return tokens[index] if index < len(tokens) else None

    def take() -> str:
        nonlocal index
        if index >= len(tokens):
            raise FormulaError(f"the formula {formula!r} ends too early")
        index += 1
        return tokens[index - 1]

    depth = 0

    def atom() -> Fraction:
        nonlocal depth
        tok = take()
        if tok in ("(", "-"):
            depth += 1
            if depth > MAX_FORMULA_DEPTH:
                raise FormulaError(
                    f"the formula nests brackets or signs more than {MAX_FORMULA_DEPTH} deep"
                )
            try:
                if tok == "-":
                    return -atom()
                val = expr()
                if take() != ")":
                    raise FormulaError(f"the formula {formula!r} has unbalanced brackets")
                return val
            finally:
                depth -= 1
        if tok[0].isdigit():
            return _fraction(tok)
        raise FormulaError(
            f"the formula {formula!r} has an unexpected {tok!r}; "
            "use numbers, + - * / × ÷ and brackets"
        )

    def term() -> Fraction:
        val = atom()
        while peek() in ("*", "×", "x", "/", "÷"):
            op = take()
            rhs = atom()
            if op in "/÷" and rhs == 0:
                raise FormulaError(f"the formula {formula!r} divides by zero")
            val = _OPS[op](val, rhs)
        return val

    def expr() -> Fraction:
        val = term()
        while peek() in ("+", "-"):
            op = take()
            val = _OPS[op](val, term())
        return val

    if not tokens:
        raise FormulaError("the formula is empty")
    result = expr()
    if index != len(tokens):
        raise FormulaError(
            f"the formula {formula!r} has an unexpected {tokens[index]!r}; "
            "use numbers, + - * / × ÷ and brackets"
        )
    return result, inputs


def _computed(
    answer: Analysis, quote_keys: frozenset[str], computed: Mapping[str, str]
) -> tuple[set[str], list[Violation]]:
    keys: set[str] = set()
    out: list[Violation] = []
    present = answer.keys
    for raw_value, formula in computed.items():
        readings = number_readings(normalise(str(raw_value)).translate(_GROUPING))
        if len(readings) != 1:
            raise FormulaError(f"a computed value must be one number: {raw_value!r}")
        value_keys = readings[0]
        result, inputs = evaluate(formula)  # a malformed formula is an error even if unused
        if not value_keys & present:
            continue
        keys |= value_keys
        for token in inputs:
            if not (number_readings(token)[0] & quote_keys):
                out.append(Violation(FORMULA_INPUT_NOT_IN_QUOTE, token, f"formula: {formula}"))
        if not any(Fraction(k) == result for k in value_keys):
            out.append(Violation(FORMULA_MISMATCH, str(raw_value), f"{formula} = {result}"))
    return keys, out
