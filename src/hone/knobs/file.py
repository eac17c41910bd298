"""``file`` knobs: one key in a config file; optional ``restart`` command after a change.

The resource is the whole file that holds the key (its real path, symlinks resolved; an
included file when the key lives there, see :mod:`hone.knobs._includes`): the journal
keeps its original bytes, mode and owner once, before hone first changes any key of it,
so rollback restores the file byte for byte however many knobs edit it and even if hone
added a key that was absent. ``restart`` is not run by :meth:`FileDriver.write`: the caller
runs each distinct restart command once after all of a configuration's writes.

All I/O goes through ``self.files`` (:mod:`hone.knobs._files`): this machine, or a host
over ssh when the knob has ``hosts`` (:mod:`hone.knobs.remote`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hone.core.errors import KnobError
from hone.core.restart import Restart
from hone.knobs._config_formats import get_value, guess_format, set_value
from hone.knobs._errors import ConfigError
from hone.knobs._files import TEMP_PREFIX, Files, LocalFiles, Removable, bytes_field, stat_state, state_bytes
from hone.knobs._includes import locate
from hone.knobs.base import KnobDriver
from hone.spec.models import Scalar, to_argv

__all__ = ["TEMP_PREFIX", "FileDriver"]


class FileDriver(KnobDriver):
    kind = "file"

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.files: Files = LocalFiles()
        self._target: tuple[str, str] | None = None  # (file holding the key, key inside it)

    @property
    def path(self) -> Path:
        # The real file: a config reached through a symlink is edited where it lives, and
        # the symlink stays a symlink.
        return Path(self.files.realpath(self.model.path))  # type: ignore[attr-defined]

    @property
    def fmt(self) -> str:
        fmt = self.model.format  # type: ignore[attr-defined]
        return guess_format(str(self.path), self.model.section) if fmt == "auto" else fmt  # type: ignore[attr-defined]

    def _fail(self, what: str) -> KnobError:
        return KnobError(f"file knob {self.name}: {what}")

    def target(self) -> tuple[Path, str]:
        """The file that holds (or will hold) the key, and the key inside that file: the
        knob's own file, or the included file the key is set in. Found once per driver,
        so every read and write of a session edits the same file."""
        if self._target is None:
            main = str(self.path)
            try:
                self._target = locate(self.files, main, self.fmt, self.model.key)  # type: ignore[attr-defined]
            except ConfigError as exc:
                raise self._fail(f"{main}: {exc}") from None
        path, key = self._target
        return Path(path), key

    def ident(self) -> str:
        section = self.model.section  # type: ignore[attr-defined]
        where = f"[{section}]." if section else ""
        return f"file:{self.path}#{where}{self.model.key}"  # type: ignore[attr-defined]

    def resource(self) -> str:
        return f"file:{self.target()[0]}"

    def _read(self, path: Path) -> bytes:
        try:
            data = self.files.read(str(path))
        except OSError as exc:
            raise self._fail(f"cannot read {path}: {exc.strerror}") from exc
        if data is None:
            raise self._fail(f"cannot read {path}: No such file or directory")
        return data

    def _text(self) -> str:
        path = self.target()[0]
        try:
            return self._read(path).decode()
        except UnicodeDecodeError:
            raise self._fail(f"{path} is not UTF-8 text") from None

    def _get(self, text: str) -> str | None:
        path, key = self.target()
        try:
            value = get_value(text, self.fmt, key, self.model.section)  # type: ignore[attr-defined]
        except (yaml.YAMLError, ConfigError) as exc:
            raise self._fail(f"{path}: {exc}" if isinstance(exc, ConfigError)
                             else f"{path} is not valid {self.fmt}: {exc}") from None
        if self.model.type == "bool" and self.fmt == "toml" and value in ("true", "false"):
            return self.model.format_value(value == "true")  # a TOML boolean reads as this knob writes it (0/1)
        return value

    def _set(self, text: str, value: str) -> str:
        path, key = self.target()
        try:
            return set_value(text, self.fmt, key, value, self.model.section)  # type: ignore[attr-defined]
        except KeyError:
            raise self._fail(f"key {self.model.key} not found in {path}") from None  # type: ignore[attr-defined]
        except ConfigError as exc:
            raise self._fail(f"{path}: {exc}") from None
        except yaml.YAMLError as exc:
            raise self._fail(f"{path} is not valid {self.fmt}: {exc}") from exc

    def check(self) -> None:
        text = self._text()
        if self._get(text) is None:
            self._set(text, "0")  # a key hone cannot add (a missing block, table or YAML path) fails here
        path = str(self.target()[0])
        if not self.files.writable(path):
            raise self._fail(f"{path} is not writable by this user")

    def read(self) -> str | None:
        return self._get(self._text())

    def current_value(self) -> Scalar | None:
        """The key's value; while it is not in the file, the spec's ``absent`` (the built-in default)."""
        value, absent = super().current_value(), self.model.absent  # type: ignore[attr-defined]
        if value is not None or absent is None:  # None: the key is not in the file
            return value
        try:
            return self.model.coerce(absent)
        except ValueError:
            return absent

    def write(self, text: str) -> None:
        self.files.write(str(self.target()[0]), self._set(self._text(), text).encode(), None, None)

    def restart_command(self) -> Restart | None:
        restart = self.model.restart  # type: ignore[attr-defined]
        if not restart or restart == "service":
            return None
        return Restart(to_argv(restart), float(self.model.restart_timeout))  # type: ignore[attr-defined]

    def snapshot(self) -> dict[str, Any]:
        path = self.target()[0]
        try:
            st = self.files.stat(str(path))
        except OSError as exc:
            raise self._fail(f"cannot read {path}: {exc.strerror}") from exc
        if st is None:
            raise self._fail(f"cannot read {path}: No such file or directory")
        return {
            "value": self._get(st.data.decode(errors="replace")),
            **stat_state(st),
            "path": str(path),
        }

    def render(self, state: dict[str, Any], text: str) -> dict[str, Any]:
        try:
            old = state_bytes(state).decode()
        except UnicodeDecodeError:
            raise self._fail(f"{self.target()[0]} is not UTF-8 text") from None
        new = self._set(old, text).encode()
        return {**state, "value": text, **bytes_field(new)}

    def value_in(self, state: dict[str, Any]) -> str | None:
        return self._get(state_bytes(state).decode(errors="replace"))

    def _where(self, snapshot: dict[str, Any]) -> Path:
        # The file the snapshot was taken of (journals before includes: the knob's own).
        return Path(snapshot["path"]) if "path" in snapshot else self.path

    def current_bytes(self, snapshot: dict[str, Any]) -> bytes:
        """The bytes now in the file ``snapshot`` was taken of (for ``hone status --diff``)."""
        return self._read(self._where(snapshot))

    def restore(self, snapshot: dict[str, Any]) -> None:
        path = self._where(snapshot)
        data = state_bytes(snapshot)
        owner = (int(snapshot["uid"]), int(snapshot["gid"])) if "uid" in snapshot else None
        try:
            st = self.files.stat(str(path))
        except OSError as exc:
            raise self._fail(f"cannot read {path}: {exc.strerror}") from exc
        same = st is not None and st.data == data and ("mode" not in snapshot or st.mode == int(snapshot["mode"]))
        if not same:
            self.files.write(str(path), data, snapshot.get("mode"), owner)

    def matches(self, snapshot: dict[str, Any]) -> bool:
        try:
            return self.files.read(str(self._where(snapshot))) == state_bytes(snapshot)
        except (OSError, KnobError):
            return False

    def stray_temp_files(self) -> list[Removable]:
        """Temp files a killed hone left next to the file (removed by rollback)."""
        try:
            return self.files.strays(str(self.target()[0]))
        except (OSError, KnobError):
            return []

    def describe(self) -> str:
        return f"file {self.path} key {self.model.key} ({self.fmt})"  # type: ignore[attr-defined]
