"""``script`` knobs: user ``get``/``set`` commands, A-Tune style.

``$value`` in an argv ``set`` command is replaced inside its argv element (no shell).
With ``shell: true`` the command runs as ``sh -c TEXT hone-knob VALUE`` with ``value`` in
the environment, so ``$value`` and ``$1`` expand to the value — never pasted into TEXT.
``$value`` references in shell text (``shell: true``, or the script of an argv such as
``[sh, -c, …]``) are bound by quoting context (:mod:`hone.core.shell_text`): unquoted they become
``"$value"`` (one word), and inside single quotes (A-Tune's ``sed 's/…/$value/'``) the
quote is closed around ``"$value"``, so the script gets the value, as data.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from typing import Any

from hone.core.errors import KnobError
from hone.core.process import ProcessResult, run_process
from hone.core.shell_text import bind_argv, check_value, rewrite
from hone.knobs._files import Files, LocalFiles, stat_state, state_bytes
from hone.knobs.base import KnobDriver

#: A file a script knob keeps (``files:``) is journaled whole; beyond this it is refused.
MAX_KEPT_BYTES = 4 << 20


def no_value(what: str, stderr: str = "") -> KnobError:
    """The refusal of a script knob whose ``get`` printed nothing (``what``: the knob, and its host)."""
    return KnobError(f"{what}: get printed nothing" + (f" (stderr: {stderr})" if stderr else "")
                     + ": hone cannot read the current value, so it could not put it back; make get print it")


def several_lines(what: str, model: Any, out: str) -> KnobError | None:
    """The refusal of a ``get`` that prints several lines where every value of the knob is one
    word: no value hone sets can read back as that, so every trial would fail its read-back.
    The usual cause is a ``grep`` matching another key too (A-Tune's MariaDB pair:
    ``grep sort_buffer_size`` also finds ``myisam_sort_buffer_size``)."""
    lines = [line.strip() for line in out.strip().splitlines() if line.strip()]
    if len(lines) < 2 or any(len(str(v).split()) > 1 for v in (model.values or [])):
        return None
    command = model.get if isinstance(model.get, str) else " ".join(model.get)
    shown = ", ".join(repr(line) for line in lines[:3]) + (" …" if len(lines) > 3 else "")
    cause = (" (does its grep match other lines too? anchor it: grep '^KEY' or grep -w KEY, and the"
             " set's sed the same way)" if "grep" in command else "")
    return KnobError(f"{what}: get printed {len(lines)} lines ({shown}), not one value: hone reads back "
                     f"every value it sets, and none of this knob's would read back as that{cause}")


def check_get_output(what: str, model: Any, out: str, stderr: str = "") -> None:
    """Refuse what a script knob's ``get`` printed when no value can be read from it: nothing
    (:func:`no_value`) or several lines (:func:`several_lines`)."""
    if not out.strip():
        raise no_value(what, stderr)
    if (why := several_lines(what, model, out)) is not None:
        raise why


class ScriptDriver(KnobDriver):
    kind = "script"

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.files: Files = LocalFiles()  # where ``files:`` live: a remote host's are read over ssh

    def ident(self) -> str:
        return f"script:{self.name}"

    def bound_command(self, command: list[str] | str, value: str | None) -> tuple[list[str], dict[str, str]]:
        """(argv, variables to add to the environment) that run ``command`` with ``value``
        (None for ``get``) bound; the variables are what a remote host must be given too."""
        what = f"script knob {self.name}"
        if self.model.shell:  # type: ignore[attr-defined]
            text = command if isinstance(command, str) else " ".join(command)
            if value is None:
                return ["sh", "-c", text, "hone-knob"], {}
            check_value(value, what)
            template = rewrite(text, ["value"], style="dollar", what=what)
            return ["sh", "-c", template.text, "hone-knob", value], {**template.environment({"value": value}),
                                                                     "value": value}
        parts = list(command) if isinstance(command, list) else shlex.split(command)
        if value is None:
            return parts, {}
        return bind_argv(parts, {"value": value}, style="dollar", what=what)

    def _argv(self, command: list[str] | str, value: str | None) -> tuple[list[str], dict[str, str]]:
        argv, bound = self.bound_command(command, value)
        return argv, {**os.environ, **bound}

    def _get(self) -> ProcessResult:
        argv, env = self._argv(self.model.get, None)  # type: ignore[attr-defined]
        result = run_process(argv, timeout=self.model.timeout, env=env)  # type: ignore[attr-defined]
        if not result.ok:
            raise KnobError(f"script knob {self.name}: get failed: {result.describe_failure()}")
        return result

    def read(self) -> str | None:
        return self._get().stdout.strip()

    def check(self) -> None:
        """``get`` runs and prints a value. An empty output is refused: a pipeline hides a
        failed command (``ethtool -k eth0 | grep … | awk …`` without ethtool exits 0), and a
        value hone cannot read is one it cannot put back."""
        result = self._get()
        check_get_output(f"script knob {self.name}", self.model, result.stdout, result.stderr_tail())

    def write(self, text: str) -> None:
        argv, env = self._argv(self.model.set, text)  # type: ignore[attr-defined]
        # A set command may (re)start a service: a daemon it detaches outlives the command.
        result = run_process(argv, timeout=self.model.timeout, env=env, spare_daemons=True)  # type: ignore[attr-defined]
        if not result.ok:
            raise KnobError(f"script knob {self.name}: set {text!r} failed: {result.describe_failure()}")

    def describe(self) -> str:
        return f"script {self.name}"

    # ``files``: the bytes of the files ``set`` edits, kept with the value and written back
    # after it on restore (a set that cannot undo itself still leaves them exact).

    def snapshot(self) -> dict[str, Any]:
        return self.with_files({"value": self.read()})

    def with_files(self, snap: dict[str, Any]) -> dict[str, Any]:
        """``snap`` with the kept files added (when the knob has ``files:``)."""
        kept = self.kept_files()
        return {**snap, "files": kept} if kept else snap

    def kept_files(self) -> dict[str, Any]:
        """Each file of ``files:`` as a snapshot holds it (None: absent)."""
        kept = {}
        for path in self.model.files:  # type: ignore[attr-defined]
            try:
                st = self.files.stat(path)
            except OSError as exc:
                raise KnobError(f"script knob {self.name}: cannot read {path}: {exc.strerror}") from None
            if st is not None and len(st.data) > MAX_KEPT_BYTES:
                raise KnobError(f"script knob {self.name}: {path} is {len(st.data)} bytes, more than the "
                                f"{MAX_KEPT_BYTES} hone keeps of a file in files:")
            kept[path] = None if st is None else stat_state(st)
        return kept

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.restore_then_files(snapshot, super().restore)

    def restore_then_files(self, snapshot: dict[str, Any], restore_value: Callable[[dict[str, Any]], None]) -> None:
        """``restore_value(snapshot)`` (set the value back), then the kept files' bytes."""
        kept = snapshot.get("files") or {}
        try:
            restore_value(snapshot)
        except KnobError:
            if not kept:
                raise  # with files kept, their bytes below are what counts
        self.put_back_files(kept)

    def put_back_files(self, kept: dict[str, Any]) -> None:
        """Write each kept file's bytes, mode and owner back (delete one that was absent)."""
        for path, st in kept.items():
            if st is None:
                self.files.remove(path)
                continue
            data = state_bytes(st)
            if self.files.read(path) != data:
                self.files.write(path, data, int(st["mode"]), (int(st["uid"]), int(st["gid"])))

    def files_hold(self, kept: dict[str, Any]) -> bool:
        """True when every kept file holds the snapshot's bytes (or is absent, as it was)."""
        for path, st in kept.items():
            try:
                now = self.files.read(path)
            except OSError:
                return False
            if now != (None if st is None else state_bytes(st)):
                return False
        return True

    def restored(self, snapshot: dict[str, Any]) -> bool:
        """The value, and every kept file holding the snapshot's bytes. The files are not part of
        :meth:`matches`: other knobs may edit the same file, and this knob holds its value
        regardless; only the journal's restore asks (the oldest entry's bytes are the original)."""
        return self.matches(snapshot) and self.files_hold(snapshot.get("files") or {})
