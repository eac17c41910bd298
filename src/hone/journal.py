"""Write-ahead journal of original knob values: apply, restore, status.

Before a knob's first change its original state is appended to ``journal.jsonl`` in the
state directory and fsync'd (file and directory). A ``kill -9`` at any moment therefore
leaves either no change or a change whose original is on disk; ``hone rollback`` restores
every original, newest first, and is idempotent. One :class:`StateLock` (``flock``, freed
by the kernel when the holder dies) keeps two hone processes from changing one machine.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hone.errors import HoneError, KnobError, LockedError
from hone.knobs import KnobDriver, driver_from_dict
from hone.paths import state_dir

JOURNAL_VERSION = 1


class StateLock:
    """An exclusive, non-blocking lock on the state directory."""

    def __init__(self, directory: Path | None = None, purpose: str = "") -> None:
        self.directory = directory or state_dir()
        self.path = self.directory / "lock"
        self.purpose = purpose
        self._fd: int | None = None

    def acquire(self) -> StateLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LockedError(
                f"another hone process holds the lock on {self.directory} ({holder})",
                hint="wait for it to finish, or set HONE_STATE_DIR for an independent run",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} {self.purpose}".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> StateLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class Entry:
    """An original-value record still waiting to be restored."""

    ident: str
    knob: dict[str, Any]
    snapshot: dict[str, Any]
    ts: float
    pid: int

    def driver(self) -> KnobDriver:
        return driver_from_dict(self.knob)


@dataclass
class RestoreOutcome:
    ident: str
    ok: bool
    message: str


class Journal:
    """The journal file in the state directory. Not thread-safe; guard with StateLock."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir()
        self.path = self.directory / "journal.jsonl"

    # -- low level -----------------------------------------------------------

    def _append(self, record: dict[str, Any]) -> None:
        record = {"v": JOURNAL_VERSION, "ts": time.time(), "pid": os.getpid(), **record}
        line = json.dumps(record, sort_keys=True) + "\n"
        new_file = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if new_file:
            dfd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def records(self) -> Iterator[dict[str, Any]]:
        if not self.path.exists():
            return
        with self.path.open() as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    # A torn last line (killed mid-write) held no change yet: skip it.
                    continue

    def active(self) -> list[Entry]:
        """Originals not yet restored, oldest first."""
        pending: dict[str, Entry] = {}
        for rec in self.records():
            if rec.get("op") == "original":
                pending.setdefault(
                    rec["id"], Entry(rec["id"], rec["knob"], rec["snapshot"], rec["ts"], rec["pid"])
                )
            elif rec.get("op") == "restored":
                pending.pop(rec["id"], None)
        return sorted(pending.values(), key=lambda e: e.ts)

    def last_set(self) -> dict[str, str]:
        """The last value hone wrote to each knob identity."""
        out: dict[str, str] = {}
        for rec in self.records():
            if rec.get("op") == "set":
                out[rec["id"]] = rec["value"]
        return out

    # -- changes -------------------------------------------------------------

    def write(self, driver: KnobDriver, text: str) -> None:
        """Set ``driver`` to ``text``, recording its original first (once). A knob on
        several hosts is recorded and set host by host."""
        if not driver.changes_system:
            raise HoneError(f"{driver.describe()} does not change the system")
        for part in driver.parts():
            self._write_one(part, text)

    def _write_one(self, driver: KnobDriver, text: str) -> None:
        ident = driver.ident()
        if ident not in {e.ident for e in self.active()}:
            snapshot = driver.snapshot()
            self._append(
                {"op": "original", "id": ident, "knob": driver.model.model_dump(mode="json"), "snapshot": snapshot}
            )
        self._append({"op": "set", "id": ident, "value": text})
        driver.write(text)

    def restore(self, entries: list[Entry] | None = None) -> list[RestoreOutcome]:
        """Restore ``entries`` (default: all active), newest first. Failures are reported,
        not raised, so one stuck knob does not keep the others changed."""
        outcomes = []
        for entry in reversed(entries if entries is not None else self.active()):
            try:
                entry.driver().restore(entry.snapshot)
            except (KnobError, HoneError, OSError) as exc:
                outcomes.append(RestoreOutcome(entry.ident, False, str(exc)))
                continue
            self._append({"op": "restored", "id": entry.ident})
            outcomes.append(RestoreOutcome(entry.ident, True, "restored"))
        if not self.active() and self.path.exists():
            self._archive()
        return outcomes

    def _archive(self) -> None:
        """Everything is restored: move the file to history so the journal stays short."""
        history = self.directory / "journal-history.jsonl"
        with history.open("a") as out, self.path.open() as src:
            out.write(src.read())
        self.path.unlink()

    def status(self) -> list[dict[str, Any]]:
        """One row per changed knob: identity, original, current, and whether it differs."""
        rows = []
        last = self.last_set()
        for entry in self.active():
            row: dict[str, Any] = {
                "id": entry.ident,
                "original": entry.snapshot.get("value"),
                "set_by_hone": last.get(entry.ident),
                "since": entry.ts,
                "pid": entry.pid,
                "host": entry.knob.get("hosts", [None])[0] if entry.knob.get("hosts") else socket.gethostname(),
            }
            try:
                driver = entry.driver()
                row["current"] = driver.read()
                row["changed"] = not driver.matches(entry.snapshot)
            except (KnobError, HoneError, OSError) as exc:
                row["current"] = f"unreadable: {exc}"
                row["changed"] = True
            rows.append(row)
        return rows
