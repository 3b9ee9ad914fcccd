"""``guardlex calibrate``: choose the similarity threshold for an embedder and a corpus.

The answerable and no-evidence questions of a golden set go through routing and the
store's retrieval exactly as a turn would (no model is called); for each, the best
bounded value (max of cosine and keyword coverage over the returned chunks, docs/runner.md) is
recorded. A threshold ``t`` keeps an answerable question when its value is >= t and
stops a no-evidence question when its value is < t.

Policy (stated in every output): among the thresholds that keep at least ``keep`` of the
answerable questions (default: all of them), take those that stop the most no-evidence
questions (ties: the most answerable kept); recommend the middle of that range, so the
margin to the nearest question on either side is as wide as the data allows.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from guardlex.runner.evaluate import load_set
from guardlex.runner.pipeline import Runner

#: Version of the calibration record's layout.
CALIBRATION_VERSION = 1
TABLE_STEP = 0.05
HIST_BIN = 0.05


@dataclass(frozen=True)
class Scored:
    """One question's best bounded value."""

    id: str
    locale: str
    best: float
    text: str


@dataclass(frozen=True)
class Row:
    threshold: float
    kept: int
    stopped: int


@dataclass
class Calibration:
    embedder: str
    corpus: str
    golden: str
    answerable: list[Scored]
    no_evidence: list[Scored]
    keep: float
    recommended: float | None
    range: tuple[float, float] | None
    current: float
    skipped: list[str] = field(default_factory=list)

    @property
    def policy(self) -> str:
        share = "all" if self.keep >= 1.0 else f"at least {self.keep:.0%}"
        return (
            f"keep {share} of the answerable questions, stop the most no-evidence "
            "questions, and take the middle of the thresholds that do so"
        )

    def counts(self, t: float) -> Row:
        kept = sum(1 for s in self.answerable if s.best >= t)
        stopped = sum(1 for s in self.no_evidence if s.best < t)
        return Row(round(t, 4), kept, stopped)

    def table(self) -> list[Row]:
        steps = [round(i * TABLE_STEP, 2) for i in range(1, round(1 / TABLE_STEP))]
        extra = [x for x in (self.recommended, self.current) if x is not None]
        return [self.counts(t) for t in sorted(set(steps) | set(extra))]

    def to_dict(self) -> dict[str, Any]:
        return {
            "calibration_version": CALIBRATION_VERSION,
            "embedder": self.embedder,
            "corpus": self.corpus,
            "golden": self.golden,
            "at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "policy": self.policy,
            "keep": self.keep,
            "recommended": self.recommended,
            "range": list(self.range) if self.range else None,
            "current": self.current,
            "sizes": {"answerable": len(self.answerable), "no_evidence": len(self.no_evidence)},
            "skipped": list(self.skipped),
            "table": [asdict(r) for r in self.table()],
            "answerable": [asdict(s) for s in self.answerable],
            "no_evidence": [asdict(s) for s in self.no_evidence],
        }


def score(
    runner: Runner, cases: Sequence[Mapping[str, Any]], set_name: str, skipped: list[str]
) -> list[Scored]:
    """Each retrieved question's best bounded value; refused or overview ones skipped
    (the threshold never sees them)."""
    out = []
    for c in cases:
        r = runner.packs.route(c["text"], previous=c.get("previous"))
        if r.kind != "retrieve":
            skipped.append(f"{set_name}/{c['id']}: routed to {r.kind}")
            continue
        ret = runner.retriever.search(runner.query_for([c["text"]], c["locale"]), c["locale"])
        out.append(Scored(str(c["id"]), str(c["locale"]), round(ret.best, 6), str(c["text"])))
    return out


def recommend(
    answerable: Sequence[float], no_evidence: Sequence[float], keep: float
) -> tuple[float | None, tuple[float, float] | None]:
    """(recommended threshold, the range it is the middle of) under the module's policy.

    Thresholds between two neighbouring observed values all give the same counts, so
    the candidates are those intervals, each written (lo, hi]: any t with lo < t <= hi.
    """
    values = sorted({0.0, 1.0, *answerable, *no_evidence})
    need = math.ceil(keep * len(answerable) - 1e-9)
    best: tuple[int, int] | None = None
    chosen: list[tuple[float, float]] = []
    # (0, 0] stands for t = 0 exactly (keeps everything); then each (lo, hi]
    for lo, hi in [(0.0, 0.0), *itertools.pairwise(values)]:
        t = hi  # any threshold in (lo, hi] behaves like hi
        kept = sum(1 for v in answerable if v >= t)
        stopped = sum(1 for v in no_evidence if v < t)
        if kept < need:
            continue
        key = (stopped, kept)
        if best is None or key > best:
            best, chosen = key, [(lo, hi)]
        elif key == best:
            chosen.append((lo, hi))
    if not chosen:
        return None, None
    lo, hi = chosen[0][0], chosen[-1][1]
    mid = round((lo + hi) / 2, 3)
    if not (lo < mid <= hi or mid == lo == hi):  # rounding pushed it out of the range
        mid = hi
    return mid, (lo, hi)


def calibrate(
    runner: Runner,
    root: Path,
    keep: float = 1.0,
    locale: str | None = None,
    corpus: str = "",
) -> Calibration:
    skipped: list[str] = []
    _, ans_cases = load_set("answerable", root)
    _, ne_cases = load_set("no_evidence", root)
    if locale is not None:
        ans_cases = [c for c in ans_cases if c["locale"] == locale]
        ne_cases = [c for c in ne_cases if c["locale"] == locale]
    answerable = score(runner, ans_cases, "answerable", skipped)
    no_evidence = score(runner, ne_cases, "no_evidence", skipped)
    rec, rng = recommend([s.best for s in answerable], [s.best for s in no_evidence], keep)
    return Calibration(
        embedder=runner.retriever.embedder.name,
        corpus=corpus,
        golden=str(root),
        answerable=answerable,
        no_evidence=no_evidence,
        keep=keep,
        recommended=rec,
        range=rng,
        current=runner.threshold,
        skipped=skipped,
    )


# ---------------------------------------------------------------- output


def _hist(values: Sequence[float]) -> list[int]:
    n = round(1 / HIST_BIN)
    out = [0] * n
    for v in values:
        out[min(n - 1, max(0, int(v / HIST_BIN)))] += 1
    return out


def render(cal: Calibration) -> str:
    lines: list[str] = []
    add = lines.append
    add(f"guardlex calibrate: embedder {cal.embedder}, corpus {cal.corpus or '?'}")
    add(f"golden: {cal.golden}")
    add(
        f"answerable questions: {len(cal.answerable)}   no-evidence questions: "
        f"{len(cal.no_evidence)}   (skipped, never thresholded: {len(cal.skipped)})"
    )
    add("")
    add("best bounded value per question (max of cosine and keyword coverage):")
    add(f"  {'bin':<11} {'answerable':<24} no-evidence")
    ha, hn = _hist([s.best for s in cal.answerable]), _hist([s.best for s in cal.no_evidence])
    width = max([1, *ha, *hn])
    for i, (a, b) in enumerate(zip(ha, hn, strict=True)):
        if not a and not b:
            continue
        bar_a = "#" * max(1 if a else 0, round(20 * a / width))
        bar_b = "#" * max(1 if b else 0, round(20 * b / width))
        lo = i * HIST_BIN
        add(f"  {lo:.2f}-{lo + HIST_BIN:.2f}  {a:>3} {bar_a:<20} {b:>3} {bar_b}")
    add("")
    na, nn = len(cal.answerable), len(cal.no_evidence)
    add(f"  {'threshold':>9}  {'answerable kept':>17}  {'no-evidence stopped':>21}")
    for r in cal.table():
        mark = ""
        if cal.recommended is not None and math.isclose(r.threshold, cal.recommended):
            mark += "  <- recommended"
        if math.isclose(r.threshold, cal.current):
            mark += "  <- current"
        add(
            f"  {r.threshold:>9.3f}  {r.kept:>5}/{na:<3} {_pct(r.kept, na):>7}  "
            f"{r.stopped:>7}/{nn:<3} {_pct(r.stopped, nn):>9}{mark}"
        )
    add("")
    add(f"policy: {cal.policy}")
    if cal.recommended is None:
        add("recommended: none (no threshold keeps that share of the answerable questions)")
    else:
        r = cal.counts(cal.recommended)
        assert cal.range is not None
        add(
            f"recommended: {cal.recommended}  (any value in ({cal.range[0]:.3f}, "
            f"{cal.range[1]:.3f}] gives the same counts: keeps {r.kept}/{na} answerable, "
            f"stops {r.stopped}/{nn} no-evidence)"
        )
    return "\n".join(lines)


def _pct(a: int, b: int) -> str:
    return "n/a" if not b else f"({100 * a / b:.0f}%)"


def plot(cal: Calibration, path: Path) -> None:
    """Both distributions and the kept/stopped curves, with the chosen thresholds."""
    import warnings

    with warnings.catch_warnings():  # matplotlib's own (pyparsing) deprecation warnings
        warnings.simplefilter("ignore")
        _plot(cal, path)


def _plot(cal: Calibration, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        from guardlex.runner.errors import MissingDependencyError

        raise MissingDependencyError(
            "--plot needs matplotlib: pip install 'guardlex[plot]'"
        ) from exc
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True)
    bins = [i * HIST_BIN / 2 for i in range(round(2 / HIST_BIN) + 1)]
    ans = [s.best for s in cal.answerable]
    ne = [s.best for s in cal.no_evidence]
    ax1.hist(ans, bins=bins, alpha=0.6, color="tab:blue", label=f"answerable (n={len(ans)})")
    ax1.hist(ne, bins=bins, alpha=0.6, color="tab:red", label=f"no evidence (n={len(ne)})")
    ax1.set_ylabel("questions")
    ax1.set_title(f"Best bounded retrieval value: {cal.embedder}, corpus {cal.corpus or '?'}")
    steps = [i / 200 for i in range(201)]
    na, nn = max(1, len(ans)), max(1, len(ne))
    ax2.plot(steps, [100 * cal.counts(t).kept / na for t in steps], color="tab:blue",
             label="answerable kept (%)")  # fmt: skip
    ax2.plot(steps, [100 * cal.counts(t).stopped / nn for t in steps], color="tab:red",
             label="no evidence stopped (%)")  # fmt: skip
    ax2.set_xlabel("threshold (max of cosine and keyword coverage)")
    ax2.set_ylabel("% of the set")
    ax2.set_ylim(-2, 102)
    ax2.set_xlim(0, 1)
    for ax in (ax1, ax2):
        if cal.recommended is not None:
            ax.axvline(cal.recommended, color="black", linestyle="--",
                       label=f"recommended {cal.recommended}")  # fmt: skip
        ax.axvline(cal.current, color="grey", linestyle=":", label=f"current {cal.current}")
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
    fig.text(0.01, 0.005, f"policy: {cal.policy}", fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_record(cal: Calibration, path: Path) -> dict[str, Any]:
    data = cal.to_dict()
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return data
