"""One build system behind one interface: build a clean tree with given flags.

A :class:`BuildFlags` says what the variant adds (compiler, C flags, link flags, Rust
flags, extra environment); each system decides how those reach the build — environment
variables (``CC``/``CFLAGS``/``LDFLAGS``/``RUSTFLAGS``), ``-D`` cache entries for cmake,
or ``{cflags}``-style placeholders in the user's build command. C/C++ builds also run
with compiler wrappers first on PATH (:mod:`hone.build.systems.wrappers`), so the flags
arrive even where a Makefile assigns ``CC``/``CFLAGS`` itself.
"""

from __future__ import annotations

import os
import shlex
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from hone.build.systems.wrappers import DIR_NAME, WrapperCalls, Wrappers, wrappers_enabled, write_wrappers
from hone.core.errors import HoneError
from hone.core.process import ProcessResult, run_process

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
    family: str = ""  # gcc | clang | rust; "" → from ``cc`` (which compiler wrappers append)

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
    #: What the compiler wrappers saw (None: the build ran without wrappers).
    wrapper_calls: WrapperCalls | None = None

    @property
    def text(self) -> str:
        parts = []
        for r in self.steps:
            parts.append(f"$ {shlex.join(r.argv)}\n{r.stdout}{r.stderr}[exit {r.returncode}, {r.wall_s:.1f} s]\n")
        if self.wrapper_calls is not None:
            parts.append(f"[hone compiler wrappers: {self.wrapper_calls.summary()}]\n")
        return "\n".join(parts)

    @property
    def stderr(self) -> str:
        return "\n".join(r.stderr for r in self.steps)


def _failure(res: ProcessResult) -> str:
    """A failed step in one line; with the tail of stdout when stderr says little (nginx's
    configure prints its errors on stdout, make then adds one line to stderr)."""
    line = res.describe_failure()
    if len(res.stderr.strip().splitlines()) > 2 or res.timed_out or res.aborted is not None:
        return line
    tail = " | ".join(t.strip() for t in res.stdout.strip().splitlines()[-3:] if t.strip())
    return f"{line}; output: {tail}" if tail else line


class BuildSystem(ABC):
    """Build a project tree (a clean copy) into a binary.

    ``command`` overrides the default build argv (placeholders allowed); ``binary`` is
    the produced program relative to the tree (for cmake: to the tree as well, e.g.
    ``_hone_build/prog``).
    """

    name: str = "?"
    #: C/C++ builds get compiler wrappers first on PATH (hone.build.systems.wrappers); cargo does not.
    wraps_compilers: bool = True

    #: Whether the system has a configure step that ``configure_args`` extend.
    configures: bool = False

    def __init__(self, *, binary: str, command: list[str] | None = None, jobs: int = 2,
                 timeout: float = 1800.0, configure_args: list[str] | None = None) -> None:
        self.binary = binary
        self.command = command
        self.configure_args = list(configure_args or [])
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
        wrappers = self.wrappers(tree, flags)
        try:
            for argv, env in self.steps(tree, flags):
                full_env = {**os.environ, **env, **flags.env}
                if wrappers is not None:
                    full_env = wrappers.environment(full_env)
                res = run_process(argv, timeout=self.timeout, env=full_env, cwd=tree)
                log.steps.append(res)
                if not res.ok:
                    err = HoneError(f"{self.name} build failed: {_failure(res)}")
                    err.log = log  # type: ignore[attr-defined]
                    raise err
        finally:
            if wrappers is not None:
                log.wrapper_calls = wrappers.calls()
                wrappers.remove()
        binary = tree / self.binary
        if not binary.is_file():
            err = HoneError(f"the build finished but produced no {self.binary} in the project",
                            hint="--binary is relative to the project directory")
            err.log = log  # type: ignore[attr-defined]
            raise err
        return binary, log

    def wrappers(self, tree: Path, flags: BuildFlags) -> Wrappers | None:
        """Compiler wrappers for this build, next to the tree (None for cargo, or with
        HONE_PGO_NO_WRAPPERS=1)."""
        if not self.uses_wrappers(flags):
            return None
        return write_wrappers(self.wrapper_dir(tree), cc=flags.cc, cxx=flags.cxx, cflags=flags.cflags,
                              ldflags=flags.ldflags, family=flags.family,
                              search_path={**os.environ, **flags.env}.get("PATH", os.defpath))

    def uses_wrappers(self, flags: BuildFlags) -> bool:
        return self.wraps_compilers and flags.family != "rust" and wrappers_enabled()

    @staticmethod
    def wrapper_dir(tree: Path) -> Path:
        """Where a build of ``tree`` gets its wrappers: beside the tree, never inside it."""
        return tree.parent / DIR_NAME

    def c_env(self, flags: BuildFlags) -> dict[str, str]:
        """The conventional variables autoconf-style Makefiles read."""
        cflags = shlex.join(flags.cflags)
        return {"CC": flags.cc, "CXX": flags.cxx, "AR": flags.ar, "RANLIB": flags.ranlib,
                "CFLAGS": cflags, "CXXFLAGS": cflags, "LDFLAGS": shlex.join(flags.ldflags)}
