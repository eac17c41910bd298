"""cmake: configure into ``_hone_build`` inside the clean tree with the variant's
compilers and flags as cache entries, then ``cmake --build``.

cmake calls the compiler by the absolute path it resolved at configure time, and a
CMakeLists.txt may set CMAKE_C_COMPILER or CMAKE_C_FLAGS itself, so the PATH wrappers
alone would be bypassed: hone's launcher (``hone-launch``, as ccache integrates) runs
every compile and link instead and appends the flags the cache entries did not bring.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hone.build.systems.base import BuildFlags, BuildSystem, fill
from hone.build.systems.wrappers import LAUNCHER

BUILD_DIR = "_hone_build"


class CMakeBuild(BuildSystem):
    """No CMAKE_BUILD_TYPE: Release would add its own -O3 on top of the variant's flags
    (a project that sets one itself keeps it; its flags come before hone's appended ones)."""

    name = "cmake"
    configures = True

    def ignore_patterns(self) -> list[str]:
        return [*super().ignore_patterns(), BUILD_DIR, "CMakeCache.txt", "CMakeFiles"]

    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        cflags = shlex.join(flags.cflags)
        ldflags = shlex.join(flags.ldflags)
        configure = [
            "cmake", "-S", ".", "-B", BUILD_DIR,
            f"-DCMAKE_C_COMPILER={flags.cc}", f"-DCMAKE_CXX_COMPILER={flags.cxx}",
            f"-DCMAKE_AR={flags.ar}", f"-DCMAKE_RANLIB={flags.ranlib}",
            f"-DCMAKE_C_FLAGS={cflags}", f"-DCMAKE_CXX_FLAGS={cflags}",
            f"-DCMAKE_EXE_LINKER_FLAGS={ldflags}", f"-DCMAKE_SHARED_LINKER_FLAGS={ldflags}",
        ]
        if self.uses_wrappers(flags):
            # Linker launchers need cmake ≥ 3.21; older ones ignore the entry (a warning).
            launcher = self.wrapper_dir(tree) / LAUNCHER
            configure += [f"-DCMAKE_{lang}_{what}_LAUNCHER={launcher}"
                          for lang in ("C", "CXX") for what in ("COMPILER", "LINKER")]
        configure += self.configure_args  # after hone's entries: a user's -D of the same name wins
        build = ["cmake", "--build", BUILD_DIR, "-j", str(self.jobs)]
        if self.command:
            build = fill(self.command, flags.placeholder_values(self.jobs))
        return [(configure, {}), (build, {})]
