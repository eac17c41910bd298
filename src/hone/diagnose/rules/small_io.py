"""Many small read/write calls: try larger buffers (UnixBench file copy's 256/1024/4096-byte
runs, docs/seed-formats.md).

Signal: bytes moved per read/write system call, (rchar + wchar) / (syscr + syscw) from
/proc/<launcher>/io, together with a high kernel-time share. Each call pays a fixed
kernel entry/exit and VFS cost, so small buffers spend the CPU on overhead.

Threshold: < 16 KiB per call and kernel time ≥ 40% (calibrated, see kernel_time.py).
16 KiB has no published source: it is four pages, above the 4 KiB most stdio buffers use.
Experiment: when the command has a buffer-size option (``-b N``, ``--bs N``,
``--buffer-size=N``, ``bs=N``) the same command at 4× and 16× that size (capped at
1 MiB), or, for a spec parameter, at its next two larger allowed values; otherwise a
suggestion only.
"""

from __future__ import annotations

import re

from hone.diagnose.rules.base import DoctorContext, Experiment, ExperimentVariant, Finding, Rule, score_over
from hone.diagnose.rules.kernel_time import THRESHOLD_PCT

SMALL_BYTES = 16 * 1024
MAX_BYTES = 1 << 20
_OPTIONS = {"-b", "--bs", "--buffer-size", "--bufsize", "--block-size", "-bs"}
_INLINE = re.compile(r"^(--bs=|--buffer-size=|--bufsize=|--block-size=|bs=)(\d+)$")


def find_buffer_option(argv: list[str]) -> tuple[int, str, int] | None:
    """(argv index, prefix, bytes) of a buffer-size option, or None."""
    for i, arg in enumerate(argv[1:], start=1):
        if arg in _OPTIONS and i + 1 < len(argv) and argv[i + 1].isdigit():
            return i + 1, "", int(argv[i + 1])
        m = _INLINE.match(arg)
        if m:
            return i, m.group(1), int(m.group(2))
    return None


def with_buffer(argv: list[str], index: int, prefix: str, size: int) -> list[str]:
    out = list(argv)
    out[index] = f"{prefix}{size}"
    return out


def spec_sizes(ctx: DoctorContext, index: int) -> list[int] | None:
    """The allowed values of the spec parameter at argv ``index``, when it is one."""
    template = ctx.target.template
    if not template or index >= len(template) or not template[index].startswith("{"):
        return None
    values = ctx.target.param_values.get(template[index].strip("{}"))
    return [int(v) for v in values if v.isdigit()] if values else None


class SmallIoRule(Rule):
    name = "small-io"
    signal = "bytes per read/write syscall = (rchar + wchar) / (syscr + syscw); kernel-time share"
    threshold = f"< {SMALL_BYTES // 1024} KiB per call and kernel time >= {THRESHOLD_PCT:.0f}% (both hone's choice)"
    source = ("UnixBench file-copy profile: fstime with 256/1024/4096-byte buffers (docs/seed-formats.md);"
              " threshold: hone's choice, see the module docstring")
    remedy = "read and write in larger blocks (64 KiB–1 MiB), or use copy_file_range/sendfile/mmap"
    experiment = "same command with the buffer-size option ×4 and ×16"
    inputs = ("bytes_per_io_syscall", "sys_share_pct",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        per_call = ctx.value("bytes_per_io_syscall")
        share = ctx.value("sys_share_pct")
        if per_call is None or share is None or per_call >= SMALL_BYTES or share < THRESHOLD_PCT:
            return None
        calls = (ctx.value("io_syscr") or 0) + (ctx.value("io_syscw") or 0)
        evidence = [f"{per_call:,.0f} bytes per read/write call on average ({calls:,.0f} calls per run)",
                    f"kernel time {share:.1f}% of CPU time"]
        experiments = []
        suggestions = []
        found = find_buffer_option(ctx.target.argv)
        if found:
            index, prefix, size = found
            sizes = sorted({min(size * 4, MAX_BYTES), min(size * 16, MAX_BYTES)} - {size})
            allowed = spec_sizes(ctx, index)
            if allowed is not None:  # a spec parameter: only its allowed values are valid there
                sizes = sorted(s for s in allowed if s > size)[:2]
            if sizes:
                variants = [ExperimentVariant(f"buf-{size}", list(ctx.target.argv))]
                variants += [ExperimentVariant(f"buf-{s}", with_buffer(ctx.target.argv, index, prefix, s))
                             for s in sizes]
                experiments.append(Experiment(
                    "buffer size", f"larger buffers than {size} B cut per-call kernel overhead", variants))
        else:
            suggestions.append("no buffer-size option found in the command: enlarge the program's I/O buffers")
        return Finding(self.name, "Many small read/write system calls",
                       score_over(SMALL_BYTES, max(per_call, 1.0), 8.0) * 0.9, evidence, self.threshold,
                       self.source, self.remedy, experiments, suggestions)
