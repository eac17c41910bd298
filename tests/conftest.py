"""Shared fixtures: an isolated state directory per test and the ``hone`` command runner."""

from __future__ import annotations

import json
import locale
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from tests.pg import PgCluster, start_cluster

REPO = Path(__file__).resolve().parents[1]
HONE_BIN = str(Path(sys.executable).with_name("hone"))


# Tests that change the machine or share something machine-wide (kernel knobs, fixed ports, tracefs
# and perf, loop devices, real servers and their clusters) form one scope, so `make test`'s two
# xdist workers never run two of them at once; every other test file is a scope of its own.
MACHINE = ("adapt", "build/test_pgo_prefork.py", "core", "diagnose", "examples", "knobs", "linking", "presets",
           "run", "runtime", "tune/test_space_and_root.py", "tune/test_storage.py", "cli/test_export_verify.py",
           "cli/test_process_cleanup.py", "report/formats/test_formats.py", "report/test_dashboard.py")


def scope_of(nodeid: str) -> str:
    """``machine`` for a test of the machine-wide group, else its file."""
    rel = nodeid.split("::")[0].removeprefix("tests/")
    return "machine" if any(rel == m or rel.startswith(m + "/") for m in MACHINE) else rel


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    # xdist's own grouping (--dist loadgroup) renames node ids, which pytest 9 no longer allows;
    # its module scheduler with the scope above does the same
    from xdist.scheduler import LoadScopeScheduling

    class MachineScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return MachineScope(config, log)


@pytest.fixture(autouse=True)
def machine_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test is its own machine (HONE_MACHINE_DIR: the machine-wide lock and the list
    of state directories with changes), so test runs never block each other."""
    path = tmp_path_factory.mktemp("hone-machine")
    monkeypatch.setenv("HONE_MACHINE_DIR", str(path))
    return path


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, machine_dir: Path) -> Path:
    """Every test gets its own HONE_STATE_DIR (journal, studies)."""
    path = tmp_path_factory.mktemp("hone-state")
    monkeypatch.setenv("HONE_STATE_DIR", str(path))
    return path


@dataclass
class CliResult:
    code: int
    out: str
    err: str


class Zygote:
    """A client of tests/zygote.py: runs ``hone`` commands in processes forked from one that
    imported hone's heavy libraries already (~2.5 s of CPU a `hone tune` saves)."""

    def __init__(self) -> None:
        name = f"hone-zygote-{uuid.uuid4().hex}"
        self.path = "\0" + name  # an abstract socket: no file, no limit from the length of a tmp path
        self.proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "zygote.py"), name, HONE_BIN],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "ready\n", "the zygote did not start"

    def run(self, argv: list[str], env: dict[str, str], cwd: str, timeout: float) -> CliResult:
        with (tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err,
              open(os.devnull, "rb") as null, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn):
            conn.connect(self.path)
            socket.send_fds(conn, [b"r"], [null.fileno(), out.fileno(), err.fileno()])
            req = json.dumps({"argv": argv, "env": env, "cwd": cwd}).encode()
            conn.sendall(struct.pack("!I", len(req)) + req)
            answers = conn.makefile("r")
            pid = int(answers.readline())
            conn.settimeout(timeout)
            try:
                line = answers.readline()
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([HONE_BIN, *argv], timeout) from None
            assert line, "the zygote's waiter went away"
            return CliResult(int(line), _text(out), _text(err))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _text(file: IO[bytes]) -> str:
    """What ``subprocess.run(text=True)`` gives: the locale's decoding, universal newlines."""
    file.seek(0)
    return file.read().decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


@pytest.fixture(scope="session")
def zygote() -> Iterator[Zygote | None]:
    """One per test process; HONE_TEST_FORK=0 runs every command from a fresh interpreter instead."""
    if os.environ.get("HONE_TEST_FORK") == "0":
        yield None
        return
    z = Zygote()
    try:
        yield z
    finally:
        z.close()


@pytest.fixture
def hone(state_dir: Path, zygote: Zygote | None):  # type: ignore[no-untyped-def]
    """Run hone's CLI in a process of its own: ``hone("run", spec)`` (forked from the zygote,
    or the console script when HONE_TEST_FORK=0)."""

    def _run(*args: str, timeout: float = 300, cwd: str | os.PathLike[str] | None = None,
             env: dict[str, str] | None = None) -> CliResult:
        full = {**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "400", **(env or {})}
        if zygote is not None:
            return zygote.run(list(map(str, args)), full, str(cwd or os.getcwd()), timeout)
        proc = subprocess.run([HONE_BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              cwd=cwd, env=full)
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return _run


def is_root() -> bool:
    return os.geteuid() == 0


def block_readahead() -> Path | None:
    """A real block device's read_ahead_kb (not a loop or ram disk), or None."""
    for dev in sorted(Path("/sys/block").iterdir()):
        path = dev / "queue" / "read_ahead_kb"
        if path.exists() and not dev.name.startswith(("loop", "ram")):
            return path
    return None


needs_root = pytest.mark.skipif(not is_root(), reason="changes kernel knobs; CI runs as root")


@pytest.fixture(scope="session")
def pg() -> Iterator[PgCluster]:
    """A throwaway PostgreSQL cluster on a loopback port for the whole session (tests/pg.py)."""
    if os.geteuid() != 0:
        pytest.skip("the throwaway cluster is created as the postgres user; needs root")
    try:
        with start_cluster() as cluster:
            yield cluster
    except RuntimeError as exc:
        pytest.fail(str(exc))


@dataclass(frozen=True)
class LoopFs:
    """A private loop device with an ext4 filesystem and a data file (examples/readahead/loopdev.py)."""

    device: str  # loop3
    data: Path  # the data file on it
    root: Path  # loopdev.py's directory

    @property
    def readahead(self) -> Path:
        return Path(f"/sys/block/{self.device}/queue/read_ahead_kb")

    @property
    def dev_t(self) -> int:
        """The kernel's dev_t of the device (what the probe filters on)."""
        major, minor = Path(f"/sys/block/{self.device}/dev").read_text().strip().split(":")
        return (int(major) << 20) | int(minor)


def bpftrace_unusable() -> str | None:
    """Why the read-ahead controller cannot run here, or None."""
    if not is_root():
        return "needs root (a loop device, read_ahead_kb, bpftrace)"
    if shutil.which("bpftrace") is None:
        return "bpftrace is not installed (scripts/setup.sh readahead)"
    if shutil.which("losetup") is None or shutil.which("mkfs.ext4") is None:
        return "losetup or mkfs.ext4 missing"
    return None


@pytest.fixture(scope="session")
def loop_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopFs]:
    """A 48 MiB data file on a private loop device for the whole session (detached at the end)."""
    why = bpftrace_unusable()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("loopfs")
    script = REPO / "examples" / "readahead" / "loopdev.py"
    device = subprocess.run([sys.executable, str(script), "setup", str(root), "--mib", "48"], check=True,
                            capture_output=True, text=True, timeout=300).stdout.strip()
    try:
        yield LoopFs(device, root / "mnt" / "data", root)
    finally:
        subprocess.run([sys.executable, str(script), "teardown", str(root)], check=False, timeout=300)
