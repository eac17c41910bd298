"""Profiles kept per scenario and merged with weights; checksums and sizes for reports.

Pure file handling only (no compilers): the gcda counter reader, the weighted BOLT
``.fdata`` merge, checksums, and the per-scenario "contribution" shown by
``hone pgo report``.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

GCDA_MAGIC = 0x67636461  # "gcda" read as a little-endian word
GCOV_TAG_ARC_COUNTS = 0x01A10000
GCOV_TAG_OBJECT_SUMMARY = 0xA1000000


@dataclass
class ScenarioProfile:
    """One training scenario's profile: ``path`` (file or directory), its sha256,
    ``total_count`` (sum of counters: executed edges/blocks, a unitless count) and the
    weight it enters the merge with."""

    scenario: str
    path: str
    sha256: str
    total_count: int
    weight: float
    train_cpu_s: float = 0.0
    #: A server's exit status after hone stopped it (training under load); None otherwise.
    server_exit: int | None = None
    #: Processes that wrote a profile (gcc: the .gcda's run count); None where the profile cannot tell.
    profile_writers: int | None = None
    #: The trained program's processes hone saw in the server's process tree (training under load).
    server_processes: int | None = None
    #: Distinct lines of the server's log in which its profiling runtime could not write (training under load).
    profile_errors: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MergedProfile:
    """The merged profile a use-build reads. ``parts`` are its scenarios."""

    kind: str
    path: str
    sha256: str
    parts: list[ScenarioProfile]
    tool: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "sha256": self.sha256, "tool": self.tool,
                "scenarios": [p.to_dict() for p in self.parts], "contributions": contributions(self.parts)}


def sha256_path(path: Path) -> str:
    """sha256 of a file, or of a directory's files (relative names and contents, sorted)."""
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
        return h.hexdigest()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def contributions(parts: Sequence[ScenarioProfile]) -> dict[str, float]:
    """Each scenario's share (0–1) of the merged profile's counts: weight × total count,
    normalized. Scenarios with no counts contribute 0."""
    mass = {p.scenario: p.weight * p.total_count for p in parts}
    total = sum(mass.values())
    return {k: (v / total if total else 0.0) for k, v in mass.items()}


def integer_weights(weights: Sequence[float]) -> list[int]:
    """Weights as positive integers with the same ratios (llvm-profdata takes only
    integers): the smallest becomes 1, the others round to the nearest integer."""
    low = min(weights)
    return [max(1, round(w / low)) for w in weights]


def gcda_arc_total(path: Path) -> int:
    """Sum of the arc counters in one gcc ``.gcda`` file (gcc ≥ 12 format).

    Records are (tag, length in bytes, payload); arc counters are 64-bit values stored
    as two 32-bit words (low, high). A negative length marks an all-zero counter record.
    Returns 0 for files that are not gcda.
    """
    data = path.read_bytes()
    if len(data) < 16 or struct.unpack_from("<I", data, 0)[0] != GCDA_MAGIC:
        return 0
    pos, total = 16, 0  # magic, version, stamp, checksum
    while pos + 8 <= len(data):
        tag, length = struct.unpack_from("<Ii", data, pos)
        pos += 8
        if length < 0:
            continue
        if tag == GCOV_TAG_ARC_COUNTS:
            for off in range(pos, pos + length - 7, 8):
                lo, hi = struct.unpack_from("<II", data, off)
                total += lo | (hi << 32)
        pos += length
    return total


def gcda_runs(path: Path) -> int:
    """The run count of one gcc ``.gcda`` (its object summary): every process that exits
    normally adds 1 when it merges its counters into the file. 0 for files that are not gcda."""
    data = path.read_bytes()
    if len(data) < 24 or struct.unpack_from("<I", data, 0)[0] != GCDA_MAGIC:
        return 0
    tag, length = struct.unpack_from("<Ii", data, 16)
    return struct.unpack_from("<I", data, 24)[0] if tag == GCOV_TAG_OBJECT_SUMMARY and length >= 4 else 0


def gcda_dir_runs(path: Path) -> int:
    """How many processes wrote the ``.gcda`` files under ``path`` (the largest run count:
    every object of a program is written by each of its processes)."""
    return max((gcda_runs(f) for f in path.rglob("*.gcda")), default=0)


def gcda_dir_total(path: Path) -> int:
    return sum(gcda_arc_total(f) for f in path.rglob("*.gcda"))


_FDATA_BRANCH = re.compile(r"^(.*\S)\s+(\d+)\s+(\d+)$")


def fdata_total(path: Path) -> int:
    """Sum of executed-branch counts in a BOLT ``.fdata`` file (last field per line)."""
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        m = _FDATA_BRANCH.match(line)
        if m:
            total += int(m.group(3))
    return total


def merge_fdata(inputs: Sequence[tuple[Path, float]], out: Path) -> None:
    """Weighted merge of BOLT ``.fdata`` text profiles into ``out``.

    Branch lines (``… mispredicts count``) with the same location are summed after
    multiplying both numbers by the file's weight (rounded); header lines (``no_lbr``,
    ``boltedcollection``) are kept once. ``merge-fdata`` has no weights, hence this.
    """
    headers: list[str] = []
    counts: dict[str, list[float]] = {}
    for path, weight in inputs:
        for line in path.read_text(errors="replace").splitlines():
            if not line.strip():
                continue
            m = _FDATA_BRANCH.match(line)
            if m and not line.startswith(("no_lbr", "boltedcollection")):
                acc = counts.setdefault(m.group(1), [0.0, 0.0])
                acc[0] += int(m.group(2)) * weight
                acc[1] += int(m.group(3)) * weight
            elif line not in headers:
                headers.append(line)
    lines = headers + [f"{key} {round(mis)} {round(cnt)}" for key, (mis, cnt) in counts.items()]
    out.write_text("\n".join(lines) + "\n")


def llvm_total_count(summary_text: str) -> int:
    """``Total count: N`` from ``llvm-profdata show --detailed-summary`` (0 if absent)."""
    m = re.search(r"^Total count:\s*(\d+)", summary_text, re.MULTILINE)
    return int(m.group(1)) if m else 0


AFDO_TAG_FILE_NAMES = 0xAA000000
AFDO_GCC_VERSION = 2  # what gcc 12's -fauto-profile accepts


def afdo_for_gcc(src: Path, out: Path) -> None:
    """Rewrite an AutoFDO gcov profile of Debian's ``autofdo`` 0.19 for gcc ≥ 12.

    0.19 writes each string as its length in 4-byte words plus padded words and an
    arbitrary version; gcc 12 reads version 2 and string lengths in bytes (NUL included,
    unpadded), and crashes on the old form. Only the header and the string table change;
    the function records after it are copied as they are (gcc reads them in sequence).
    """
    data = src.read_bytes()
    if len(data) < 24:
        raise ValueError(f"{src} is not an AutoFDO profile (too short)")
    magic, _version, zero, tag, _length, count = struct.unpack_from("<6I", data, 0)
    if magic != GCDA_MAGIC or tag != AFDO_TAG_FILE_NAMES:
        raise ValueError(f"{src} is not an AutoFDO gcov profile (magic {magic:#x}, tag {tag:#x})")
    pos, strings = 24, b""
    for _ in range(count):
        (words,) = struct.unpack_from("<I", data, pos)
        raw = data[pos + 4:pos + 4 + 4 * words]
        pos += 4 + 4 * words
        text = raw.split(b"\0", 1)[0] + b"\0"
        strings += struct.pack("<I", len(text)) + text
    table = struct.pack("<I", count) + strings
    out.write_bytes(struct.pack("<5I", magic, AFDO_GCC_VERSION, zero, tag, len(table)) + table + data[pos:])
