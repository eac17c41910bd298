"""One lock per study, shared by every worker of the fleet.

PostgreSQL: a session-level advisory lock (``pg_advisory_lock``) on a dedicated
connection, keyed by the study name. The server frees it when the holder's connection
dies, so a ``kill -9`` never leaves the fleet stuck. SQLite (local workers only): an
``flock`` on a file beside the database. Held only for short bookkeeping (claim a trial,
fail stale ones) and for the one-time baseline.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path
from types import TracebackType

import sqlalchemy

from hone.tune.storage import explain, is_postgres


def lock_key(study_name: str) -> int:
    """A signed 64-bit advisory-lock key for ``study_name`` (stable across machines)."""
    digest = hashlib.sha256(f"hone-study:{study_name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class StudyLock:
    """Re-entrant-free mutual exclusion between the workers of one study."""

    def __init__(self, url: str, study_name: str, engine: sqlalchemy.engine.Engine | None = None) -> None:
        self.url = url
        self.study_name = study_name
        self._key = lock_key(study_name)
        self._engine = engine
        self._conn: sqlalchemy.engine.Connection | None = None
        self._fd: int | None = None

    def _connection(self) -> sqlalchemy.engine.Connection:
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            assert self._engine is not None
            try:
                self._conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            except sqlalchemy.exc.SQLAlchemyError as exc:
                raise explain(exc, self.url) from None
        return self._conn

    def acquire(self) -> None:
        if is_postgres(self.url):
            try:
                self._connection().execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": self._key})
            except sqlalchemy.exc.DBAPIError:
                # The connection died while idle (server restart, firewall timeout): the
                # server dropped any lock with it; take a fresh connection once.
                self.close()
                try:
                    self._connection().execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": self._key})
                except sqlalchemy.exc.SQLAlchemyError as exc:
                    raise explain(exc, self.url) from None
            return
        path = self._lock_path()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if is_postgres(self.url):
            if self._conn is not None and not self._conn.closed:
                self._conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
            return
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _lock_path(self) -> Path:
        db = self.url.split(":///", 1)[1] if ":///" in self.url else ""
        safe = hashlib.sha256(self.study_name.encode()).hexdigest()[:16]
        base = Path(db).parent if db and db != ":memory:" else Path("/tmp")
        return base / f".hone-study-{safe}.lock"

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlalchemy.exc.SQLAlchemyError:
                pass
            self._conn = None

    def __enter__(self) -> StudyLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
