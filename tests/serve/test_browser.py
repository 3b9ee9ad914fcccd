"""End to end in a real browser: Debian's Chromium, headless, driven by Playwright,
against `guardlex serve` on 127.0.0.1 and a fake OpenAI-compatible model server.

Marked ``browser``. Chromium missing is a failure under CI=true (``.ci/run`` installs
it), a skip elsewhere.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest

from guardlex.runner.aio import AsyncOpenAIChatModel
from guardlex.runner.costs import BudgetLedger
from guardlex.runner.pipeline import Runner

from .conftest import ANSWERABLE, REFUSED_Q, FakeModelServer, LiveServer, make_app

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("GUARDLEX_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing(why: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests must run in CI: {why}", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install 'guardlex[browser]')")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def site(serve_store, serve_packs, model_server: FakeModelServer) -> Iterator[Any]:
    model = AsyncOpenAIChatModel(model_server.base_url, "fake", deadline=30)
    ledger = BudgetLedger(":memory:", 10**7)
    runner = Runner(serve_store, serve_packs, model=lambda: model, ledger=ledger)
    server = LiveServer(make_app(runner)).start()
    server.ledger = ledger  # type: ignore[attr-defined]
    yield server
    server.stop()


def _ask(page: Any, question: str) -> None:
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#question", question)
    page.press("#question", "Enter")


def _done(page: Any, timeout: float = 20_000) -> Any:
    page.wait_for_selector(".answer[data-state='done']", timeout=timeout)
    return page.locator(".answer").last


def test_refused_question_shows_the_fixed_refusal(browser, site) -> None:
    page = browser.new_page()
    page.goto(site.url + "/?locale=en&operator=1")
    _ask(page, REFUSED_Q)
    answer = _done(page)
    assert answer.locator(".notice.refused").inner_text() == "REFUSAL-TEXT-en"
    assert answer.locator(".sentence").count() == 0
    panel = page.locator(".operator").last.inner_text()
    assert "engagement-price" in panel and "REFUSED:engagement" in panel
    page.close()


def test_answer_sentences_arrive_one_by_one_with_source_links(
    browser, site, model_server: FakeModelServer
) -> None:
    model_server.mode = "slow"
    model_server.delay = 1.0
    page = browser.new_page()
    page.goto(site.url + "/?locale=en")
    _ask(page, ANSWERABLE)
    page.wait_for_selector(".sentence")
    # the first sentence is on the page while the second is still being generated
    assert page.locator(".sentence").count() == 1
    assert page.locator(".answer").last.get_attribute("data-state") == "streaming"
    answer = _done(page)
    assert answer.locator(".sentence").count() == 2
    assert answer.get_attribute("data-code") == "ANSWERED"
    first = answer.locator(".sentence").first.inner_text()
    assert first.startswith("Dana Reyes designed a sentence gate") and "[1]" in first
    assert answer.locator(".sources li").first.inner_text() == "Sentence gates"
    page.close()


def test_gate_stop_keeps_the_released_sentences(
    browser, site, model_server: FakeModelServer
) -> None:
    model_server.mode = "invent"
    model_server.delay = 0.2
    page = browser.new_page()
    page.goto(site.url + "/?locale=en")
    _ask(page, ANSWERABLE)
    answer = _done(page)
    assert answer.locator(".sentence").count() == 1
    assert "7919" not in answer.inner_text()
    assert answer.locator(".notice.stop").inner_text() == "GATE-STOP-TEXT-en"
    assert answer.get_attribute("data-code") == "GATE_STOP"
    page.close()


def test_persian_is_rendered_right_to_left(browser, site) -> None:
    page = browser.new_page()
    page.goto(site.url + "/?locale=fa")
    _ask(page, "قیمت کار او برای یک هفته چقدر است؟")
    answer = _done(page)
    assert page.evaluate("document.documentElement.dir") == "rtl"
    assert answer.get_attribute("dir") == "rtl"
    assert answer.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert answer.locator(".notice.refused").inner_text() == "پیام-refusal"
    assert page.locator("#send").inner_text() == "بپرس"
    page.close()


def test_closing_the_page_cancels_the_model_stream(
    browser, site, model_server: FakeModelServer
) -> None:
    model_server.mode = "slow"
    model_server.delay = 0.3
    model_server.hold = 30.0
    page = browser.new_page()
    page.goto(site.url + "/?locale=en")
    _ask(page, ANSWERABLE)
    page.wait_for_selector(".sentence")
    page.close()
    # the server saw the reader leave and closed its stream to the model
    assert model_server.wait_for("disconnects", 1, timeout=10)
    assert model_server.completed == 0
    end = time.monotonic() + 10
    while site.ledger.usage()[1] and time.monotonic() < end:
        time.sleep(0.05)
    spent, reserved = site.ledger.usage()
    assert reserved == 0 and spent > 0  # the cut stream's cost was recorded
