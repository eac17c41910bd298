"""hone pgo on a pre-forking server (examples/pgo/toy-server with WORKERS = 2): the master only
forks and waits, the workers serve; training must collect every process's profile — gcc's
workers merge into the same .gcda (its run count says how many did), clang's into the master's
.profraw (%p is expanded at start, %m merges) — also when the workers run as another user, as
nginx's do — and a server whose processes did not all write one is reported."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from hone.build.pipeline import _lost_processes
from hone.build.profiles import GCDA_MAGIC, GCOV_TAG_OBJECT_SUMMARY, ScenarioProfile, gcda_dir_runs, gcda_runs
from hone.build.service import hand_over, read_profile_errors
from hone.build.toolchain import clang_profdata
from tests.build.conftest import build, read_json, rows
from tests.build.test_pgo_service import _env, _nothing_left, _server
from tests.net import free_port
from tests.procs import new_mark

WORKERS = 2
ROUNDS = 100  # per request (the example's 300, smaller: a quick test)
TRAIN_REQUESTS = 400  # the example's train load: load.py PORT 400 2


def test_the_run_count_of_a_gcda_says_how_many_processes_wrote_it(tmp_path: Path) -> None:
    # magic, version, stamp, checksum; then the object summary: runs, sum_max (gcc 12 layout).
    head = struct.pack("<IIII", GCDA_MAGIC, 0x4232322A, 1, 2)
    (tmp_path / "a.gcda").write_bytes(head + struct.pack("<IiII", GCOV_TAG_OBJECT_SUMMARY, 8, 3, 99))
    (tmp_path / "b.gcda").write_bytes(head + struct.pack("<IiII", GCOV_TAG_OBJECT_SUMMARY, 8, 1, 5))
    (tmp_path / "c.gcda").write_bytes(b"not a gcda file at all!!")
    assert gcda_runs(tmp_path / "a.gcda") == 3 and gcda_runs(tmp_path / "c.gcda") == 0
    assert gcda_dir_runs(tmp_path) == 3


def test_a_server_whose_workers_wrote_no_profile_is_reported() -> None:
    part = ScenarioProfile("load", "p", "x", 10, 1.0, server_exit=0, profile_writers=1, server_processes=3)
    lost = _lost_processes("instr-gcc", "load", part)
    assert lost is not None and "3 processes" in lost and "counts of 2 are lost" in lost
    part.profile_writers = 3
    assert _lost_processes("instr-gcc", "load", part) is None
    part.server_processes = None  # not a service, or its processes unreadable: nothing to say
    assert _lost_processes("instr-gcc", "load", part) is None


def _function_counts(profdata: str) -> dict[str, int]:
    """Each function's entry count in an LLVM profile (``file.c:name`` → ``name``)."""
    show = subprocess.run([clang_profdata(), "show", "--all-functions", profdata], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    counts: dict[str, int] = {}
    name = ""
    for line in show.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and line.endswith(":"):
            name = line.strip()[:-1].rsplit(":", 1)[-1]
        elif "Function count:" in line and name:
            counts[name] = int(line.split(":")[1])
    return counts


@pytest.mark.integration
def test_pgo_trains_a_preforking_server_with_every_workers_counts(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    # Both families through one build command (the Makefile hard-codes CC = gcc).
    spec = _server(project, port, {'"300"]': f'"{ROUNDS}", "{WORKERS}"]',
                                   "  train:": '  command: [make, "CC={cc}", "CFLAGS={cflags}", "LDFLAGS={ldflags}"]\n'
                                               "  train:"})
    out = tmp_path / "r.json"
    res = hone("pgo", spec, "--mode", "instr-gcc", "--mode", "instr-clang", "--rounds", "2", "--workdir",
               tmp_path / "work", "--json", out, env=_env(mark), timeout=240)
    assert res.code == 0, res.err
    result = read_json(out)
    assert not any("are lost" in w for w in result["warnings"]), result["warnings"]
    processes = 1 + WORKERS
    # gcc: master and both workers merged into the .gcda (run count 3). The master never serves,
    # so the request loop's counts (≥ one per byte per round per request) come from the workers.
    (gcc,) = result["profiles"]["instr-gcc"]["scenarios"]
    assert gcc["server_exit"] == 0 and gcc["server_processes"] == processes, gcc
    assert gcc["profile_writers"] == processes, gcc
    assert gcc["total_count"] >= TRAIN_REQUESTS * ROUNDS * 4096, gcc
    # clang: LLVM_PROFILE_FILE's %p is expanded when the master starts, so the workers merge into
    # its .profraw (%m: online merging under a lock) rather than writing files of their own.
    # accept_loop() runs in the workers only (once each), master() once in the master and its
    # counter travels into each worker with the fork: 1 + WORKERS when every process's counts arrived.
    (clang,) = result["profiles"]["instr-clang"]["scenarios"]
    assert clang["server_exit"] == 0 and clang["server_processes"] == processes, clang
    counts = _function_counts(result["profiles"]["instr-clang"]["path"])
    assert counts["accept_loop"] == WORKERS and counts["master"] == processes, counts
    assert counts["serve"] >= 2 and counts["work"] == TRAIN_REQUESTS, counts  # load.py: 2 connections
    for variant in ("instr-gcc", "instr-clang"):
        assert build(result, variant)["profile_problems"] == [], build(result, variant)
        assert rows(result, variant)[0]["cpu_s_median"] > 0
    _nothing_left(mark, port)


def test_a_profile_directory_is_handed_to_the_servers_other_user_or_the_blocking_parent_named(
        tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    assert hand_over(tmp_path / "none", set()) is None and not (tmp_path / "none").exists()
    if os.geteuid() == 0:
        note = hand_over(tmp_path / "raw", {nobody})
        assert (tmp_path / "raw").stat().st_uid == nobody
        assert note is not None and "run as nobody" in note
        # pytest's directories are 0700: nobody cannot get through them, whatever raw's owner.
        blocked = next(p for p in (tmp_path, *tmp_path.parents) if not p.stat().st_mode & stat.S_IXOTH)
        assert f"{blocked} (mode drwx" in note and "give --workdir" in note
    log = tmp_path / "server.log"
    log.write_text("started\nprofiling:/w/a.gcda:Skip\nLLVM Profile Error: Failed to write file \"/w/1.profraw\":"
                   " Permission denied\nprofiling:/w/a.gcda:Skip\nserving\n")
    assert read_profile_errors(log) == ["profiling:/w/a.gcda:Skip",
                                        'LLVM Profile Error: Failed to write file "/w/1.profraw": Permission denied']
    assert read_profile_errors(tmp_path / "missing.log") == []


@pytest.fixture
def reachable_dir():  # type: ignore[no-untyped-def]
    """A directory under /tmp whose parents let any user through (pytest's tmp_path does not)."""
    path = Path(tempfile.mkdtemp(prefix="hone-pgo-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="workers switch to nobody only under a root master")
def test_workers_running_as_another_user_write_their_profiles(hone, project, tmp_path: Path,
                                                              reachable_dir: Path) -> None:
    # As nginx: the master runs as root, the workers as nobody after the fork, without the
    # environment the master was started with (so without GCOV_PREFIX or the like).
    port, mark = free_port(), new_mark()
    spec = _server(project, port, {'"300"]': f'"{ROUNDS}", "{WORKERS}", "nobody"]',
                                   "  train:": '  command: [make, "CC={cc}", "CFLAGS={cflags}", "LDFLAGS={ldflags}"]\n'
                                               "  train:"})
    out = tmp_path / "r.json"
    res = hone("pgo", spec, "--mode", "instr-gcc", "--mode", "instr-clang", "--rounds", "2", "--noise-builds", "0",
               "--workdir", reachable_dir / "work", "--json", out, env=_env(mark), timeout=240)
    assert res.code == 0, res.err
    result = read_json(out)
    assert result["warnings"] == [], result["warnings"]
    assert "the server's processes run as nobody" in res.err
    (gcc,) = result["profiles"]["instr-gcc"]["scenarios"]
    assert gcc["profile_writers"] == 1 + WORKERS and gcc["profile_errors"] == 0, gcc
    counts = _function_counts(result["profiles"]["instr-clang"]["path"])
    assert counts["accept_loop"] == WORKERS and counts["work"] == TRAIN_REQUESTS, counts
    # Where nobody cannot reach the work directory (pytest's 0700 base), the lost counts are
    # reported for LLVM too: its runtime's errors in the server's log.
    res = hone("pgo", spec, "--mode", "instr-clang", "--rounds", "2", "--noise-builds", "0",
               "--workdir", tmp_path / "work", "--json", out, env=_env(mark), timeout=240)
    assert res.code == 0, res.err
    (warning,) = read_json(out)["warnings"]
    assert "could not write their profile" in warning and "LLVM Profile Error" in warning, warning
    assert "cannot reach" in warning and "give --workdir" in warning, warning
    _nothing_left(mark, port)
