"""``guardlex serve``: the assistant over HTTP (server-sent events) with a web page.

Needs the ``serve`` extra (Starlette, uvicorn, httpx): ``pip install 'guardlex[serve]'``.
See docs/serve.md.
"""

from __future__ import annotations

from guardlex.serve.app import (
    Conversations,
    ServeSettings,
    client_address,
    create_app,
    parse_networks,
)

__all__ = ["Conversations", "ServeSettings", "client_address", "create_app", "parse_networks"]
