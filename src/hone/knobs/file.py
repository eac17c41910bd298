"""``file`` knobs: one key in a config file; optional ``restart`` command after a change.

The journal snapshot is the file's original bytes (and mode), so rollback restores the
file byte for byte, even if hone added a key that was absent.
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
from hone.run.process import run_process
from hone.spec.models import to_argv


class FileKnob(KnobDriver):
    kind = "file"

    @property
    def path(self) -> Path:
        return Path(self.model.path)  # type: ignore[attr-defined]

    @property
    def fmt(self) -> str:
        fmt = self.model.format  # type: ignore[attr-defined]
        return guess_format(str(self.path), self.model.section) if fmt == "auto" else fmt  # type: ignore[attr-defined]

    def ident(self) -> str:
        section = self.model.section  # type: ignore[attr-defined]
        where = f"[{section}]." if section else ""
        return f"file:{self.path}#{where}{self.model.key}"  # type: ignore[attr-defined]

    def _text(self) -> str:
        try:
            return self.path.read_text()
        except OSError as exc:
            raise KnobError(f"file knob {self.name}: cannot read {self.path}: {exc.strerror}") from exc

    def check(self) -> None:
        text = self._text()
        try:
            value = get_value(text, self.fmt, self.model.key, self.model.section)  # type: ignore[attr-defined]
        except yaml.YAMLError as exc:
            raise KnobError(f"file knob {self.name}: {self.path} is not valid {self.fmt}: {exc}") from exc
        if value is None and self.fmt in ("yaml", "json"):
            raise KnobError(f"file knob {self.name}: key {self.model.key} not found in {self.path}")  # type: ignore[attr-defined]
        if not os.access(self.path, os.W_OK) or not os.access(self.path.parent, os.W_OK):
            raise KnobError(f"file knob {self.name}: {self.path} is not writable by this user")

    def read(self) -> str | None:
        return get_value(self._text(), self.fmt, self.model.key, self.model.section)  # type: ignore[attr-defined]

    def _write_bytes(self, data: bytes, mode: int | None = None) -> None:
        # Write a sibling temp file and rename: a crash never leaves a half-written config.
        directory = self.path.parent
        st_mode = mode if mode is not None else (self.path.stat().st_mode & 0o7777 if self.path.exists() else 0o644)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.hone-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, st_mode)
            try:
                st = self.path.stat()
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def write(self, text: str) -> None:
        try:
            new = set_value(self._text(), self.fmt, self.model.key, text, self.model.section)  # type: ignore[attr-defined]
        except KeyError:
            raise KnobError(f"file knob {self.name}: key {self.model.key} not found in {self.path}") from None  # type: ignore[attr-defined]
        self._write_bytes(new.encode())
        self._restart()

    def _restart(self) -> None:
        restart = self.model.restart  # type: ignore[attr-defined]
        if restart:
            result = run_process(to_argv(restart), timeout=self.model.restart_timeout)  # type: ignore[attr-defined]
            if not result.ok:
                raise KnobError(f"file knob {self.name}: restart failed: {result.describe_failure()}")

    def snapshot(self) -> dict[str, Any]:
        data = self.path.read_bytes()
        return {
            "value": self.read(),
            "bytes_b64": base64.b64encode(data).decode(),
            "mode": self.path.stat().st_mode & 0o7777,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        data = base64.b64decode(snapshot["bytes_b64"])
        if self.path.exists() and self.path.read_bytes() == data:
            return
        self._write_bytes(data, snapshot.get("mode"))
        self._restart()

    def matches(self, snapshot: dict[str, Any]) -> bool:
        try:
            return self.path.read_bytes() == base64.b64decode(snapshot["bytes_b64"])
        except OSError:
            return False

    def describe(self) -> str:
        return f"file {self.path} key {self.model.key} ({self.fmt})"  # type: ignore[attr-defined]
