"""Fixtures for the async runner and the HTTP server.

The stand-in packs and the tiny site are the runner tests' own (``tests/runner/
conftest.py``, loaded by path), with Persian added so right-to-left can be tested
without the real packs. ``FakeModelServer`` is an OpenAI-compatible
``/chat/completions`` on 127.0.0.1 whose behaviour a test sets (answer, drip, hang,
garbage, ignore max_tokens, echo the key) and which records every request and every
client disconnect.
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from guardlex.runner import _engine
from guardlex.runner.build import build_store
from guardlex.runner.pipeline import Runner

_spec = importlib.util.spec_from_file_location(
    "_guardlex_runner_fixtures", Path(__file__).parent.parent / "runner" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_rf = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _rf
_spec.loader.exec_module(_rf)

TINY_SITE = _rf.TINY_SITE
MESSAGES = _rf.MESSAGES


class ServePacks(_rf.FakePacks):  # type: ignore[misc, name-defined]
    """The runner tests' packs plus Persian (a refusal rule and messages)."""

    locales = ("en", "es", "zh", "fa")

    def route(self, text: str, previous: str | None = None) -> Any:
        if "قیمت" in text:
            return _rf.FakeRoute("refuse", "engagement", "fa", "engagement-price-fa", (0, 4))
        return super().route(text, previous)

    def stopwords(self, locale: str) -> frozenset[str]:
        if locale == "fa":
            return frozenset(["و", "در", "به", "از", "که", "این", "را", "است"])
        return frozenset(super().stopwords(locale))

    def lexicon(self, locale: str) -> Mapping[str, Any]:
        return super().lexicon("en" if locale == "fa" else locale)

    def messages(self, locale: str) -> Mapping[str, str]:
        if locale == "fa":
            return {k: f"پیام-{k}" for k in MESSAGES}
        return dict(super().messages(locale))

    def detect_locale(self, text: str) -> str:
        if any("\u0600" <= ch <= "\u06ff" for ch in text):
            return "fa"
        return str(super().detect_locale(text))


@pytest.fixture(scope="session")
def serve_packs() -> _engine.PackView:
    return _engine.PackView(ServePacks())


@pytest.fixture(scope="session")
def serve_store(serve_packs: _engine.PackView) -> Iterator[Any]:
    store = build_store(TINY_SITE, ":memory:", packs=serve_packs)
    yield store
    store.close()


@pytest.fixture
def runner(serve_store: Any, serve_packs: _engine.PackView) -> Runner:
    return Runner(serve_store, serve_packs)


ANSWERABLE = "How does the sentence gate check citation markers?"
REFUSED_Q = "What is her price for a week?"
OFF_TOPIC = "Which football team won the cup in 1954?"


# ---------------------------------------------------------------- fake model server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_SOURCE_RE = re.compile(r"^\[(\d+)\] (.*)$", re.M)


def answer_from(user_text: str) -> list[str]:
    """Sentences quoting the first source with its marker, like the scripted model."""
    m = _SOURCE_RE.search(user_text)
    if not m:
        return ["NO_ANSWER"]
    n, text = m.group(1), m.group(2)
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]
    out = []
    for p in parts[:2]:
        body = p.rstrip(".!?")
        out.append(f"{body} [{n}].")
    return out


class FakeModelServer:
    """OpenAI-compatible streaming endpoint. ``mode`` decides what it sends:

    ``answer`` (quotes source 1 with markers), ``slow`` (one sentence per ``delay``
    seconds, then waits ``hold`` seconds before the end), ``invent`` (second sentence has
    a number no source has), ``hang`` (headers, then nothing), ``drip`` (one byte per
    ``delay``), ``garbage`` (a non-JSON event), ``flood`` (ignores max_tokens: megabytes
    of text), ``echo_key`` (401 whose body echoes the Authorization header),
    ``redirect`` (302 to another host).
    """

    def __init__(self) -> None:
        self.mode = "answer"
        self.delay = 0.05
        self.hold = 0.0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.disconnects = 0
        self.completed = 0
        self.active = 0
        self._lock = threading.Lock()
        self.port = free_port()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.active += 1
                try:
                    server._serve(self, body)
                    with server._lock:
                        server.completed += 1
                except (BrokenPipeError, ConnectionResetError, OSError):
                    with server._lock:
                        server.disconnects += 1
                finally:
                    with server._lock:
                        server.active -= 1

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # load tests open hundreds of streams at once

        self.httpd = Server(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeModelServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for(self, what: str, count: int = 1, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if getattr(self, what) >= count:
                return True
            time.sleep(0.02)
        return False

    # -- behaviours
    def _head(self, h: BaseHTTPRequestHandler, status: int = 200, **extra: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", extra.pop("ctype", "text/event-stream"))
        for k, v in extra.items():
            h.send_header(k.replace("_", "-"), v)
        h.send_header("Connection", "close")
        h.end_headers()

    @staticmethod
    def _event(content: str) -> bytes:
        return f"data: {json.dumps({'choices': [{'delta': {'content': content}}]})}\n\n".encode()

    def _send(self, h: BaseHTTPRequestHandler, data: bytes) -> None:
        h.wfile.write(data)
        h.wfile.flush()

    def _serve(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        mode = self.mode
        user = body.get("messages", [{}, {}])[-1].get("content", "")
        if mode == "echo_key":
            msg = f"bad key {h.headers.get('Authorization')}".encode()
            self._head(h, 401, ctype="text/plain", Content_Length=str(len(msg)))
            self._send(h, msg)
            return
        if mode == "redirect":
            self._head(h, 302, Location="http://example.invalid/v1/chat/completions")
            return
        self._head(h)
        if mode == "hang":
            time.sleep(30)
            self._send(h, b": still here\n\n")  # a write after the client left fails
            return
        if mode == "drip":
            for _ in range(3000):
                self._send(h, b":")
                time.sleep(self.delay)
            return
        if mode == "garbage":
            self._send(h, b"data: {not json\n\n")
            return
        if mode == "flood":
            chunk = self._event("word " * 2000)
            for _ in range(2000):
                self._send(h, chunk)
            return
        sentences = answer_from(user)
        if mode == "invent":
            sentences = [sentences[0], "The gate ran 7919 times in one day [1].", *sentences[1:]]
        for i, s in enumerate(sentences):
            self._send(h, self._event((" " if i else "") + s))
            if mode in ("slow", "invent"):
                time.sleep(self.delay)
        if mode in ("slow", "invent") and self.hold:
            end = time.monotonic() + self.hold
            while time.monotonic() < end:
                self._send(h, b": keep-alive\n\n")
                time.sleep(0.1)
        usage = {"usage": {"prompt_tokens": 50, "completion_tokens": 20}, "choices": []}
        self._send(h, f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer().start()
    yield server
    server.stop()


# ---------------------------------------------------------------- live server


class LiveServer:
    """uvicorn serving an app on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.app = app
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveServer:
        self.thread.start()
        end = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > end or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def make_app(runner: Runner, **kw: Any) -> Any:
    from guardlex.serve.app import ServeSettings, create_app

    limiter = kw.pop("rate_limiter", None)
    conversations = kw.pop("conversations", None)
    return create_app(
        runner, rate_limiter=limiter, settings=ServeSettings(**kw), conversations=conversations
    )


def post_sse(
    url: str, body: Any, headers: Mapping[str, str] | None = None, timeout: float = 30.0
) -> tuple[int, dict[str, str], list[tuple[str, Any, float]]]:
    """POST ``body`` and read the server-sent events with a plain client (http.client):
    (status, headers, [(event, data, seconds since the request)]), or the JSON error."""
    import http.client
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    t0 = time.monotonic()
    conn.request("POST", parts.path, body=raw, headers=hdrs)
    resp = conn.getresponse()
    rh = {k.lower(): v for k, v in resp.getheaders()}
    if resp.status != 200:
        data = json.loads(resp.read() or b"null")
        conn.close()
        return resp.status, rh, [("error", data, time.monotonic() - t0)]
    events: list[tuple[str, Any, float]] = []
    name, data = "message", ""
    while True:
        line = resp.readline()
        if not line:
            break
        text = line.decode("utf-8").rstrip("\n")
        if text.startswith("event:"):
            name = text[6:].strip()
        elif text.startswith("data:"):
            data += text[5:].strip()
        elif text == "" and data:
            events.append((name, json.loads(data), time.monotonic() - t0))
            name, data = "message", ""
    conn.close()
    return resp.status, rh, events
