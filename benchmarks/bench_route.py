"""Routing: ``Packs.route`` against ``normalise_with_offsets`` and the 0.1.0 engine.

Run: ``python benchmarks/bench_route.py`` (options: ``--n``, ``--repeat``, ``--quick``,
``--packs DIR`` to measure a copy of the packs instead of the shipped ones, ``--cpu`` to
time CPU instead of wall clock).

All contestants see the same mixed ten-language sample (every rule example, routing case,
independent case and golden-set question of every locale, plus variants: other casing,
a greeting before, a polite tail after, a zero-width character inside, a previous
question for a follow-up), in one process, side by side:

- ``normalise_with_offsets`` on each question: the floor, since routing includes it;
- ``route`` (rule language 2: one automaton pass, rules evaluated from occurrences);
- the 0.1.0 engine (a frozen copy in ``benchmarks/_legacy_engine``: anchors, then one
  regex per candidate rule) on the same packs;

each with 1, 10 and 100 configured subject names. Reported: median questions/second over
``--repeat`` runs, per-question p50 and p99 latency, the compile time of all loaded
packs (no cache) and the cold start (import + ``load_packs`` + first route in a fresh
process; bytecode cached as an installed package has it, and also without) with an
empty and a warm cache. Targets (issue "Rule language 2"): route within
4x ``normalise_with_offsets``, p99 under 20x the median, 100 names at most 1.5x one name,
compiling all packs under 1 s, cold start with an empty cache under 0.5 s. Each line
says whether its target is met. An empty cache still reads the programs shipped in
``guardlex/rules/precompiled`` for locales whose files are as shipped
(``tools/build_precompiled.py``); the cold-start line says for how many that was so.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import _legacy_engine as legacy  # noqa: E402
from guardlex import load_packs  # noqa: E402
from guardlex.errors import PackError  # noqa: E402
from guardlex.normalise import _snapshot as snapshot  # noqa: E402
from guardlex.normalise import normalise_with_offsets  # noqa: E402
from guardlex.rules import compile_locale  # noqa: E402
from guardlex.rules.cache import load_precompiled  # noqa: E402
from guardlex.rules.first_person import first_person_sources  # noqa: E402
from guardlex.rules.loader import SHIPPED_DIR, discover, load_locale, source_digest  # noqa: E402

GREETINGS = ["Hi! ", "Hello, ", "Quick question: ", "hey ", "Bonjour, ", "Hola, ", "سلام، "]
TAILS = [" Thanks!", " please", " asap", " :)", " — just curious.", " 谢谢", " спасибо"]
FIRST = ["Dana", "Alex", "Maria", "Yusuf", "Mei", "Olga", "Arjun", "Sara", "Tomás", "Léa"]
LAST = ["Reyes", "Kim", "Novak", "Haddad", "Chen", "Ivanova", "Sharma", "Rossi", "Silva", "Dubois"]
SCRIPTS = ["دانا ریس", "Дана Рейес", "दाना रेयेस", "达娜·雷耶斯", "دانا رييس"]


#: The clock of every timing: wall time (default) or, with ``--cpu``, this process's CPU
#: time (on a shared machine, time spent waiting for a core is not the code's cost).
CLOCK: list[Callable[[], float]] = [time.perf_counter]


def subject_names(n: int) -> list[str]:
    """``n`` distinct deterministic names in several scripts ("Dana Reyes" first)."""
    out = ["Dana Reyes"]
    extra = [*SCRIPTS, *(f"{f} {last}" for last in LAST for f in FIRST)]
    for name in extra:
        if len(out) >= n:
            break
        if name not in out:
            out.append(name)
    return out[:n]


def base_questions(root: Path, codes: list[str]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    found = discover([root], entry_points=False, shipped=False)
    for code in codes:
        for rule in load_locale(code, found[code]).rules:
            out.extend((q, None) for q in (*rule.match, *rule.no_match))
    data = ROOT / "tests" / "data"
    for path in sorted(
        [*(data / "routing").glob("*.yaml"), *(data / "independent").glob("*.yaml")]
    ):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for case in doc.get("cases") or []:
            if "text" in case and "expect" in case:
                out.append((case["text"], case.get("previous")))
    golden = ROOT / "src" / "guardlex" / "corpus" / "golden"
    for name in ("answerable", "no_evidence", "overview", "refusals"):
        doc = yaml.safe_load((golden / f"{name}.yaml").read_text(encoding="utf-8")) or {}
        for case in doc.get("cases") or []:
            out.append((case["text"], case.get("previous")))
    return out


def sample(
    base: list[tuple[str, str | None]], n: int, seed: int = 7
) -> list[tuple[str, str | None]]:
    rng = random.Random(seed)
    out = rng.sample(base, min(len(base), n // 2))  # half as written, half varied
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


def measure(
    fn: Callable[[str, str | None], Any], questions: list[tuple[str, str | None]], repeat: int
) -> tuple[float, float, float, list[Any]]:
    """Median questions/s over ``repeat`` runs, and p50/p99 per-question seconds."""
    totals: list[float] = []
    per: list[float] = []
    results: list[Any] = []
    clock = CLOCK[0]
    for text, prev in questions:  # warm-up: lazy regexes, memo tables, normaliser caches
        fn(text, prev)
    for _ in range(repeat):
        times = []
        results = []
        start = clock()
        for text, prev in questions:
            t = clock()
            results.append(fn(text, prev))
            times.append(clock() - t)
        totals.append(clock() - start)
        per = times if not per else [min(a, b) for a, b in zip(per, times, strict=True)]
    per.sort()
    qps = len(questions) / statistics.median(totals)
    p50 = per[len(per) // 2]
    p99 = per[min(len(per) - 1, int(len(per) * 0.99))]
    return qps, p50, p99, results


def cold_start(
    root: Path, shipped: bool, codes: list[str], repeat: int
) -> tuple[float, float, float]:
    """Seconds of a fresh process's import + ``load_packs`` + first route: with an empty
    pack cache, with a warm one, and with an empty one and no bytecode cache (every
    module compiled from source, as under ``PYTHONDONTWRITEBYTECODE``)."""
    args = f"{codes!r}, subject_names={subject_names(1)!r}"
    if not shipped:
        args += f", paths=[{str(root)!r}], shipped=False"
    clock = "process_time" if CLOCK[0] is time.process_time else "perf_counter"
    script = (
        f"import time; t=time.{clock}(); import guardlex; "
        f"p=guardlex.load_packs({args}); "
        f"p.route('How much does she charge?'); print(time.{clock}()-t)"
    )
    run = [sys.executable, "-c", script]

    def timed(env: dict[str, str]) -> float:
        done = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
        return float(done.stdout.strip().splitlines()[-1])

    cold, warm, source = [], [], []
    with tempfile.TemporaryDirectory() as pycache:
        # as installed (pip byte-compiles): the modules' bytecode is cached, written by a
        # first run with the pack cache off; without PYTHONDONTWRITEBYTECODE
        compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        compiled["PYTHONPYCACHEPREFIX"] = pycache
        timed({**compiled, "GUARDLEX_CACHE_DIR": "off"})
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                env = {**compiled, "GUARDLEX_CACHE_DIR": cache}
                cold.append(timed(env))
                warm.append(timed(env))
            with tempfile.TemporaryDirectory() as cache:  # every module compiled from source
                env = {**os.environ, "GUARDLEX_CACHE_DIR": cache, "PYTHONDONTWRITEBYTECODE": "1"}
                env.pop("PYTHONPYCACHEPREFIX", None)
                source.append(timed(env))
    return statistics.median(cold), statistics.median(warm), statistics.median(source)


def compile_time(root: Path, codes: list[str], repeat: int) -> tuple[float, float, float]:
    """Seconds to read + check all packs, to compile them, and the part of compiling
    spent on the first-person word tables (median of ``repeat``)."""
    found = discover([root], entry_points=False, shipped=False)
    reads, compiles, persons = [], [], []
    for _ in range(repeat):
        t = CLOCK[0]()
        datas = [load_locale(c, found[c]) for c in codes]
        reads.append(CLOCK[0]() - t)
        t = CLOCK[0]()
        for d in datas:
            compile_locale(d)
        compiles.append(CLOCK[0]() - t)
        gc.disable()  # as compile_locale does
        t = CLOCK[0]()
        for d in datas:
            first_person_sources(d.first_person)
        persons.append(CLOCK[0]() - t)
        gc.enable()
    return statistics.median(reads), statistics.median(compiles), statistics.median(persons)


def shipped_programs(root: Path, codes: list[str]) -> int:
    """How many locales a start with an empty cache reads from shipped programs."""
    found = discover([root], entry_points=False, shipped=False)
    return sum(1 for c in codes if load_precompiled(c, source_digest(found[c])) is not None)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6_000, help="questions in the sample (>= 5,000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per contestant (median)")
    ap.add_argument("--quick", action="store_true", help="1,000 questions, one run")
    ap.add_argument("--packs", type=Path, help="a folder of locale packs (default: shipped)")
    ap.add_argument("--no-legacy", action="store_true", help="skip the 0.1.0 engine")
    ap.add_argument(
        "--legacy-n",
        type=int,
        default=1_500,
        help="questions (the first N of the sample) timed for the slow 0.1.0 engine",
    )
    ap.add_argument("--cpu", action="store_true", help="time CPU, not wall clock")
    args = ap.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    if args.quick:
        args.n, args.repeat = min(args.n, 1_000), 1
    root = args.packs or SHIPPED_DIR
    shipped = args.packs is None
    found = discover([root], entry_points=False, shipped=False)
    codes = []
    for code in sorted(found):
        try:
            load_locale(code, found[code])
            codes.append(code)
        except PackError as exc:
            print(f"  (skipping {code}: {exc})", file=sys.stderr)
    questions = sample(base_questions(root, codes), args.n)
    follow = sum(1 for _, p in questions if p)
    print(
        f"locales: {' '.join(codes)} ({len(codes)}); sample: {len(questions)} questions "
        f"({follow} with a previous question); median of {args.repeat} run(s); "
        f"{'CPU' if args.cpu else 'wall-clock'} time"
    )

    def norm(text: str, prev: str | None) -> Any:
        normalise_with_offsets(text)
        return normalise_with_offsets(prev) if prev else None

    rows: list[tuple[str, float, float, float]] = []
    nq, n50, n99, _ = measure(norm, questions, args.repeat)
    rows.append(("normalise_with_offsets", nq, n50, n99))
    route_qps: dict[int, float] = {}
    kinds: dict[str, list[str]] = {}
    for n_names in (1, 10, 100):
        names = subject_names(n_names)
        kw: dict[str, Any] = {"subject_names": names}
        if not shipped:
            kw.update(paths=[root], shipped=False)
        packs = load_packs(codes, **kw)
        packs.compile_all()
        qps, p50, p99, routes = measure(packs.route, questions, args.repeat)
        route_qps[n_names] = qps
        rows.append((f"route, {n_names} name(s)", qps, p50, p99))
        kinds[f"new{n_names}"] = [r.kind for r in routes]
        if not args.no_legacy:
            old = legacy.load_packs(codes, subject_names=names, root=root)
            old.compile_all()
            subset = questions[: args.legacy_n]
            qps, p50, p99, routes = measure(old.route, subset, args.repeat)
            rows.append((f"0.1.0 engine, {n_names} name(s)*", qps, p50, p99))
            kinds[f"old{n_names}"] = [r.kind for r in routes]

    print(f"\n{'':32} {'questions/s':>12} {'p50 us':>9} {'p99 us':>9} {'x normalise':>12}")
    for name, qps, p50, p99 in rows:
        print(f"{name:32} {qps:12.0f} {p50 * 1e6:9.1f} {p99 * 1e6:9.1f} {nq / qps:12.1f}")
    if not args.no_legacy:
        print(f"* 0.1.0 engine timed on the first {min(args.legacy_n, len(questions))} questions")
    print()
    ratio = nq / route_qps[1]
    print(
        f"route / normalise_with_offsets (1 name): {ratio:5.1f}x  target <= 4x   "
        f"{verdict(ratio <= 4)}"
    )
    for name, _qps, p50, p99 in rows:
        if name.startswith("route"):
            r = p99 / p50
            print(f"p99 / p50, {name:24} {r:5.1f}x  target < 20x  {verdict(r < 20)}")
    scale = route_qps[1] / route_qps[100]
    print(
        f"100 names / 1 name (time):            {scale:5.2f}x  target <= 1.5x "
        f"{verdict(scale <= 1.5)}"
    )
    if not args.no_legacy:
        for n_names in (1, 10, 100):
            new, old = kinds[f"new{n_names}"], kinds[f"old{n_names}"]
            same = sum(a == b for a, b in zip(new, old, strict=False)) / len(old)
            print(f"same kind as 0.1.0, {n_names:3} name(s):       {same:7.2%}")
    counts = {k: kinds["new1"].count(k) for k in ("refuse", "overview", "retrieve")}
    print(f"route kinds (1 name): {counts}")
    read, comp, person = compile_time(root, codes, args.repeat)
    print(f"\nread + check all packs (YAML, schema, checks):       {read * 1000:7.0f} ms")
    print(
        f"compile all packs (templates -> programs, no cache): {comp * 1000:7.0f} ms  "
        f"target < 1000 ms  {verdict(comp < 1)}"
    )
    print(f"  of which first-person word tables (about):         {person * 1000:7.0f} ms")
    cold, warm, source = cold_start(root, shipped, codes, max(1, args.repeat))
    ready = shipped_programs(root, codes)
    tables = "current" if snapshot.current() else "STALE"
    print(
        f"cold start (import + load_packs + first route), empty cache: {cold * 1000:7.0f} ms  "
        f"target < 500 ms  {verdict(cold < 0.5)}  "
        f"(shipped programs current for {ready}/{len(codes)} locales; normaliser "
        f"snapshot {tables})"
    )
    print(f"cold start (import + load_packs + first route), warm cache:  {warm * 1000:7.0f} ms")
    print(
        f"cold start, empty cache, no bytecode cache (modules compiled from source): "
        f"{source * 1000:7.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
