"""A glibc of its own for a binary (:mod:`hone.linking.glibc`, :mod:`hone.linking.patch`): Debian's
glibc 2.41 fetched once and cached, a copy patched onto it and verified with its own loader,
too-old glibcs refused naming the symbol. The ``hone libswap glibc`` command is in
tests/runtime/test_glibc_swap.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hone.core.errors import HoneError
from hone.linking.elf import read_elf, version_needs
from hone.linking.glibc import GlibcInstall, is_glibc_soname, obtain_glibc
from hone.linking.patch import (
    GlibcTooOldError,
    PatchOps,
    VariantVerificationError,
    apply_patch,
    make_glibc_variant,
    verify_glibc_resolution,
)
from tests.linking.conftest import build_c, loader_paths, needs_gcc, needs_patchelf

pytestmark = [pytest.mark.integration, needs_patchelf]


def test_fetch_is_cached_and_versioned(glibc241: GlibcInstall) -> None:
    assert glibc241.version == "2.41"
    assert glibc241.interpreter.exists() and (glibc241.lib_dir / "libc.so.6").exists()
    assert "GLIBC_2.41" in glibc241.provided["libc.so.6"]
    assert not str(glibc241.root).startswith(("/lib", "/usr/lib"))  # never over the system's


def test_a_glibc_directory_can_be_given(glibc241: GlibcInstall, tmp_path: Path) -> None:
    again = obtain_glibc(str(glibc241.root))
    assert (again.lib_dir, again.interpreter, again.version) == (glibc241.lib_dir, glibc241.interpreter, "2.41")
    with pytest.raises(HoneError, match=r"no libc\.so\.6"):
        obtain_glibc(str(tmp_path))
    with pytest.raises(HoneError, match="unknown glibc version"):
        obtain_glibc("2.99")


def test_transitive_glibc_libs_stay_private(tmp_path: Path, glibc241: GlibcInstall) -> None:
    """lua5.4 → libreadline → libtinfo → libc, and libm: all glibc pieces from 2.41 (DT_RPATH)."""
    lua = Path("/usr/bin/lua5.4")
    if not lua.exists():
        pytest.skip("lua5.4 not installed")
    report = make_glibc_variant(lua, [], glibc241, tmp_path / "lua", smoke="{bin} -e print(7*6)")
    assert report.smoke == "42"
    resolved = loader_paths(str(glibc241.interpreter), report.binary)
    glibc_libs = {s: p for s, p in resolved.items() if is_glibc_soname(s)}
    assert {"libc.so.6", "libm.so.6"} <= set(glibc_libs)
    assert all(glibc241.contains(p) for p in glibc_libs.values()), glibc_libs
    assert not glibc241.contains(resolved["libreadline.so.8"])  # non-glibc libs stay the system's


def test_interpreter_only_patch_is_caught_by_verification(tmp_path: Path, glibc241: GlibcInstall) -> None:
    """Without the rpath, libc comes from the system under the 2.41 loader: two libcs."""
    copy = tmp_path / "sort"
    copy.write_bytes(Path("/usr/bin/sort").read_bytes())
    copy.chmod(0o755)
    apply_patch(copy, PatchOps(interpreter=str(glibc241.interpreter)))
    with pytest.raises(VariantVerificationError, match=r"outside|loader failed"):
        verify_glibc_resolution(copy, glibc241)


@needs_gcc
def test_refusal_names_the_symbol_of_a_program_of_ours(tmp_path: Path, glibc231: GlibcInstall,
                                                       glibc241: GlibcInstall) -> None:
    # arc4random appeared in glibc 2.36: fine on 2.41, refused on 2.31.
    prog = build_c(tmp_path, "rnd", '#include <stdlib.h>\n#include <stdio.h>\n'
                   'int main(void){printf("%u\\n", arc4random() % 2); return 0;}\n')
    assert "arc4random" in version_needs(prog)["libc.so.6"]["GLIBC_2.36"]
    with pytest.raises(GlibcTooOldError, match=r"GLIBC_2\.36 \(rnd: arc4random\)"):
        make_glibc_variant(prog, [], glibc231, tmp_path / "old", smoke=None)
    ok = make_glibc_variant(prog, [], glibc241, tmp_path / "new", smoke="{bin}")
    assert ok.smoke in ("0", "1")


@needs_gcc
def test_bundled_library_is_copied_patched_and_used(tmp_path: Path, glibc241: GlibcInstall) -> None:
    src = tmp_path / "src"
    src.mkdir()
    lib = src / "libgreet.so"
    (src / "greet.c").write_text('#include <stdio.h>\nvoid greet(void){puts("hi");}\n')
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src / "greet.c")], check=True, timeout=60)
    main = build_c(src, "app", "void greet(void);\nint main(void){greet();return 0;}\n",
                   f"-L{src}", "-lgreet", f"-Wl,-rpath,{src}")
    report = make_glibc_variant(main, [lib], glibc241, tmp_path / "v", smoke="{bin}")
    assert report.smoke == "hi"
    copied = tmp_path / "v" / "libgreet.so"
    assert report.libs == [copied]
    assert read_elf(copied).rpath[:2] == [str(tmp_path / "v"), str(glibc241.lib_dir)]
    assert loader_paths(str(glibc241.interpreter), report.binary)["libgreet.so"] == str(copied)
