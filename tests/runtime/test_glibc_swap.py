"""``hone libswap glibc``: Debian's glibc 2.41 under a copy of a system binary, verified with the
binary's own loader and seen by ``libswap show --pid``; too-old targets refused; --in-place
undone byte for byte. The hone.linking pieces underneath are tested in tests/linking/test_glibc.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hone.linking.elf import read_elf
from hone.linking.glibc import GlibcInstall
from tests.conftest import HONE_BIN
from tests.linking.conftest import loader_paths, needs_patchelf, sha256

pytestmark = [pytest.mark.integration, needs_patchelf]


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
    """The glibc concurrency sweep (docs/seed-formats.md) as one command: variants × a concurrency
    sweep, CIs per level."""
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
