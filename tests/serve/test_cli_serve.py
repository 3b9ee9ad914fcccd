"""`guardlex serve` as the README starts it: a fresh store, the real packs, a plain
HTTP client."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from guardlex.cli import build_parser, main

from .conftest import free_port, post_sse

SITE = Path(__file__).resolve().parents[2] / "src" / "guardlex" / "corpus" / "site"


def test_flags_are_checked_before_anything_starts(tmp_path: Path, capsys) -> None:
    store = tmp_path / "none.sqlite"
    for extra, needle in [
        (["--trusted-proxy", "nonsense"], "not an IP address"),
        (["--rate-limits", "1,2"], "three numbers"),
        (["--port", "0"], "--port"),
        (["--threshold", "2"], "--threshold"),
    ]:
        assert main(["serve", "--store", str(store), *extra]) == 2
        assert needle in capsys.readouterr().err


def test_openai_model_off_loopback_needs_a_key(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(
        [
            "serve",
            "--store",
            str(tmp_path / "x.sqlite"),
            "--model",
            "openai",
            "--base-url",
            "https://api.example.com/v1",
        ]
    )
    assert code == 2 and "no API key" in capsys.readouterr().err


def test_serve_help_lists_every_documented_flag(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = capsys.readouterr().out
    doc = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text()
    for flag in ("--store", "--host", "--port", "--packs", "--model", "--trusted-proxy"):
        assert flag in text and f"`{flag}" in doc


def test_real_serve_on_a_fresh_store(tmp_path: Path) -> None:
    store = tmp_path / "site.sqlite"
    assert (
        main(["index", str(SITE), "--store", str(store), "--subject", "Dana Reyes", "--quiet"]) == 0
    )
    port = free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from guardlex.cli import main; raise SystemExit(main())",
            "serve",
            "--store",
            str(store),
            "--port",
            str(port),
            "--no-warm-up",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(proc.stderr.read().decode() if proc.stderr else "exited")
            try:
                urllib.request.urlopen(url + "/api/health", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > end:
                    pytest.fail("guardlex serve did not start")
                time.sleep(0.2)
        _s, _h, refused = post_sse(
            url + "/api/ask", {"question": "How much does she charge per day?"}
        )
        assert [e for e, _d, _t in refused] == ["route", "refused", "done"]
        assert refused[1][1]["category"] == "engagement"
        _s, _h, answer = post_sse(url + "/api/ask", {"question": "What did she build for search?"})
        sentences = [d for e, d, _t in answer if e == "sentence"]
        assert sentences and answer[-1][1]["code"] == "ANSWERED"
        assert all(s["sources"] for s in sentences)
        page = urllib.request.urlopen(url + "/").read().decode()
        assert "<form" in page
    finally:
        proc.terminate()
        proc.wait(10)


def test_docs_python_example_builds_an_app(tmp_path: Path) -> None:
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc, flags=re.S) if "create_app" in b]
    store = tmp_path / "site.sqlite"
    assert main(["index", str(SITE), "--store", str(store), "--subject", "Dana Reyes",
                 "--quiet"]) == 0  # fmt: skip
    records: list[object] = []

    class Logger:
        info = records.append

    scope: dict[str, object] = {"my_logger": Logger()}
    exec(block.replace('"site.sqlite"', repr(str(store))), scope)
    app = scope["app"]
    assert app.state.guardlex.settings.on_turn is not None  # type: ignore[attr-defined]


def test_serve_build_with_an_openai_endpoint(tmp_path: Path, model_server, monkeypatch) -> None:
    """The CLI's wiring for --model openai: the async client, the ledger file, the key
    kept out of the settings' output."""
    from guardlex.cli.serve import build
    from guardlex.runner.aio import AsyncOpenAIChatModel

    from .conftest import LiveServer

    store = tmp_path / "site.sqlite"
    assert main(["index", str(SITE), "--store", str(store), "--subject", "Dana Reyes",
                 "--quiet"]) == 0  # fmt: skip
    monkeypatch.setenv("FAKE_KEY", "sk-cli-secret")
    ledger = tmp_path / "ledger.sqlite"
    args = build_parser().parse_args(
        [
            "serve",
            "--store",
            str(store),
            "--model",
            "openai",
            "--base-url",
            model_server.base_url,
            "--api-key-env",
            "FAKE_KEY",
            "--ledger",
            str(ledger),
            "--new-ledger",
            "--no-rate-limit",
            "--turn-deadline",
            "5",
        ]
    )
    runner, limiter, settings = build(args)
    assert limiter is None and settings.secrets == ("sk-cli-secret",)  # type: ignore[attr-defined]
    assert isinstance(runner.model, AsyncOpenAIChatModel)  # type: ignore[attr-defined]
    from guardlex.serve import create_app

    server = LiveServer(create_app(runner, settings=settings)).start()  # type: ignore[arg-type]
    try:
        _s, _h, events = post_sse(
            server.url + "/api/ask", {"question": "What is a semantic cache?"}
        )
    finally:
        server.stop()
    assert events[-1][1]["code"] in ("ANSWERED", "GATE_STOP", "MODEL_NO_ANSWER"), events
    assert model_server.headers[-1]["Authorization"] == "Bearer sk-cli-secret"
    assert runner.ledger.usage()[0] > 0 and ledger.exists()  # type: ignore[attr-defined]
