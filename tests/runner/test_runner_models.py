"""The scripted models and the OpenAI-compatible streaming client (against a local fake)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from guardlex.runner.errors import ModelError
from guardlex.runner.models import (
    CitesMissingSource,
    FlipsNegation,
    InventsNumber,
    OpenAIChatModel,
    Prompt,
    ScriptedModel,
    SpeaksFirstPerson,
    split_sentences,
    with_marker,
)

SOURCES = (
    "Dana Reyes led a team of six engineers at Quillmark. The team moved 40 million documents.",
    "The Pro plan is not included in the free trial. Ms. Reyes wrote the migration guide.",
)


def _prompt(locale: str = "en", limit: int = 1000) -> Prompt:
    return Prompt(
        "What did Reyes do at Quillmark, and is the Pro plan in the free trial?",
        SOURCES,
        locale,
        limit,
    )


def test_split_sentences_keeps_abbreviations() -> None:
    assert split_sentences(SOURCES[1]) == [
        "The Pro plan is not included in the free trial.",
        "Ms. Reyes wrote the migration guide.",
    ]
    assert split_sentences("Recall rose to 0.84. Then it fell.") == [
        "Recall rose to 0.84.",
        "Then it fell.",
    ]


def test_with_marker_goes_before_the_final_stop() -> None:
    assert with_marker("It ended.", 2) == "It ended [2]."
    assert with_marker("没有句号", 1) == "没有句号[1]。"
    assert with_marker("Was it?", 1) == "Was it [1]?"


def test_scripted_model_is_deterministic_and_cites_every_sentence() -> None:
    a = "".join(ScriptedModel().stream(_prompt()))
    b = "".join(ScriptedModel(piece=1).stream(_prompt()))
    assert a == b
    assert a.count("[1]") == 2 and a.count("[2]") == 2
    assert "40 million" in a


def test_scripted_output_limit_cuts_mid_sentence() -> None:
    text = "".join(ScriptedModel().stream(_prompt(limit=30)))
    assert len(text) <= 30
    assert not text.rstrip().endswith(".")


def test_cancel_stops_the_stream_and_drops_usage() -> None:
    stream = ScriptedModel(piece=5, report_usage=True).stream(_prompt())
    got = []
    for piece in stream:
        got.append(piece)
        if len(got) == 3:
            stream.cancel()
    assert len(got) == 3 and stream.cancelled
    assert stream.received == "".join(got)
    assert stream.usage is None  # the final event never arrived
    full = ScriptedModel(report_usage=True).stream(_prompt())
    "".join(full)
    assert full.usage is not None


def test_misbehaving_models_do_what_they_say() -> None:
    p = _prompt()
    invented = "".join(InventsNumber().stream(p))
    assert "7919" in invented and "7919" not in " ".join(SOURCES)
    missing = "".join(CitesMissingSource().stream(p))
    assert "[5]" in missing
    first = "".join(SpeaksFirstPerson().stream(p))
    assert "I think" in first
    model = FlipsNegation()
    flipped = "".join(model.stream(Prompt("plan?", (SOURCES[1],), "en", 1000)))
    assert model.flipped and "is included" in flipped and "not included" not in flipped


# ---------------------------------------------------------------- OpenAI-compatible fake


class _FakeServer:
    """A tiny OpenAI-compatible SSE server on 127.0.0.1 (ephemeral port)."""

    def __init__(
        self,
        pieces: list[str],
        usage: bool = True,
        status: int = 200,
        delay_after: int | None = None,
    ) -> None:
        self.pieces = pieces
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.disconnected = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append(json.loads(body))
                outer.headers.append(dict(self.headers))
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "quota"}')
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    self.wfile.write(b": keep-alive\n\n")
                    for i, p in enumerate(outer.pieces):
                        if delay_after is not None and i == delay_after:
                            outer.release.wait(5)
                        event = {"choices": [{"delta": {"content": p}}]}
                        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                    if usage:
                        u = {"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7}}
                        self.wfile.write(f"data: {json.dumps(u)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    outer.disconnected.set()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server() -> Iterator[type[_FakeServer]]:
    yield _FakeServer


def test_openai_client_streams_and_reports_usage(fake_server) -> None:
    with fake_server(["Dana led ", "a team [1].", " Done [1]."]) as srv:
        model = OpenAIChatModel(srv.url, "test-model", api_key="sk-test")
        stream = model.stream(_prompt())
        text = "".join(stream)
    assert text == "Dana led a team [1]. Done [1]."
    assert stream.usage is not None and stream.usage.prompt_tokens == 11
    req = srv.requests[0]
    assert req["stream"] is True and req["model"] == "test-model"
    assert req["max_tokens"] == 1000
    assert req["messages"][0]["role"] == "system"
    assert "[1] Dana Reyes led" in req["messages"][1]["content"]
    assert srv.headers[0]["Authorization"] == "Bearer sk-test"


def test_openai_client_cancel_closes_the_connection(fake_server) -> None:
    pieces = [f"piece {i}. " for i in range(50)]
    with fake_server(pieces, delay_after=3) as srv:
        stream = OpenAIChatModel(srv.url, "m").stream(_prompt())
        got = []
        for p in stream:
            got.append(p)
            if len(got) == 2:
                stream.cancel()
        assert got == pieces[:2]
        assert stream.usage is None
        assert stream.received == "".join(pieces[:2])
        srv.release.set()
        assert srv.disconnected.wait(5)  # the server saw the connection go away


def test_openai_client_http_error_is_a_model_error(fake_server) -> None:
    with fake_server([], status=429) as srv, pytest.raises(ModelError, match="HTTP 429"):
        OpenAIChatModel(srv.url, "m").stream(_prompt())


def test_openai_client_rejects_non_http_urls() -> None:
    with pytest.raises(ModelError):
        OpenAIChatModel("file:///etc/passwd", "m")
