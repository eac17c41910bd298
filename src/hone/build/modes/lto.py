"""Link-time optimization: flags only. gcc: ``-flto=N`` (full); clang: ``-flto`` or
``-flto=thin`` linked by lld; rustc: cargo's ``lto`` profile setting."""

from __future__ import annotations

from typing import Literal

from hone.build.recipe import Family
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import lld_available
from hone.core.errors import CapabilityError


def add_lto(flags: BuildFlags, family: Family, kind: Literal["full", "thin"], jobs: int) -> None:
    """Add LTO of ``kind`` to ``flags`` for ``family``; compile and link flags alike."""
    if family == "rust":
        flags.env["CARGO_PROFILE_RELEASE_LTO"] = "fat" if kind == "full" else "thin"
        # One codegen unit lets fat LTO see the whole crate; thin LTO keeps cargo's default.
        if kind == "full":
            flags.env["CARGO_PROFILE_RELEASE_CODEGEN_UNITS"] = "1"
        return
    if family == "gcc":
        extra = [f"-flto={jobs}"]
    else:
        if not lld_available():
            raise CapabilityError("clang LTO links with lld, which is not installed", hint="apt-get install lld-16")
        extra = ["-flto=thin" if kind == "thin" else "-flto"]
        flags.ldflags.append("-fuse-ld=lld")
    flags.cflags += extra
    flags.ldflags += extra
