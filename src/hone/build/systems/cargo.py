"""cargo: ``cargo build --release`` with RUSTFLAGS and a target directory inside the
clean tree (never the user's ``target/``, whose objects were built with other flags)."""

from __future__ import annotations

from pathlib import Path

from hone.build.systems.base import BuildFlags, BuildSystem, fill


class CargoBuild(BuildSystem):
    name = "cargo"
    wraps_compilers = False  # RUSTFLAGS reach rustc; C compilers stay as the crate's build scripts call them

    def ignore_patterns(self) -> list[str]:
        return [*super().ignore_patterns(), "target"]

    def steps(self, tree: Path, flags: BuildFlags) -> list[tuple[list[str], dict[str, str]]]:
        argv = self.command or ["cargo", "build", "--release", "-j", str(self.jobs)]
        # CARGO_ENCODED_RUSTFLAGS beats RUSTFLAGS (one left in the environment, as cargo sets it for
        # build scripts, would silently drop hone's): both carry the flags, the encoded form unquoted.
        env = {"RUSTFLAGS": " ".join(flags.rustflags), "CARGO_ENCODED_RUSTFLAGS": "\x1f".join(flags.rustflags),
               "CARGO_TARGET_DIR": str(tree / "target")}
        return [(fill(argv, flags.placeholder_values(self.jobs)), env)]
