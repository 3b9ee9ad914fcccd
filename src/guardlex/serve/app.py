"""The HTTP server: ``POST /api/ask`` streams a gated answer as server-sent events.

Built on Starlette (run by uvicorn, ``guardlex serve``). Every answer goes through
:func:`guardlex.runner.aio.turn_events`, the async runner, so a reader who closes the
page closes the model's stream, and every call's cost is recorded.

What the client sends is a question, an optional locale and an optional conversation id.
The previous turn of a conversation (question and released answer) is kept here, in
memory, so nothing the client writes reaches the prompt except the question, and the
question is routed like any other. A ``previous`` field in the request is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import json
import logging
import math
import secrets as _secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardlex.errors import InputTooLargeError, UnknownLocaleError
from guardlex.runner.aio import TurnEvent, turn_events
from guardlex.runner.errors import EmptyQuestionError
from guardlex.runner.pipeline import MAX_QUESTION_CHARS, REFUSED, Answer, Runner, Source

log = logging.getLogger("guardlex.serve")

STATIC = Path(__file__).parent / "static"

#: Largest request body accepted by ``POST /api/ask`` (bytes).
MAX_BODY_BYTES = 16 * 1024
#: Conversations kept in memory, and for how long after their last turn (seconds).
MAX_CONVERSATIONS = 10_000
CONVERSATION_TTL = 30 * 60.0
#: Turns streamed at once; more get 503 with Retry-After.
MAX_STREAMS = 256

TurnHook = Callable[[dict[str, Any]], None]


# ---------------------------------------------------------------- conversations


@dataclass
class _Turn:
    question: str
    answer: str
    expires: float


class Conversations:
    """The previous turn of each conversation, bounded in number and in time.

    Only what the server itself produced is kept: the question as it was asked (and
    routed) and the answer as it was released by the gate.
    """

    def __init__(
        self,
        max_items: int = MAX_CONVERSATIONS,
        ttl: float = CONVERSATION_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_items = max_items
        self.ttl = ttl
        self._clock = clock
        self._items: OrderedDict[str, _Turn] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @staticmethod
    def new_id() -> str:
        return _secrets.token_urlsafe(16)

    def get(self, cid: str | None) -> _Turn | None:
        if not cid:
            return None
        with self._lock:
            turn = self._items.get(cid)
            if turn is None:
                return None
            if turn.expires < self._clock():
                del self._items[cid]
                return None
            return turn

    def put(self, cid: str, question: str, answer: str) -> None:
        with self._lock:
            self._items[cid] = _Turn(question, answer, self._clock() + self.ttl)
            self._items.move_to_end(cid)
            now = self._clock()
            while self._items:
                oldest_id, oldest = next(iter(self._items.items()))
                if len(self._items) > self.max_items or oldest.expires < now:
                    del self._items[oldest_id]
                else:
                    break


# ---------------------------------------------------------------- client address


def parse_networks(specs: Iterable[str]) -> tuple[Any, ...]:
    """Trusted proxies: addresses or networks (``10.0.0.1``, ``10.0.0.0/8``, ``::1``)."""
    out = []
    for spec in specs:
        try:
            out.append(ipaddress.ip_network(spec.strip(), strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxy {spec!r} is not an IP address or network") from None
    return tuple(out)


def _ip(text: str) -> Any:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Any]) -> str:
    """The address the rate limits key on.

    The connection's peer, unless the peer is a trusted proxy: then the right-most
    address of ``X-Forwarded-For`` that is not itself a trusted proxy (the left part of
    the header is whatever the client wrote). A header that does not parse is ignored.
    """
    peer = peer or "unknown"
    peer_ip = _ip(peer)
    if not trusted or peer_ip is None or not any(peer_ip in n for n in trusted):
        return peer
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        ip = _ip(hop)
        if ip is None:
            return peer
        if not any(ip in n for n in trusted):
            return str(ip)
    return peer


# ---------------------------------------------------------------- the app


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


@dataclass
class ServeSettings:
    """How the server behaves (the ``guardlex serve`` flags)."""

    trusted_proxies: tuple[Any, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES
    max_streams: int = MAX_STREAMS
    #: Send the route, rule, evidence and trace codes to the page (the operator panel).
    operator: bool = True
    #: Strings never to write in a log or an error (the API key).
    secrets: tuple[str, ...] = ()
    on_turn: TurnHook | None = None
    site: Mapping[str, Any] = field(default_factory=dict)


def _scrubber(secrets: Sequence[str]) -> Callable[[str], str]:
    keys = [s for s in secrets if s]

    def scrub(text: str) -> str:
        for k in keys:
            text = text.replace(k, "[key]")
        return text

    return scrub


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {payload}\n\n".encode()


def _direction(locale: str | None) -> str:
    from guardlex.serve.ui import direction

    return direction(locale)


class GuardlexServer:
    """The ASGI application's state and handlers (see :func:`create_app`)."""

    def __init__(
        self,
        runner: Runner,
        *,
        rate_limiter: Any = None,
        settings: ServeSettings | None = None,
        conversations: Conversations | None = None,
    ) -> None:
        self.runner = runner
        self.rate_limiter = rate_limiter
        self.settings = settings or ServeSettings()
        self.conversations = conversations if conversations is not None else Conversations()
        self.scrub = _scrubber(self.settings.secrets)
        self.active = 0
        self.turns = 0
        self._titles: dict[str, tuple[str, str | None]] = {}

    # -- helpers
    def _retry_after(self, window: str | None) -> int:
        limits = getattr(self.rate_limiter, "limits", ()) or ()
        now = time.time()
        for name, seconds, _allowed in limits:
            if name == window:
                return max(1, math.ceil(seconds - (now % seconds)))
        return 60

    def source_info(self, source: Source) -> dict[str, Any]:
        """A source as the page shows it: number, title and (when the site has one) URL."""
        ref = source.ref
        title: str | None = None
        url: str | None = None
        if ref.startswith("title:"):
            title = ref[len("title:") :]
        else:
            get = getattr(self.runner.store, "chunk_by_id", None)
            chunk = None
            if callable(get):
                with contextlib.suppress(Exception):
                    chunk = get(ref)
            if chunk is not None:
                title = chunk.title or None
                if str(chunk.doc_id).startswith(("https://", "http://")):
                    url = str(chunk.doc_id)
        if title is None:
            head = source.text.split(":", 1)[0]
            title = head if len(head) <= 160 else head[:157] + "…"
        return {"n": source.n, "ref": ref, "title": title, "url": url}

    def log_turn(self, record: dict[str, Any]) -> None:
        line = self.scrub(json.dumps(record, ensure_ascii=False, sort_keys=True))
        log.info("%s", line)
        hook = self.settings.on_turn
        if hook is not None:
            try:
                hook(json.loads(line))
            except Exception:  # the operator's logger must not break a turn
                log.exception("guardlex serve: the on_turn hook raised")

    # -- request parsing
    async def read_ask(self, request: Any) -> dict[str, Any]:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and ctype != "application/json":
            raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "send the request as application/json")
        limit = self.settings.max_body_bytes
        length = request.headers.get("content-length")
        if length is not None:
            try:
                if int(length) > limit:
                    raise ApiError(413, "BODY_TOO_LARGE", f"request body over {limit} bytes")
            except ValueError:
                raise ApiError(400, "BAD_REQUEST", "Content-Length is not a number") from None
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise ApiError(413, "BODY_TOO_LARGE", f"request body over {limit} bytes")
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ApiError(400, "INVALID_JSON", "the request body is not JSON") from None
        if not isinstance(data, dict):
            raise ApiError(400, "INVALID_REQUEST", "the request body must be a JSON object")
        question = data.get("question")
        if not isinstance(question, str):
            raise ApiError(400, "INVALID_REQUEST", "'question' must be a string")
        if not question.strip():
            raise ApiError(400, "EMPTY_QUESTION", "the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise ApiError(
                413,
                "QUESTION_TOO_LONG",
                f"question of {len(question)} characters exceeds {MAX_QUESTION_CHARS}",
            )
        locale = data.get("locale")
        if locale is not None:
            if not isinstance(locale, str):
                raise ApiError(400, "INVALID_REQUEST", "'locale' must be a string")
            if locale not in self.runner.packs.locales:
                raise ApiError(
                    400,
                    "UNKNOWN_LOCALE",
                    f"unknown locale {locale[:20]!r}; loaded: "
                    + ", ".join(self.runner.packs.locales),
                )
        conv = data.get("conversation")
        if conv is not None and (not isinstance(conv, str) or len(conv) > 64):
            raise ApiError(400, "INVALID_REQUEST", "'conversation' must be an id string")
        return {"question": question, "locale": locale, "conversation": conv}

    async def rate_check(self, client: str, locale: str | None, question: str) -> str | None:
        """None, or why the turn may not start (raises 429 with Retry-After)."""
        if self.rate_limiter is None:
            return None
        decision = await asyncio.to_thread(self.rate_limiter.hit, client)
        if decision.code == "LIMITED":
            loc = locale or self.runner._locale_of(question)
            raise ApiError(
                429,
                "RATE_LIMITED",
                self.runner.packs.message(loc, "rate_limited"),
                {"Retry-After": str(self._retry_after(decision.window))},
            )
        if decision.code == "UNAVAILABLE":
            return "RATE_LIMIT_UNAVAILABLE"
        return None

    # -- the turn
    async def turn(
        self,
        ask: dict[str, Any],
        client: str,
        note: str | None,
        disconnected: asyncio.Event,
    ) -> AsyncIterator[bytes]:
        question = ask["question"]
        previous = self.conversations.get(ask["conversation"])
        cid = ask["conversation"] if previous is not None else Conversations.new_id()
        started = time.monotonic()
        first_sentence: float | None = None
        record: dict[str, Any] = {
            "event": "turn",
            "conversation": cid,
            "client": _sha(client),
            "question_sha256": _sha(question),
            "question_chars": len(question),
            "followup": previous is not None,
        }
        sources: dict[int, dict[str, Any]] = {}
        answer: Answer | None = None
        route: Any = None
        events = turn_events(
            self.runner,
            question,
            previous=previous.question if previous else None,
            previous_answer=previous.answer if previous else None,
            locale=ask["locale"],
        )
        try:
            async for ev in events:
                if ev.kind == "route":
                    route = ev.route
                    yield _sse("route", self._route_data(ev, cid))
                elif ev.kind == "sources":
                    sources = {s.n: self.source_info(s) for s in ev.sources}
                elif ev.kind == "sentence":
                    if first_sentence is None:
                        first_sentence = time.monotonic()
                    cited = [sources[n] for n in ev.markers if n in sources]
                    yield _sse("sentence", {"text": ev.text, "sources": cited})
                elif ev.kind == "stop":
                    yield _sse("stop", {"reason": ev.reason, "message": ev.message})
                elif ev.kind == "truncated":
                    yield _sse("truncated", {"message": ev.message})
                elif ev.kind == "refused":
                    yield _sse("refused", {"category": ev.reason, "message": ev.message})
                elif ev.kind == "message":
                    yield _sse("message", {"code": ev.code, "message": ev.message})
                elif ev.kind == "answer":
                    answer = ev.answer
                    assert answer is not None
                    self.conversations.put(cid, question, answer.text)
                    yield _sse("done", self._done_data(answer, route, cid, note))
        except asyncio.CancelledError:
            record["disconnected"] = True
            raise
        except Exception as exc:  # never a traceback to the reader
            log.error("guardlex serve: turn failed: %s", self.scrub(f"{type(exc).__name__}: {exc}"))
            record["failed"] = self.scrub(f"{type(exc).__name__}: {exc}")[:300]
            yield _sse("error", {"code": "INTERNAL", "message": "the answer failed"})
        finally:
            await events.aclose()
            self.turns += 1
            if disconnected.is_set():
                record["disconnected"] = True
            record["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
            if first_sentence is not None:
                record["first_sentence_ms"] = round((first_sentence - started) * 1000, 1)
            if answer is not None:
                record.update(
                    locale=answer.locale,
                    route=answer.route,
                    rule_id=answer.rule_id,
                    category=answer.category,
                    topic=answer.topic,
                    code=answer.code,
                    trace=list(answer.trace) + ([note] if note else []),
                    cost_tokens=answer.cost_tokens,
                    model=answer.model,
                    error=answer.error,
                )
            self.log_turn(record)

    def _route_data(self, ev: TurnEvent, cid: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "conversation": cid,
            "locale": ev.locale,
            "direction": _direction(ev.locale),
        }
        if self.settings.operator:
            r = ev.route
            data["route"] = getattr(r, "kind", None)
            data["rule_id"] = getattr(r, "rule_id", None)
            data["category"] = getattr(r, "category", None)
            data["topic"] = getattr(r, "topic", None)
            about = getattr(r, "about", None)
            data["about"] = str(about) if about else None
            evidence = getattr(r, "evidence", None)
            data["evidence"] = _jsonable(evidence)
        return data

    def _done_data(self, answer: Answer, route: Any, cid: str, note: str | None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "conversation": cid,
            "code": answer.code,
            "locale": answer.locale,
            "direction": _direction(answer.locale),
        }
        if answer.code == REFUSED:
            data["category"] = answer.category
        if self.settings.operator:
            data.update(
                route=answer.route,
                rule_id=answer.rule_id,
                category=answer.category,
                topic=answer.topic,
                trace=list(answer.trace) + ([note] if note else []),
                cost_tokens=answer.cost_tokens,
            )
        return data


def _jsonable(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        with contextlib.suppress(Exception):
            return _jsonable(asdict(value))
    return str(value)


class _EventStream:
    """An SSE response that watches for the reader leaving.

    The turn runs in its own task while another waits for ``http.disconnect``: when the
    reader closes the page, the turn's task is cancelled at once (the model's stream is
    closed, its cost settled) instead of at the next write.
    """

    def __init__(
        self,
        make: Callable[[asyncio.Event], AsyncIterator[bytes]],
        headers: Mapping[str, str],
    ) -> None:
        self.make = make
        self.headers = headers

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        disconnected = asyncio.Event()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(k.lower().encode(), v.encode()) for k, v in self.headers.items()],
            }
        )

        async def pump() -> None:
            gen = self.make(disconnected)
            try:
                async for chunk in gen:
                    if disconnected.is_set():
                        return  # nobody is reading: stop the turn
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                await gen.aclose()  # type: ignore[attr-defined]

        async def watch() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    disconnected.set()
                    return

        turn = asyncio.ensure_future(pump())
        watcher = asyncio.ensure_future(watch())
        try:
            await asyncio.wait({turn, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Cancel the turn until it ends: a cancellation that lands while the turn
            # is finishing an await may be absorbed; the turn then gets another.
            while not turn.done():
                turn.cancel()
                await asyncio.wait({turn}, timeout=1.0)
            watcher.cancel()
            for task in (turn, watcher):
                with contextlib.suppress(asyncio.CancelledError, OSError, Exception):
                    await task


def create_app(
    runner: Runner,
    *,
    rate_limiter: Any = None,
    settings: ServeSettings | None = None,
    conversations: Conversations | None = None,
) -> Any:
    """The ASGI application (Starlette) serving ``runner``."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    server = GuardlexServer(
        runner, rate_limiter=rate_limiter, settings=settings, conversations=conversations
    )

    def error(exc: ApiError) -> Response:
        return JSONResponse(
            {"error": {"code": exc.code, "message": server.scrub(exc.message)}},
            status_code=exc.status,
            headers=exc.headers,
        )

    async def ask(request: Request) -> Any:
        peer = request.client.host if request.client else None
        client = client_address(
            peer, request.headers.getlist("x-forwarded-for"), server.settings.trusted_proxies
        )
        try:
            data = await server.read_ask(request)
            if server.active >= server.settings.max_streams:
                raise ApiError(503, "BUSY", "too many answers at once", {"Retry-After": "1"})
            note = await server.rate_check(client, data["locale"], data["question"])
        except ApiError as exc:
            return error(exc)
        except (EmptyQuestionError, InputTooLargeError, UnknownLocaleError) as exc:
            return error(ApiError(400, "BAD_REQUEST", str(exc)))

        def make(disconnected: asyncio.Event) -> AsyncIterator[bytes]:
            return counted(server.turn(data, client, note, disconnected))

        async def counted(gen: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
            server.active += 1
            try:
                async for chunk in gen:
                    yield chunk
            finally:
                server.active -= 1
                await gen.aclose()  # type: ignore[attr-defined]

        return _EventStream(
            make,
            {
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
                "X-Content-Type-Options": "nosniff",
            },
        )

    async def health(request: Request) -> Response:
        store = server.runner.store
        return JSONResponse(
            {
                "status": "ok",
                "locales": list(server.runner.packs.locales),
                "store": getattr(store, "backend", "sqlite"),
                "active": server.active,
                "turns": server.turns,
            }
        )

    async def ui(request: Request) -> Response:
        from guardlex.serve.ui import ui_payload

        wanted = request.query_params.get("locale") or ""
        accept = request.headers.get("accept-language", "")
        payload = ui_payload(wanted, accept, server.runner.packs.locales)
        payload["operator"] = server.settings.operator
        payload["site"] = dict(server.settings.site)
        return JSONResponse(payload)

    async def index(request: Request) -> Response:
        return FileResponse(
            STATIC / "index.html",
            headers={
                "Cache-Control": "no-cache",
                "X-Content-Type-Options": "nosniff",
                # the page is its own files only: no inline script, no other origin
                "Content-Security-Policy": (
                    "default-src 'self'; script-src 'self'; style-src 'self'; "
                    "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                    "base-uri 'none'; form-action 'self'"
                ),
                "Referrer-Policy": "no-referrer",
            },
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(status, "HTTP_ERROR")
        detail = getattr(exc, "detail", "") or code
        return JSONResponse({"error": {"code": code, "message": str(detail)}}, status_code=status)

    async def internal_error(request: Request, exc: Exception) -> Response:
        log.error("guardlex serve: %s", server.scrub(f"{type(exc).__name__}: {exc}"))
        return JSONResponse(
            {"error": {"code": "INTERNAL", "message": "internal error"}}, status_code=500
        )

    app = Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route("/api/ask", ask, methods=["POST"]),
            Route("/api/health", health, methods=["GET"]),
            Route("/api/ui", ui, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
        ],
        exception_handlers={HTTPException: http_error, Exception: internal_error},
    )
    app.state.guardlex = server
    return app
