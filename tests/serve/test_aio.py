"""The async runner: same answers as the synchronous one, and an async model client that
keeps every turn inside its reservation and its deadline."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from guardlex.runner.aio import AsyncOpenAIChatModel, turn_events
from guardlex.runner.costs import BudgetLedger
from guardlex.runner.models import MISBEHAVING, OpenAIChatModel
from guardlex.runner.pipeline import Answer, Runner

from .conftest import ANSWERABLE, OFF_TOPIC, REFUSED_Q, FakeModelServer

QUESTIONS = [
    ANSWERABLE,
    REFUSED_Q,
    OFF_TOPIC,
    "Tell me about her career",
    "What has she done lately?",
    "¿Qué diseñó Dana con la compuerta de oraciones?",
    "What is the hit rate of the semantic cache?",
]


async def _collect(runner: Runner, q: str, **kw: Any) -> list[Any]:
    return [item async for item in runner.astream(q, **kw)]


@pytest.mark.parametrize("question", QUESTIONS)
def test_astream_yields_what_stream_yields(runner: Runner, question: str) -> None:
    sync = list(runner.stream(question))
    got = asyncio.run(_collect(runner, question))
    assert [p for p in got if isinstance(p, str)] == [p for p in sync if isinstance(p, str)]
    a, b = sync[-1], got[-1]
    assert isinstance(a, Answer) and isinstance(b, Answer)
    assert (b.text, b.code, b.trace, b.locale, b.route, b.rule_id, b.cost_tokens) == (
        a.text,
        a.code,
        a.trace,
        a.locale,
        a.route,
        a.rule_id,
        a.cost_tokens,
    )


@pytest.mark.parametrize("name", sorted(MISBEHAVING))
def test_misbehaving_models_are_stopped_the_same_way(serve_store, serve_packs, name: str) -> None:
    def make() -> Any:
        return MISBEHAVING[name]()

    runner = Runner(serve_store, serve_packs, model=make)
    sync = runner.ask(ANSWERABLE)
    got = asyncio.run(runner.aask(ANSWERABLE))
    assert (got.text, got.code, got.trace) == (sync.text, sync.code, sync.trace)


def test_followup_with_previous_answer_matches(runner: Runner) -> None:
    first = runner.ask("Tell me about her career")
    kw = {"previous": "Tell me about her career", "previous_answer": first.text}
    a = runner.ask("Tell me more about the second one", **kw)
    b = asyncio.run(runner.aask("Tell me more about the second one", **kw))
    assert (b.text, b.code, b.trace) == (a.text, a.code, a.trace)


def test_input_errors_raise_before_any_event(runner: Runner) -> None:
    from guardlex.errors import InputTooLargeError, UnknownLocaleError
    from guardlex.runner.errors import EmptyQuestionError

    for q, kw, exc in [
        ("  ", {}, EmptyQuestionError),
        ("x" * 5000, {}, InputTooLargeError),
        ("hello", {"locale": "xx"}, UnknownLocaleError),
    ]:
        with pytest.raises(exc):
            asyncio.run(runner.aask(q, **kw))


def test_refusal_events_carry_the_route(runner: Runner) -> None:
    async def go() -> list[Any]:
        return [ev async for ev in turn_events(runner, REFUSED_Q)]

    events = asyncio.run(go())
    assert [e.kind for e in events] == ["route", "refused", "answer"]
    assert events[0].route.rule_id == "engagement-price"
    assert events[-1].answer.category == "engagement"


def test_sentence_events_carry_their_markers(runner: Runner) -> None:
    async def go() -> list[Any]:
        return [ev async for ev in turn_events(runner, ANSWERABLE)]

    events = asyncio.run(go())
    kinds = [e.kind for e in events]
    assert kinds[:2] == ["route", "sources"] and kinds[-1] == "answer"
    sentences = [e for e in events if e.kind == "sentence"]
    assert sentences and all(e.markers for e in sentences)
    assert "[" not in "".join(e.text for e in sentences)
    n = len(events[1].sources)
    assert all(1 <= m <= n for e in sentences for m in e.markers)


# ---------------------------------------------------------------- async client


@pytest.fixture(params=["stdlib", "httpx"])
def http(request: pytest.FixtureRequest) -> str:
    """The async client's two transports: asyncio streams, and httpx."""
    return str(request.param)


def _openai_runner(store: Any, packs: Any, server: FakeModelServer, **kw: Any) -> Runner:
    deadline = kw.pop("deadline", 5.0)
    key = kw.pop("api_key", None)
    http = kw.pop("http", "stdlib")
    model = AsyncOpenAIChatModel(server.base_url, "fake", api_key=key, deadline=deadline, http=http)
    ledger = kw.pop("ledger", None) or BudgetLedger(":memory:", 10_000_000)
    return Runner(store, packs, model=lambda: model, ledger=ledger, **kw)


def test_async_client_answers_through_the_gate(
    serve_store, serve_packs, model_server, http
) -> None:
    runner = _openai_runner(serve_store, serve_packs, model_server, http=http)
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "ANSWERED", ans
    assert ans.cost_tokens == 70  # the provider's usage
    body = model_server.requests[-1]
    assert body["stream"] is True and body["max_tokens"] == runner.max_output_tokens
    assert runner.ledger.usage() == (70, 0)


def test_sync_and_async_clients_give_the_same_answer(
    serve_store, serve_packs, model_server, http
) -> None:
    sync_model = OpenAIChatModel(model_server.base_url, "fake")
    a = Runner(serve_store, serve_packs, model=lambda: sync_model).ask(ANSWERABLE)
    b = asyncio.run(
        _openai_runner(serve_store, serve_packs, model_server, http=http).aask(ANSWERABLE)
    )
    assert (a.text, a.code, a.trace, a.cost_tokens) == (b.text, b.code, b.trace, b.cost_tokens)


def test_gate_stop_keeps_released_sentences_and_closes_the_provider_stream(
    serve_store, serve_packs, model_server, http
) -> None:
    model_server.mode = "invent"
    model_server.delay = 0.3
    model_server.hold = 5.0
    runner = _openai_runner(serve_store, serve_packs, model_server, http=http)
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "GATE_STOP"
    assert ans.text.startswith("Dana Reyes designed") and "7919" not in ans.text
    # the provider was still sending the next sentence: it saw the connection close
    assert model_server.wait_for("disconnects", 1)
    spent, reserved = runner.ledger.usage()
    assert reserved == 0 and 0 < spent <= ans.cost_tokens


def test_reader_leaving_closes_the_provider_stream_and_records_the_cost(
    serve_store, serve_packs, model_server, http
) -> None:
    model_server.mode = "slow"
    model_server.delay = 0.2
    model_server.hold = 10.0
    runner = _openai_runner(serve_store, serve_packs, model_server, http=http)

    async def leave_after_first_sentence() -> None:
        stream = runner.astream(ANSWERABLE)
        async for item in stream:
            assert isinstance(item, str)
            break
        await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(leave_after_first_sentence())
    assert model_server.wait_for("disconnects", 1)
    spent, reserved = runner.ledger.usage()
    assert reserved == 0 and spent > 0  # the prompt and what was received


def test_cancelled_task_still_settles(serve_store, serve_packs, model_server, http) -> None:
    model_server.mode = "hang"
    runner = _openai_runner(serve_store, serve_packs, model_server, deadline=30.0, http=http)

    async def cancel_midway() -> None:
        task = asyncio.ensure_future(runner.aask(ANSWERABLE))
        while not model_server.requests:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if runner.ledger.usage()[1] == 0:
                break
            await asyncio.sleep(0.02)

    asyncio.run(cancel_midway())
    assert runner.ledger.usage()[1] == 0  # the reservation was released


@pytest.mark.parametrize("mode", ["hang", "drip"])
def test_a_stalled_model_never_passes_the_deadline(
    serve_store, serve_packs, model_server, http, mode: str
) -> None:
    model_server.mode = mode
    model_server.delay = 0.05
    runner = _openai_runner(serve_store, serve_packs, model_server, deadline=1.0, http=http)
    t0 = time.monotonic()
    ans = asyncio.run(runner.aask(ANSWERABLE))
    took = time.monotonic() - t0
    assert ans.code == "MODEL_ERROR" and "deadline" in (ans.error or "")
    assert took < 5.0  # the deadline (1 s) plus setup, never the server's 30 s
    assert runner.ledger.usage()[1] == 0


def test_garbage_is_a_model_error(serve_store, serve_packs, model_server, http) -> None:
    model_server.mode = "garbage"
    runner = _openai_runner(serve_store, serve_packs, model_server, http=http)
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "MODEL_ERROR" and "malformed" in (ans.error or "")
    assert ans.text == "GATE-STOP-TEXT-en"


def test_a_model_ignoring_max_tokens_is_cut_at_the_reservation(
    serve_store, serve_packs, model_server, http
) -> None:
    model_server.mode = "flood"
    runner = _openai_runner(
        serve_store, serve_packs, model_server, max_output_tokens=300, http=http
    )
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert "OUTPUT_CAPPED" in ans.trace
    spent, reserved = runner.ledger.usage()
    assert reserved == 0
    assert ans.cost_tokens is not None and spent == ans.cost_tokens
    prompt_bytes = ans.cost_tokens - 300
    assert prompt_bytes > 0  # cost = prompt + at most the output limit


def test_the_key_never_appears_in_errors(serve_store, serve_packs, model_server, http) -> None:
    model_server.mode = "echo_key"
    runner = _openai_runner(
        serve_store, serve_packs, model_server, api_key="sk-SECRET-123", http=http
    )
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "MODEL_ERROR"
    assert "401" in (ans.error or "") and "sk-SECRET-123" not in repr(ans)
    assert model_server.headers[-1]["Authorization"] == "Bearer sk-SECRET-123"


def test_redirects_are_not_followed(serve_store, serve_packs, model_server, http) -> None:
    model_server.mode = "redirect"
    runner = _openai_runner(serve_store, serve_packs, model_server, api_key="sk-x", http=http)
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "MODEL_ERROR" and "redirects are not followed" in (ans.error or "")
    assert len(model_server.requests) == 1


def test_unreachable_endpoint_costs_nothing(serve_store, serve_packs, http) -> None:
    from .conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    model = AsyncOpenAIChatModel(url, "fake", deadline=5, http=http)
    runner = Runner(serve_store, serve_packs, model=lambda: model)
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "MODEL_ERROR" and ans.cost_tokens == 0


def test_a_key_with_a_line_break_is_refused_without_echo(serve_store, serve_packs, model_server):
    key = "sk-abc\r\nX-Injected: 1"
    runner = _openai_runner(serve_store, serve_packs, model_server, api_key=key, http="stdlib")
    ans = asyncio.run(runner.aask(ANSWERABLE))
    assert ans.code == "MODEL_ERROR" and "sk-abc" not in (ans.error or "")
    assert not model_server.requests
