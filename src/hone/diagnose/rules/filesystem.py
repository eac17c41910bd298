"""File I/O on a disk filesystem while kernel time is high: try tmpfs.

The UnixBench file-copy profile (fstime on an ARM server, docs/seed-formats.md): moving the test directory to tmpfs made
file copy 2× faster even though the 2 MB files stay in the page cache — the cost is the
filesystem code path (ext4 journaling, block allocation), not the device.

Signal: read/write system calls are the bulk of the program's calls, kernel time is
at or above the kernel-time threshold (40%, calibrated — see kernel_time.py), and a
directory the command names (an argument, or its working directory) is on a
non-memory filesystem. Experiment: the same command with that directory replaced by a
fresh directory under /dev/shm (tmpfs).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from hone.diagnose.rules.base import (
    DoctorContext,
    Experiment,
    ExperimentVariant,
    Finding,
    Rule,
    Target,
    score_over,
)
from hone.diagnose.rules.kernel_time import THRESHOLD_PCT

MEMORY_FS = {"tmpfs", "ramfs", "hugetlbfs"}
FILE_IO_SHARE = 0.5  # read+write+pread+pwrite+lseek ≥ half of all syscalls
TMPFS_ROOT = Path("/dev/shm")


def filesystem_of(path: str) -> tuple[str, str]:
    """(mount point, fs type) of ``path``: the longest matching /proc/self/mounts entry."""
    real = os.path.realpath(path)
    best = ("/", "unknown")
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
            best = (mnt, parts[2])
    return best


def directory_arguments(argv: list[str], cwd: str | None) -> list[tuple[int | None, str]]:
    """(argv index, directory) for each argument that is an existing directory (``-dDIR``
    style included); the working directory (index None) when there is none."""
    found: list[tuple[int | None, str]] = []
    for i, arg in enumerate(argv[1:], start=1):
        candidate = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if os.path.isdir(candidate) and candidate not in ("/", "."):
            found.append((i, candidate))
    if not found:
        found.append((None, cwd or os.getcwd()))
    return found


def file_io_share(ctx: DoctorContext) -> float | None:
    total = ctx.value("raw_syscalls:sys_enter")
    if not total:
        return None
    io = sum(ctx.value(f"syscalls:sys_enter_{n}") or 0.0 for n in ("read", "write", "pread64", "pwrite64", "lseek"))
    return io / total


def spec_tmpfs_value(target: Target, index: int | None) -> str | None:
    """A tmpfs directory among the allowed values of the spec parameter at argv ``index``."""
    if index is None or not target.template or index >= len(target.template):
        return None
    slot = target.template[index]
    if not (slot.startswith("{") and slot.endswith("}")):
        return None
    for value in target.param_values.get(slot[1:-1], []):
        if os.path.isdir(value) and filesystem_of(value)[1] in MEMORY_FS:
            return value
    return None


def tmpfs_variant(argv: list[str], index: int | None, directory: str,
                  target: Target | None = None) -> ExperimentVariant:
    """The command with ``directory`` replaced by a tmpfs directory: the spec's own tmpfs
    value when its parameter lists one, else a new directory made and removed around the
    experiment."""
    existing = spec_tmpfs_value(target, index) if target else None
    if existing is not None and index is not None:
        new_argv = list(argv)
        new_argv[index] = argv[index].replace(directory, existing)
        return ExperimentVariant("tmpfs", new_argv)
    holder: dict[str, str] = {}
    # One directory per hone process, so concurrent doctors do not remove each other's.
    new_dir = str(TMPFS_ROOT / f"hone-tmpfs-{os.getpid()}")
    new_argv = list(argv)
    if index is not None:
        new_argv[index] = argv[index].replace(directory, new_dir)

    def prepare() -> None:
        os.makedirs(new_dir, exist_ok=True)
        holder["dir"] = new_dir

    def cleanup() -> None:
        shutil.rmtree(holder.get("dir", new_dir), ignore_errors=True)

    variant = ExperimentVariant("tmpfs", new_argv, prepare=prepare, cleanup=cleanup)
    if index is None:
        variant.cwd = new_dir
    return variant


class FilesystemRule(Rule):
    name = "filesystem"
    signal = "read/write/lseek share of syscalls, kernel-time share, filesystem type of the data directory"
    threshold = (f"file I/O ≥ {FILE_IO_SHARE:.0%} of syscalls and kernel time ≥ {THRESHOLD_PCT:.0f}% "
                 "(calibrated) on a non-tmpfs directory")
    source = ("UnixBench file-copy profile: 2× faster on tmpfs (docs/seed-formats.md); kernel-time threshold:"
              " hone A/A calibration")
    remedy = "keep scratch files on tmpfs, or reduce filesystem work (fewer, larger writes; no per-write fsync)"
    experiment = "same command, data directory on disk vs on /dev/shm (tmpfs), interleaved rounds"
    inputs = ("sys_share_pct", "raw_syscalls:sys_enter",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        share = ctx.value("sys_share_pct")
        io_share = file_io_share(ctx)
        if share is None or io_share is None or share < THRESHOLD_PCT or io_share < FILE_IO_SHARE:
            return None
        if not TMPFS_ROOT.is_dir() or filesystem_of(str(TMPFS_ROOT))[1] not in MEMORY_FS:
            return None
        argv = ctx.target.argv
        for index, directory in directory_arguments(argv, ctx.target.cwd):
            mount, fstype = filesystem_of(directory)
            if fstype in MEMORY_FS:
                continue
            where = f"argument {index} ({directory})" if index is not None else f"working directory {directory}"
            evidence = [f"{io_share:.0%} of system calls are read/write/lseek",
                        f"kernel time {share:.1f}% of CPU time",
                        f"{where} is on {fstype} (mounted at {mount})"]
            tmpfs = tmpfs_variant(argv, index, directory, ctx.target)
            experiment = Experiment(
                f"{fstype} vs tmpfs", f"the {fstype} code path costs kernel time; tmpfs is faster",
                [ExperimentVariant(fstype, list(argv)), tmpfs],
                setup=[f"mkdir -p {tmpfs.argv[index] if index is not None else tmpfs.cwd}"] if tmpfs.prepare else [])
            return Finding(self.name, f"File I/O through {fstype} while kernel time is high",
                           score_over(share, THRESHOLD_PCT, 2.5) * 0.95, evidence, self.threshold, self.source,
                           self.remedy, [experiment])
        return None


