"""The reference pipeline: route -> refuse | overview | retrieve -> threshold -> budget
guard -> model -> sentence gate -> reader.

Every decision that a rule can make is made by a rule, before or after the model, and
leaves a reason code in the answer's ``trace``. A refused question creates no embedder
and no model client: both are built lazily, on first use.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import regex

from guardlex.errors import InputTooLargeError, UnknownLocaleError
from guardlex.normalise import visible_text
from guardlex.runner import _engine
from guardlex.runner._regex import REGEX_TIMEOUT
from guardlex.runner.corpus import Record
from guardlex.runner.costs import BudgetLedger, RateLimiter, utf8_tokens, valid_tokens
from guardlex.runner.embeddings import DEFAULT_EMBEDDER, Embedder, make_embedder
from guardlex.runner.errors import (
    EmptyQuestionError,
    ModelError,
    ModelUnavailableError,
    StoreError,
)
from guardlex.runner.followups import FollowUp, resolve, site_title
from guardlex.runner.models import Model, ModelStream, Prompt, ScriptedModel
from guardlex.runner.retrieval import (
    DEFAULT_THRESHOLD,
    DEFAULT_TOP_K,
    Query,
    Retrieval,
    Retriever,
)
from guardlex.runner.store import Store

#: Builds the sentence gate for one answer: (sources, packs, locale, on_cancel).
GateFactory = Callable[
    [Sequence[str], _engine.PackView, str, Callable[[], None]], _engine.GateAdapter
]

MAX_QUESTION_CHARS = 2000
#: Longest previous answer a follow-up may be read against.
MAX_PREVIOUS_ANSWER_CHARS = 20_000
DEFAULT_MAX_OUTPUT_TOKENS = 1024
DEFAULT_MONTHLY_CAP = 2_000_000
MAX_OVERVIEW_RECORDS = 8
NO_ANSWER_TOKEN = "NO_ANSWER"

# Final answer codes (Answer.code) and trace codes.
ANSWERED = "ANSWERED"
REFUSED = "REFUSED"
OVERVIEW = "OVERVIEW"
BELOW_THRESHOLD = "BELOW_THRESHOLD"
GATE_STOP = "GATE_STOP"
TRUNCATED = "TRUNCATED"
BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
RATE_LIMITED = "RATE_LIMITED"
MODEL_NO_ANSWER = "MODEL_NO_ANSWER"
MODEL_ERROR = "MODEL_ERROR"
KEYWORD_FALLBACK = "KEYWORD_FALLBACK"
LEDGER_UNAVAILABLE = "LEDGER_UNAVAILABLE"
RATE_LIMIT_UNAVAILABLE = "RATE_LIMIT_UNAVAILABLE"
#: An overview question on a site without records: its documents' titles instead, or
#: (no documents either) the fixed below-threshold text. Never an empty answer.
OVERVIEW_DOCUMENTS = "OVERVIEW_DOCUMENTS"
OVERVIEW_EMPTY = "OVERVIEW_EMPTY"
#: The model's output reached the reserved bound: the stream was cut and cancelled.
OUTPUT_CAPPED = "OUTPUT_CAPPED"
#: The provider reported more usage than was reserved; the reservation was recorded.
USAGE_OVER_RESERVATION = "USAGE_OVER_RESERVATION"
#: The provider's usage was not a pair of token counts; the reservation was recorded.
USAGE_INVALID = "USAGE_INVALID"
#: The ledger could not record the call (the reservation stays held).
SETTLE_FAILED = "SETTLE_FAILED"
#: A follow-up resolved to a list item that names none of the site's titles: the item
#: was used for retrieval only, never shown to the model.
FOLLOWUP_ITEM_NOT_A_TITLE = "FOLLOWUP_ITEM_NOT_A_TITLE"

#: Operator warnings (settle failures, usage over the reservation) go to this logger.
log = logging.getLogger("guardlex.runner")

#: The pack message a reader sees when the model could not be reached. The messages
#: schema has no key of its own for it yet; "the answer was stopped" is the closest
#: fixed text, and never claims the site lacks the answer or that it was cut short.
MODEL_ERROR_MESSAGE = "gate_stop"

#: Overview topic -> the record kinds that answer it (see docs/corpus.md).
TOPIC_KINDS: dict[str, tuple[str, ...]] = {
    "career": ("position", "education"),
    "projects": ("project",),
    "research": ("publication", "talk"),
    "publications": ("publication", "talk"),
    "education": ("education",),
    "skills": ("service", "project"),
    "services": ("service",),
}


@dataclass(frozen=True)
class Source:
    """A numbered source handed to the model: ``[n]`` in its answer points here."""

    n: int
    ref: str
    text: str


@dataclass(frozen=True)
class Answer:
    """What the reader saw and why. ``code`` is the outcome; ``trace`` the reason codes."""

    question: str
    text: str
    code: str
    trace: tuple[str, ...]
    locale: str
    route: str
    category: str | None = None
    rule_id: str | None = None
    topic: str | None = None
    sources: tuple[Source, ...] = ()
    retrieval: Retrieval | None = None
    followup: FollowUp | None = None
    cost_tokens: int | None = None
    model: str | None = None
    embedder: str | None = None
    #: For the operator, never the reader: why the model or the ledger failed.
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        d: dict[str, Any] = {
            "question": self.question,
            "text": self.text,
            "code": self.code,
            "trace": list(self.trace),
            "locale": self.locale,
            "route": self.route,
            "category": self.category,
            "rule_id": self.rule_id,
            "topic": self.topic,
            "sources": [asdict(s) for s in self.sources],
            "cost_tokens": self.cost_tokens,
            "model": self.model,
            "embedder": self.embedder,
            "followup": asdict(self.followup) if self.followup else None,
            "error": self.error,
        }
        if self.retrieval is not None:
            r = self.retrieval
            d["retrieval"] = {
                "best": round(r.best, 4),
                "threshold": r.threshold,
                "passed": r.passed,
                "keyword_only": r.keyword_only,
                "locale": r.locale,
                "searched": r.searched,
                "significant": list(r.significant),
                "hits": [
                    {
                        "chunk": h.chunk.id,
                        "cosine": round(h.cosine, 4),
                        "coverage": round(h.coverage, 4),
                        "rrf": round(h.rrf, 5),
                    }
                    for h in r.hits
                ],
            }
        return d


def _date_range(r: Record) -> str:
    if r.current:
        return f"{r.start or ''} –".strip()
    if r.end and r.end != r.start:
        return f"{r.start}–{r.end}" if r.start else r.end
    return r.start or ""


class Runner:
    """Plugs the packs, the store, a model and the sentence gate together.

    ``embedder`` and ``model`` are factories (or names): nothing is created until a
    question actually needs it.
    """

    def __init__(
        self,
        store: Store,
        packs: _engine.PackView,
        *,
        embedder: str | Callable[[], Embedder] = DEFAULT_EMBEDDER,
        model: Callable[[], Model] | None = None,
        ledger: BudgetLedger | None = None,
        rate_limiter: RateLimiter | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        top_k: int = DEFAULT_TOP_K,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        gate: GateFactory | None = None,
    ) -> None:
        self.store = store
        self._gate_factory: GateFactory = gate or _engine.GateAdapter
        self.packs = packs
        self._embedder_spec = embedder
        self._model_factory: Callable[[], Model] = model or self._scripted
        self._model: Model | None = None
        self.ledger = (
            ledger if ledger is not None else BudgetLedger(":memory:", DEFAULT_MONTHLY_CAP)
        )
        self.rate_limiter = rate_limiter
        self.threshold = threshold
        self.top_k = top_k
        self.max_output_tokens = max_output_tokens
        self._retriever: Retriever | None = None

    # ------------------------------------------------------------ lazy parts
    def _scripted(self) -> Model:
        """The default model: scripted, placing markers where the gate splits sentences."""
        return ScriptedModel(splitter=_engine.sentence_splitter(self.packs))

    def _make_embedder(self) -> Embedder:
        spec = self._embedder_spec
        if callable(spec):
            emb = spec()
        else:
            emb = make_embedder(spec, _engine.keywords, self.packs.all_stopwords)
        built = self.store.embedder_name
        if built is not None and built != emb.name:
            raise StoreError(
                f"the store was built with embedder {built!r}, not {emb.name!r}: "
                f"choose --embedder {built} or re-index"
            )
        return emb

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(
                self.store,
                self._make_embedder,
                _engine.keywords,
                self.packs.all_stopwords,
                _engine.has_han,
                threshold=self.threshold,
                top_k=self.top_k,
            )
        return self._retriever

    @property
    def model(self) -> Model:
        if self._model is None:
            self._model = self._model_factory()
        return self._model

    @property
    def embedder_created(self) -> bool:
        return self._retriever is not None and self._retriever._embedder is not None

    @property
    def model_created(self) -> bool:
        return self._model is not None

    # ------------------------------------------------------------ public
    def warm_up(self, *, rules: bool = True) -> None:
        """Pay now what the first questions would otherwise pay: for servers and benchmarks.

        The rules engine compiles each rule's pattern the first time a question's anchors
        make it a candidate; a large rule takes 0.1-1 s to compile, so without this the
        first question that touches it is that much slower (and the allocation wakes the
        full garbage collector). ``rules=True`` compiles every rule of every locale
        (tens of seconds of CPU with the shipped packs); the embedder, the model, the
        gate's modules and the vector matrix are loaded too. A one-shot command line
        should not call this: it would compile thousands of rules to answer one question.
        """
        compile_all = getattr(self.packs.packs, "compile_all", None)
        if rules and callable(compile_all):
            compile_all()
        self.retriever.search("warm up", self.packs.locales[0] if self.packs.locales else None)
        _ = self.model
        self._gate_factory(
            [], self.packs, self.packs.locales[0] if self.packs.locales else "en", lambda: None
        )

    def ask(
        self,
        question: str,
        *,
        previous: str | None = None,
        previous_answer: str | None = None,
        client: str | None = None,
        locale: str | None = None,
    ) -> Answer:
        """Answer one question (the streamed pieces joined)."""
        answer: Answer | None = None
        for item in self.stream(
            question,
            previous=previous,
            previous_answer=previous_answer,
            client=client,
            locale=locale,
        ):
            if isinstance(item, Answer):
                answer = item
        assert answer is not None
        return answer

    async def aask(self, question: str, **kwargs: Any) -> Answer:
        """The async :meth:`ask` (``guardlex.runner.aio``): same arguments, same answer."""
        from guardlex.runner.aio import aask

        return await aask(self, question, **kwargs)

    def astream(self, question: str, **kwargs: Any) -> AsyncIterator[str | Answer]:
        """The async :meth:`stream`: closing it (or cancelling its task) closes the model's
        stream; the call's cost is recorded either way (``guardlex.runner.aio``)."""
        from guardlex.runner.aio import astream

        return astream(self, question, **kwargs)

    def stream(
        self,
        question: str,
        *,
        previous: str | None = None,
        previous_answer: str | None = None,
        client: str | None = None,
        locale: str | None = None,
    ) -> Iterator[str | Answer]:
        """Yield the text pieces a reader sees, as they are released, then the Answer.

        ``locale`` is the reader's language when the page knows it; otherwise it is the
        locale of the rule that matched, or the detected language of the question.
        ``client`` is the rate-limit key (the address the edge proxy saw).
        """
        if locale is not None and locale not in self.packs.locales:
            raise UnknownLocaleError(
                f"unknown reader locale {locale!r}; loaded: {', '.join(self.packs.locales)}"
            )
        if not question.strip():
            raise EmptyQuestionError("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise InputTooLargeError(
                f"question of {len(question)} characters exceeds {MAX_QUESTION_CHARS}"
            )
        for name, value, limit in (
            ("previous question", previous, MAX_QUESTION_CHARS),
            ("previous answer", previous_answer, MAX_PREVIOUS_ANSWER_CHARS),
        ):
            if value is not None and len(value) > limit:
                raise InputTooLargeError(f"{name} of {len(value)} characters exceeds {limit}")
        trace: list[str] = []
        base: dict[str, Any] = {"question": question}
        # Route exactly what the model will see: tag characters decoded to the text they
        # spell, other invisible characters dropped. From here on the question, its
        # context, the routing, the retrieval and the prompt all use this text.
        question = visible_text(question)
        if not question.strip():
            raise EmptyQuestionError("the question is empty (nothing visible)")
        previous = visible_text(previous) if previous is not None else None
        previous_answer = visible_text(previous_answer) if previous_answer is not None else None

        if self.rate_limiter is not None and client is not None:
            rd = self.rate_limiter.hit(client)
            if rd.code == "LIMITED":
                loc = locale or self._locale_of(question)
                text = self.packs.message(loc, "rate_limited")
                yield text
                yield Answer(
                    text=text,
                    code=RATE_LIMITED,
                    trace=(f"{RATE_LIMITED}:{rd.window}",),
                    locale=loc,
                    route="none",
                    **base,
                )
                return
            if rd.code == "UNAVAILABLE":
                trace.append(RATE_LIMIT_UNAVAILABLE)

        route = self.packs.route(question, previous=previous)
        if route.kind == "refuse":
            loc = locale or route.locale or self._locale_of(question)
            text = self.packs.message(loc, "refusal")
            trace.append(f"{REFUSED}:{route.category}")
            yield text
            yield Answer(
                text=text,
                code=REFUSED,
                trace=tuple(trace),
                locale=loc,
                route="refuse",
                category=route.category,
                rule_id=route.rule_id,
                **base,
            )
            return

        loc = locale or route.locale or self._locale_of(question)
        if route.kind == "overview":
            trace.append(OVERVIEW)
            records = self._overview_records(route.topic)
            sources = tuple(
                Source(i, r.id, self._record_text(r, loc)) for i, r in enumerate(records, start=1)
            )
            if not sources:
                # A site without records: a brief overview of what it has (its documents'
                # titles, gated like any answer), or the fixed text when it has nothing.
                sources = self._document_overview(loc)
                trace.append(OVERVIEW_DOCUMENTS if sources else OVERVIEW_EMPTY)
            if not sources:
                trace.append(BELOW_THRESHOLD)
                text = self.packs.message(loc, "below_threshold")
                yield text
                yield Answer(
                    text=text,
                    code=BELOW_THRESHOLD,
                    trace=tuple(trace),
                    locale=loc,
                    route="overview",
                    topic=route.topic,
                    rule_id=route.rule_id,
                    **base,
                )
                return
            yield from self._generate(
                question,
                sources,
                loc,
                "overview",
                trace,
                dict(base, route="overview", topic=route.topic, rule_id=route.rule_id),
                OVERVIEW,
            )
            return

        followup: FollowUp | None = None
        texts = [question]
        titles: list[str] = []
        if previous or previous_answer:
            titles = self.store.titles(loc) + [r.title_in(loc) for r in self.store.records()]
            followup = resolve(
                question, previous, previous_answer, self.packs.ordinals(loc), titles
            )
            trace.append(f"FOLLOWUP:{followup.code}")
            if followup.context:
                texts.append(f"{question} {followup.context}")
            if followup.item:
                # "Tell me more about the second one" says only which item is meant: its
                # significant words are the ones the site itself gives that item.
                texts.append(followup.item)
        retrieval = self.retriever.search(self.query_for(texts, loc), loc)
        if retrieval.keyword_only:
            trace.append(KEYWORD_FALLBACK)
        extras: dict[str, Any] = dict(
            base,
            route="retrieve",
            retrieval=retrieval,
            followup=followup,
            embedder=retrieval.embedder,
        )
        if not retrieval.passed:
            trace.append(BELOW_THRESHOLD)
            text = self.packs.message(loc, "below_threshold")
            yield text
            yield Answer(text=text, code=BELOW_THRESHOLD, trace=tuple(trace), locale=loc, **extras)
            return
        sources = tuple(
            Source(i, h.chunk.id, h.chunk.text) for i, h in enumerate(retrieval.hits, start=1)
        )
        # Nothing unrouted reaches the prompt. The previous answer is whatever the caller
        # passed, so a resolved item is named to the model only by the site's own title
        # it contains, and the question with that title is routed again: refusal wins.
        prompt_q = question
        if followup is not None and followup.item:
            title = site_title(followup.item, titles)
            if title is None:
                trace.append(FOLLOWUP_ITEM_NOT_A_TITLE)
            else:
                prompt_q = f"{question} (the reader means: {title})"
                again = self.packs.route(prompt_q)
                if again.kind == "refuse":
                    text = self.packs.message(loc, "refusal")
                    trace.append(f"{REFUSED}:{again.category}")
                    yield text
                    yield Answer(
                        text=text,
                        code=REFUSED,
                        trace=tuple(trace),
                        locale=loc,
                        route="refuse",
                        category=again.category,
                        rule_id=again.rule_id,
                        followup=followup,
                        **base,
                    )
                    return
        yield from self._generate(prompt_q, sources, loc, "retrieve", trace, extras, ANSWERED)

    # ------------------------------------------------------------ steps
    def _locale_of(self, text: str) -> str:
        try:
            return self.packs.detect_locale(text)
        except Exception:  # detection is a convenience; never fail a turn on it
            return "en"

    def query_for(self, texts: Sequence[str], locale: str) -> Query:
        """The owner's name orders results but never counts for the threshold.

        A name makes any question look like the CV, so the threshold sees the question
        with the owner's names taken out, while the question as asked, and with the name
        appended when it refers to the owner, add rankings for the order.
        """
        names = self.store.owner_names()
        stripped = tuple(self._strip_names(t, names) for t in texts)
        # The question as asked ranks too, when taking the names out changed it (an
        # identical ranking would add nothing to the order).
        ordering = [
            t
            for t, s in zip(texts, stripped, strict=True)
            if " ".join(_engine.normalise(t).split()) != s
        ]
        if names and self._mentions_subject(texts[0], locale, names):
            main = (self.store.owner_names(locale) or names)[0]
            ordering += [f"{t} {main}" for t in texts]
        return Query(stripped, tuple(ordering))

    def _strip_names(self, text: str, names: Sequence[str]) -> str:
        norm = _engine.normalise(text)
        for name in sorted({_engine.normalise(n) for n in names}, key=len, reverse=True):
            if not name:
                continue
            pat = (
                regex.escape(name)
                if _engine.has_han(name)
                else rf"(?<!\w){regex.escape(name)}(?!\w)"
            )
            norm = regex.sub(pat, " ", norm, timeout=REGEX_TIMEOUT)
        return " ".join(norm.split())

    def _mentions_subject(self, question: str, locale: str, names: Sequence[str]) -> bool:
        norm = _engine.normalise(question)
        words = [_engine.normalise(n) for n in names] + list(self.packs.pronouns(locale))
        for w in words:
            if not w:
                continue
            pat = regex.escape(w) if _engine.has_han(w) else rf"(?<!\w){regex.escape(w)}(?!\w)"
            if regex.search(pat, norm, timeout=REGEX_TIMEOUT):
                return True
        return False

    def _overview_records(self, topic: str | None) -> list[Record]:
        records = self.store.records()
        if topic == "now":
            chosen = [r for r in records if r.current]
        elif topic in TOPIC_KINDS:
            chosen = [r for r in records if r.kind in TOPIC_KINDS[topic]]
        else:
            chosen = list(records)
        if not chosen:
            chosen = list(records)
        chosen.sort(key=lambda r: (r.sort_key(), r.id))
        return chosen[:MAX_OVERVIEW_RECORDS]

    def _document_overview(self, locale: str) -> tuple[Source, ...]:
        """The site's document titles (the reader's locale's, else all) as sources."""
        titles = self.store.titles(locale)
        if not titles:
            titles = sorted({t for loc in self.store.locales() for t in self.store.titles(loc)})
        titles = [t for t in titles if t.strip()][:MAX_OVERVIEW_RECORDS]
        end = "。" if locale == "zh" else "."
        return tuple(
            Source(i, f"title:{t}", t if t.rstrip().endswith((".", "。", "!", "?")) else t + end)
            for i, t in enumerate(titles, start=1)
        )

    @staticmethod
    def _record_text(r: Record, locale: str) -> str:
        """One record as a source: title, dates at the site's precision, summary."""
        title = r.title_in(locale)
        dates = _date_range(r)
        head = f"{title} ({dates})" if dates else title
        summary = r.summary_in(locale)
        if summary:
            return f"{head}: {summary}"
        return head + ("。" if locale == "zh" else ".")

    def _generate(
        self,
        question: str,
        sources: tuple[Source, ...],
        loc: str,
        kind: str,
        trace: list[str],
        extras: dict[str, Any],
        ok_code: str,
    ) -> Iterator[str | Answer]:
        """Budget guard, model, sentence gate; ``question`` is what the model is asked."""
        prompt = Prompt(question, tuple(s.text for s in sources), loc, self.max_output_tokens, kind)
        decision = self.ledger.reserve(prompt.render(), self.max_output_tokens)
        if not decision.allowed:
            refused = self._budget_refusal(decision, trace, loc, sources, extras)
            yield refused.text
            yield refused
            return
        assert decision.reservation is not None
        reservation = decision.reservation
        pieces: list[str] = []
        code = ok_code
        stream: ModelStream | None = None
        model: Model | None = None
        state = new_stream_state()
        cost = reservation.amount
        # Everything from building the model to the last piece is inside this try: the
        # reservation is settled whatever happens (a model that raises anything, a gate
        # that fails, a reader who goes away), and the settlement itself cannot raise.
        try:
            try:
                try:
                    model = self.model
                    stream = model.stream(prompt)
                except ModelError:
                    raise
                except Exception as exc:  # a third-party model's bug is a model error
                    raise ModelError(
                        f"the model failed to start: {type(exc).__name__}: {exc}"
                    ) from exc
                gate = self._gate_factory([s.text for s in sources], self.packs, loc, stream.cancel)
                capped = _capped(stream, self.max_output_tokens, state)
                for ev in gate.stream(_guarded(stream, capped, state)):
                    text, code = self._gate_event(ev, pieces, trace, loc, code)
                    if ev.kind == "stop":
                        stream.cancel()
                    if text is not None:
                        yield text
                    if ev.kind == "stop":
                        break
            except ModelError as exc:
                state["error"] = str(exc)
                if isinstance(exc, ModelUnavailableError):
                    state["unavailable"] = exc
        finally:
            cost = self._settle(reservation, prompt, stream, state, trace)
        text, answer = self._outcome(state, pieces, code, trace, loc, sources, cost, model, extras)
        if text is not None:
            yield text
        yield answer

    # The steps of a model call that the synchronous and the async turn share
    # (``guardlex.runner.aio``): what a budget refusal says, what each gate event
    # adds, and how the turn ends.
    def _budget_refusal(
        self,
        decision: Any,
        trace: list[str],
        loc: str,
        sources: tuple[Source, ...],
        extras: dict[str, Any],
    ) -> Answer:
        error = None
        if decision.code == "UNAVAILABLE":
            trace.append(LEDGER_UNAVAILABLE)
            error = f"budget ledger unavailable: {self.ledger.error or 'unknown error'}"
        trace.append(BUDGET_EXHAUSTED)
        text = self.packs.message(loc, "budget_exhausted")
        return Answer(
            text=text,
            code=BUDGET_EXHAUSTED,
            trace=tuple(trace),
            locale=loc,
            sources=sources,
            error=error,
            **extras,
        )

    def _gate_event(
        self, ev: Any, pieces: list[str], trace: list[str], loc: str, code: str
    ) -> tuple[str | None, str]:
        """One gate event: the text the reader gets now (None: nothing) and the code.

        A released sentence is shown as is; a stop or a truncation shows the fixed text
        (after a blank line when sentences came before). The caller cancels the model's
        stream and stops reading on a ``stop``.
        """
        if ev.kind == "released":
            pieces.append(ev.text)
            return ev.text, code
        if ev.kind == "stop":
            trace.append(f"{GATE_STOP}:{ev.reason}")
            msg = ev.message or self.packs.message(loc, "gate_stop")
        elif ev.kind == "truncated":
            trace.append(TRUNCATED)
            msg = ev.message or self.packs.message(loc, "truncated")
        else:
            return None, code
        msg = ("\n\n" if pieces else "") + msg
        pieces.append(msg)
        return msg, GATE_STOP if ev.kind == "stop" else TRUNCATED

    def _outcome(
        self,
        state: dict[str, Any],
        pieces: list[str],
        code: str,
        trace: list[str],
        loc: str,
        sources: tuple[Source, ...],
        cost: int,
        model: Model | None,
        extras: dict[str, Any],
    ) -> tuple[str | None, Answer]:
        """How a model call ends: a fixed text still to show (None: none), the Answer."""
        text: str | None = None
        if state["capped"]:
            trace.append(OUTPUT_CAPPED)
        if state["no_answer"]:
            trace.append(MODEL_NO_ANSWER)
            text = self.packs.message(loc, "below_threshold")
            pieces = [text]
            code = MODEL_NO_ANSWER
        elif state["error"] is not None:
            trace.append(MODEL_ERROR)
            if not any(p.strip() for p in pieces):
                # Never the truncation notice: nothing was cut, nothing came.
                text = self.packs.message(loc, MODEL_ERROR_MESSAGE)
                pieces = [text]
            code = MODEL_ERROR
        if code == ANSWERED:
            trace.append(ANSWERED)
        return text, Answer(
            text="".join(pieces),
            code=code,
            trace=tuple(trace),
            locale=loc,
            sources=sources,
            cost_tokens=cost,
            model=getattr(model, "name", None),
            error=state["error"] or state.get("settle_error"),
            **extras,
        )

    def _settle(
        self,
        reservation: Any,
        prompt: Prompt,
        stream: ModelStream | None,
        state: dict[str, Any],
        trace: list[str],
    ) -> int:
        """Record the call's cost (at most the reservation) and release it. Never raises.

        The cost is the provider's usage when its final event arrived, else the prompt's
        bytes plus the output bytes received; a call the provider cannot have billed
        costs 0, a timeout after sending the prompt's bytes. Whatever the stream reports,
        at most the reservation is recorded: more is flagged (``USAGE_OVER_RESERVATION``),
        and a cost that cannot be read records the whole reservation.
        """
        cost = reservation.amount
        try:
            prompt_bytes = utf8_tokens(prompt.render())
            output_bytes = int(state["output_bytes"])
            usage = stream.usage if stream is not None else None
            unavailable: ModelUnavailableError | None = state["unavailable"]
            if usage is not None:
                p = valid_tokens(getattr(usage, "prompt_tokens", None))
                c = valid_tokens(getattr(usage, "completion_tokens", None))
                if p is None or c is None:
                    trace.append(USAGE_INVALID)
                    log.warning(
                        "model %s reported usage that is not token counts (%r); "
                        "recorded the whole reservation of %d tokens",
                        getattr(self._model, "name", "?"),
                        usage,
                        reservation.amount,
                    )
                    cost = reservation.amount
                else:
                    cost = p + c
            elif unavailable is not None and not output_bytes:
                # Nothing streamed. Refused, unknown host, HTTP error: the provider
                # accepted nothing and bills nothing. A timeout after the request was
                # sent may have been billed for the prompt: count it, never the output.
                cost = prompt_bytes if unavailable.billable else 0
            else:
                cost = prompt_bytes + output_bytes
        except Exception as exc:  # a stream whose bookkeeping fails: charge the bound
            log.warning("could not read the call's cost (%s); recording the reservation", exc)
            cost = reservation.amount
        if cost > reservation.amount:
            trace.append(USAGE_OVER_RESERVATION)
            log.warning(
                "model reported %d tokens for a call reserved at %d; recorded %d "
                "(the reservation), %d over: check the provider's max_tokens handling",
                cost,
                reservation.amount,
                reservation.amount,
                cost - reservation.amount,
            )
            cost = reservation.amount
        if stream is not None:
            try:
                stream.cancel()  # a no-op after a full stream; closes an abandoned one
            except Exception as exc:
                log.warning("cancelling the model stream failed: %s", exc)
        try:
            settled = self.ledger.settle(reservation, cost)
        except Exception as exc:  # a ledger implementation that raises
            self.ledger.error = f"{type(exc).__name__}: {exc}"
            settled = False
        if not settled:
            trace.append(SETTLE_FAILED)
            msg = (
                f"budget ledger could not record a call of {cost} tokens (reservation "
                f"{reservation.id} of {reservation.amount} stays held): "
                f"{self.ledger.error or 'unknown error'}"
            )
            state["settle_error"] = msg
            log.warning("%s", msg)
        return cost


def new_stream_state() -> dict[str, Any]:
    """The bookkeeping of one model call (errors, NO_ANSWER, the cap, bytes received)."""
    return {
        "error": None,
        "no_answer": False,
        "unavailable": None,
        "capped": False,
        "output_bytes": 0,
    }


def cap_piece(piece: object, limit: int, state: dict[str, Any]) -> tuple[str, bool]:
    """The part of ``piece`` within ``limit`` output bytes, and whether the bound was
    reached (then the stream must be cancelled). A piece that is not text is a model
    error."""
    if not isinstance(piece, str):
        raise ModelError(f"the model stream produced a {type(piece).__name__}, not text")
    n = utf8_tokens(piece)
    room = limit - state["output_bytes"]
    if n > room:
        head = piece.encode("utf-8", "surrogatepass")[: max(0, room)]
        part = head.decode("utf-8", "ignore")
        state["output_bytes"] += utf8_tokens(part)
        state["capped"] = True
        return part, True
    state["output_bytes"] += n
    return piece, False


class NoAnswerCheck:
    """Holds the model's first characters until they cannot be NO_ANSWER any more."""

    def __init__(self) -> None:
        self.buf = ""
        self.deciding = True
        self.no_answer = False

    def feed(self, piece: str) -> str:
        """What to pass on now ("" while deciding, and for a NO_ANSWER)."""
        if not self.deciding:
            return piece
        self.buf += piece
        head = self.buf.lstrip()
        if len(head) < len(NO_ANSWER_TOKEN) and NO_ANSWER_TOKEN.startswith(head):
            return ""
        self.deciding = False
        if head.startswith(NO_ANSWER_TOKEN):
            self.no_answer = True
            return ""
        return self.buf

    def finish(self) -> str:
        """What was still held when the stream ended."""
        return self.buf if self.deciding else ""


def model_failed(exc: BaseException, state: dict[str, Any]) -> None:
    """Record a model's exception in the call's state (never raised to the reader)."""
    if isinstance(exc, ModelError):
        state["error"] = str(exc)
        if isinstance(exc, ModelUnavailableError):
            state["unavailable"] = exc
    else:
        state["error"] = f"the model stream failed: {type(exc).__name__}: {exc}"


def _capped(stream: ModelStream, limit: int, state: dict[str, Any]) -> Iterator[str]:
    """The model's pieces, cut at ``limit`` output tokens counted as UTF-8 bytes.

    The budget guard reserved the prompt's bytes plus ``limit``; a provider that ignores
    ``max_tokens`` must not make the call cost more, so the stream is cut (on a
    character boundary) and cancelled when the output reaches the bound. A piece that is
    not text is a model error.
    """
    for piece in stream:
        part, full = cap_piece(piece, limit, state)
        if full:
            stream.cancel()
            if part:
                yield part
            return
        yield part


def _guarded(stream: ModelStream, pieces: Iterator[str], state: dict[str, Any]) -> Iterator[str]:
    """Model pieces for the gate: a model error ends the stream; NO_ANSWER is caught.

    The model is told to reply with the single token NO_ANSWER when its sources do not
    cover the question; the reader then gets the fixed below-threshold text. So the
    model's judgement can only add a refusal, never turn one into an answer. Any other
    exception from a model (a third-party client's bug) is a model error too.
    """
    check = NoAnswerCheck()
    try:
        for piece in pieces:
            out = check.feed(piece)
            if check.no_answer:
                state["no_answer"] = True
                stream.cancel()
                return
            if out:
                yield out
        rest = check.finish()
        if rest:
            yield rest
    except Exception as exc:
        model_failed(exc, state)
