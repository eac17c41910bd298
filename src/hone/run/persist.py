"""Confirmed settings made permanent (``hone export``) and checked against the machine
(``hone verify``).

A :class:`Setting` is one knob and the text it should hold, with where that expectation
comes from (``FILE:LINE`` of a sysctl.d file, a result's field, a ``--set``). Export writes
them in the form the system re-applies at boot — a sysctl.d file (``sysctl -p FILE``
applies it), or a unified diff of each ``file`` knob's config file rendered by the file
driver itself — and never writes the settings themselves. Verify reads each knob back.

Overwriting an existing file under /etc is a change to the machine like any other: its
original goes into the journal first, so ``hone rollback`` puts it back.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hone.core.errors import HoneError, KnobError
from hone.knobs import KnobDriver, driver_for
from hone.knobs._files import LocalFiles, state_bytes
from hone.knobs.base import same_text
from hone.knobs.file import FileDriver
from hone.knobs.sysctl import SysctlDriver
from hone.run.journal import Journal, MachineLock
from hone.spec.models import FileKnobSpec, SysctlKnobSpec, sysctl_name

#: Files overwritten under this directory are journaled (the boot-time configuration).
ETC = Path("/etc")
#: The key of the whole-file resource an overwritten output is journaled as: an ``env``-format
#: key no config holds, so only the file's bytes, mode and owner matter.
WHOLE_FILE_KEY = "HONE_EXPORT_WHOLE_FILE"

Status = Literal["ok", "drifted", "unreadable"]


@dataclass
class Setting:
    """One knob and the text it should hold; ``source`` says where that comes from."""

    name: str
    driver: KnobDriver
    text: str
    source: str
    #: tuned's ``>``: the knob holds at least ``text`` (a number); more is as good.
    at_least: bool = False

    @property
    def kind(self) -> str:
        return getattr(self.driver, "local", self.driver).kind


@dataclass
class Check:
    """One knob of ``hone verify``: expected and actual text, and the verdict."""

    name: str
    expected: str
    actual: str | None
    source: str
    status: Status
    detail: str = ""

    def to_dict(self) -> dict[str, str | None]:
        return {"knob": self.name, "expected": self.expected, "actual": self.actual, "source": self.source,
                "status": self.status, "detail": self.detail}


# ---------------------------------------------------------------- sysctl.d files

_COMMENT = ("#", ";")


def read_sysctl_d(path: str | Path) -> list[Setting]:
    """The settings of a sysctl.d file (``key = value`` lines, ``#``/``;`` comments, a
    leading ``-`` that tells sysctl to ignore a failure). A key given twice: the last line
    counts, as for ``sysctl -p``. A line hone cannot read is a HoneError naming FILE:LINE."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise HoneError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HoneError(f"{path}: cannot read: {exc}") from None
    found: dict[str, Setting] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(_COMMENT):
            continue
        where = f"{path}:{n}"
        body = line.removeprefix("-").lstrip()
        key, eq, value = body.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise HoneError(f"{where}: expected 'key = value' (a sysctl.d line), got {raw.strip()!r}")
        if any(c in key for c in "*?["):
            raise HoneError(f"{where}: expected one sysctl name, got the pattern {key!r} (patterns are not verified)")
        try:
            name = sysctl_name(key)
        except ValueError as exc:
            raise HoneError(f"{where}: {exc}") from None
        model = SysctlKnobSpec(name=name, kind="sysctl")
        found.pop(name, None)
        found[name] = Setting(name, SysctlDriver(model), value, where)
    if not found:
        raise HoneError(f"{path}: no 'key = value' line: not a sysctl.d file with settings")
    return list(found.values())


def _floor_text(s: Setting) -> str:
    """An ``at_least`` setting's text for a file that can only say "=": the value, or the
    knob's current value when that is higher (a boot-time file must not lower it)."""
    if not s.at_least:
        return s.text
    try:
        now = s.driver.read()
        if now is not None and float(now.split()[0]) > float(s.text):
            return now
    except (KnobError, OSError, ValueError, IndexError):
        pass
    return s.text


def sysctl_d_text(settings: list[Setting], header: list[str]) -> tuple[str, list[Setting]]:
    """The sysctl.d file of the ``sysctl`` settings (``key = value`` lines after a comment
    header), and the settings left out (other kinds)."""
    lines = [f"# {h}" for h in header]
    skipped = []
    for s in settings:
        if s.kind != "sysctl":
            skipped.append(s)
            continue
        if "\n" in s.text:
            raise HoneError(f"{s.source}: a sysctl value cannot hold a line break, got {s.text!r}")
        key = getattr(s.driver, "local", s.driver).key  # type: ignore[attr-defined]
        lines.append(f"{key} = {_floor_text(s)}")
    return "\n".join(lines) + "\n", skipped


# ---------------------------------------------------------------- config diffs


def _diff_lines(old: str, new: str, path: str) -> list[str]:
    """A unified diff ``patch`` reads, the missing final newline marked as diff(1) does."""
    out = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), path, path):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def config_diff_text(settings: list[Setting], header: list[str]) -> tuple[str, list[Setting]]:
    """A unified diff of every ``file`` knob's config file, from its current content to the
    content with the settings (the file driver renders it; nothing is written), and the
    settings left out (other kinds, and file knobs on remote hosts). Paths are absolute:
    ``patch -d / -p1 < FILE`` applies it."""
    skipped = []
    states: dict[Path, tuple[str, dict[str, object]]] = {}
    for s in settings:
        if not isinstance(s.driver, FileDriver):
            skipped.append(s)
            continue
        path = s.driver.target()[0]
        if path not in states:
            snap = s.driver.snapshot()
            states[path] = (state_bytes(snap).decode(errors="replace"), snap)
        original, state = states[path]
        states[path] = (original, s.driver.render(state, s.text))
    lines = [f"# {h}\n" for h in header]
    for path, (original, state) in states.items():
        new = state_bytes(state).decode(errors="replace")
        lines += _diff_lines(original, new, str(path))
    return "".join(lines), skipped


# ---------------------------------------------------------------- tuned profiles

#: sysfs files tuned's own plugins own: [vm] for THP, [disk] per block device.
_THP = {"/sys/kernel/mm/transparent_hugepage/enabled": "transparent_hugepages",
        "/sys/kernel/mm/transparent_hugepage/defrag": "transparent_hugepage.defrag"}
_DISK = re.compile(r"^/sys/block/([^/]+)/queue/(scheduler|read_ahead_kb)$")


def _tuned_value(text: str) -> str:
    if "\n" in text or "#" in text:
        raise HoneError(f"a tuned profile value cannot hold a line break or '#', got {text!r}")
    return f'"{text}"' if any(c.isspace() for c in text) else text


def tuned_profile_text(settings: list[Setting], header: list[str], summary: str,
                       include: str | None = None) -> tuple[str, list[Setting]]:
    """A tuned profile (``tuned.conf``) of the kernel settings, in tuned's sections: sysctls
    in ``[sysctl]``, THP in ``[vm]``, a block device's scheduler and read-ahead in a ``disk``
    instance per device (``devices=DEV``: ``elevator``, ``readahead``), other sysfs files in
    ``[sysfs]``; ``at_least`` as tuned's ``>``. Config-file keys have no tuned plugin: returned
    as left out."""
    sysctl: list[str] = []
    vm: list[str] = []
    sysfs: list[str] = []
    disks: dict[str, list[str]] = {}
    skipped: list[Setting] = []
    for s in settings:
        kind = s.kind
        local = getattr(s.driver, "local", s.driver)
        value = (">" if s.at_least else "") + _tuned_value(s.text)
        if kind == "sysctl":
            sysctl.append(f"{local.key}={value}")  # type: ignore[attr-defined]
        elif kind == "sysfs":
            path = str(local.model.path)  # type: ignore[attr-defined]
            m = _DISK.match(path)
            if path in _THP:
                vm.append(f"{_THP[path]}={value}")
            elif m:
                option = "elevator" if m.group(2) == "scheduler" else "readahead"
                disks.setdefault(m.group(1), []).append(f"{option}={value}")
            else:
                sysfs.append(f"{path}={value}")
        else:
            skipped.append(s)
    lines = [f"# {h}" for h in header] + ["", "[main]", f"summary={header_text(summary)}"]
    if include:
        lines.append(f"include={include}")
    for title, body in (("sysctl", sysctl), ("vm", vm)):
        if body:
            lines += ["", f"[{title}]", *body]
    for dev, body in disks.items():
        lines += ["", f"[disk_{dev}]", "type=disk", f"devices={dev}", *body]
    if sysfs:
        lines += ["", "[sysfs]", *sysfs]
    return "\n".join(lines) + "\n", skipped


# ---------------------------------------------------------------- writing the output


def whole_file_driver(path: Path) -> FileDriver:
    """A ``file`` driver whose resource is the whole file at ``path``: journaling it keeps
    the bytes, mode and owner, and ``hone rollback`` writes them back."""
    return FileDriver(FileKnobSpec(name=str(path), kind="file", path=str(path), key=WHOLE_FILE_KEY, format="env"))


def write_output(path: str | Path, data: bytes, purpose: str) -> bool:
    """Write ``data`` to ``path`` atomically. An existing file under /etc is journaled first
    (True); any other file is simply written (False)."""
    target = Path(path)
    real = Path(os.path.realpath(target))
    if real.is_dir():
        raise HoneError(f"{path}: is a directory; expected a file name")
    if not real.parent.is_dir():
        raise HoneError(f"{path}: the directory {real.parent} does not exist")
    files = LocalFiles()
    if real.is_file() and ETC in real.parents:
        driver = whole_file_driver(real)
        journal = Journal()
        with MachineLock(purpose=purpose):
            journal.preflight([driver])
            journal.ensure_original(driver)
            journal.note_set(driver, f"{len(data)} bytes by {purpose}")
            files.write(str(real), data, None, None)
        return True
    try:
        files.write(str(real), data, None, None)
    except OSError as exc:
        raise HoneError(f"{path}: cannot write: {exc.strerror}") from None
    return False


# ---------------------------------------------------------------- verify


def check(setting: Setting) -> Check:
    """Read ``setting``'s knob now and judge it against the expected text."""
    try:
        actual = setting.driver.read()
    except (KnobError, OSError) as exc:
        return Check(setting.name, setting.text, None, setting.source, "unreadable", str(exc))
    if actual is None:
        return Check(setting.name, setting.text, None, setting.source, "drifted", "absent")
    status: Status = "ok" if same_text(actual, setting.text) or _at_least(setting, actual) else "drifted"
    expected = f">= {setting.text}" if setting.at_least else setting.text
    return Check(setting.name, expected, actual, setting.source, status)


def _at_least(setting: Setting, actual: str) -> bool:
    if not setting.at_least:
        return False
    try:
        return float(actual.split()[0]) >= float(setting.text)
    except (ValueError, IndexError):
        return False


def verify(settings: list[Setting]) -> list[Check]:
    return [check(s) for s in settings]


def spec_setting(model: object, text: str, source: str) -> Setting:
    """The setting of a spec's knob (its driver, over ssh when it has hosts)."""
    driver = driver_for(model)
    return Setting(driver.name, driver, text, source)


_SAFE_HEADER = re.compile(r"[\r\n]")


def header_text(text: str) -> str:
    """One line of a comment header (a line break would end the comment)."""
    return _SAFE_HEADER.sub(" ", text)


__all__ = ["ETC", "Check", "Setting", "check", "config_diff_text", "header_text", "read_sysctl_d", "spec_setting",
           "sysctl_d_text", "tuned_profile_text", "verify", "whole_file_driver", "write_output"]
