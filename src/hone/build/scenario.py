"""Train and evaluate scenarios: a shell command naming the program as ``{binary}``.

The binary's path never gets pasted into the shell text: ``{binary}`` becomes a reference
to ``$HONE_BINARY`` quoted for where it stands (``"$HONE_BINARY"`` unquoted, ``${HONE_BINARY}``
inside double quotes, :mod:`hone.core.shell_text`) and the path travels in the environment, so a
path with spaces or quotes cannot change what the command does.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hone.core.paths import numbered
from hone.core.process import ProcessResult, run_process
from hone.core.shell_text import rewrite

BINARY_PLACEHOLDER = "{binary}"


@dataclass(frozen=True)
class Scenario:
    """One workload: ``command`` is shell text with ``{binary}``; ``weight`` scales its
    profile in the merge (train scenarios only); ``cwd`` is where it runs."""

    name: str
    command: str
    weight: float = 1.0
    cwd: str | None = None

    def shell_text(self) -> str:
        """The command with ``{binary}`` reading ``$HONE_BINARY``, quoted by its context."""
        return rewrite(self.command, ["binary"], variables={"binary": "HONE_BINARY"},
                       what=f"scenario {self.name}").text

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "command": self.command, "weight": self.weight}


def scenario_name(command: str, taken: set[str]) -> str:
    """A short unique name from a command: its last word without directory or suffix
    (``{binary} bench/fib.lua 30`` → ``fib``), numbered when taken."""
    words = [w for w in _split(command) if w != BINARY_PLACEHOLDER and not w.startswith("-")]
    words = [w for w in words if not re.fullmatch(r"[0-9.]+", w)] or ["scenario"]
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(words[-1]).name.split(".")[0]).strip("-") or "scenario"
    name = next(n for n in numbered(base) if n not in taken)
    taken.add(name)
    return name


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def run_scenario(
    scenario: Scenario,
    binary: str | os.PathLike[str],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run ``scenario`` once against ``binary`` (absolute path) under ``sh -c``.

    ``env`` adds variables (profile output paths); the process starts from hone's own
    environment. Times in the result are seconds (CPU from ``os.wait4``, children
    included because the shell waits for them).
    """
    full_env = {**os.environ, **(env or {}), "HONE_BINARY": str(Path(binary).resolve())}
    return run_process(["sh", "-c", scenario.shell_text()], timeout=timeout, env=full_env,
                       cwd=scenario.cwd or cwd)
