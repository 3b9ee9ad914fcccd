"""``guardlex eval``: the golden set against the sample site, reported set by set.

Never one blended score: each set has its own pass rule, every miss is listed, results
are broken down per locale, and the report names the embedding model and the size of
each set. Refusal sets must be perfect, because one missed refusal is an invented
commitment on someone's site and an average would hide it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from guardlex.runner import _engine
from guardlex.runner.errors import CorpusError
from guardlex.runner.followups import resolve as resolve_followup
from guardlex.runner.pipeline import ANSWERED, BELOW_THRESHOLD, Runner

RECALL_K = 5
#: Version of the JSON report's layout (``report_version``); bumped on any change that
#: a reader of the report would notice. 1: the first versioned layout.
REPORT_VERSION = 1
DEFAULT_MIN_RECALL = 0.8
GATE_PIECE = 5

#: Fields every case of a set must have (besides ``locale``).
REQUIRED: dict[str, tuple[str, ...]] = {
    "refusals": ("text", "category"),
    "no_evidence": ("text",),
    "overview": ("text",),
    "answerable": ("text", "chunks"),
    "gate": ("sources", "answer", "expect"),
    "faithfulness": ("field", "evidence", "expect_status"),
    "followups": ("text",),
}

SETS = (
    "refusals",
    "no_evidence",
    "overview",
    "answerable",
    "gate",
    "faithfulness",
    "followups",
)


@dataclass(frozen=True)
class CaseResult:
    """One golden case: whether it held, what was expected and what happened."""

    set: str
    id: str
    locale: str
    ok: bool
    expected: str
    got: str
    text: str = ""
    leaked: tuple[str, ...] = ()
    warning: str = ""


@dataclass(frozen=True)
class SetResult:
    """One set: its size, its source note and every case result."""

    name: str
    source: str
    cases: tuple[CaseResult, ...]

    @property
    def size(self) -> int:
        return len(self.cases)

    @property
    def passed(self) -> int:
        return sum(1 for c in self.cases if c.ok)

    @property
    def misses(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if not c.ok)

    def per_locale(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = {}
        for c in self.cases:
            cell = out.setdefault(c.locale, [0, 0])
            cell[0] += int(c.ok)
            cell[1] += 1
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}


@dataclass(frozen=True)
class Report:
    """The whole evaluation. ``regressions`` lists what failed the build."""

    embedder: str
    threshold: float
    top_k: int
    corpus: Mapping[str, int]
    sets: Mapping[str, SetResult]
    recall: float | None
    recall_per_locale: Mapping[str, tuple[int, int]]
    wrongly_refused: tuple[CaseResult, ...]
    min_recall: float
    regressions: tuple[str, ...]
    locale_filter: str | None = None
    notes: tuple[str, ...] = field(default=())
    #: The site evaluated (name, store, backend, subjects, locales, embedder, sizes).
    site: Mapping[str, Any] = field(default_factory=dict)
    #: Where the threshold came from ("--threshold", "calibrated: ...", "default").
    threshold_source: str = ""
    #: Chunks one query searches, per reader locale (retrieval stays in that locale).
    searched: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.regressions

    def leaks(self) -> list[CaseResult]:
        return [c for s in self.sets.values() for c in s.cases if c.leaked]

    def to_dict(self) -> dict[str, Any]:
        return {
            "report_version": REPORT_VERSION,
            "ok": self.ok,
            "regressions": list(self.regressions),
            "site": dict(self.site),
            "threshold_source": self.threshold_source,
            "embedding_model": self.embedder,
            "threshold": self.threshold,
            "top_k": self.top_k,
            "recall_k": RECALL_K,
            "corpus": dict(self.corpus),
            "searched_per_query": dict(self.searched),
            "locale_filter": self.locale_filter,
            "sets": {
                name: {
                    "size": s.size,
                    "passed": s.passed,
                    "source": s.source,
                    "per_locale": {
                        k: {"passed": a, "total": b} for k, (a, b) in s.per_locale().items()
                    },
                    "misses": [asdict(c) for c in s.misses],
                    "warnings": [asdict(c) for c in s.cases if c.warning],
                }
                for name, s in self.sets.items()
            },
            "answerable": {
                "wrongly_refused": [asdict(c) for c in self.wrongly_refused],
                "recall_at_5": self.recall,
                "min_recall": self.min_recall,
                "recall_per_locale": {
                    k: {"hits": a, "total": b} for k, (a, b) in self.recall_per_locale.items()
                },
            },
            "must_not_leakage": [asdict(c) for c in self.leaks()],
            "notes": list(self.notes),
            # every case's outcome, so the next run can say what changed (--baseline)
            "results": {name: {c.id: c.ok for c in s.cases} for name, s in self.sets.items()},
        }


# ---------------------------------------------------------------- loading


def golden_dir() -> Any:
    return resources.files("guardlex.corpus").joinpath("golden")


def load_set(name: str, root: Any = None) -> tuple[str, list[Mapping[str, Any]]]:
    """(source note, cases) of one golden file; missing optional sets give no cases."""
    base = root if root is not None else golden_dir()
    entry = base.joinpath(f"{name}.yaml") if not isinstance(base, Path) else base / f"{name}.yaml"
    if not entry.is_file():
        return "", []
    where = f"{base}/{name}.yaml" if isinstance(base, Path) else f"corpus/golden/{name}.yaml"
    try:
        data = yaml.safe_load(entry.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CorpusError(f"{where}: invalid YAML: {exc}") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("cases"), list):
        raise CorpusError(f"{where}: expected 'source' and a 'cases' list")
    if not data.get("source"):
        raise CorpusError(
            f"{where}: every golden file must say where its cases came from ('source:')"
        )
    cases: list[Mapping[str, Any]] = []
    for i, case in enumerate(data["cases"]):
        if not isinstance(case, Mapping):
            raise CorpusError(f"{where}: cases[{i}] must be a mapping")
        for key in (*REQUIRED.get(name, ()), "locale"):
            if case.get(key) is None:
                raise CorpusError(f"{where}: cases[{i}] needs '{key}' (see docs/corpus.md)")
        item = {"id": case.get("id") or f"{name}#{i}", **case}
        for key in ("chunks", "sources", "must_include", "must_not"):
            if isinstance(item.get(key), str):
                item[key] = [item[key]]  # one string where a list was meant
        cases.append(item)
    return str(data["source"]).strip(), cases


# ---------------------------------------------------------------- the sets


def _norm_in(needle: str, haystack: str) -> bool:
    return _engine.normalise(needle) in _engine.normalise(haystack)


def eval_refusals(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    out = []
    for c in cases:
        r = runner.packs.route(c["text"], previous=c.get("previous"))
        got = f"{r.kind}:{r.category}" if r.kind == "refuse" else r.kind
        want = f"refuse:{c['category']}"
        out.append(CaseResult("refusals", c["id"], c["locale"], got == want, want, got, c["text"]))
    return out


def eval_no_evidence(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    out = []
    for c in cases:
        r = runner.packs.route(c["text"])
        if r.kind != "retrieve":
            got = f"{r.kind}:{r.category or r.topic}"
            out.append(
                CaseResult(
                    "no_evidence",
                    c["id"],
                    c["locale"],
                    False,
                    "retrieve, below threshold",
                    got,
                    c["text"],
                )
            )
            continue
        ret = runner.retriever.search(runner.query_for([c["text"]], c["locale"]), c["locale"])
        got = f"best {ret.best:.3f} {'>=' if ret.passed else '<'} {ret.threshold}"
        if ret.hits:
            got += f" ({ret.hits[0].chunk.id})"
        out.append(
            CaseResult(
                "no_evidence",
                c["id"],
                c["locale"],
                not ret.passed,
                "retrieve, below threshold",
                got,
                c["text"],
            )
        )
    return out


def eval_overview(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    out = []
    for c in cases:
        r = runner.packs.route(c["text"], previous=c.get("previous"))
        want_topic = c.get("topic")
        ok = r.kind == "overview"
        warning = ""
        if ok and want_topic and r.topic != want_topic:
            warning = f"topic {r.topic} instead of {want_topic}"
        got = f"{r.kind}:{r.topic or r.category}" if r.kind != "retrieve" else "retrieve"
        out.append(
            CaseResult(
                "overview",
                c["id"],
                c["locale"],
                ok,
                f"overview:{want_topic or '*'}",
                got,
                c["text"],
                warning=warning,
            )
        )
    return out


def eval_answerable(
    runner: Runner, cases: Sequence[Mapping[str, Any]]
) -> tuple[list[CaseResult], list[CaseResult], dict[str, tuple[int, int]]]:
    """(not-refused results, recall@5 results, recall per locale)."""
    refused: list[CaseResult] = []
    recall: list[CaseResult] = []
    for c in cases:
        want = tuple(c.get("chunks") or ())
        r = runner.packs.route(c["text"], previous=c.get("previous"))
        if r.kind == "refuse":
            refused.append(
                CaseResult(
                    "answerable",
                    c["id"],
                    c["locale"],
                    False,
                    "answered",
                    f"refused by pattern {r.rule_id} ({r.category})",
                    c["text"],
                )
            )
            recall.append(
                CaseResult(
                    "recall", c["id"], c["locale"], False, " | ".join(want), "refused", c["text"]
                )
            )
            continue
        ret = runner.retriever.search(runner.query_for([c["text"]], c["locale"]), c["locale"])
        top = [h.chunk.id for h in ret.hits[:RECALL_K]]
        note = "" if r.kind == "retrieve" else f"routed to {r.kind} ({r.topic}); retrieval checked"
        if not ret.passed and r.kind == "retrieve":
            refused.append(
                CaseResult(
                    "answerable",
                    c["id"],
                    c["locale"],
                    False,
                    "answered",
                    f"below threshold (best {ret.best:.3f})",
                    c["text"],
                )
            )
        else:
            refused.append(
                CaseResult(
                    "answerable",
                    c["id"],
                    c["locale"],
                    True,
                    "answered",
                    r.kind,
                    c["text"],
                    warning=note,
                )
            )
        hit = bool(set(top) & set(want))
        recall.append(
            CaseResult(
                "recall", c["id"], c["locale"], hit, " | ".join(want), ", ".join(top[:3]), c["text"]
            )
        )
    per: dict[str, list[int]] = {}
    for rc in recall:
        cell = per.setdefault(rc.locale, [0, 0])
        cell[0] += int(rc.ok)
        cell[1] += 1
    return refused, recall, {k: (v[0], v[1]) for k, v in sorted(per.items())}


def eval_end_to_end(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    """Answerable questions through the whole pipeline with the scripted model.

    The scripted model only quotes its sources, with markers, so every sentence it
    writes is supported: a gate stop here is a false positive of the gate (or a source
    the gate cannot accept, such as one written in the first person).
    """
    out = []
    for c in cases:
        r = runner.packs.route(c["text"], previous=c.get("previous"))
        if r.kind != "retrieve":
            continue
        a = runner.ask(c["text"], locale=c["locale"])
        if a.code == BELOW_THRESHOLD:
            continue  # counted under "wrongly refused"
        out.append(
            CaseResult(
                "end_to_end",
                c["id"],
                c["locale"],
                a.code == ANSWERED,
                ANSWERED,
                " ".join(a.trace),
                c["text"],
            )
        )
    return out


def _chunks(text: str, size: int = GATE_PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def eval_gate(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    out = []
    for c in cases:
        gate = _engine.GateAdapter(list(c["sources"]), runner.packs, c["locale"])
        seen: list[str] = []
        outcome = "released"
        reason = None
        for ev in gate.stream(_chunks(str(c["answer"]))):
            if ev.kind == "released":
                seen.append(ev.text)
            elif ev.kind == "stop":
                outcome, reason = "stop", ev.reason
                seen.append(" " + ev.message)
                break
            elif ev.kind == "truncated":
                outcome = "truncated"
                seen.append(" " + ev.message)
        reader = "".join(seen)
        want = str(c["expect"])
        ok = outcome == want and (not c.get("reason") or reason == c["reason"])
        missing = [s for s in c.get("must_include") or () if not _norm_in(str(s), reader)]
        leaked = tuple(str(s) for s in c.get("must_not") or () if _norm_in(str(s), reader))
        got = outcome + (f":{reason}" if reason else "")
        if missing:
            got += f"; missing {missing}"
        ok = ok and not missing and not leaked
        out.append(
            CaseResult(
                "gate",
                c["id"],
                c["locale"],
                ok,
                want + (f":{c['reason']}" if c.get("reason") else ""),
                got,
                str(c["answer"]),
                leaked=leaked,
            )
        )
    return out


def _resolve_fields() -> tuple[Callable[..., Any], Any, Any, Callable[..., Any] | None]:
    from guardlex import gates

    extractor = None
    for name in ("extract_facts", "extract"):
        extractor = getattr(gates, name, None)
        if extractor is not None:
            break
    return gates.resolve, gates.Fact, gates.Evidence, extractor


def eval_faithfulness(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    resolve, fact_cls, evidence_cls, extractor = _resolve_fields()
    out = []
    for c in cases:
        evidence = [evidence_cls.from_mapping(e) for e in c.get("evidence") or ()]
        if c.get("facts") is not None:
            known = {f.name for f in dataclasses.fields(fact_cls)}
            facts = [fact_cls(**{k: v for k, v in f.items() if k in known}) for f in c["facts"]]
        elif extractor is not None:
            facts = list(extractor(c["field"], evidence, packs=runner.packs.packs))
        else:
            facts = []
        res = resolve(c["field"], facts, evidence)
        status = str(res.status)
        value = res.value
        ok = status == str(c["expect_status"])
        if "expect_value" in c and c["expect_value"] is not None:
            ok = ok and str(value) == str(c["expect_value"])
        shown = " ".join(str(v) for v in (value, *tuple(res.values or ())) if v is not None)
        leaked = tuple(str(s) for s in c.get("must_not") or () if _norm_in(str(s), shown) and shown)
        got = status + (f" {value!r}" if value is not None else "")
        out.append(
            CaseResult(
                "faithfulness",
                c["id"],
                c["locale"],
                ok and not leaked,
                f"{c['expect_status']}"
                + (f" {c['expect_value']!r}" if c.get("expect_value") else ""),
                got,
                str(c["field"]),
                leaked=leaked,
            )
        )
    return out


def eval_followups(runner: Runner, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    out = []
    for c in cases:
        titles = runner.store.titles(c["locale"]) + [
            r.title_in(c["locale"]) for r in runner.store.records()
        ]
        f = resolve_followup(
            c["text"],
            c.get("previous"),
            c.get("previous_answer"),
            runner.packs.ordinals(c["locale"]),
            titles,
        )
        got = f.position if f.resolved else None
        want = c.get("expect_resolved")
        out.append(
            CaseResult(
                "followups",
                c["id"],
                c["locale"],
                got == want,
                str(want),
                f"{got} ({f.code})",
                c["text"],
            )
        )
    return out


# ---------------------------------------------------------------- running


Progress = Callable[[str, int, int], None]


def evaluate(
    runner: Runner,
    locale: str | None = None,
    min_recall: float = DEFAULT_MIN_RECALL,
    progress: Progress | None = None,
    root: Any = None,
    site: Mapping[str, Any] | None = None,
    threshold_source: str = "",
) -> Report:
    """Run every golden set (optionally one locale) and decide what regressed."""
    loaded: dict[str, tuple[str, list[Mapping[str, Any]]]] = {}
    for name in SETS:
        src, cases = load_set(name, root)
        if locale is not None:
            cases = [c for c in cases if c["locale"] == locale]
        loaded[name] = (src, cases)
    if root is None and locale is None:
        for name in ("refusals", "no_evidence", "overview", "answerable"):
            if not loaded[name][1]:
                raise CorpusError(f"corpus/golden/{name}.yaml has no cases")
    if not any(cases for _, cases in loaded.values()):
        where = f"locale {locale!r}" if locale else str(root or "corpus/golden")
        raise CorpusError(f"no golden cases to run for {where}")

    unavailable: list[str] = []

    def run(
        name: str,
        fn: Callable[[Runner, Sequence[Mapping[str, Any]]], Any],
        label: str | None = None,
    ) -> Any:
        cases = loaded[name][1]
        if progress is not None:
            progress(label or name, 0, len(cases))
        try:
            result = fn(runner, cases)
        except ImportError as exc:  # a layer of guardlex is missing: say so, fail the run
            unavailable.append(f"{label or name}: cannot run ({exc})")
            return []
        return result

    sets: dict[str, SetResult] = {}
    for name, fn in (
        ("refusals", eval_refusals),
        ("no_evidence", eval_no_evidence),
        ("overview", eval_overview),
    ):
        sets[name] = SetResult(name, loaded[name][0], tuple(run(name, fn)))
    refused, recall, recall_per = run("answerable", eval_answerable)
    sets["answerable"] = SetResult("answerable", loaded["answerable"][0], tuple(refused))
    sets["recall"] = SetResult("recall", loaded["answerable"][0], tuple(recall))
    e2e = run("answerable", eval_end_to_end, "end_to_end")
    sets["end_to_end"] = SetResult("end_to_end", loaded["answerable"][0], tuple(e2e))
    for name, fn in (
        ("gate", eval_gate),
        ("faithfulness", eval_faithfulness),
        ("followups", eval_followups),
    ):
        if loaded[name][1]:
            sets[name] = SetResult(name, loaded[name][0], tuple(run(name, fn)))

    regressions_pre = list(unavailable)
    recall_value = (sets["recall"].passed / sets["recall"].size) if sets["recall"].size else None
    regressions: list[str] = regressions_pre
    labels = {
        "refusals": "pattern refusals missed",
        "no_evidence": "questions without evidence not refused",
        "overview": "overview questions not routed to records",
        "answerable": "answerable questions wrongly refused",
        "gate": "gate outcomes wrong",
        "faithfulness": "field faithfulness wrong",
        "followups": "follow-ups resolved wrongly",
        "end_to_end": "supported answers stopped or cut by the gate",
    }
    for name, label in labels.items():
        s = sets.get(name)
        if s is not None and s.misses:
            regressions.append(f"{name}: {len(s.misses)} {label}")
    if recall_value is not None and recall_value < min_recall:
        regressions.append(f"recall@{RECALL_K}: {recall_value:.3f} below the floor {min_recall}")
    leaks = [c for s in sets.values() for c in s.cases if c.leaked]
    if leaks:
        regressions.append(f"must-not leakage: {sum(len(c.leaked) for c in leaks)} strings")
    store = runner.store
    corpus = {
        "chunks": store.chunk_count(),
        "records": len(store.records()),
        "locales": len(store.locales()),
    }
    return Report(
        embedder=store.embedder_name or "?",
        threshold=runner.threshold,
        top_k=runner.top_k,
        corpus=corpus,
        sets=sets,
        recall=recall_value,
        recall_per_locale=recall_per,
        wrongly_refused=sets["answerable"].misses,
        min_recall=min_recall,
        regressions=tuple(regressions),
        locale_filter=locale,
        searched={loc: store.locale_size(loc) for loc in sorted(store.locales())},
        notes=(f"golden files: {root}",) if root is not None else (),
        site=dict(site or {}),
        threshold_source=threshold_source,
    )


# ---------------------------------------------------------------- rendering


def _locales_line(per: Mapping[str, tuple[int, int]]) -> str:
    return "  ".join(f"{loc} {a}/{b}" for loc, (a, b) in per.items())


def _status(ok: bool) -> str:
    return "ok" if ok else "FAIL"


def _quote(text: str, width: int = 70) -> str:
    t = " ".join(text.split())
    return t if len(t) <= width else t[: width - 1] + "…"


def render(report: Report, max_misses: int = 25) -> str:
    """The human-readable report: one block per set, per locale, misses listed."""
    lines: list[str] = []
    add = lines.append
    scope = f" (locale {report.locale_filter})" if report.locale_filter else ""
    site = report.site
    if site:
        add(
            f"guardlex eval: site {site.get('name')!r}{scope}, store {site.get('store')} "
            f"({site.get('backend')})"
        )
        if site.get("subjects"):
            add(f"subjects: {', '.join(site['subjects'])}")
    else:
        add(f"guardlex eval: golden set on the sample site{scope}")
    add(
        f"embedding model: {report.embedder}   threshold {report.threshold}   "
        f"top-k {report.top_k}   recall@{RECALL_K}"
    )
    if report.threshold_source:
        add(f"threshold from: {report.threshold_source}")
    c = report.corpus
    add(f"store: {c['chunks']} chunks, {c['records']} records, {c['locales']} locales")
    if report.searched:
        sizes = set(report.searched.values())
        per = (
            f"{sizes.pop()} per locale"
            if len(sizes) == 1
            else ", ".join(f"{loc} {n}" for loc, n in report.searched.items())
        )
        add(f"chunks searched per query: the reader's locale only ({per})")
    for note in report.notes:
        add(note)
    add("")

    def block(name: str, title: str, rule: str) -> None:
        s = report.sets.get(name)
        if s is None:
            add(f"{title}: no cases")
            add("")
            return
        add(f"{title}  [{s.size} cases]  {s.passed}/{s.size}  {_status(not s.misses)}  ({rule})")
        add(f"  per locale: {_locales_line(s.per_locale())}")
        for m in s.misses[:max_misses]:
            add(
                f"  miss {m.id} [{m.locale}] expected {m.expected}, got {m.got}: {_quote(m.text)!r}"
            )
        if len(s.misses) > max_misses:
            add(f"  ... {len(s.misses) - max_misses} more misses (see --json)")
        warnings = [x for x in s.cases if x.warning]
        for w in warnings[:5]:
            add(f"  note {w.id} [{w.locale}] {w.warning}")
        if len(warnings) > 5:
            add(f"  ... {len(warnings) - 5} more notes (see --json)")
        add("")

    block("refusals", "refusal accuracy: pattern refusals", "any miss fails")
    block("no_evidence", "refusal accuracy: questions without evidence", "any miss fails")
    block("overview", "overview routing", "any miss fails")
    block("answerable", "answerable questions not wrongly refused", "any refusal fails")
    rs = report.sets["recall"]
    rv = "n/a" if report.recall is None else f"{report.recall:.3f}"
    ok_recall = report.recall is None or report.recall >= report.min_recall
    add(
        f"recall@{RECALL_K}  [{rs.size} cases]  {rs.passed}/{rs.size} = {rv}  "
        f"{_status(ok_recall)}  (floor {report.min_recall})"
    )
    add(f"  per locale: {_locales_line(report.recall_per_locale)}")
    for m in rs.misses[:max_misses]:
        add(f"  miss {m.id} [{m.locale}] wanted {m.expected}, top: {m.got}: {_quote(m.text)!r}")
    if len(rs.misses) > max_misses:
        add(f"  ... {len(rs.misses) - max_misses} more misses (see --json)")
    add("")
    block("gate", "gate outcomes", "every case must end as expected")
    block("faithfulness", "field faithfulness", "every status and value must match")
    leaks = report.leaks()
    n_leaks = sum(len(x.leaked) for x in leaks)
    add(f"must-not leakage: {n_leaks} strings in {len(leaks)} cases  {_status(not leaks)}")
    for x in leaks[:max_misses]:
        add(f"  leak {x.id} [{x.locale}] {list(x.leaked)}")
    add("")
    block("followups", "follow-up resolution", "every case must resolve as expected")
    block(
        "end_to_end",
        "answerable questions end to end (scripted model, sentence gate)",
        "a supported answer must be released",
    )
    if report.regressions:
        add("RESULT: FAIL")
        for r in report.regressions:
            add(f"  - {r}")
    else:
        add("RESULT: PASS (no regression)")
    return "\n".join(lines)


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2)


def iter_locales(report: Report) -> Iterable[str]:
    seen: set[str] = set()
    for s in report.sets.values():
        seen.update(c.locale for c in s.cases)
    return sorted(seen)


# ---------------------------------------------------------------- CI outputs


def render_junit(report: Report) -> str:
    """JUnit XML: one test suite per set, one test case per golden case (misses are
    failures), plus the recall floor, must-not leakage and any set that could not run."""
    from xml.sax.saxutils import quoteattr

    suites: list[str] = []
    total = failures = 0
    for name, s in report.sets.items():
        cases = []
        for c in s.cases:
            label = quoteattr(f"{c.id} [{c.locale}]")
            head = f"    <testcase classname={quoteattr('guardlex.eval.' + name)} name={label}"
            if c.ok and not c.leaked:
                cases.append(head + "/>")
                continue
            msg = f"expected {c.expected}, got {c.got}"
            if c.leaked:
                msg += f"; leaked {list(c.leaked)}"
            cases.append(
                f"{head}>\n      <failure message={quoteattr(msg)}>"
                f"{_xml_text(c.text)}</failure>\n    </testcase>"
            )
        n_fail = sum(1 for c in s.cases if not c.ok or c.leaked)
        total += len(s.cases)
        failures += n_fail
        suites.append(
            f'  <testsuite name={quoteattr(name)} tests="{len(s.cases)}" '
            f'failures="{n_fail}">\n' + "\n".join(cases) + "\n  </testsuite>"
        )
    checks = []
    if report.recall is not None:
        ok = report.recall >= report.min_recall
        checks.append(
            ("recall_floor", ok, f"recall@{RECALL_K} {report.recall:.3f} floor {report.min_recall}")
        )
    for r in report.regressions:
        if "cannot run" in r:
            checks.append(("unavailable", False, r))
    lines = []
    for cname, ok, msg in checks:
        total += 1
        head = f'    <testcase classname="guardlex.eval.checks" name={quoteattr(cname)}'
        if ok:
            lines.append(head + "/>")
        else:
            failures += 1
            lines.append(f"{head}>\n      <failure message={quoteattr(msg)}/>\n    </testcase>")
    if lines:
        n_fail = sum(1 for _, ok, _ in checks if not ok)
        suites.append(
            f'  <testsuite name="checks" tests="{len(checks)}" failures="{n_fail}">\n'
            + "\n".join(lines)
            + "\n  </testsuite>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="guardlex eval" tests="{total}" failures="{failures}">\n'
        + "\n".join(suites)
        + "\n</testsuites>\n"
    )


def _xml_text(text: str) -> str:
    from xml.sax.saxutils import escape

    # characters XML 1.0 cannot carry at all are dropped
    clean = "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20)
    return escape(clean)


def load_baseline(path: Path) -> Mapping[str, Any]:
    """A previous run's JSON report (``--json`` or ``--report``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: not a readable guardlex eval JSON report ({exc})") from exc
    if not isinstance(data, Mapping) or "results" not in data or "report_version" not in data:
        raise CorpusError(
            f"{path}: not a versioned guardlex eval report (write one with --report FILE)"
        )
    return data


def diff_baseline(report: Report, baseline: Mapping[str, Any]) -> dict[str, Any]:
    """What changed since ``baseline``: cases that now fail or now pass, cases added or
    removed, set sizes, and the embedder, threshold and recall."""
    now = report.to_dict()
    old_results: Mapping[str, Mapping[str, bool]] = baseline.get("results") or {}
    new_results: Mapping[str, Mapping[str, bool]] = now["results"]
    out: dict[str, Any] = {
        "baseline_version": baseline.get("report_version"),
        "newly_failing": [],
        "newly_passing": [],
        "added": [],
        "removed": [],
        "sizes": {},
        "settings": {},
    }
    for name in sorted(set(old_results) | set(new_results)):
        old = old_results.get(name, {})
        new = new_results.get(name, {})
        for cid in sorted(set(old) | set(new)):
            if cid not in old:
                out["added"].append(f"{name}/{cid}" + ("" if new[cid] else " (failing)"))
            elif cid not in new:
                out["removed"].append(f"{name}/{cid}")
            elif old[cid] and not new[cid]:
                out["newly_failing"].append(f"{name}/{cid}")
            elif not old[cid] and new[cid]:
                out["newly_passing"].append(f"{name}/{cid}")
        if len(old) != len(new):
            out["sizes"][name] = [len(old), len(new)]
    for key in ("embedding_model", "threshold", "top_k"):
        if baseline.get(key) != now.get(key):
            out["settings"][key] = [baseline.get(key), now.get(key)]
    old_recall = (baseline.get("answerable") or {}).get("recall_at_5")
    new_recall = now["answerable"]["recall_at_5"]
    if old_recall != new_recall:
        out["settings"]["recall_at_5"] = [old_recall, new_recall]
    return out


def render_diff(diff: Mapping[str, Any]) -> str:
    lines = ["changes since the baseline:"]
    labels = (
        ("newly_failing", "now failing"),
        ("newly_passing", "now passing"),
        ("added", "new cases"),
        ("removed", "removed cases"),
    )
    changed = False
    for key, label in labels:
        items = diff.get(key) or []
        if items:
            changed = True
            lines.append(f"  {label} ({len(items)}): {', '.join(items[:30])}")
            if len(items) > 30:
                lines.append(f"    ... {len(items) - 30} more (see --json)")
    for name, (a, b) in (diff.get("sizes") or {}).items():
        changed = True
        lines.append(f"  {name}: {a} -> {b} cases")
    for key, (a, b) in (diff.get("settings") or {}).items():
        changed = True
        lines.append(f"  {key}: {a} -> {b}")
    if not changed:
        lines.append("  nothing changed")
    return "\n".join(lines)
