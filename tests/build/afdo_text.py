"""AutoFDO samples in the tools' text form, derived exactly from one callgrind run.

Collection needs LBR, which test machines lack; the profile tools also read text. callgrind
(``--dump-instr=yes --dump-line=no --collect-jumps=yes``) gives every instruction's execution
count and every taken jump and call of a ``-no-pie`` binary; from them:

- create_gcov ``--profiler=text`` (three sections: ranges, ``addr:count``, branches), addresses
  relative to the file (the address perf reports as the DSO offset);
- llvm-profgen ``--unsymbolized-profile`` (two sections: ``start-end:count`` ranges, one per
  instruction, and ``from->to:count`` branches), addresses relative to the text segment.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

from hone.core.process import run_process

_KEY = re.compile(r"^(c?ob)=\((\d+)\)(?: (.*))?$")


def callgrind(binary: Path, args: list[str], out: Path) -> tuple[Path, Path]:
    """Run ``binary`` under callgrind; returns (its output, the program it ran). That program is
    a copy without debug info (valgrind 3.19 gives up on clang 16's DWARF 5), same addresses."""
    ran = out.with_suffix(".bin")
    run_process(["objcopy", "--strip-debug", str(binary), str(ran)], timeout=60, check=True)
    run_process(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--dump-line=no", "--collect-jumps=yes",
                 f"--callgrind-out-file={out}", str(ran), *args], timeout=60, check=True)
    return out, ran.resolve()


def _resolve(token: str, last: int) -> int:
    if token == "*":
        return last
    if token[0] in "+-":
        return last + int(token, 0)
    return int(token, 0)


def counts_of(callgrind_out: Path, binary: Path) -> tuple[dict[int, int], dict[tuple[int, int], int]]:
    """Per-instruction execution counts and taken branches (jumps and calls) inside ``binary``."""
    counts: dict[int, int] = defaultdict(int)
    branches: dict[tuple[int, int], int] = defaultdict(int)
    names: dict[str, str] = {}
    last, in_obj, pending = 0, False, None
    for line in callgrind_out.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = _KEY.match(line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "ob":
                in_obj = names.get(m.group(2)) == str(binary)
            continue
        if line.startswith(("calls=", "jump=", "jcnd=")):
            kind, rest = line.split("=", 1)
            count, target = rest.split()[:2]
            pending = (kind, int(count.split("/")[0]), _resolve(target, last))  # target: relative, not kept
            continue
        first = line.split()[0]
        if re.match(r"^[a-z]+[=:]", first) or ":" in first:
            continue  # other keys (fn=, fl=, cfn= …) and the header
        parts = line.split()
        last = _resolve(parts[0], last)
        if pending is not None:
            kind, count, target = pending
            pending = None
            if in_obj and count:
                branches[(last, target)] += count
            if kind == "calls":
                continue  # the call's inclusive cost, not the instruction's own
        if in_obj and len(parts) > 1:
            counts[last] += int(parts[1])
    inside = set(counts)
    return dict(counts), {k: v for k, v in branches.items() if k[1] in inside}


def _load_bases(binary: Path) -> tuple[int, int]:
    """(file base, text segment base) of a -no-pie binary: vaddr − offset of its LOADs."""
    out = subprocess.run(["readelf", "-lW", str(binary)], capture_output=True, text=True, check=True, timeout=30)
    file_base, text_base = None, None
    for line in out.stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            offset, vaddr = int(f[1], 16), int(f[2], 16)
            file_base = vaddr - offset if file_base is None else file_base
            if "E" in f[6:-1]:
                text_base = text_base or vaddr & ~0xFFF
    assert file_base is not None and text_base is not None, out.stdout
    return file_base, text_base


def gcov_text(callgrind_out: Path, binary: Path, out: Path) -> Path:
    counts, branches = counts_of(callgrind_out, binary)
    base, _ = _load_bases(binary)
    lines = ["0", str(len(counts)), *(f"{a - base:x}:{c}" for a, c in sorted(counts.items())),
             str(len(branches)), *(f"{s - base:x}->{t - base:x}:{c}" for (s, t), c in sorted(branches.items()))]
    out.write_text("\n".join(lines) + "\n")
    return out


def llvm_text(callgrind_out: Path, binary: Path, out: Path) -> Path:
    counts, branches = counts_of(callgrind_out, binary)
    _, base = _load_bases(binary)
    lines = [str(len(counts)), *(f"{a - base:x}-{a - base:x}:{c}" for a, c in sorted(counts.items())),
             str(len(branches)), *(f"{s - base:x}->{t - base:x}:{c}" for (s, t), c in sorted(branches.items()))]
    out.write_text("\n".join(lines) + "\n")
    return out
