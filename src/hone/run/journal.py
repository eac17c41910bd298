"""Write-ahead journal of originals, one per resource: apply, restore, status.

A *resource* is what one original covers (``KnobDriver.resource``): a whole config file
for every key hone edits in it, a sysctl, a sysfs file, a script knob, a binary — each per
host. Before hone first changes a resource, its original is appended to ``journal.jsonl``
in the state directory and fsync'd; only then is the resource changed. A ``kill -9`` at
any moment therefore leaves either no change or a change whose original is on disk;
``hone rollback`` restores every resource, newest first, checks each by reading it back,
and is idempotent.

Appends are complete or absent: a short write is retried, a failed one is cut off again
(``ftruncate``) and refused before anything changes, and a torn last line (a crash, a full
disk) is terminated before the next record so it never swallows it. Unreadable lines are
skipped with a warning. Restoring works on a read-only state directory.

One :class:`MachineLock` per machine (in :func:`hone.core.paths.machine_dir`, whatever the
state directory) keeps two hone processes from changing one machine at once, and a list of
the state directories that hold changes lets a hone refuse to journal, as an original, a
resource another state directory's journal still holds changed.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError, KnobError, LockedError
from hone.core.faults import crash_point
from hone.core.paths import machine_dir, state_dir
from hone.core.restart import Restart, run_restart
from hone.knobs import KnobDriver, driver_from_dict, driver_to_dict
from hone.knobs._files import state_bytes
from hone.knobs.base import same_text

JOURNAL_VERSION = 2
#: Attempts and pauses (s) for a restart command while restoring: a server that is still
#: shutting down often refuses the first one.
RESTART_PAUSES = (1.0, 3.0)
#: Free space kept beyond what the journal needs, in bytes.
SPACE_MARGIN = 1 << 20
REGISTRY = "state-dirs"


class JournalError(HoneError):
    """The journal cannot be written: nothing was changed."""


# ---------------------------------------------------------------- the machine lock


class MachineLock:
    """An exclusive, non-blocking lock for changing this machine, shared by every state
    directory. Re-entrant within one process; freed by the kernel when the holder dies."""

    _depth = 0
    _fd: int | None = None

    def __init__(self, directory: Path | None = None, purpose: str = "") -> None:
        self.directory = directory or machine_dir()
        self.path = self.directory / "lock"
        self.purpose = purpose

    @classmethod
    def held(cls) -> bool:
        return cls._depth > 0

    def acquire(self) -> MachineLock:
        cls = type(self)
        if cls._depth:
            cls._depth += 1
            return self
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            writable = True
        except OSError:
            # A read-only machine directory: lock the directory itself (rollback must work).
            fd = os.open(self.directory, os.O_RDONLY)
            writable = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = (os.read(fd, 400).decode(errors="replace").strip() if writable else "") or "unknown"
            os.close(fd)
            raise LockedError(
                f"another hone process is changing this machine ({holder})",
                hint="wait for it to finish; `hone status` shows what it changed",
            ) from None
        if writable:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()}: {self.purpose}; state dir {state_dir()}".encode(), 0)
        cls._fd = fd
        cls._depth = 1
        return self

    def release(self) -> None:
        cls = type(self)
        if cls._depth == 0:
            return
        cls._depth -= 1
        if cls._depth == 0 and cls._fd is not None:
            os.close(cls._fd)
            cls._fd = None

    def __enter__(self) -> MachineLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


#: Former name, kept for callers that lock unconditionally.
StateLock = MachineLock


def changes_system(drivers: Sequence[KnobDriver]) -> bool:
    return any(d.changes_system for d in drivers)


@contextlib.contextmanager
def machine_lock_if(needed: bool, purpose: str) -> Iterator[None]:
    """The machine lock when ``needed`` (the session may change the system), else nothing:
    sessions that only run benchmarks never block each other."""
    if not needed:
        yield
        return
    with MachineLock(purpose=purpose):
        yield


# ---------------------------------------------------------------- entries


@dataclass
class Entry:
    """A resource's original, waiting to be restored."""

    resource: str
    knob: dict[str, Any]
    snapshot: dict[str, Any]
    ts: float
    pid: int
    restarts: list[Restart] = field(default_factory=list)
    restoring: bool = False  # a restore began: a restart may still be owed
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)  # knob ident -> {"knob", "value"}

    @property
    def ident(self) -> str:
        return self.resource

    def driver(self) -> KnobDriver:
        driver = driver_from_dict(self.knob)
        remember = getattr(driver, "remember", None)
        if remember is not None:  # a service: the journal's last instance is what to stop
            remember(self.sets)
        return driver

    def set_drivers(self) -> list[KnobDriver]:
        """The driver of every knob hone set on this resource (the original's first)."""
        out = [self.driver()]
        seen = {out[0].ident()}
        for ident, info in self.sets.items():
            if ident in seen or not info.get("knob"):
                continue
            seen.add(ident)
            with contextlib.suppress(Exception):
                out.append(driver_from_dict(info["knob"]))
        return out


@dataclass
class RestoreOutcome:
    ident: str
    ok: bool
    message: str


# ---------------------------------------------------------------- the journal


class Journal:
    """The journal file of one state directory. Guard changes with :class:`MachineLock`."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir()
        self.path = self.directory / "journal.jsonl"
        self.warnings: list[str] = []
        self.append_failed = False
        self._knobs_noted: set[str] = set()

    # -- low level -----------------------------------------------------------

    def _append(self, record: dict[str, Any]) -> None:
        """Append one record completely (fsync'd) or not at all (JournalError)."""
        record = {"v": JOURNAL_VERSION, "ts": time.time(), "pid": os.getpid(), **record}
        data = (json.dumps(record, sort_keys=True) + "\n").encode()
        new_file = not self.path.exists()
        fd = self._open_locked()
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # end a torn line, so it cannot swallow this record
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise JournalError(self._cannot(exc)) from None
        finally:
            os.close(fd)
        if new_file:
            with contextlib.suppress(OSError):
                dfd = os.open(self.directory, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)

    def _open_locked(self) -> int:
        """The journal file open for appending, under its own ``flock``: appends of sessions
        without the machine lock (a service) never interleave with an archiving."""
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            except OSError as exc:
                raise JournalError(self._cannot(exc)) from None
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                return fd
            os.close(fd)  # archived while we waited: append to the new file

    def _cannot(self, exc: OSError) -> str:
        why = "the disk is full" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        return f"cannot write the journal {self.path}: {why}; nothing was changed"

    def _append_soft(self, record: dict[str, Any]) -> None:
        """Append, or remember why not (restoring must work on a read-only state dir)."""
        try:
            self._append(record)
        except JournalError as exc:
            self.append_failed = True
            self.warnings.append(f"{exc.message.removesuffix('; nothing was changed')} (the restore itself went on)")

    def records(self) -> Iterator[dict[str, Any]]:
        """Every readable record; torn or foreign lines are skipped with a warning."""
        self.warnings = [w for w in self.warnings if not w.startswith(f"{self.path}:")]
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            self.warnings.append(f"{self.path}: cannot read: {exc.strerror}")
            return
        with fh:
            for n, raw in enumerate(fh, 1):
                line = raw.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    self.warnings.append(f"{self.path}:{n}: unreadable line skipped (torn by a crash or a full disk?)")
                    continue
                if not isinstance(rec, dict) or not isinstance(rec.get("op"), str):
                    self.warnings.append(f"{self.path}:{n}: not a journal record, skipped")
                    continue
                yield rec

    def _entries(self) -> dict[str, Entry]:
        """Resource -> its pending original (restored ones dropped), in journal order."""
        pending: dict[str, Entry] = {}
        old_ids: dict[str, str] = {}  # format 1 named records by knob; map them to resources
        for n, rec in enumerate(self.records(), 1):
            try:
                res = rec.get("res") or old_ids.get(rec.get("id", ""), rec.get("id"))
                op = rec["op"]
                if op == "original":
                    if "res" not in rec:
                        res = _resource_of(rec["knob"], rec["id"])
                        old_ids[rec["id"]] = res
                    if res in pending:
                        continue  # format 1 wrote one original per knob: the oldest is the file's
                    entry = Entry(res, rec["knob"], rec["snapshot"], float(rec["ts"]), int(rec["pid"]))
                    entry.restarts = [Restart.from_json(x) for x in rec.get("restarts", [])]
                    if "res" not in rec:
                        with contextlib.suppress(Exception):
                            cmd = entry.driver().restart_command()
                            entry.restarts = [cmd] if cmd else []
                    pending[res] = entry
                elif res not in pending:
                    continue
                elif op == "set":
                    info = pending[res].sets.setdefault(rec.get("id", res), {})
                    info["value"] = rec.get("value")
                    if rec.get("knob"):
                        info["knob"] = rec["knob"]
                elif op == "restart":
                    item = Restart.from_json([rec["argv"], rec["timeout"], rec.get("ready")])
                    if item not in pending[res].restarts:
                        pending[res].restarts.append(item)
                elif op == "restoring":
                    pending[res].restoring = True
                elif op == "restored":
                    del pending[res]
            except (KeyError, TypeError, ValueError):
                self.warnings.append(f"{self.path}: record {n} ({rec.get('op')}) is incomplete, skipped")
        return pending

    def active(self) -> list[Entry]:
        """Originals not yet restored, oldest first."""
        return sorted(self._entries().values(), key=lambda e: e.ts)

    def last_set(self) -> dict[str, str]:
        """The last value hone wrote to each knob identity."""
        out: dict[str, str] = {}
        for rec in self.records():
            if rec.get("op") == "set" and isinstance(rec.get("id"), str):
                out[rec["id"]] = str(rec.get("value"))
        return out

    # -- before changing anything ---------------------------------------------

    def preflight(self, drivers: Sequence[KnobDriver]) -> None:
        """Refuse (JournalError) before anything changes when the journal could not hold the
        originals of ``drivers``: a missing, read-only or full state directory."""
        need = SPACE_MARGIN
        pending = set(self._entries())
        for d in drivers:
            for part in d.parts():
                if part.changes_system and part.resource() not in pending:
                    path = getattr(part, "path", None)
                    if part.kind in ("file", "binary") and path is not None and getattr(part, "host", None) is None:
                        with contextlib.suppress(OSError):
                            need += Path(path).stat().st_size * 2
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot create the state directory {self.directory}: {exc.strerror};"
                               " nothing was changed") from None
        target = self.path if self.path.exists() else self.directory
        if not os.access(target, os.W_OK):
            raise JournalError(f"the state directory {self.directory} is not writable (read-only?): hone journals"
                               " every original there before changing it; nothing was changed",
                               hint="set HONE_STATE_DIR to a writable directory")
        st = os.statvfs(self.directory)
        free = st.f_bavail * st.f_frsize
        if free < need:
            raise JournalError(f"the state directory {self.directory} has {free // 1024} KiB free, the journal needs"
                               f" about {need // 1024} KiB; nothing was changed")

    def foreign(self, resources: Sequence[str] | None = None) -> list[tuple[Path, Entry]]:
        """Resources that the journals of *other* state directories on this machine still
        hold changed (all of them, or those in ``resources``)."""
        out = []
        wanted = set(resources) if resources is not None else None
        for directory in _registered():
            if _same_dir(directory, self.directory):
                continue
            other = Journal(directory)
            for e in other.active():
                if wanted is None or e.resource in wanted:
                    out.append((directory, e))
        return out

    def refuse_foreign(self, resources: Sequence[str]) -> None:
        """Raise when another state directory's journal holds one of ``resources`` changed:
        its current value is that hone's change, not an original."""
        clash = self.foreign(resources)
        if clash:
            directory, e = clash[0]
            more = f" (and {len(clash) - 1} more)" if len(clash) > 1 else ""
            raise LockedError(
                f"{e.resource} was changed by hone with the state directory {directory} (pid {e.pid}) and is not"
                f" restored{more}: its current value is not the original",
                hint=f"restore it first: HONE_STATE_DIR={directory} hone rollback",
            )

    # -- changes -------------------------------------------------------------

    def ensure_original(self, driver: KnobDriver, snapshot: dict[str, Any] | None = None,
                        restarts: Sequence[Restart] = ()) -> bool:
        """Record ``driver``'s resource original once, before its first change (``snapshot``
        when the caller already took it). Returns True when it was recorded now."""
        if not MachineLock.held() and driver.kind != "service":
            # A server hone starts is a process of its session, not a machine setting: a
            # session whose only change it is runs without the lock (hone.run.configure).
            raise RuntimeError("journal changes need the machine lock")
        res = driver.resource()
        pending = self._entries()
        if res in pending:
            for r in restarts:
                if r not in pending[res].restarts:
                    self._append({"op": "restart", "res": res, "argv": r.argv, "timeout": r.timeout, "ready": r.ready})
            return False
        self.refuse_foreign([res])
        _register(self.directory)
        snap = snapshot if snapshot is not None else driver.snapshot()
        crash_point("journal.original.before")
        self._append({"op": "original", "res": res, "id": driver.ident(), "knob": driver_to_dict(driver),
                      "snapshot": snap, "restarts": [r.to_json() for r in restarts]})
        crash_point("journal.original.after")
        return True

    def note_set(self, driver: KnobDriver, text: str) -> None:
        """Record the value hone is about to give ``driver`` (for ``hone status``)."""
        rec: dict[str, Any] = {"op": "set", "res": driver.resource(), "id": driver.ident(), "value": text}
        if driver.ident() not in self._knobs_noted:
            rec["knob"] = driver_to_dict(driver)
        self._append(rec)
        self._knobs_noted.add(driver.ident())

    def write(self, driver: KnobDriver, text: str) -> None:
        """Set ``driver`` to ``text`` (journaled); see :meth:`apply`."""
        self.apply([(driver, text)])

    def apply(self, changes: Sequence[tuple[KnobDriver, str]]) -> None:
        """Set each knob to its text on top of the current state, original first, read
        back; then run each distinct restart command once. A knob on several hosts is
        recorded and set host by host."""
        if any(not d.changes_system for d, _ in changes):
            bad = next(d for d, _ in changes if not d.changes_system)
            raise HoneError(f"{bad.describe()} does not change the system")
        self.preflight([d for d, _ in changes])
        restarts: dict[str, Restart] = {}
        for driver, text in changes:
            for part in driver.parts():
                cmd = part.restart_command()
                self.ensure_original(part, restarts=[cmd] if cmd else [])
                if part.kind != "binary" and same_text(part.read(), text):
                    continue
                self.note_set(part, text)
                part.write(text)
                crash_point("journal.apply.written")
                if part.kind != "binary" and not same_text(got := part.read(), text):
                    raise KnobError(f"{part.describe()}: set to {text!r} but it reads back {got!r}")
                if cmd:
                    restarts.setdefault(cmd.key(), cmd)
        for restart in restarts.values():
            why = run_restart(restart)
            if why:
                raise KnobError(why)

    def restore(self, entries: list[Entry] | None = None) -> list[RestoreOutcome]:
        """Restore ``entries`` (default: all active), newest first, each read back; then run
        each owed restart command once (retried). Failures are reported, not raised: one
        stuck resource does not keep the others changed, and stays in the journal."""
        todo = list(reversed(entries if entries is not None else self.active()))
        outcomes: dict[str, RestoreOutcome] = {}
        owed: dict[str, tuple[Restart, list[str]]] = {}
        done: list[Entry] = []
        for entry in todo:
            try:
                driver = entry.driver()
                changed = not driver.restored(entry.snapshot)
                if changed:
                    self._append_soft({"op": "restoring", "res": entry.resource})
                    driver.restore(entry.snapshot)
                    if not driver.matches(entry.snapshot):
                        raise KnobError(f"{driver.describe()} does not read back its original after the restore")
                for stray in getattr(driver, "stray_temp_files", list)():
                    stray.unlink(missing_ok=True)
                crash_point("restore.written")
            except (KnobError, HoneError, OSError, ValueError) as exc:
                outcomes[entry.resource] = RestoreOutcome(entry.resource, False, str(exc))
                continue
            if changed or entry.restoring:
                for restart in entry.restarts:
                    owed.setdefault(restart.key(), (restart, []))[1].append(entry.resource)
            done.append(entry)
        failed: dict[str, str] = {}
        if owed:
            crash_point("restore.restart")
        for restart, resources in owed.values():
            why = run_restart(restart, RESTART_PAUSES)
            if why:
                for res in resources:
                    failed[res] = f"restored, but {why} (it stays in the journal: `hone rollback` retries)"
        for entry in done:
            if entry.resource in failed:
                outcomes[entry.resource] = RestoreOutcome(entry.resource, False, failed[entry.resource])
                continue
            self._append_soft({"op": "restored", "res": entry.resource})
            outcomes[entry.resource] = RestoreOutcome(entry.resource, True, "restored")
        if self.path.exists() and not self.append_failed and not self._entries():
            self._archive()
        return [outcomes[e.resource] for e in todo]

    def _archive(self) -> None:
        """Everything is restored: move the file to history so the journal stays short."""
        history = self.directory / "journal-history.jsonl"
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink and not self._entries():  # no append came in meanwhile
                with history.open("ab") as out, os.fdopen(os.dup(fd), "rb") as src:
                    out.write(src.read())
                self.path.unlink()
        except OSError:
            pass  # a journal with nothing active is just longer
        finally:
            os.close(fd)

    def status(self) -> list[dict[str, Any]]:
        """One row per changed resource: identity, what differs from the original (keys of
        a file), what hone set, and whether it still differs."""
        rows = []
        for entry in self.active():
            row: dict[str, Any] = {
                "id": entry.resource,
                "since": entry.ts,
                "pid": entry.pid,
                "host": entry.knob.get("hosts", [None])[0] if entry.knob.get("hosts") else socket.gethostname(),
                "set_by_hone": _set_text(entry),
            }
            try:
                driver = entry.driver()
                row["changed"] = not driver.matches(entry.snapshot)
                row["keys"] = _differences(entry, row["changed"])
            except (KnobError, HoneError, OSError, ValueError) as exc:
                row["changed"] = True
                row["keys"] = [{"key": entry.resource, "original": _original_text(entry), "current":
                                f"unreadable: {exc}"}]
            row["original"] = "; ".join(f"{k['key']}={k['original']}" for k in row["keys"]) or _original_text(entry)
            row["current"] = "; ".join(f"{k['key']}={k['current']}" for k in row["keys"]) or "= original"
            rows.append(row)
        return rows


    def diffs(self) -> list[str]:
        """A unified diff (original -> current) of every changed file resource."""
        out = []
        for entry in self.active():
            if "bytes_b64" not in entry.snapshot:
                continue
            path = entry.resource.removeprefix("file:")  # the file edited (``PATH@HOST`` on a host)
            try:
                # the file the original was taken of, local or over ssh
                current = entry.driver().current_bytes(entry.snapshot).decode(errors="replace")  # type: ignore[attr-defined]
            except (OSError, HoneError) as exc:
                current = f"(unreadable: {exc})\n"
            original = state_bytes(entry.snapshot).decode(errors="replace")
            if current != original:
                out.append("".join(difflib.unified_diff(
                    original.splitlines(keepends=True), current.splitlines(keepends=True),
                    f"{path} (original)", f"{path} (now)")))
        return out


# ---------------------------------------------------------------- helpers


def _resource_of(knob: dict[str, Any], ident: str) -> str:
    try:
        return driver_from_dict(knob).resource()
    except Exception:  # a knob this version cannot rebuild keeps its old identity
        return ident


def _short(ident: str) -> str:
    """``file:/etc/x.conf#key`` -> ``key``; other identities as they are."""
    return ident.split("#", 1)[1] if ident.startswith("file:") and "#" in ident else ident


def _set_text(entry: Entry) -> str:
    """What hone set on a resource, for ``hone status``."""
    if entry.knob.get("kind") == "service":
        try:
            info = json.loads(next(iter(entry.sets.values()))["value"])
            return f"started pid {info['pid']} (log {info.get('log', '?')})"
        except (StopIteration, KeyError, TypeError, ValueError):
            return "started"
    return "; ".join(f"{_short(i)}={v['value']}" for i, v in entry.sets.items() if "value" in v) or "-"


def _original_text(entry: Entry) -> str:
    value = entry.snapshot.get("value")
    return "(absent)" if value is None else str(value)


def _differences(entry: Entry, changed: bool) -> list[dict[str, str]]:
    """The keys (one for a plain knob) whose current value is not the original's."""
    if not changed:
        return []
    out = []
    for d in entry.set_drivers():
        original = d.value_in(entry.snapshot)
        current = d.read()
        if not same_text(original, current):
            out.append({"key": _short(d.ident()), "original": "(absent)" if original is None else original,
                        "current": "(absent)" if current is None else current})
    if not out:
        out.append({"key": _short(entry.resource), "original": "(other bytes)", "current": "(other bytes differ)"})
    return out


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def _registry_path() -> Path:
    return machine_dir() / REGISTRY


def _registered() -> list[Path]:
    try:
        lines = _registry_path().read_text().splitlines()
    except OSError:
        return []
    return [Path(line) for line in dict.fromkeys(x.strip() for x in lines) if line]


def _register(directory: Path) -> None:
    """Add ``directory`` to the machine's list of state directories with changes, and drop
    those whose journals hold nothing any more."""
    path = _registry_path()
    try:
        guard = os.open(path.with_name(f".{REGISTRY}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JournalError(f"cannot write {path}: {exc.strerror}; nothing was changed") from None
    try:
        fcntl.flock(guard, fcntl.LOCK_EX)  # a service's session registers without the machine lock
        keep = [d for d in _registered() if not _same_dir(d, directory) and (d / "journal.jsonl").exists()
                and Journal(d).active()]
        lines = [str(Path(os.path.realpath(directory))), *map(str, keep)]
        tmp = path.with_name(f".{REGISTRY}.{os.getpid()}")
        try:
            tmp.write_text("\n".join(lines) + "\n")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise JournalError(f"cannot write {path}: {exc.strerror}; nothing was changed") from None
    finally:
        os.close(guard)



__all__ = ["Entry", "Journal", "JournalError", "MachineLock", "RestoreOutcome", "StateLock", "machine_lock_if"]
