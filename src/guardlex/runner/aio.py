"""The async runner: ``Runner.astream`` / ``Runner.aask`` and an async model client.

Same semantics as the synchronous :meth:`Runner.stream` (route -> refusal -> overview or
retrieval -> threshold -> budget -> model -> sentence gate), sharing its code:

- the steps before the model (rate limit, routing, overview records, follow-ups,
  retrieval, the threshold) are :meth:`Runner.stream` itself, run in a worker thread
  (they are CPU and database work) up to the point where it would call the model;
- the budget reservation and the settlement are the runner's own ``ledger.reserve`` and
  ``Runner._settle`` (reservation, cut at the reserved bound, always settled);
- the model stream and the sentence gate run on the event loop: a gate stop, a reader
  who leaves (the async generator is closed or its task cancelled) or the turn's
  deadline closes the provider's stream at once.

:func:`turn_events` yields typed :class:`TurnEvent` values (what the HTTP server sends);
``astream`` maps them onto the pieces and the :class:`Answer` of the synchronous API.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, cast

from guardlex.runner import _engine
from guardlex.runner.errors import ModelError, ModelUnavailableError
from guardlex.runner.models import (
    DEFAULT_TURN_DEADLINE,
    MAX_EVENT_BYTES,
    MAX_STREAM_BYTES,
    Model,
    ModelStream,
    Prompt,
    ScriptedModel,
    Usage,
    _reason,
    check_endpoint,
    read_event,
    safe_url,
)
from guardlex.runner.pipeline import (
    REFUSED,
    Answer,
    NoAnswerCheck,
    Runner,
    Source,
    cap_piece,
    model_failed,
    new_stream_state,
)

# ---------------------------------------------------------------- events


@dataclass(frozen=True)
class TurnEvent:
    """One step of a turn, as the reader (or the operator) should learn of it.

    ``kind``:

    - ``route``: the routing decision (``route``: the pack's route object; ``locale``);
    - ``sources``: the numbered sources handed to the model (``sources``);
    - ``sentence``: a released sentence (``text``, markers stripped; ``markers``);
    - ``stop``: the gate stopped the answer (``reason``; ``message``: the fixed text);
    - ``truncated``: the stream ended mid-sentence (``message``);
    - ``refused``: a refusal (``message``; ``reason``: the category);
    - ``message``: another fixed text (below threshold, budget, model error, rate limit;
      ``code`` says which);
    - ``answer``: the final :class:`Answer` (always last).

    ``text`` is exactly the piece :meth:`Runner.stream` would yield for this event (a
    stop or truncation notice after released text starts with a blank line).
    """

    kind: str
    text: str = ""
    message: str = ""
    markers: tuple[int, ...] = ()
    reason: str | None = None
    code: str | None = None
    locale: str | None = None
    route: Any = None
    sources: tuple[Source, ...] = ()
    answer: Answer | None = None


# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Generate:
    """Where :meth:`Runner.stream` would call the model: the arguments of ``_generate``."""

    args: tuple[Any, ...]


class _RecordingPacks:
    """The runner's packs, keeping the last full route (for its evidence)."""

    def __init__(self, packs: _engine.PackView) -> None:
        self._view = packs
        self.routes: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._view, name)

    def route(self, text: str, previous: str | None = None) -> _engine.RouteInfo:
        raw = self._view.packs.route(text, previous=previous)
        self.routes.append(raw)
        return _engine.RouteInfo(
            kind=raw.kind,
            category=raw.category,
            locale=raw.locale,
            rule_id=raw.rule_id,
            topic=raw.topic,
        )


class _Planner:
    """The runner as :meth:`Runner.stream` sees it, except that calling the model hands
    back a :class:`_Generate` instead: every step before it is the runner's own code."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self.packs = _RecordingPacks(runner.packs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)

    def _generate(self, *args: Any) -> Iterator[Any]:
        yield _Generate(args)


@dataclass
class _Plan:
    final: Answer | None
    generate: _Generate | None
    routes: list[Any]


def _plan(runner: Runner, question: str, kwargs: dict[str, Any]) -> _Plan:
    planner = _Planner(runner)
    final: Answer | None = None
    generate: _Generate | None = None
    for item in Runner.stream(cast(Runner, planner), question, **kwargs):
        if isinstance(item, _Generate):
            generate = item
        elif isinstance(item, Answer):
            final = item
    return _Plan(final, generate, planner.packs.routes)


# ---------------------------------------------------------------- async models


class AsyncModelStream(Protocol):
    """A cancellable async stream of text pieces (see :class:`ModelStream`)."""

    def __aiter__(self) -> AsyncIterator[str]: ...

    def cancel(self) -> None: ...

    async def aclose(self) -> None: ...

    @property
    def received(self) -> str: ...

    @property
    def usage(self) -> Usage | None: ...

    @property
    def cancelled(self) -> bool: ...


class _SyncStream:
    """A synchronous :class:`ModelStream` read from async code.

    The scripted models compute their pieces up front, so they are read on the event
    loop (yielding to it between pieces); any other synchronous model is read in a
    worker thread, one piece at a time, so its network reads never block the loop.
    """

    def __init__(self, stream: ModelStream, inline: bool) -> None:
        self._stream = stream
        self._it = iter(stream)
        self._inline = inline
        self._closed = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._pieces()

    async def _pieces(self) -> AsyncIterator[str]:
        end = object()
        while not self._stream.cancelled:
            if self._inline:
                piece: Any = next(self._it, end)
                await asyncio.sleep(0)
            else:
                piece = await asyncio.to_thread(next, self._it, end)
            if piece is end:
                return
            yield piece

    def cancel(self) -> None:
        self._stream.cancel()

    async def aclose(self) -> None:
        self._stream.cancel()
        close = getattr(self._it, "close", None)
        if callable(close) and self._inline:
            with contextlib.suppress(Exception):
                close()

    @property
    def received(self) -> str:
        return self._stream.received

    @property
    def usage(self) -> Usage | None:
        return self._stream.usage

    @property
    def cancelled(self) -> bool:
        return self._stream.cancelled


async def open_stream(model: Any, prompt: Prompt) -> AsyncModelStream:
    """``model``'s stream for ``prompt``: its own ``astream`` when it has one."""
    astream = getattr(model, "astream", None)
    if callable(astream):
        return cast(AsyncModelStream, await astream(prompt))
    if isinstance(model, ScriptedModel):
        return _SyncStream(model.stream(prompt), inline=True)
    stream = await asyncio.to_thread(model.stream, prompt)
    return _SyncStream(stream, inline=False)


class _AsyncSseStream:
    """Server-sent events of ``/chat/completions`` read with httpx, under a deadline.

    The same checks as the synchronous client (:func:`read_event`, line and stream
    size limits); the deadline bounds the whole turn, so a server that drips one byte
    at a time is cut when it passes. ``cancel`` (sync, from the gate) marks the stream;
    ``aclose`` closes the connection, so the provider stops generating.
    """

    def __init__(
        self,
        response: Any,
        url: str,
        *,
        deadline: float,
        started: float,
        scrub: Callable[[str], str],
    ) -> None:
        self._resp = response
        self._url = url
        self._deadline = deadline
        self._started = started
        self._scrub = scrub
        self._received: list[str] = []
        self._usage: Usage | None = None
        self._cancelled = False
        self._closing: asyncio.Future[Any] | None = None

    def _error(self, message: str, cls: type[ModelError] = ModelError, **kw: Any) -> ModelError:
        return cls(self._scrub(message), **kw)

    def _remaining(self) -> float:
        return self._deadline - (time.monotonic() - self._started)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._pieces()

    async def _lines(self) -> AsyncIterator[bytes]:
        raw = self._resp.aiter_raw().__aiter__()
        buf = b""
        total = 0
        while not self._cancelled:
            remaining = self._remaining()
            if remaining <= 0:
                raise self._error(
                    f"the model stream passed the turn's deadline of {self._deadline:g} s"
                )
            try:
                chunk = await next_within(raw, remaining)
            except StopAsyncIteration:
                if buf:
                    yield buf
                return
            except asyncio.TimeoutError:
                raise self._error(
                    f"the model stream passed the turn's deadline of {self._deadline:g} s"
                ) from None
            except Exception as exc:  # httpx.ReadError, RemoteProtocolError, ...
                if self._cancelled:
                    return
                if not self._received:
                    raise self._error(
                        f"no answer from the model endpoint {self._url}: {_reason(exc)}",
                        ModelUnavailableError,
                        billable=True,
                    ) from exc
                raise self._error(f"model stream broke: {_reason(exc)}") from exc
            total += len(chunk)
            if total > MAX_STREAM_BYTES:
                raise self._error(f"the model stream is over {MAX_STREAM_BYTES} bytes")
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                line, buf = buf[: nl + 1], buf[nl + 1 :]
                if len(line) > MAX_EVENT_BYTES:
                    raise self._error(
                        f"an event line of the model stream is over {MAX_EVENT_BYTES} bytes"
                    )
                yield line
            if len(buf) > MAX_EVENT_BYTES:
                raise self._error(
                    f"an event line of the model stream is over {MAX_EVENT_BYTES} bytes"
                )

    async def _pieces(self) -> AsyncIterator[str]:
        seen = False
        try:
            async for line in self._lines():
                text = line.decode("utf-8", errors="replace").strip()
                if not text.startswith("data:"):
                    continue  # comments, event names, keep-alives
                data = text[5:].strip()
                seen = True
                if data == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except (ValueError, RecursionError) as exc:
                    raise self._error(f"malformed event from the model: {data[:80]!r}") from exc
                pieces, usage = read_event(event, self._error)
                if usage is not None:
                    self._usage = usage
                for piece in pieces:
                    self._received.append(piece)
                    yield piece
                    if self._cancelled:
                        return
            if not seen and not self._cancelled:
                raise self._error(
                    f"the model endpoint {self._url} closed the stream without any event"
                )
        finally:
            await self.aclose()

    def cancel(self) -> None:
        self._cancelled = True

    async def aclose(self) -> None:
        """Close the connection. The close runs in a task of its own, so a second
        cancellation of the caller cannot leave the provider's stream open."""
        self._cancelled = True
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._resp.aclose())
        with contextlib.suppress(Exception):
            await asyncio.shield(self._closing)

    @property
    def received(self) -> str:
        return "".join(self._received)

    @property
    def usage(self) -> Usage | None:
        return self._usage

    @property
    def cancelled(self) -> bool:
        return self._cancelled


async def within(awaitable: Any, timeout: float) -> Any:
    """``await awaitable`` for at most ``timeout`` seconds (``asyncio.TimeoutError``).

    Unlike ``asyncio.wait_for`` before Python 3.12, a cancellation of the caller is never
    lost when the awaited work finishes at the same moment: a reader who leaves always
    stops the turn.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _pending = await asyncio.wait({task}, timeout=max(0.0, timeout))
    except asyncio.CancelledError:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise
    if not done:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise asyncio.TimeoutError
    return task.result()


async def next_within(iterator: Any, timeout: float) -> Any:
    """The next item of an async iterator within ``timeout`` seconds (see :func:`within`)."""
    return await within(iterator.__anext__(), timeout)


#: Longest status line plus headers the stdlib transport reads from a model endpoint.
MAX_HEADER_BYTES = 64 * 1024


class _RawResponse:
    """An HTTP/1.1 response read with asyncio streams: status, headers, raw body bytes.

    The body is de-chunked (``Transfer-Encoding: chunked``), cut at ``Content-Length``,
    or read to the end of the connection. ``aclose`` closes the connection, which is
    what tells the provider to stop generating.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        status_code: int,
        headers: dict[str, str],
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.status_code = status_code
        self.headers = headers

    async def _chunked(self) -> AsyncIterator[bytes]:
        while True:
            line = await self._reader.readline()
            if not line.endswith(b"\n"):
                raise OSError("the connection closed inside a chunked body")
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise OSError("a malformed chunk size in the response") from None
            if size == 0:
                return
            while size > 0:
                data = await self._reader.read(min(size, 65536))
                if not data:
                    raise OSError("the connection closed inside a chunk")
                size -= len(data)
                yield data
            if await self._reader.readline() not in (b"\r\n", b"\n"):
                raise OSError("a chunk without its line end")

    async def _sized(self, length: int) -> AsyncIterator[bytes]:
        while length > 0:
            data = await self._reader.read(min(length, 65536))
            if not data:
                return
            length -= len(data)
            yield data

    async def _to_end(self) -> AsyncIterator[bytes]:
        while True:
            data = await self._reader.read(65536)
            if not data:
                return
            yield data

    def aiter_raw(self) -> AsyncIterator[bytes]:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._chunked()
        length = self.headers.get("content-length")
        if length is not None and length.strip().isdigit():
            return self._sized(int(length))
        return self._to_end()

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await within(self._writer.wait_closed(), 2.0)


class _StdlibHttp:
    """One POST per turn over asyncio streams (TLS from the standard library).

    No connection pool and no proxy support (``HTTPS_PROXY`` is not read): use
    ``http="httpx"`` for those. Never follows a redirect.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    async def post(
        self, url: str, body: bytes, headers: dict[str, str], deadline: float
    ) -> _RawResponse:
        import ssl
        import urllib.parse

        parts = urllib.parse.urlsplit(url)
        https = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if https else 80)
        context = ssl.create_default_context() if https else None
        started = time.monotonic()
        try:
            reader, writer = await within(
                asyncio.open_connection(
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if https else None,
                    limit=MAX_HEADER_BYTES,
                ),
                min(self.timeout, deadline),
            )
        except asyncio.TimeoutError:
            raise _ConnectError("timed out", billable=False) from None
        except (OSError, ssl.SSLError) as exc:
            raise _ConnectError(_reason(exc), billable=False) from None
        for value in headers.values():
            if "\r" in value or "\n" in value or not value.isascii():
                writer.close()
                # never echo the value: it may be the key
                raise ModelError("a request header (the API key?) holds a line break or non-ASCII")
        authority = host if ":" not in host else f"[{host}]"
        if parts.port:
            authority += f":{parts.port}"
        path = parts.path or "/"
        lines = [f"POST {path} HTTP/1.1", f"Host: {authority}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += [
            f"Content-Length: {len(body)}",
            "Connection: close",
            "User-Agent: guardlex",
        ]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            writer.write(head + body)
            await within(writer.drain(), max(0.0, deadline - (time.monotonic() - started)))
            raw = await within(
                reader.readuntil(b"\r\n\r\n"),
                max(0.0, min(self.timeout, deadline - (time.monotonic() - started))),
            )
        except asyncio.TimeoutError:
            writer.close()
            raise _ConnectError("timed out", billable=True) from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            writer.close()
            raise _ConnectError(_reason(exc) or "the connection closed", billable=True) from None
        status_line, *header_lines = raw.decode("latin-1").split("\r\n")
        try:
            status = int(status_line.split()[1])
        except (IndexError, ValueError):
            writer.close()
            raise _ConnectError("the endpoint did not answer HTTP", billable=True) from None
        fields: dict[str, str] = {}
        for line in header_lines:
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        return _RawResponse(reader, writer, status, fields)


class _ConnectError(Exception):
    def __init__(self, reason: str, *, billable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.billable = billable


def _require_httpx() -> Any:
    try:
        import httpx
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelError(
            "the async OpenAI-compatible client needs httpx: pip install 'guardlex[serve]'"
        ) from exc
    return httpx


class AsyncOpenAIChatModel:
    """An async client for an OpenAI-compatible ``/chat/completions`` endpoint (httpx).

    Like :class:`~guardlex.runner.models.OpenAIChatModel`: redirects are never followed
    (the request carries the API key), the key is scrubbed from every error message,
    ``timeout`` bounds the connect and each read and ``deadline`` the whole turn.
    ``max_connections`` bounds the connections to the provider this client keeps open.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        temperature: float = 0.0,
        deadline: float = DEFAULT_TURN_DEADLINE,
        max_connections: int = 100,
        http: str = "stdlib",
    ) -> None:
        check_endpoint(base_url, api_key)
        if http not in ("stdlib", "httpx"):
            raise ModelError(f"http must be 'stdlib' or 'httpx', not {http!r}")
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self._api_key = api_key
        self.timeout = timeout
        self.deadline = deadline
        self.temperature = temperature
        self.max_connections = max_connections
        self._client: Any = None
        self._loop: Any = None

    def __repr__(self) -> str:  # never the key
        return f"AsyncOpenAIChatModel({safe_url(self.base_url)!r}, {self.model!r})"

    def _scrub(self, message: str) -> str:
        key = self._api_key
        if key:
            message = message.replace(key, "[key]")
        return " ".join(message.split())

    def _http(self) -> Any:
        httpx = _require_httpx()
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(
                follow_redirects=False,
                timeout=httpx.Timeout(min(self.timeout, self.deadline)),
                limits=httpx.Limits(
                    max_connections=self.max_connections,
                    max_keepalive_connections=min(20, self.max_connections),
                ),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None

    def stream(self, prompt: Prompt) -> ModelStream:
        raise ModelError("AsyncOpenAIChatModel is async only: use Runner.astream")

    async def astream(self, prompt: Prompt) -> AsyncModelStream:
        """Open the stream. Raises :class:`ModelUnavailableError` when the endpoint cannot
        be reached or answers with an HTTP error, before any text is produced."""
        body = {
            "model": self.model,
            "messages": prompt.messages(),
            "stream": True,
            "max_tokens": prompt.max_output_tokens,
            "temperature": self.temperature,
            "stream_options": {"include_usage": True},
        }
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        url = f"{self.base_url}/chat/completions"
        shown = safe_url(url)
        started = time.monotonic()
        if self.http == "stdlib":
            try:
                resp: Any = await _StdlibHttp(self.timeout).post(
                    url, json.dumps(body).encode("utf-8"), headers, self.deadline
                )
            except _ConnectError as exc:
                raise ModelUnavailableError(
                    self._scrub(f"cannot connect to the model endpoint {shown}: {exc.reason}"),
                    billable=exc.billable,
                ) from None
            return await self._checked(resp, shown, started)
        httpx = _require_httpx()
        client = self._http()
        try:
            request = client.build_request("POST", url, json=body, headers=headers)
            resp = await within(client.send(request, stream=True), self.deadline)
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:
            raise ModelUnavailableError(
                self._scrub(f"cannot connect to the model endpoint {shown}: timed out"),
                billable=not isinstance(exc, httpx.ConnectTimeout),
            ) from None
        except (httpx.HTTPError, OSError, ValueError) as exc:
            raise ModelUnavailableError(
                self._scrub(f"cannot connect to the model endpoint {shown}: {_reason(exc)}")
            ) from None
        return await self._checked(resp, shown, started)

    async def _checked(self, resp: Any, shown: str, started: float) -> AsyncModelStream:
        """The stream of a response, or the error its status or content type says."""
        if resp.status_code >= 300:
            detail = ""
            if resp.status_code < 400:
                detail = "redirects are not followed (the request carries the API key)"
            else:
                with contextlib.suppress(Exception):
                    head = b""
                    async for chunk in resp.aiter_raw():
                        head += chunk
                        if len(head) >= 200:
                            break
                    detail = head[:200].decode("utf-8", errors="replace")
            with contextlib.suppress(Exception):
                await resp.aclose()
            raise ModelUnavailableError(
                self._scrub(
                    f"the model endpoint {shown} answered HTTP {resp.status_code}"
                    + (f": {detail}" if detail.strip() else "")
                )
            )
        ctype = (resp.headers.get("content-type") or "").split(";")[0].strip().lower()
        if ctype and ctype != "text/event-stream":
            with contextlib.suppress(Exception):
                await resp.aclose()
            raise ModelError(
                self._scrub(
                    f"the model endpoint {shown} answered {ctype[:60]!r}, not an event stream "
                    "(text/event-stream)"
                )
            )
        return _AsyncSseStream(
            resp, shown, deadline=self.deadline, started=started, scrub=self._scrub
        )


# ---------------------------------------------------------------- the turn


async def _capped(
    stream: AsyncModelStream, limit: int, state: dict[str, Any]
) -> AsyncGenerator[str, None]:
    """``pipeline._capped`` for an async stream (the same :func:`cap_piece`)."""
    async for piece in stream:
        part, full = cap_piece(piece, limit, state)
        if full:
            stream.cancel()
            if part:
                yield part
            return
        yield part


async def _guarded(
    stream: AsyncModelStream, pieces: AsyncIterator[str], state: dict[str, Any]
) -> AsyncGenerator[str, None]:
    """``pipeline._guarded`` for an async stream (the same :class:`NoAnswerCheck`)."""
    check = NoAnswerCheck()
    try:
        async for piece in pieces:
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


async def _close_and_settle(
    runner: Runner,
    reservation: Any,
    prompt: Prompt,
    stream: AsyncModelStream | None,
    state: dict[str, Any],
    trace: list[str],
) -> int:
    """Close the provider's stream, then record the call's cost. Survives cancellation:
    the settlement runs to its end even when the reader's task is cancelled meanwhile."""
    if stream is not None:
        try:
            await asyncio.shield(stream.aclose())
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            _engine_log().warning("closing the model stream failed: %s", exc)
    work = asyncio.ensure_future(
        asyncio.to_thread(
            runner._settle, reservation, prompt, cast(ModelStream, stream), state, trace
        )
    )
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        # The reader is gone; the thread still settles. Keep a reference until it does.
        _PENDING.add(work)
        work.add_done_callback(_PENDING.discard)
        raise


_PENDING: set[asyncio.Future[Any]] = set()


def _engine_log() -> Any:
    from guardlex.runner.pipeline import log

    return log


async def _agenerate(
    runner: Runner,
    question: str,
    sources: tuple[Source, ...],
    loc: str,
    kind: str,
    trace: list[str],
    extras: dict[str, Any],
    ok_code: str,
) -> AsyncGenerator[TurnEvent, None]:
    """Budget guard, model, sentence gate: ``Runner._generate`` on the event loop."""
    prompt = Prompt(question, tuple(s.text for s in sources), loc, runner.max_output_tokens, kind)
    decision = await asyncio.to_thread(
        runner.ledger.reserve, prompt.render(), runner.max_output_tokens
    )
    if not decision.allowed:
        refused = runner._budget_refusal(decision, trace, loc, sources, extras)
        yield TurnEvent("message", text=refused.text, message=refused.text, code=refused.code)
        yield TurnEvent("answer", answer=refused)
        return
    assert decision.reservation is not None
    reservation = decision.reservation
    yield TurnEvent("sources", sources=sources, locale=loc)
    pieces: list[str] = []
    code = ok_code
    stream: AsyncModelStream | None = None
    model: Model | None = None
    state = new_stream_state()
    cost = reservation.amount
    try:
        try:
            try:
                model = runner.model
                stream = await open_stream(model, prompt)
            except ModelError:
                raise
            except Exception as exc:  # a third-party model's bug is a model error
                raise ModelError(f"the model failed to start: {type(exc).__name__}: {exc}") from exc
            gate = runner._gate_factory([s.text for s in sources], runner.packs, loc, stream.cancel)
            capped = _capped(stream, runner.max_output_tokens, state)
            guarded = _guarded(stream, capped, state)
            events = gate.astream(guarded)
            try:
                async for ev in events:
                    text, code = runner._gate_event(ev, pieces, trace, loc, code)
                    if ev.kind == "released":
                        yield TurnEvent("sentence", text=ev.text, markers=ev.markers)
                    elif ev.kind == "stop":
                        stream.cancel()
                        msg = (text or "").lstrip("\n")
                        yield TurnEvent("stop", text=text or "", message=msg, reason=ev.reason)
                        break
                    elif ev.kind == "truncated":
                        msg = (text or "").lstrip("\n")
                        yield TurnEvent("truncated", text=text or "", message=msg)
            finally:
                for gen in (events, guarded, capped):
                    aclose = getattr(gen, "aclose", None)
                    if aclose is not None:
                        with contextlib.suppress(Exception):
                            await aclose()
        except ModelError as exc:
            model_failed(exc, state)
    finally:
        cost = await _close_and_settle(runner, reservation, prompt, stream, state, trace)
    text, answer = runner._outcome(state, pieces, code, trace, loc, sources, cost, model, extras)
    if text is not None:
        yield TurnEvent("message", text=text, message=text, code=answer.code)
    yield TurnEvent("answer", answer=answer)


async def turn_events(
    runner: Runner,
    question: str,
    *,
    previous: str | None = None,
    previous_answer: str | None = None,
    client: str | None = None,
    locale: str | None = None,
) -> AsyncGenerator[TurnEvent, None]:
    """One turn as :class:`TurnEvent` values: ``route``, then the answer's events, then
    ``answer``. Input errors (empty, too long, unknown locale) raise before any event."""
    kwargs: dict[str, Any] = {
        "previous": previous,
        "previous_answer": previous_answer,
        "client": client,
        "locale": locale,
    }
    plan = await asyncio.to_thread(_plan, runner, question, kwargs)
    route = plan.routes[0] if plan.routes else None
    if plan.final is not None:
        ans = plan.final
        yield TurnEvent("route", route=route, locale=ans.locale)
        kind = "refused" if ans.code == REFUSED else "message"
        reason = ans.category if kind == "refused" else None
        yield TurnEvent(kind, text=ans.text, message=ans.text, code=ans.code, reason=reason)
        yield TurnEvent("answer", answer=ans)
        return
    assert plan.generate is not None
    args = plan.generate.args
    yield TurnEvent("route", route=route, locale=args[2])
    gen = _agenerate(runner, *args)
    try:
        async for ev in gen:
            yield ev
    finally:
        # A reader who leaves closes this generator: close the turn's at once, so the
        # provider's stream is closed and the call settled now, not at garbage collection.
        await gen.aclose()


async def astream(
    runner: Runner,
    question: str,
    **kwargs: Any,
) -> AsyncIterator[str | Answer]:
    """The pieces the reader sees, as they are released, then the :class:`Answer`."""
    events = turn_events(runner, question, **kwargs)
    try:
        async for ev in events:
            if ev.kind == "answer":
                assert ev.answer is not None
                yield ev.answer
            elif ev.kind in ("sentence", "stop", "truncated", "refused", "message"):
                yield ev.text
    finally:
        await events.aclose()


async def aask(runner: Runner, question: str, **kwargs: Any) -> Answer:
    """Answer one question (the streamed pieces joined)."""
    answer: Answer | None = None
    async for item in astream(runner, question, **kwargs):
        if isinstance(item, Answer):
            answer = item
    assert answer is not None
    return answer
