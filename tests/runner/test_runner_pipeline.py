"""The pipeline: each path, its reason codes, and what it must never do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guardlex.errors import InputTooLargeError
from guardlex.runner.build import build_store
from guardlex.runner.costs import BudgetLedger, RateLimiter
from guardlex.runner.embeddings import HashingEmbedder
from guardlex.runner.errors import EmptyQuestionError, ModelError, StoreError
from guardlex.runner.models import (
    CitesMissingSource,
    InventsNumber,
    ScriptedModel,
    SpeaksFirstPerson,
)
from guardlex.runner.pipeline import Answer, Runner

from . import conftest
from .conftest import MESSAGES

_PACKS = conftest._engine.PackView(conftest.FakePacks())
_PROPERTY_RUNNER = Runner(build_store(conftest.TINY_SITE, ":memory:", packs=_PACKS), _PACKS)

GOOD_Q = "How many test answers did the sentence gate stop?"


def _forbidden():
    raise AssertionError("must not be created for this question")


def test_refusal_creates_no_embedder_and_no_model(tiny_store, fake_packs) -> None:
    r = Runner(tiny_store, fake_packs, embedder=_forbidden, model=_forbidden)
    a = r.ask("What is the price of an audit?")
    assert a.code == "REFUSED" and a.trace == ("REFUSED:engagement",)
    assert a.text == "REFUSAL-TEXT-en"
    assert a.category == "engagement" and a.rule_id == "engagement-price"
    assert not r.embedder_created and not r.model_created
    assert a.cost_tokens is None


def test_follow_up_is_refused_together_with_previous(tiny_store, fake_packs) -> None:
    r = Runner(tiny_store, fake_packs, embedder=_forbidden, model=_forbidden)
    a = r.ask("and on weekends?", previous="What is your price?")
    assert a.code == "REFUSED"


def test_overview_lists_records_newest_first_in_readers_language(tiny_store, fake_packs) -> None:
    r = Runner(tiny_store, fake_packs, embedder=_forbidden)
    a = r.ask("¿Cómo fue su carrera?")
    assert a.code == "OVERVIEW" and a.trace == ("OVERVIEW",)
    assert a.locale == "es" and a.topic == "career"
    refs = [s.ref for s in a.sources]
    assert refs == ["pos-indep", "pos-quill", "edu-msc"]  # current first, then newest
    assert "Consultora independiente (2021-03 –)" in a.sources[0].text  # translated
    assert a.sources[1].text.startswith("Lead search engineer")  # no es: falls back to en
    assert a.text.index("Consultora") < a.text.index("Quillmark") < a.text.index("Máster")
    assert "[" not in a.text  # markers verified, then stripped
    assert not r.embedder_created  # records are chosen by rule, never by similarity


def test_overview_now_keeps_current_records_only(runner) -> None:
    a = runner.ask("What has she been doing lately?")
    assert [s.ref for s in a.sources] == ["pos-indep"]


def test_below_threshold_gives_fixed_text_and_no_model_call(tiny_store, fake_packs) -> None:
    r = Runner(tiny_store, fake_packs, model=_forbidden)
    a = r.ask("What will the weather be like in Paris tomorrow?")
    assert a.code == "BELOW_THRESHOLD" and a.trace == ("BELOW_THRESHOLD",)
    assert a.text == "BELOW-TEXT-en"
    assert a.retrieval is not None and a.retrieval.best < 0.35
    assert not r.model_created


def test_answer_is_gated_and_cost_recorded(runner) -> None:
    pieces = [p for p in runner.stream(GOOD_Q)]
    answer = pieces[-1]
    assert isinstance(answer, Answer)
    text = "".join(p for p in pieces[:-1] if isinstance(p, str))
    assert answer.code == "ANSWERED" and answer.trace == ("ANSWERED",)
    assert text == answer.text and "27 of 500" in text and "[1]" not in text
    assert answer.sources[0].ref == "en/gates/1"
    spent, reserved = runner.ledger.usage()
    assert reserved == 0 and spent == answer.cost_tokens > 0


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (InventsNumber, "unsupported_value"),
        (CitesMissingSource, "marker_out_of_range"),
        (SpeaksFirstPerson, "first_person"),
    ],
)
def test_misbehaving_model_is_stopped_and_cancelled(tiny_store, fake_packs, model, reason) -> None:
    made: list[ScriptedModel] = []

    def factory():
        m = model(piece=3)
        made.append(m)
        return m

    r = Runner(tiny_store, fake_packs, model=factory)
    a = r.ask(GOOD_Q)
    assert a.code == "GATE_STOP"
    assert a.trace == (f"GATE_STOP:{reason}",)
    first = "Dana Reyes designed a sentence gate"
    assert a.text.startswith(first)  # the good sentence before it was released
    assert "7919" not in a.text and "I think" not in a.text
    assert a.text.endswith("GATE-STOP-TEXT-en")
    # The stream was cut short and its cost still recorded: the prompt plus what was
    # received, never the full answer.
    spent, reserved = r.ledger.usage()
    assert reserved == 0 and spent == a.cost_tokens
    full = len(made[0].compose(_prompt_of(r, a)).encode("utf-8"))
    received_bytes = a.cost_tokens - _prompt_bytes(r, a)
    assert 0 < received_bytes < full


def _prompt_of(r: Runner, a: Answer):
    from guardlex.runner.models import Prompt

    return Prompt(
        a.question, tuple(s.text for s in a.sources), a.locale, r.max_output_tokens, "retrieve"
    )


def _prompt_bytes(r: Runner, a: Answer) -> int:
    return len(_prompt_of(r, a).render().encode("utf-8"))


def test_output_limit_mid_sentence_gives_truncation_notice(tiny_store, fake_packs) -> None:
    r = Runner(tiny_store, fake_packs, max_output_tokens=60)
    a = r.ask(GOOD_Q)
    assert a.code == "TRUNCATED" and a.trace == ("TRUNCATED",)
    assert a.text.endswith("TRUNCATED-TEXT-en")


def test_budget_exhausted_means_no_model_call(tiny_store, fake_packs) -> None:
    r = Runner(
        tiny_store, fake_packs, model=_forbidden, ledger=BudgetLedger(":memory:", monthly_cap=500)
    )
    a = r.ask(GOOD_Q)
    assert a.code == "BUDGET_EXHAUSTED" and a.trace == ("BUDGET_EXHAUSTED",)
    assert a.text == "BUDGET-TEXT-en" and not r.model_created


def test_unreachable_ledger_refuses(tiny_store, fake_packs, tmp_path: Path) -> None:
    r = Runner(
        tiny_store, fake_packs, model=_forbidden, ledger=BudgetLedger(tmp_path, monthly_cap=10**9)
    )
    a = r.ask(GOOD_Q)
    assert a.trace == ("LEDGER_UNAVAILABLE", "BUDGET_EXHAUSTED")


def test_rate_limited_before_anything_else(tiny_store, fake_packs, tmp_path: Path) -> None:
    limiter = RateLimiter(tmp_path / "r.sqlite", limits=(("minute", 60, 1),))
    r = Runner(tiny_store, fake_packs, rate_limiter=limiter)
    assert r.ask(GOOD_Q, client="9.9.9.9").code == "ANSWERED"
    a = r.ask(GOOD_Q, client="9.9.9.9")
    assert a.code == "RATE_LIMITED" and a.trace == ("RATE_LIMITED:minute",)
    assert a.text == "RATE-TEXT-en"


def test_embedder_failure_keeps_answering_from_keywords(tiny_store, fake_packs) -> None:
    class Broken:
        name = "hashing-bow-256"
        dim = 256

        def embed(self, texts):
            raise TimeoutError("embedding API timed out")

    r = Runner(tiny_store, fake_packs, embedder=Broken)
    a = r.ask(GOOD_Q)
    assert a.trace == ("KEYWORD_FALLBACK", "ANSWERED")
    b = r.ask("What will the weather be like in Paris tomorrow?")
    assert b.trace == ("KEYWORD_FALLBACK", "BELOW_THRESHOLD")


def test_model_error_is_reported_and_costed(tiny_store, fake_packs) -> None:
    class Failing(ScriptedModel):
        def stream(self, prompt):
            raise ModelError("endpoint unreachable")

    r = Runner(tiny_store, fake_packs, model=Failing)
    a = r.ask(GOOD_Q)
    assert a.code == "MODEL_ERROR" and "MODEL_ERROR" in a.trace
    assert "TRUNCATED" not in a.trace
    assert a.text == "GATE-STOP-TEXT-en"  # a fixed text, never the truncation notice
    assert a.error == "endpoint unreachable"
    assert r.ledger.usage()[1] == 0  # the reservation was released


def test_model_no_answer_token_becomes_fixed_refusal(tiny_store, fake_packs) -> None:
    class Declines(ScriptedModel):
        def compose(self, prompt):
            return "NO_ANSWER"

    r = Runner(tiny_store, fake_packs, model=lambda: Declines(piece=2))
    a = r.ask(GOOD_Q)
    assert a.code == "MODEL_NO_ANSWER" and a.text == "BELOW-TEXT-en"


def test_store_built_with_another_embedder_is_refused(tiny_store, fake_packs) -> None:
    def other():
        return HashingEmbedder(lambda t: t.split(), dim=64)

    r = Runner(tiny_store, fake_packs, embedder=other)
    a = r.ask(GOOD_Q)
    # The mismatch is an embedder failure: keywords alone, never wrong vectors.
    assert "KEYWORD_FALLBACK" in a.trace
    assert a.retrieval is not None and "hashing-bow-256" in (a.retrieval.error or "")
    with pytest.raises(StoreError):
        r._make_embedder()


def test_question_size_limit(runner) -> None:
    with pytest.raises(InputTooLargeError):
        runner.ask("x" * 5000)


def test_follow_up_ordinal_resolves_against_previous_list(runner) -> None:
    previous_answer = "1. Sentence gates\n2. Semantic caching\n3. Harbor audit"
    a = runner.ask(
        "tell me more about the second one",
        previous="Which articles?",
        previous_answer=previous_answer,
    )
    assert (
        a.followup is not None and a.followup.resolved and a.followup.item == ("Semantic caching")
    )
    assert "FOLLOWUP:RESOLVED" in a.trace
    assert a.code == "ANSWERED" and a.sources[0].ref == "en/cache/1"
    two = "1. Sentence gates\n2. Semantic caching"
    b = runner.ask("and the third one?", previous="Which articles?", previous_answer=two)
    assert b.followup is not None and b.followup.code == "OUT_OF_RANGE"
    assert b.followup.context == "1. Sentence gates 2. Semantic caching"


def test_answer_to_dict_is_json_ready(runner) -> None:
    import json

    d = runner.ask(GOOD_Q).to_dict()
    json.dumps(d)
    assert d["code"] == "ANSWERED" and d["retrieval"]["passed"] is True
    assert d["retrieval"]["hits"][0]["chunk"] == "en/gates/1"


def test_known_reader_locale_wins_over_detection(runner) -> None:
    a = runner.ask("What is the price of an audit?", locale="es")
    assert a.code == "REFUSED" and a.text == "REFUSAL-TEXT-es"
    b = runner.ask("semantic cache hit rate weeks", locale="zh")
    assert b.locale == "zh"
    from guardlex.errors import UnknownLocaleError

    with pytest.raises(UnknownLocaleError):
        runner.ask("hello", locale="xx")


FIXED = {f"{v}-{loc}" for v in MESSAGES.values() for loc in ("en", "es", "zh")}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_every_answer_is_fixed_text_or_gated_text(question: str) -> None:
    r = _PROPERTY_RUNNER
    if not question.strip():
        with pytest.raises(EmptyQuestionError):  # a user mistake, never a silent answer
            r.ask(question)
        return
    a = r.ask(question)
    assert a.code in {
        "REFUSED",
        "OVERVIEW",
        "BELOW_THRESHOLD",
        "ANSWERED",
        "GATE_STOP",
        "TRUNCATED",
        "MODEL_NO_ANSWER",
    }
    if a.code in ("REFUSED", "BELOW_THRESHOLD"):
        assert a.text in FIXED and a.cost_tokens is None
    else:
        assert not re.search(r"\[\d+\]", a.text)  # markers never reach the reader
    assert a.trace[-1].split(":")[0] == a.code


def test_reader_leaving_mid_stream_cancels_and_records_cost(tiny_store, fake_packs) -> None:
    made: list[ScriptedModel] = []

    def factory():
        m = ScriptedModel(piece=4)
        made.append(m)
        return m

    r = Runner(tiny_store, fake_packs, model=factory)
    gen = r.stream(GOOD_Q)
    first = next(gen)
    assert isinstance(first, str) and first
    gen.close()  # the browser tab was closed
    spent, reserved = r.ledger.usage()
    assert reserved == 0 and spent > 0  # what was generated is still paid for
