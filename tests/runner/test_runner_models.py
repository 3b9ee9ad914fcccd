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


# ---------------------------------------------------------------- a hostile server


class _RawServer:
    """A server on 127.0.0.1 that answers every POST with ``respond(handler, body)``.

    ``respond`` writes whatever it likes (status, headers, bytes): the fault modes of a
    broken or hostile OpenAI-compatible endpoint. Requests (body, headers) are recorded.
    """

    def __init__(self, respond) -> None:  # type: ignore[no-untyped-def]
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.disconnects = 0
        self._lock = threading.Lock()
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                try:
                    respond(self, body)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    with outer._lock:
                        outer.disconnects += 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.origin}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def sse_head(h: BaseHTTPRequestHandler, ctype: str = "text/event-stream") -> None:
    h.send_response(200)
    h.send_header("Content-Type", ctype)
    h.end_headers()


def sse_event(h: BaseHTTPRequestHandler, payload: object) -> None:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    h.wfile.write(f"data: {data}\n\n".encode())
    h.wfile.flush()


def _content(text: object) -> dict:
    return {"choices": [{"delta": {"content": text}}]}


KEY = "sk-SECRET-0123456789"

_MALFORMED: dict[str, object] = {
    "list": [1, 2, 3],
    "string-event": '"just a string"',
    "choices-string": {"choices": "lots"},
    "choice-string": {"choices": ["x"]},
    "delta-list": {"choices": [{"delta": ["x"]}]},
    "content-int": _content(5),
    "content-object": _content({"text": "hi"}),
    "huge-int": '{"choices": [{"delta": {"content": "a"}}], "n": ' + "9" * 5000 + "}",
    "deep": "[" * 100_000 + "]" * 100_000,
    "usage-negative": {"choices": [], "usage": {"prompt_tokens": -5, "completion_tokens": 3}},
    "usage-string": {"choices": [], "usage": {"prompt_tokens": "12", "completion_tokens": 3}},
    "usage-float": {"choices": [], "usage": {"prompt_tokens": 1e300, "completion_tokens": 3}},
    "usage-huge": {"choices": [], "usage": {"prompt_tokens": 10**40, "completion_tokens": 1}},
    "usage-bool": {"choices": [], "usage": {"prompt_tokens": True, "completion_tokens": 1}},
    "usage-list": {"choices": [], "usage": [1, 2]},
    "not-json": "{oops",
}


@pytest.mark.parametrize("kind", sorted(_MALFORMED))
def test_malformed_events_are_model_errors_without_the_key(kind: str) -> None:
    def respond(h: BaseHTTPRequestHandler, body: dict) -> None:
        sse_head(h)
        sse_event(h, _content(f"echo {KEY} "))
        sse_event(h, _MALFORMED[kind])
        sse_event(h, "[DONE]")

    with _RawServer(respond) as srv:
        stream = OpenAIChatModel(srv.url, "m", api_key=KEY).stream(_prompt())
        with pytest.raises(ModelError) as info:
            list(stream)
    msg = str(info.value)
    assert KEY not in msg and "\n" not in msg and len(msg) < 400


@pytest.mark.parametrize("cut", [30, 75, 79, 150, 199])
def test_a_key_cut_by_a_quoted_snippet_does_not_leak(cut: int) -> None:
    """Messages quote the first 80 characters of an event and 200 of an error body."""
    prefix = "x" * (cut - len(KEY) // 2)

    def bad_event(h: BaseHTTPRequestHandler, body: dict) -> None:
        sse_head(h)
        sse_event(h, "{" + prefix + KEY + " not json")

    def bad_status(h: BaseHTTPRequestHandler, body: dict) -> None:
        h.send_response(400)
        h.end_headers()
        h.wfile.write((prefix + KEY + " rest of the body " * 20).encode())

    for respond in (bad_event, bad_status):
        with _RawServer(respond) as srv, pytest.raises(ModelError) as info:
            list(OpenAIChatModel(srv.url, "m", api_key=KEY).stream(_prompt()))
        msg = str(info.value)
        assert KEY[:8] not in msg, msg


def test_null_choices_and_null_delta_are_skipped() -> None:
    def respond(h: BaseHTTPRequestHandler, body: dict) -> None:
        sse_head(h)
        sse_event(h, {"choices": None})
        sse_event(h, {"choices": [{"delta": None}]})
        sse_event(h, {"choices": [{"delta": {"content": None}}]})
        sse_event(h, _content("Fine [1]."))
        sse_event(h, {"choices": [], "usage": None})
        sse_event(h, "[DONE]")

    with _RawServer(respond) as srv:
        stream = OpenAIChatModel(srv.url, "m").stream(_prompt())
        assert "".join(stream) == "Fine [1]."
        assert stream.usage is None


@pytest.mark.parametrize(
    "kind", ["json-200", "html-200", "no-events", "huge-line", "endless-comments"]
)
def test_responses_that_are_not_event_streams_are_model_errors(kind: str) -> None:
    def respond(h: BaseHTTPRequestHandler, body: dict) -> None:
        if kind == "json-200":
            sse_head(h, "application/json")
            h.wfile.write(json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode())
        elif kind == "html-200":
            sse_head(h, "text/html; charset=utf-8")
            h.wfile.write(f"<html><body>login {KEY}</body></html>".encode())
        elif kind == "no-events":
            sse_head(h)
            h.wfile.write(b"<html>\n<body>not sse</body>\n</html>\n")
        elif kind == "huge-line":
            sse_head(h)
            h.wfile.write(b"data: " + b"x" * (10 * 1024 * 1024) + b"\n\n")
        else:
            sse_head(h)
            chunk = b": keep-alive " + b"." * 60_000 + b"\n"
            for _ in range(700):  # 42 MB of comments, no event
                h.wfile.write(chunk)

    with _RawServer(respond) as srv:
        model = OpenAIChatModel(srv.url, "m", api_key=KEY)
        with pytest.raises(ModelError) as info:
            list(model.stream(_prompt()))
    assert KEY not in str(info.value)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_never_followed_and_the_key_stays_home(status: int) -> None:
    def elsewhere(h: BaseHTTPRequestHandler, body: dict) -> None:
        sse_head(h)
        sse_event(h, _content("stolen [1]."))
        sse_event(h, "[DONE]")

    with _RawServer(elsewhere) as other:

        def redirect(h: BaseHTTPRequestHandler, body: dict) -> None:
            h.send_response(status)
            h.send_header("Location", f"{other.origin}/steal?k={KEY}")
            h.end_headers()

        with _RawServer(redirect) as srv:
            model = OpenAIChatModel(srv.url, "m", api_key=KEY)
            with pytest.raises(ModelError, match=f"HTTP {status}") as info:
                model.stream(_prompt())
            assert KEY not in str(info.value) and other.origin not in str(info.value)
            assert len(srv.requests) == 1
        assert other.requests == []  # nothing, let alone the key, reached the other origin


def test_dripping_stream_hits_the_turn_deadline() -> None:
    def respond(h: BaseHTTPRequestHandler, body: dict) -> None:
        sse_head(h)
        sse_event(h, _content("Starts [1]. "))
        # one byte every 0.2 s, inside one line: no read ever times out
        while not srv.stop.is_set():
            h.wfile.write(b"d")
            h.wfile.flush()
            srv.stop.wait(0.2)

    with _RawServer(respond) as srv:
        model = OpenAIChatModel(srv.url, "m", timeout=5, deadline=1.5)
        stream = model.stream(_prompt())
        with pytest.raises(ModelError, match="deadline"):
            list(stream)
        assert stream.received == "Starts [1]. "


@pytest.mark.parametrize(
    "url",
    [
        f"http://user:{KEY}@127.0.0.1:9/v1",
        f"https://{KEY}@api.example.com/v1",
        f"https://:{KEY}@api.example.com/v1",
    ],
)
def test_credentials_in_the_base_url_are_rejected(url: str) -> None:
    with pytest.raises(ModelError, match="credentials") as info:
        OpenAIChatModel(url, "m", api_key="k")
    assert KEY not in str(info.value)


def test_http_error_body_echoing_the_key_is_scrubbed() -> None:
    def respond(h: BaseHTTPRequestHandler, body: dict) -> None:
        h.send_response(401)
        h.end_headers()
        h.wfile.write(f"bad key {h.headers['Authorization']}".encode())

    with _RawServer(respond) as srv, pytest.raises(ModelError, match="HTTP 401") as info:
        OpenAIChatModel(srv.url, "m", api_key=KEY).stream(_prompt())
    assert KEY not in str(info.value)
