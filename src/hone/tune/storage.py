"""Optuna storage URLs for a fleet: open, mask, explain failures in one line.

Credentials come from the URL (``postgresql://user:pw@host/db``) or, when the URL has no
password, from libpq's own ``PGPASSWORD`` / ``~/.pgpass`` (psycopg2 reads them). A
password never reaches output: every URL hone prints goes through :func:`mask_url`, and
error text from the driver is scrubbed with :func:`scrub` before it is shown.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

import optuna
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from hone.core.errors import HoneError, import_extra

#: Seconds libpq waits for a TCP connection before giving up.
CONNECT_TIMEOUT_S = 10
#: Times to retry opening a storage that another worker is creating at the same moment.
SCHEMA_RACE_RETRIES = 5


class StorageError(HoneError):
    """The study storage cannot be used: unreachable, refused, or from a newer version."""


def is_postgres(url: str) -> bool:
    return url.split(":", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


def _password(url: str) -> str | None:
    try:
        return make_url(url).password  # type: ignore[return-value]
    except (ArgumentError, ValueError):
        m = re.match(r"^[a-z0-9+]+://[^:/@]*:([^@]*)@", url)
        return m.group(1) if m else None


def mask_url(url: str) -> str:
    """``postgresql://hone:secret@db/x`` → ``postgresql://hone:***@db/x`` (other URLs as given)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
    if parsed.password is None:
        return url
    return parsed.render_as_string(hide_password=True)


def scrub(text: str, url: str | None = None) -> str:
    """``text`` with the password of ``url`` (and of ``$PGPASSWORD``) replaced by ``***``."""
    for secret in (_password(url) if url else None, os.environ.get("PGPASSWORD")):
        if secret:
            text = text.replace(secret, "***")
    return re.sub(r"(postgres(?:ql)?(?:\+\w+)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)


def _where(url: str) -> str:
    try:
        u = make_url(url)
    except (ArgumentError, ValueError):
        return mask_url(url)
    if u.host:
        return f"{u.host}:{u.port or 5432}/{u.database or ''}"
    return mask_url(url)


def explain(exc: BaseException, url: str) -> StorageError:
    """Turn a driver/Optuna exception about ``url`` into one masked, actionable line."""
    raw = str(getattr(exc, "orig", None) or exc)
    first = scrub(raw.strip().splitlines()[0] if raw.strip() else type(exc).__name__, url)
    where = _where(url)
    low = raw.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        user = make_url(url).username if "://" in url else None
        return StorageError(
            f"storage {where}: password authentication failed for user {user!r}",
            hint="check the password in the URL, $PGPASSWORD or ~/.pgpass",
        )
    if "connection refused" in low or "could not connect" in low or "timeout expired" in low \
            or "could not translate host name" in low or "no route to host" in low:
        return StorageError(
            f"storage {where}: database server unreachable ({first})",
            hint="is PostgreSQL running and listening there? check host, port and firewall",
        )
    if "does not exist" in low and "database" in low:
        return StorageError(f"storage {where}: {first}", hint="create it with `createdb`")
    if "no longer compatible with the table schema" in low:
        newer = "pip install -U optuna" in raw
        what = "a newer" if newer else "an older"
        hint = ("upgrade hone's Optuna, or use another database" if newer
                else "run `optuna storage upgrade --storage URL` (back the database up first)")
        return StorageError(f"storage {where}: the study schema was written by {what} Optuna "
                            f"(this is Optuna {optuna.__version__})", hint=hint)
    if isinstance(exc, NoSuchModuleError | ArgumentError):
        return StorageError(f"storage {mask_url(url)}: not a usable database URL ({first})")
    if isinstance(exc, ImportError):
        return StorageError(f"storage {mask_url(url)}: no database driver for this URL is installed",
                            hint="hone's studies live in SQLite (sqlite:///PATH) or PostgreSQL (postgresql://…)")
    if "unable to open database file" in low or "file is not a database" in low:
        return StorageError(f"storage {mask_url(url)}: {first}",
                            hint="give sqlite:///PATH with PATH a writable SQLite file (or a new one in an "
                                 "existing, writable directory)")
    return StorageError(f"storage {where}: {first}")


def driver_url(url: str) -> str:
    """``postgresql://`` → ``postgresql+psycopg2://``: SQLAlchemy 2.1 defaults to psycopg 3,
    which hone does not install; an explicit ``+driver`` is kept."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg2://{rest}"
    return url


def require_driver(url: str) -> None:
    """PostgreSQL through psycopg2 (hone's ``fleet`` extra): MissingExtraError, one line
    with the ``pip install``, when it is not installed. Other URLs need nothing more."""
    if driver_url(url).startswith("postgresql+psycopg2://"):
        import_extra("psycopg2", "fleet", f"the PostgreSQL study storage {mask_url(url)}")


def engine_kwargs(url: str) -> dict[str, Any]:
    """SQLAlchemy engine options: a connect timeout and pre-ping for PostgreSQL."""
    if is_postgres(url):
        return {"connect_args": {"connect_timeout": CONNECT_TIMEOUT_S}, "pool_pre_ping": True}
    return {}


def open_storage(
    url: str,
    *,
    heartbeat_interval: int | None = None,
    grace_period: int | None = None,
    failed_trial_callback: Callable[[optuna.Study, optuna.trial.FrozenTrial], None] | None = None,
) -> optuna.storages.RDBStorage:
    """An Optuna RDB storage for ``url``; with ``heartbeat_interval`` (s) a worker that
    stops beating for ``grace_period`` (s) has its trial failed and handed to
    ``failed_trial_callback``. Raises :class:`StorageError` (one line, masked)."""
    require_driver(url)
    kwargs: dict[str, Any] = {}
    if heartbeat_interval is not None:
        kwargs.update(heartbeat_interval=heartbeat_interval, grace_period=grace_period,
                      failed_trial_callback=failed_trial_callback)
    for attempt in range(SCHEMA_RACE_RETRIES + 1):
        try:
            return optuna.storages.RDBStorage(driver_url(url), engine_kwargs=engine_kwargs(url), **kwargs)
        except (SQLAlchemyError, DBAPIError, RuntimeError, ValueError, ImportError) as exc:
            # Workers starting together on an empty database race to create Optuna's
            # tables; the losers see "already exists"/"duplicate key". The tables are
            # there a moment later, so try again.
            low = str(exc).lower()
            if attempt < SCHEMA_RACE_RETRIES and ("already exists" in low or "duplicate key" in low):
                time.sleep(0.5 * (attempt + 1))
                continue
            raise explain(exc, url) from None
    raise AssertionError("unreachable")


def prepare_storage(url: str) -> str:
    """Check ``url`` opens as an Optuna storage (one-line :class:`StorageError` if not: a
    PostgreSQL server that does not answer, an SQLite path that cannot be written or is not
    a database, a scheme without a driver) and return the URL Optuna should be given
    (explicit psycopg2 driver for PostgreSQL)."""
    open_storage(url).engine.dispose()
    return driver_url(url)
