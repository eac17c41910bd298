"""make (or any command): flags through CC/CFLAGS/LDFLAGS… in the environment and
``{cflags}``-style placeholders in the build command."""

from __future__ import annotations

from pathlib import Path

from hone.build.systems.base import BuildFlags, BuildSystem, fill


class MakeBuild(BuildSystem):
    """``make -j{jobs}`` by default. Environment variables lose to assignments inside a
    Makefile (``CFLAGS = -O2``); the compiler wrappers first on PATH add the flags there
    (:mod:`hone.build.systems.wrappers`), or such projects put ``CFLAGS={cflags}`` on the command."""

    name = "make"

    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        argv = self.command or ["make", f"-j{self.jobs}"]
        return [(fill(argv, flags.placeholder_values(self.jobs)), self.c_env(flags))]


class CommandBuild(MakeBuild):
    """Any build command (``build.command``), with the same variables and placeholders."""

    name = "command"
