"""Invariants, checked with hypothesis: the async turn is the synchronous turn, the
client address is never a hop the client could forge, conversations stay bounded."""

from __future__ import annotations

import asyncio
import ipaddress

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guardlex.errors import GuardlexError
from guardlex.runner.pipeline import Answer, Runner
from guardlex.serve.app import Conversations, client_address, parse_networks

WORDS = st.sampled_from(
    [
        "how",
        "does",
        "the",
        "sentence",
        "gate",
        "check",
        "citation",
        "markers",
        "price",
        "week",
        "her",
        "career",
        "lately",
        "cache",
        "hit",
        "rate",
        "semantic",
        "dana",
        "reyes",
        "harbor",
        "cranes",
        "qué",
        "diseñó",
        "compuerta",
        "句子",
        "闸门",
        "قیمت",
    ]
)
QUESTIONS = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


async def _pieces(runner: Runner, q: str) -> list[object]:
    return [p async for p in runner.astream(q)]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(question=QUESTIONS)
def test_the_async_turn_is_the_sync_turn(runner: Runner, question: str) -> None:
    try:
        sync = list(runner.stream(question))
    except GuardlexError as exc:
        try:
            asyncio.run(runner.aask(question))
        except GuardlexError as aexc:
            assert type(aexc) is type(exc)
            return
        raise AssertionError("the async turn did not raise") from exc
    got = asyncio.run(_pieces(runner, question))
    assert [p for p in got if isinstance(p, str)] == [p for p in sync if isinstance(p, str)]
    a, b = sync[-1], got[-1]
    assert isinstance(a, Answer) and isinstance(b, Answer)
    assert (a.code, a.trace, a.text, a.cost_tokens) == (b.code, b.trace, b.text, b.cost_tokens)


ADDRESSES = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str),
    st.text(alphabet=st.characters(blacklist_characters=","), max_size=12),
)


@given(
    peer=ADDRESSES,
    hops=st.lists(ADDRESSES, max_size=5),
    trusted=st.lists(st.sampled_from(["10.0.0.0/8", "127.0.0.1", "::1", "192.168.0.0/16"])),
)
def test_client_address_is_the_peer_or_the_last_untrusted_hop(
    peer: str, hops: list[str], trusted: list[str]
) -> None:
    nets = parse_networks(trusted)
    got = client_address(peer, [", ".join(hops)] if hops else [], nets)

    def is_trusted(a: str) -> bool:
        try:
            ip = ipaddress.ip_address(a.strip().strip("[]"))
        except ValueError:
            return False
        return any(ip in n for n in nets)

    shown_peer = peer or "unknown"
    if not is_trusted(peer):
        assert got == shown_peer  # an untrusted peer's header is never read
    else:
        from_hops = {str(ipaddress.ip_address(h.strip().strip("[]"))) for h in hops if _ip(h)}
        assert got == shown_peer or got in from_hops
        assert got == shown_peer or not is_trusted(got)


def _ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return False
    return True


@given(
    ops=st.lists(st.tuples(st.integers(0, 30), st.floats(0, 5)), max_size=60),
    bound=st.integers(1, 8),
)
def test_conversations_stay_bounded(ops: list[tuple[int, float]], bound: int) -> None:
    now = [0.0]
    conv = Conversations(max_items=bound, ttl=3.0, clock=lambda: now[0])
    for key, step in ops:
        now[0] += step
        conv.put(f"c{key}", "q", "a")
        assert len(conv) <= bound
        assert conv.get(f"c{key}") is not None
