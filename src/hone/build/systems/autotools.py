"""autotools: ``./configure`` with the variant's CC/CFLAGS/LDFLAGS in the environment, then
``make`` (``autoreconf -i`` first when the tree has a configure.ac but no configure).

configure writes the compiler it was given into the Makefiles: CC is the wrapper's path,
so a configure.ac that assigns CFLAGS itself still gets hone's flags; one that assigns
``CC=gcc`` finds the wrapper of that name first on PATH. A configure result left in the
user's tree (config.cache, config.status) is not copied: every build configures afresh.
"""

from __future__ import annotations

from pathlib import Path

from hone.build.systems.base import BuildFlags, BuildSystem, fill


class AutotoolsBuild(BuildSystem):
    """``sh ./configure [configure_args]`` then ``make -j{jobs}`` (``command`` replaces the make step)."""

    name = "autotools"
    configures = True

    def ignore_patterns(self) -> list[str]:
        return [*super().ignore_patterns(), "config.cache", "config.status", "config.log", "autom4te.cache"]

    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        env = self.c_env(flags)
        out: list[tuple[list[str], dict[str, str]]] = []
        if not (tree / "configure").is_file() and any((tree / n).is_file() for n in ("configure.ac", "configure.in")):
            out.append((["autoreconf", "-i"], env))
        build = fill(self.command, flags.placeholder_values(self.jobs)) if self.command else ["make", f"-j{self.jobs}"]
        return [*out, (["sh", "./configure", *self.configure_args], env), (build, env)]
