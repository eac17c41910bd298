"""One build system behind one interface: build a clean tree with given flags.

A :class:`BuildFlags` says what the variant adds (compiler, C flags, link flags, Rust
flags, extra environment); each system decides how those reach the build — environment
variables (``CC``/``CFLAGS``/``LDFLAGS``/``RUSTFLAGS``), ``-D`` cache entries for cmake,
or ``{cflags}``-style placeholders in the user's build command.
"""

from __future__ import annotations

import os
import shlex
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from hone.errors import HoneError
from hone.run.process import ProcessResult, run_process

PLACEHOLDERS = ("cc", "cxx", "ar", "ranlib", "cflags", "ldflags", "rustflags", "jobs")


@dataclass
class BuildFlags:
    """Everything a variant changes in a build. Flag lists are argv words."""

    cc: str = "cc"
    cxx: str = "c++"
    ar: str = "ar"
    ranlib: str = "ranlib"
    cflags: list[str] = field(default_factory=list)
    ldflags: list[str] = field(default_factory=list)
    rustflags: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def placeholder_values(self, jobs: int) -> dict[str, str]:
        return {
            "cc": self.cc, "cxx": self.cxx, "ar": self.ar, "ranlib": self.ranlib,
            "cflags": shlex.join(self.cflags), "ldflags": shlex.join(self.ldflags),
            "rustflags": shlex.join(self.rustflags), "jobs": str(jobs),
        }

    def to_dict(self) -> dict[str, object]:
        return {"cc": self.cc, "cxx": self.cxx, "ar": self.ar, "ranlib": self.ranlib,
                "cflags": self.cflags, "ldflags": self.ldflags, "rustflags": self.rustflags, "env": self.env}


def fill(argv: list[str], values: dict[str, str]) -> list[str]:
    """Replace ``{cflags}`` etc. inside each argv word; one word stays one word."""
    out = []
    for word in argv:
        for key, val in values.items():
            word = word.replace("{" + key + "}", val)
        out.append(word)
    return out


@dataclass
class BuildLog:
    """The commands one build ran and their output (written to ``build.log``)."""

    steps: list[ProcessResult] = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = []
        for r in self.steps:
            parts.append(f"$ {shlex.join(r.argv)}\n{r.stdout}{r.stderr}[exit {r.returncode}, {r.wall_s:.1f} s]\n")
        return "\n".join(parts)

    @property
    def stderr(self) -> str:
        return "\n".join(r.stderr for r in self.steps)


class BuildSystem(ABC):
    """Build a project tree (a clean copy) into a binary.

    ``command`` overrides the default build argv (placeholders allowed); ``binary`` is
    the produced program relative to the tree (for cmake: to the tree as well, e.g.
    ``_hone_build/prog``).
    """

    name: str = "?"

    def __init__(self, *, binary: str, command: list[str] | None = None, jobs: int = 2,
                 timeout: float = 1800.0) -> None:
        self.binary = binary
        self.command = command
        self.jobs = jobs
        self.timeout = timeout

    @abstractmethod
    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        """The argv lists (with extra environment) that build ``tree``."""

    def ignore_patterns(self) -> list[str]:
        """Build outputs never copied from the user's tree (a clean copy rebuilds all)."""
        return ["*.o", "*.a", "*.so", "*.gcda", "*.gcno", "*.profraw", "*.profdata", "*.fdata"]

    def build(self, tree: Path, flags: BuildFlags) -> tuple[Path, BuildLog]:
        """Run the build in ``tree``; return the binary's path and the log.

        Raises HoneError naming the failing step and its stderr tail.
        """
        log = BuildLog()
        for argv, env in self.steps(tree, flags):
            full_env = {**os.environ, **env, **flags.env}
            res = run_process(argv, timeout=self.timeout, env=full_env, cwd=tree)
            log.steps.append(res)
            if not res.ok:
                err = HoneError(f"{self.name} build failed: {res.describe_failure()}")
                err.log = log  # type: ignore[attr-defined]
                raise err
        binary = tree / self.binary
        if not binary.is_file():
            err = HoneError(f"the build finished but produced no {self.binary} in the project",
                            hint="--binary is relative to the project directory")
            err.log = log  # type: ignore[attr-defined]
            raise err
        return binary, log

    def c_env(self, flags: BuildFlags) -> dict[str, str]:
        """The conventional variables autoconf-style Makefiles read."""
        cflags = shlex.join(flags.cflags)
        return {"CC": flags.cc, "CXX": flags.cxx, "AR": flags.ar, "RANLIB": flags.ranlib,
                "CFLAGS": cflags, "CXXFLAGS": cflags, "LDFLAGS": shlex.join(flags.ldflags)}
