"""Real glibc swaps: Debian's glibc 2.41 under a copy of a system binary, verified with the
binary's own loader; too-old targets refused; --in-place undone byte for byte."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hone.errors import HoneError
from hone.runtime.elf import read_elf, version_needs
from hone.runtime.glibc import GlibcInstall, is_glibc_soname, obtain_glibc
from hone.runtime.patch import (
    GlibcTooOldError,
    PatchOps,
    VariantVerificationError,
    apply_patch,
    make_glibc_variant,
    verify_glibc_resolution,
)
from tests.conftest import HONE_BIN
from tests.runtime.conftest import build_c, loader_paths, needs_gcc, needs_patchelf, sha256

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


def test_sort_copy_runs_on_glibc_241_and_every_glibc_lib_is_private(hone, tmp_path: Path,
                                                                    glibc241: GlibcInstall) -> None:
    before = sha256(Path("/usr/bin/sort"))
    out = tmp_path / "v"
    res = hone("libswap", "glibc", "/usr/bin/sort", "--version", "2.41", "--out", out, "--json", tmp_path / "r.json")
    assert res.code == 0, res.err
    variant = out / "sort"
    assert read_elf(variant).interpreter == str(glibc241.interpreter)
    assert read_elf(variant).rpath[:2] == [str(out), str(glibc241.lib_dir)]  # DT_RPATH, not RUNPATH
    assert read_elf(variant).runpath == []
    # Ask the variant's own loader, independently of hone's parser.
    resolved = loader_paths(str(glibc241.interpreter), variant)
    assert {"libc.so.6", "ld-linux-x86-64.so.2"} <= set(resolved)
    for soname, path in resolved.items():
        assert glibc241.contains(path), f"{soname} -> {path} is outside the private glibc"
    run = subprocess.run([str(variant)], input="pear\napple\nfig\n", capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout == "apple\nfig\npear\n"
    assert sha256(Path("/usr/bin/sort")) == before  # original untouched
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["label"] == "glibc 2.41" and report["smoke"].startswith("sort (GNU coreutils)")
    # A running variant: /proc/PID/maps shows the private glibc.
    proc = subprocess.Popen([str(variant)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        shown = hone("libswap", "show", "--pid", str(proc.pid), "--json", "-")
        info = json.loads(shown.out)
        assert info["glibc_version"] == "2.41" and info["private_glibc"] is True
        assert glibc241.contains(info["libc"]) and glibc241.contains(info["interpreter"])
    finally:
        proc.kill()
        proc.wait(timeout=10)


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


def test_too_old_glibc_is_refused_naming_the_missing_version(hone, tmp_path: Path, glibc231: GlibcInstall) -> None:
    out = tmp_path / "v"
    res = hone("libswap", "glibc", "/usr/bin/sort", "--version", "2.31", "--out", out)
    assert res.code == 2
    assert "glibc 2.31 is too old" in res.err and "GLIBC_2.34" in res.err and "__libc_start_main" in res.err
    assert "GLIBC_2.30" in res.err  # what it does provide
    assert not out.exists()  # refused before anything was written


def test_variant_dir_must_not_be_the_originals_dir(hone, tmp_path: Path, glibc241: GlibcInstall) -> None:
    target = tmp_path / "sort"
    target.write_bytes(Path("/usr/bin/sort").read_bytes())
    before = sha256(target)
    res = hone("libswap", "glibc", target, "--version", "2.41", "--out", tmp_path)
    assert res.code == 2 and "must not overwrite" in res.err
    assert sha256(target) == before


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


def _journal_active(state_dir: Path) -> list[dict]:
    path = state_dir / "journal.jsonl"
    if not path.exists():
        return []
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    restored = {r["id"] for r in recs if r["op"] == "restored"}
    return [r for r in recs if r["op"] == "original" and r["id"] not in restored]


def test_in_place_then_kill9_then_rollback_restores_bytes(hone, state_dir: Path, tmp_path: Path,
                                                          glibc241: GlibcInstall) -> None:
    target = tmp_path / "bin" / "sort"
    target.parent.mkdir()
    target.write_bytes(Path("/usr/bin/sort").read_bytes())
    target.chmod(0o751)
    original = sha256(target)
    env = {**os.environ, "HONE_STATE_DIR": str(state_dir)}
    # The smoke command keeps hone busy after the patch, so the kill lands mid-operation.
    proc = subprocess.Popen([HONE_BIN, "libswap", "glibc", str(target), "--version", "2.41", "--in-place",
                             "--smoke", "sleep 20"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while sha256(target) == original:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the file was never patched"
            time.sleep(0.05)
        assert read_elf(target).interpreter == str(glibc241.interpreter)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    active = _journal_active(state_dir)
    assert [r["id"] for r in active] == [f"binary:{target}"]
    assert active[0]["snapshot"]["value"] == f"sha256:{original}"
    res = hone("rollback")
    assert res.code == 0, res.err
    assert sha256(target) == original
    assert target.stat().st_mode & 0o7777 == 0o751
    assert _journal_active(state_dir) == []
    assert hone("rollback").out.strip() == "nothing to restore"  # idempotent


def test_in_place_failed_smoke_restores_at_once(hone, state_dir: Path, tmp_path: Path,
                                                glibc241: GlibcInstall) -> None:
    target = tmp_path / "sort"
    target.write_bytes(Path("/usr/bin/sort").read_bytes())
    target.chmod(0o755)
    original = sha256(target)
    res = hone("libswap", "glibc", target, "--version", "2.41", "--in-place", "--smoke", "false")
    assert res.code == 2
    assert "smoke command failed" in res.err and "originals restored" in res.err
    assert sha256(target) == original
    assert _journal_active(state_dir) == []


def test_seed_002_shape_compare_sweep_over_glibc_variants(hone, tmp_path: Path, glibc241: GlibcInstall) -> None:
    """The seed-002 experiment as one command: variants × a concurrency sweep, CIs per level."""
    res = hone("libswap", "glibc", "/usr/bin/sort", "--version", "2.41", "--out", tmp_path / "v")
    assert res.code == 0, res.err
    data = tmp_path / "in.txt"
    data.write_text("".join(f"{(i * 7919) % 10007}\n" for i in range(20000)))
    res = hone("compare", "-n", "glibc-2.36", "-n", "glibc-2.41",
               f"/usr/bin/sort -n --parallel={{threads}} -S 1M {data}",
               f"{tmp_path / 'v' / 'sort'} -n --parallel={{threads}} -S 1M {data}",
               "--sweep", "threads=1,2", "--rounds", "3", "--warmup", "0", "--seed", "1", "--max-time", "0",
               "--export-json", tmp_path / "c.json", timeout=240)
    assert res.code == 0, res.err
    assert "threads=1" in res.out and "threads=2" in res.out and "glibc-2.41" in res.out
    assert "95% CI" in res.out  # one look at exactly --rounds: the plain 95% level
