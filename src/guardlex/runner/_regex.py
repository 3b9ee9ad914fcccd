"""The one regex timeout of the runner.

Documents, questions and model output are untrusted text, so every pattern of the
runner is matched with the ``regex`` module and this timeout (``timeout=`` on every
call): a pathological input costs at most this long, then raises ``TimeoutError``.
"""

from __future__ import annotations

#: Seconds any single regex call of the runner may take.
REGEX_TIMEOUT = 1.0
