"""A profile mode: instrument a build, collect one profile per scenario, merge them
with weights, and feed the merge to the optimizing build.

Each mode lives in its own file (instr_gcc, instr_clang, instr_rust, autofdo: both families); LTO is
flags only (``lto.py``) and BOLT is a post-link pass (``bolt.py``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from hone.build.profiles import MergedProfile, ScenarioProfile
from hone.build.systems.base import BuildFlags
from hone.core.errors import HoneError


class NoProfileWrittenError(HoneError):
    """A training scenario left no profile file (the pipeline adds what the check of the
    instrumented binary found, :mod:`hone.build.verify`)."""


class ProfileMode(ABC):
    """One way to collect and use a profile. Methods are called in this order:
    ``preflight`` → ``instrument`` (flags of the training build) → per scenario
    ``scenario_env`` then ``collect`` → ``merge`` → ``prepare_tree`` + ``apply`` (flags
    of the optimizing build) → ``problems`` (its build log)."""

    kind: str = "?"  # its name: the key of hone.build.modes.PROFILE_MODES and of --mode
    #: What it does, in one line.
    description: ClassVar[str] = ""
    #: The programs :meth:`preflight` needs (it finds them and records their versions).
    tools: ClassVar[tuple[str, ...]] = ()
    # Lines of the optimizing build's output that mean "the profile was not used".
    problem_patterns: tuple[str, ...] = ()
    # What the training build's binary must carry (hone.build.verify): "gcov", "llvm" or None.
    marker: str | None = None
    # The flag a recorded command line of the optimizing build must contain.
    use_flag: str | None = None

    def __init__(self) -> None:
        self.versions: dict[str, str] = {}

    @abstractmethod
    def preflight(self) -> None:
        """Find the tools (fill ``versions``); raise CapabilityError if this cannot work here."""

    @abstractmethod
    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        """Add the instrumentation flags for a training build writing under ``profile_root``."""

    @abstractmethod
    def scenario_env(self, scenario_dir: Path) -> dict[str, str]:
        """Environment that sends one scenario's profile into ``scenario_dir``."""

    def write_dir(self, scenario_dir: Path) -> Path:
        """The directory the trained program writes one scenario's profile into."""
        return scenario_dir / "raw"

    @abstractmethod
    def collect(self, scenario: str, weight: float, scenario_dir: Path, instr_tree: Path) -> ScenarioProfile:
        """Turn the raw files of one scenario into one profile (in ``scenario_dir``)."""

    @abstractmethod
    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        """Merge the scenario profiles with their weights into ``out_dir``."""

    @abstractmethod
    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        """Add the profile-use flags for the optimizing build."""

    @classmethod
    def describe(cls) -> str:
        """``kind: description (needs tool, tool)``."""
        return f"{cls.kind}: {cls.description} (needs {', '.join(cls.tools)})"

    def prepare_tree(self, tree: Path, merged: MergedProfile) -> None:
        """Put profile files where the compiler looks for them (gcc only)."""
        return None

    def problems(self, build_output: str) -> list[str]:
        """Compiler warnings saying the profile was missing or did not match, deduplicated."""
        if not self.problem_patterns:
            return []
        rx = re.compile("|".join(self.problem_patterns))
        seen: list[str] = []
        for line in build_output.splitlines():
            # Only diagnostics: make echoes the compile command, whose flags match too.
            if not re.search(r"\b(warning|error)\b", line):
                continue
            if rx.search(line) and line.strip() not in seen:
                seen.append(line.strip())
        return seen
