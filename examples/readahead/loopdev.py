#!/usr/bin/env python3
"""A private loop device for the read-ahead example: an ext4 filesystem in a sparse file,
attached with direct I/O (its reads of the backing file bypass the host's page cache, so
the loop device's own read_ahead_kb decides what is read), mounted, with one data file of
random bytes. No other disk's settings are touched.

    loopdev.py setup DIR [--mib 1024]    prints the device name (loop3); idempotent
    loopdev.py teardown DIR              unmounts and detaches it

DIR gets backing.img, mnt/ (data inside) and ``device`` (the name). Root only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=600).stdout.strip()


def attached(directory: Path) -> str | None:
    """The loop device backing DIR/backing.img, if attached and mounted."""
    name_file = directory / "device"
    if not name_file.exists():
        return None
    name = name_file.read_text().strip()
    backing = Path(f"/sys/block/{name}/loop/backing_file")
    try:
        ok = os.path.samefile(backing.read_text().strip(), directory / "backing.img")
    except OSError:
        return None
    return name if ok and os.path.ismount(directory / "mnt") else None


def setup(directory: Path, mib: int) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    name = attached(directory)
    data = directory / "mnt" / "data"
    if name and data.exists() and data.stat().st_size == mib << 20:
        return name
    if name:
        teardown(directory)
    image = directory / "backing.img"
    image.unlink(missing_ok=True)
    with image.open("wb") as fh:
        fh.truncate((mib + 128) << 20)
    dev = run("losetup", "--direct-io=on", "--find", "--show", str(image))
    name = Path(dev).name
    (directory / "device").write_text(name + "\n")
    run("mkfs.ext4", "-q", "-F", dev)
    (directory / "mnt").mkdir(exist_ok=True)
    run("mount", dev, str(directory / "mnt"))
    with open("/dev/urandom", "rb") as src, data.open("wb") as out:
        for _ in range(mib):
            out.write(src.read(1 << 20))
        out.flush()
        os.fsync(out.fileno())
    return name


def teardown(directory: Path) -> None:
    mnt = directory / "mnt"
    name_file = directory / "device"
    if os.path.ismount(mnt):
        run("umount", str(mnt))
    if name_file.exists():
        name = name_file.read_text().strip()
        backing = Path(f"/sys/block/{name}/loop/backing_file")
        try:
            mine = os.path.samefile(backing.read_text().strip(), directory / "backing.img")
        except OSError:
            mine = False
        if mine:
            run("losetup", "--detach", f"/dev/{name}")
        name_file.unlink()
    (directory / "backing.img").unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["setup", "teardown"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--mib", type=int, default=1024, help="size of the data file (MiB)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("loopdev.py: needs root (losetup, mount)", file=sys.stderr)
        return 2
    if args.action == "setup":
        print(setup(args.dir.resolve(), args.mib))
    else:
        teardown(args.dir.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
