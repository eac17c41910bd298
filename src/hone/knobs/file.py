"""``file`` knobs: one key in a config file; optional ``restart`` command after a change.

The resource is the whole file (its real path, symlinks resolved): the journal keeps its
original bytes, mode and owner once, before hone first changes any key of it, so rollback
restores the file byte for byte however many knobs edit it and even if hone added a key
that was absent. ``restart`` is not run by :meth:`FileKnob.write`: the caller runs each
distinct restart command once after all of a configuration's writes.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from hone.errors import KnobError
from hone.knobs._config_formats import get_value, guess_format, set_value
from hone.knobs.base import KnobDriver
from hone.spec.models import to_argv

#: Prefix of the temp files written next to a config file (rollback removes strays).
TEMP_PREFIX = ".hone-tmp-"


def _decode(state: dict[str, Any]) -> bytes:
    return base64.b64decode(state["bytes_b64"])


class FileKnob(KnobDriver):
    kind = "file"

    @property
    def path(self) -> Path:
        # The real file: a config reached through a symlink is edited where it lives, and
        # the symlink stays a symlink.
        return Path(os.path.realpath(self.model.path))  # type: ignore[attr-defined]

    @property
    def fmt(self) -> str:
        fmt = self.model.format  # type: ignore[attr-defined]
        return guess_format(str(self.path), self.model.section) if fmt == "auto" else fmt  # type: ignore[attr-defined]

    def ident(self) -> str:
        section = self.model.section  # type: ignore[attr-defined]
        where = f"[{section}]." if section else ""
        return f"file:{self.path}#{where}{self.model.key}"  # type: ignore[attr-defined]

    def resource(self) -> str:
        return f"file:{self.path}"

    def _text(self) -> str:
        try:
            return self.path.read_text()
        except OSError as exc:
            raise KnobError(f"file knob {self.name}: cannot read {self.path}: {exc.strerror}") from exc
        except UnicodeDecodeError:
            raise KnobError(f"file knob {self.name}: {self.path} is not UTF-8 text") from None

    def _get(self, text: str) -> str | None:
        try:
            return get_value(text, self.fmt, self.model.key, self.model.section)  # type: ignore[attr-defined]
        except yaml.YAMLError as exc:
            raise KnobError(f"file knob {self.name}: {self.path} is not valid {self.fmt}: {exc}") from exc

    def _set(self, text: str, value: str) -> str:
        try:
            return set_value(text, self.fmt, self.model.key, value, self.model.section)  # type: ignore[attr-defined]
        except KeyError:
            raise KnobError(f"file knob {self.name}: key {self.model.key} not found in {self.path}") from None  # type: ignore[attr-defined]
        except yaml.YAMLError as exc:
            raise KnobError(f"file knob {self.name}: {self.path} is not valid {self.fmt}: {exc}") from exc

    def check(self) -> None:
        value = self._get(self._text())
        if value is None and self.fmt in ("yaml", "json"):
            raise KnobError(f"file knob {self.name}: key {self.model.key} not found in {self.path}")  # type: ignore[attr-defined]
        if not os.access(self.path, os.W_OK) or not os.access(self.path.parent, os.W_OK):
            raise KnobError(f"file knob {self.name}: {self.path} is not writable by this user")

    def read(self) -> str | None:
        return self._get(self._text())

    def _write_bytes(self, data: bytes, mode: int | None = None, owner: tuple[int, int] | None = None) -> None:
        # Write a sibling temp file and rename it over the file: a crash never leaves a
        # half-written config, and a program reading it sees the old or the new file.
        directory = self.path.parent
        try:
            st = self.path.stat()
            st_mode, st_owner = st.st_mode & 0o7777, (st.st_uid, st.st_gid)
        except FileNotFoundError:
            st_mode, st_owner = 0o644, None
        fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode if mode is not None else st_mode)
            uid_gid = owner or st_owner
            if uid_gid is not None:
                try:
                    os.chown(tmp, *uid_gid)
                except OSError:
                    pass
            os.replace(tmp, self.path)
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def write(self, text: str) -> None:
        self._write_bytes(self._set(self._text(), text).encode())

    def restart_command(self) -> tuple[list[str], float] | None:
        restart = self.model.restart  # type: ignore[attr-defined]
        if not restart:
            return None
        return to_argv(restart), float(self.model.restart_timeout)  # type: ignore[attr-defined]

    def snapshot(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
            st = self.path.stat()
        except OSError as exc:
            raise KnobError(f"file knob {self.name}: cannot read {self.path}: {exc.strerror}") from exc
        return {
            "value": self._get(data.decode(errors="replace")),
            "bytes_b64": base64.b64encode(data).decode(),
            "mode": st.st_mode & 0o7777,
            "uid": st.st_uid,
            "gid": st.st_gid,
        }

    def render(self, state: dict[str, Any], text: str) -> dict[str, Any]:
        try:
            old = _decode(state).decode()
        except UnicodeDecodeError:
            raise KnobError(f"file knob {self.name}: {self.path} is not UTF-8 text") from None
        new = self._set(old, text).encode()
        return {**state, "value": text, "bytes_b64": base64.b64encode(new).decode()}

    def value_in(self, state: dict[str, Any]) -> str | None:
        return self._get(_decode(state).decode(errors="replace"))

    def restore(self, snapshot: dict[str, Any]) -> None:
        data = _decode(snapshot)
        owner = (int(snapshot["uid"]), int(snapshot["gid"])) if "uid" in snapshot else None
        try:
            st = self.path.stat()
            same = self.path.read_bytes() == data and (
                "mode" not in snapshot or st.st_mode & 0o7777 == int(snapshot["mode"]))
        except FileNotFoundError:
            same = False
        except OSError as exc:
            raise KnobError(f"file knob {self.name}: cannot read {self.path}: {exc.strerror}") from exc
        if not same:
            self._write_bytes(data, snapshot.get("mode"), owner)

    def matches(self, snapshot: dict[str, Any]) -> bool:
        try:
            return self.path.read_bytes() == _decode(snapshot)
        except OSError:
            return False

    def stray_temp_files(self) -> list[Path]:
        """Temp files a killed hone left next to the file (removed by rollback)."""
        try:
            return sorted(self.path.parent.glob(f"{TEMP_PREFIX}{self.path.name}.*"))
        except OSError:
            return []

    def describe(self) -> str:
        return f"file {self.path} key {self.model.key} ({self.fmt})"  # type: ignore[attr-defined]
