"""Routing throughput: ``Packs.route`` against a naive loop of ``regex.search``.

Run: ``python benchmarks/bench_route.py`` (options: ``--n``, ``--repeat``).

Both contestants see the same 10,000-question multilingual sample (every rule example
and routing case of every shipped locale, plus synthetic variants: other casing, a
greeting before, a polite tail after, a zero-width character inside, a previous
question for a follow-up). Both include normalisation. The naive loop precompiles every
phrase and pattern of every rule separately and tries them in routing order with
``regex.search`` until one matches; ``route`` runs its literal-anchor pre-filter and then
only the candidate rules. Reported: median questions/second over ``--repeat`` runs, the
ratio, agreement of the two on refuse/overview/retrieve, and the cold-start time of
``load_packs()`` in a fresh process with an empty and with a warm cache.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import regex
import yaml

from guardlex import load_packs
from guardlex.errors import PackError
from guardlex.normalise import normalise
from guardlex.rules import REGEX_TIMEOUT, Packs
from guardlex.rules.lint import EXAMPLE_SUBJECTS
from guardlex.rules.loader import discover, load_locale

ROUTING = Path(__file__).resolve().parent.parent / "tests" / "data" / "routing"
GREETINGS = ["Hi! ", "Hello, ", "Quick question: ", "hey ", "Bonjour, ", "Hola, ", "سلام، "]
TAILS = [" Thanks!", " please", " asap", " :)", " — just curious.", " 谢谢", " спасибо"]


def loadable_locales() -> list[str]:
    codes = []
    for code, folders in sorted(discover().items()):
        try:
            load_locale(code, folders)
            codes.append(code)
        except PackError as exc:
            print(f"  (skipping {code}: {exc})", file=sys.stderr)
    return codes


def base_questions(codes: list[str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    found = discover()
    for code in codes:
        data = load_locale(code, found[code])
        for rule in data.rules:
            out.extend((q, None) for q in (*rule.match, *rule.no_match))
    for path in sorted(ROUTING.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for case in doc.get("cases") or []:
            out.append((case["text"], case.get("previous")))
    return out


def sample(
    base: list[tuple[str, str | None]], n: int, seed: int = 7
) -> list[tuple[str, str | None]]:
    rng = random.Random(seed)
    out = list(base)
    while len(out) < n:
        text, prev = rng.choice(base)
        kind = rng.randrange(6)
        if kind == 0:
            text = text.upper()
        elif kind == 1:
            text = rng.choice(GREETINGS) + text
        elif kind == 2:
            text = text + rng.choice(TAILS)
        elif kind == 3 and len(text) > 4:
            k = rng.randrange(1, len(text) - 1)
            text = text[:k] + "\u200b" + text[k:]
        elif kind == 4:
            prev = rng.choice(base)[0]
        else:
            text = text.lower()
        out.append((text, prev))
    rng.shuffle(out)
    return out[:n]


class NaiveRouter:
    """Every phrase and pattern compiled on its own, tried in turn (the baseline)."""

    def __init__(self, packs: Packs) -> None:
        self.rules = []
        for section in ("refusal", "overview"):
            for code in packs.locales:
                for rule in packs.rules(code):
                    if rule.section == section:
                        compiled = [regex.compile(s) for s in rule.pattern_sources()]
                        self.rules.append((rule, compiled))

    def route(self, text: str, previous: str | None = None) -> str:
        texts = [normalise(text)]
        if previous:
            texts.append(normalise(previous) + " " + texts[0])
        for rule, compiled in self.rules:
            for t in texts:
                for pattern in compiled:
                    if pattern.search(t, timeout=REGEX_TIMEOUT):
                        return "refuse" if rule.section == "refusal" else "overview"
        return "retrieve"


def timed(fn, questions) -> tuple[float, list[str]]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    kinds = [fn(text, prev) for text, prev in questions]
    return time.perf_counter() - start, kinds


def cold_start(codes: list[str], repeat: int) -> tuple[float, float]:
    script = (
        "import time,sys; t=time.perf_counter(); import guardlex; "
        f"p=guardlex.load_packs({codes!r}, subject_names={list(EXAMPLE_SUBJECTS)!r}); "
        "p.route('How much does she charge?'); print(time.perf_counter()-t)"
    )
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "GUARDLEX_CACHE_DIR": cache}
            run = [sys.executable, "-c", script]
            cold.append(
                float(
                    subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
                )
            )
            warm.append(
                float(
                    subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
                )
            )
    return statistics.median(cold), statistics.median(warm)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="questions in the sample")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per contestant (median)")
    ap.add_argument(
        "--naive-n",
        type=int,
        default=1_000,
        help="questions (the first N of the same sample) timed for the slow naive loop",
    )
    ap.add_argument("--quick", action="store_true", help="2,000 questions, 200 for the naive loop")
    args = ap.parse_args()
    if args.quick:
        args.n, args.naive_n = min(args.n, 2_000), min(args.naive_n, 200)

    codes = loadable_locales()
    packs = load_packs(codes, subject_names=EXAMPLE_SUBJECTS)
    packs.compile_all()
    naive = NaiveRouter(packs)
    questions = sample(base_questions(codes), args.n)
    n_rules = len(packs.rules())
    n_sources = sum(len(r.sources) for r in packs.rules())
    print(f"locales: {' '.join(codes)} ({len(codes)}); rules: {n_rules}; sources: {n_sources}")
    print(f"sample: {len(questions)} questions ({sum(1 for _, p in questions if p)} with previous)")

    subset = questions[: args.naive_n]
    fast_times, naive_times = [], []
    fast_kinds: list[str] = []
    naive_kinds: list[str] = []
    for _ in range(args.repeat):
        t, routes = timed(packs.route, questions)
        fast_times.append(t)
        fast_kinds = [r.kind for r in routes]  # type: ignore[attr-defined]
        t, naive_kinds = timed(naive.route, subset)
        naive_times.append(t)
    fast_qps = len(questions) / statistics.median(fast_times)
    naive_qps = len(subset) / statistics.median(naive_times)
    pairs = zip(fast_kinds[: len(subset)], naive_kinds, strict=True)
    agree = sum(a == b for a, b in pairs) / len(subset)
    runs = f"median of {args.repeat}"
    print(f"route():      {fast_qps:10.0f} questions/s  ({len(questions)} questions, {runs})")
    print(f"naive loop:   {naive_qps:10.0f} questions/s  (first {len(subset)} of them, {runs})")
    print(f"ratio:        {fast_qps / naive_qps:10.1f}x  (target >= 10x)")
    print(f"same kind:    {agree:10.2%}  (refuse/overview/retrieve agreement)")
    counts = {k: fast_kinds.count(k) for k in ("refuse", "overview", "retrieve")}
    print(f"route kinds:  {counts}")
    cold, warm = cold_start(codes, max(1, args.repeat))
    print(f"cold start (import + load_packs + first route), empty cache: {cold * 1000:7.0f} ms")
    print(f"cold start (import + load_packs + first route), warm cache:  {warm * 1000:7.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
