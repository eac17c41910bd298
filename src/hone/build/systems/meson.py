"""meson: ``meson setup _hone_build`` with the variant's CC/CXX/CFLAGS/LDFLAGS in the
environment, then ``meson compile``.

``-Dbuildtype=plain`` so meson adds no -O or -g beyond the project's own arguments and
hone's; ``-Db_pgo=off`` so meson's own PGO never mixes with hone's modes. meson runs the
compiler it was given in CC, which is the wrapper's path.
"""

from __future__ import annotations

from pathlib import Path

from hone.build.systems.base import BuildFlags, BuildSystem, fill

BUILD_DIR = "_hone_build"


class MesonBuild(BuildSystem):
    """``command`` replaces the compile step; ``binary`` is relative to the tree
    (``_hone_build/prog``)."""

    name = "meson"
    configures = True

    def ignore_patterns(self) -> list[str]:
        return [*super().ignore_patterns(), BUILD_DIR]

    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        env = self.c_env(flags)
        setup = ["meson", "setup", BUILD_DIR, "-Dbuildtype=plain", "-Db_pgo=off", *self.configure_args]
        build = ["meson", "compile", "-C", BUILD_DIR, "-j", str(self.jobs)]
        if self.command:
            build = fill(self.command, flags.placeholder_values(self.jobs))
        return [(setup, env), (build, env)]
