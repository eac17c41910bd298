"""``script`` knobs: user ``get``/``set`` commands, A-Tune style.

``$value`` in an argv ``set`` command is replaced inside its argv element (no shell).
With ``shell: true`` the command runs as ``sh -c TEXT hone-knob VALUE`` with ``value`` in
the environment, so ``$value`` and ``$1`` expand to the value — never pasted into TEXT.
"""

from __future__ import annotations

import os
import shlex

from hone.errors import KnobError
from hone.knobs.base import KnobDriver
from hone.run.process import run_process


class ScriptKnob(KnobDriver):
    kind = "script"

    def ident(self) -> str:
        return f"script:{self.name}"

    def _argv(self, command: list[str] | str, value: str | None) -> tuple[list[str], dict[str, str]]:
        env = dict(os.environ)
        if self.model.shell:  # type: ignore[attr-defined]
            text = command if isinstance(command, str) else " ".join(command)
            argv = ["sh", "-c", text, "hone-knob"]
            if value is not None:
                argv.append(value)
                env["value"] = value
            return argv, env
        parts = list(command) if isinstance(command, list) else shlex.split(command)
        if value is not None:
            parts = [p.replace("$value", value).replace("${value}", value) for p in parts]
        return parts, env

    def read(self) -> str | None:
        argv, env = self._argv(self.model.get, None)  # type: ignore[attr-defined]
        result = run_process(argv, timeout=self.model.timeout, env=env)  # type: ignore[attr-defined]
        if not result.ok:
            raise KnobError(f"script knob {self.name}: get failed: {result.describe_failure()}")
        return result.stdout.strip()

    def check(self) -> None:
        self.read()

    def write(self, text: str) -> None:
        argv, env = self._argv(self.model.set, text)  # type: ignore[attr-defined]
        result = run_process(argv, timeout=self.model.timeout, env=env)  # type: ignore[attr-defined]
        if not result.ok:
            raise KnobError(f"script knob {self.name}: set {text!r} failed: {result.describe_failure()}")

    def describe(self) -> str:
        return f"script {self.name}"
