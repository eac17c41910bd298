"""AutoFDO: sample the optimized binary's taken branches with ``perf record -b`` (LBR),
turn them into a sample profile, rebuild with it. Two families:

- ``autofdo`` (gcc): ``create_gcov`` (Debian ``autofdo`` 0.19) per binary, ``profile_merger``,
  rewritten for gcc ≥ 12 (:func:`hone.build.profiles.afdo_for_gcc`), ``-fauto-profile``.
- ``autofdo-clang``: ``llvm-profgen`` per binary, ``llvm-profdata merge -sample``,
  ``-fprofile-sample-use``.

Samples come from a command hone runs under ``perf record -b``, from a server hone started
(perf attached to its PID during the load) or from running PIDs (``hone pgo autofdo-profile``).
One perf.data can hold several binaries of one project (graphd and storaged): one profile per
binary, merged into the one profile every binary's build reads. Everything depends on
branch-stack sampling (Intel LBR, AMD BRS): without it :func:`check_lbr` refuses first.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar, Literal

from hone.build.modes.base import ProfileMode
from hone.build.profiles import (
    MergedProfile,
    ScenarioProfile,
    afdo_for_gcc,
    integer_weights,
    llvm_total_count,
    sha256_path,
)
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import LLVM_BIN, clang_profdata, tool_version
from hone.core.errors import CapabilityError, HoneError
from hone.core.process import finish_process, run_process, start_process

WORKING_ELSEWHERE = ("instr-gcc", "instr-clang", "instr-rust", "lto", "lto-thin", "bolt (instrument mode)")
#: What the samples are: perf.data (``perf record -b``) or the tools' text form of the same
#: ranges and branches (create_gcov ``--profiler=text``, llvm-profgen ``--unsymbolized-profile``).
SampleKind = Literal["perf", "text"]


class EmptyProfileError(HoneError):
    """A profile made from samples holds no function of the binary."""


def lbr_probe() -> tuple[bool, str]:
    """Try ``perf record -b`` on ``true``; returns (works, perf's message)."""
    with tempfile.TemporaryDirectory(prefix="hone-lbr-") as tmp:
        try:
            res = run_process(["perf", "record", "-b", "-o", str(Path(tmp) / "probe.data"), "--", "true"],
                              timeout=60)
        except HoneError as exc:
            return False, exc.message
        out = (res.stderr + res.stdout).strip()
        return res.ok, out.splitlines()[-1].strip() if out else ""


def check_lbr() -> None:
    """Raise CapabilityError with what AutoFDO needs and what works instead, unless
    ``perf record -b`` works on this machine."""
    works, message = lbr_probe()
    if works:
        return
    raise CapabilityError(
        "autofdo needs hardware branch-stack sampling (Intel LBR or AMD BRS) and this machine has none"
        f" (`perf record -b`: {message or 'failed'}). AutoFDO builds its profile from the taken branches"
        " the CPU records while the optimized program runs; without them there is nothing to build it from"
        " (on a VM, the hypervisor must expose the PMU and LBR; plain cpu-clock samples were measured not"
        " to help: docs/decisions/0017-no-autofdo-without-lbr.md). Nothing was built.",
        hint="modes that work here: " + ", ".join(WORKING_ELSEWHERE),
    )


def perf_record_argv(out: Path) -> list[str]:
    """``perf record`` of taken branches into ``out`` (the command or PIDs follow)."""
    return ["perf", "record", "-b", "-o", str(out)]


def record_pids(pids: Sequence[int], seconds: float, out: Path) -> None:
    """Sample the running processes ``pids`` for ``seconds`` into ``out`` (``perf record -b -p``)."""
    if not pids:
        raise HoneError("no process to sample", hint="--pid PID (repeatable)")
    for pid in pids:
        if not Path(f"/proc/{pid}").is_dir():
            raise HoneError(f"no running process {pid}", hint="give the PID of a running program (--pid)")
    argv = [*perf_record_argv(out), "-p", ",".join(str(p) for p in pids), "--", "sleep", f"{seconds:g}"]
    res = run_process(argv, timeout=seconds + 120)
    if not res.ok or not out.is_file():
        raise HoneError(f"perf record on PIDs {', '.join(map(str, pids))} failed: {res.describe_failure()}")


@contextmanager
def recording(pids: Sequence[int], out: Path, *, stop_timeout: float = 60) -> Iterator[None]:
    """``perf record -b`` attached to ``pids`` while the body runs (a server under its load);
    stopped with SIGINT after it, as Ctrl-C ends an interactive ``perf record``."""
    proc = start_process([*perf_record_argv(out), "-p", ",".join(str(p) for p in pids)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        finish_process(proc)
    if proc.returncode not in (0, -signal.SIGINT) or not out.is_file():
        tail = (err or b"").decode(errors="replace").strip().splitlines()[-3:]
        raise HoneError(f"perf record attached to PIDs {', '.join(map(str, pids))} failed"
                        f" (exit {proc.returncode}): {' '.join(tail)}")


def empty_profile_error(binary: Path, source: Path, detail: str = "") -> EmptyProfileError:
    return EmptyProfileError(
        f"the AutoFDO profile of {binary.name} maps no samples to it ({source} → no function of {binary}"
        f"{'; ' + detail if detail else ''})",
        hint="likely causes: the binary has no debug info / line tables (build it with -g), the samples are of"
             " another build of it (another build-id: sample the very binary you give), or the perf.data is of"
             " another process (the PIDs or the command did not run this binary) or was recorded without -b")


class AutoFdoMode(ProfileMode):
    """What both families share: LBR check, sampling, one profile per binary, the empty check."""

    family: ClassVar[Literal["gcc", "clang"]]
    #: Flags of the sampled build: an optimized build with line tables.
    sampled_flags: ClassVar[tuple[str, ...]] = ()
    suffix: ClassVar[str] = ".afdo"

    def preflight(self) -> None:
        check_lbr()
        self.find_tools()

    @abstractmethod
    def find_tools(self) -> None:
        """Find the profile tools (fill ``versions``) without the LBR check."""

    @abstractmethod
    def profile_of(self, binary: Path, samples: Path, out: Path, kind: SampleKind = "perf") -> int:
        """Turn ``samples`` into ``binary``'s profile at ``out``; return its total count
        (EmptyProfileError when it holds nothing of the binary)."""

    @abstractmethod
    def merge_files(self, inputs: Sequence[tuple[Path, int]], out: Path) -> int:
        """Merge profiles with integer weights into ``out``; return its total count."""

    def finish(self, merged: Path, out: Path) -> Path:
        """The file the compiler reads, from a merged profile (gcc: rewritten for its format)."""
        return merged

    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        # The sampled binary is the optimized one, with line tables so samples map to source.
        flags.cflags += list(self.sampled_flags)
        flags.ldflags += list(self.sampled_flags)

    def wrapper(self, scenario_dir: Path) -> list[str]:
        return [*perf_record_argv(scenario_dir / "perf.data"), "--"]

    def scenario_env(self, scenario_dir: Path) -> dict[str, str]:
        return {}

    def collect(self, scenario: str, weight: float, scenario_dir: Path, instr_tree: Path) -> ScenarioProfile:
        raise HoneError("autofdo collection runs through collect_from_binary")

    def collect_from_binary(self, scenario: str, weight: float, scenario_dir: Path, binary: Path | Sequence[Path],
                            samples: Path | None = None, kind: SampleKind = "perf") -> ScenarioProfile:
        """One scenario's profile: one per binary from the same samples, merged (equal weights)."""
        binaries = [binary] if isinstance(binary, Path) else list(binary)
        source = samples or scenario_dir / "perf.data"
        out = scenario_dir / f"{scenario}{self.suffix}"
        total = self.profile_set(binaries, source, out, kind)
        return ScenarioProfile(scenario, str(out), sha256_path(out), total, weight)

    def profile_set(self, binaries: Sequence[Path], samples: Path, out: Path, kind: SampleKind = "perf") -> int:
        """``samples`` → one profile per binary → their merge at ``out`` (one binary: its profile)."""
        if len(binaries) == 1:
            return self.profile_of(binaries[0], samples, out, kind)
        names = [b.name for b in binaries]
        if len(set(names)) != len(names):
            raise HoneError(f"two binaries share a name ({', '.join(names)})")
        parts = []
        for b in binaries:
            part = out.with_name(f"{out.stem}.{b.name}{self.suffix}")
            self.profile_of(b, samples, part, kind)
            parts.append((part, 1))
        return self.merge_files(parts, out)

    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        weights = integer_weights([p.weight for p in parts])
        raw = out_dir / f"merged.raw{self.suffix}"
        self.merge_files([(Path(p.path), w) for p, w in zip(parts, weights, strict=True)], raw)
        out = self.finish(raw, out_dir / f"merged{self.suffix}")
        return MergedProfile(self.kind, str(out), sha256_path(out), parts, tool=self.versions.get("merge", ""))


class AutoFdo(AutoFdoMode):
    kind = "autofdo"
    family = "gcc"
    description = "sampled PGO from branch stacks for gcc (perf record -b, create_gcov, profile_merger, -fauto-profile)"
    tools = ("gcc", "perf", "create_gcov", "dump_gcov", "profile_merger")
    # create_gcov 0.19 reads DWARF 4 only ("mangled .debug_info" on gcc 12's default DWARF 5).
    sampled_flags = ("-g", "-gdwarf-4")
    problem_patterns = (r"AutoFDO profile", r"cannot open profile", r"cannot read string table", r"Not expected TAG")
    use_flag = "-fauto-profile"

    def find_tools(self) -> None:
        for tool in ("create_gcov", "dump_gcov", "profile_merger"):
            if not shutil.which(tool):
                raise CapabilityError(f"{tool} not found (autofdo with gcc)", hint="apt-get install autofdo")
        self.versions = {"create_gcov": _dpkg_version("autofdo") or "autofdo", "perf": tool_version("perf"),
                         "merge": "profile_merger"}

    def profile_of(self, binary: Path, samples: Path, out: Path, kind: SampleKind = "perf") -> int:
        argv = ["create_gcov", f"--binary={binary}", f"--profile={samples}", f"--gcov={out}"]
        if kind == "text":
            # The text form hone feeds is instruction counts (the address section).
            argv += ["--profiler=text", "--use_lbr=false"]
        # glog's log files would otherwise pile up in /tmp, one set per run; on stderr they are
        # the failure's tail instead
        res = run_process(argv, timeout=1200, env={**os.environ, "GLOG_logtostderr": "1"})
        if not res.ok:
            raise HoneError(f"create_gcov failed on {binary.name}: {res.describe_failure()}")
        total = self.total(out)
        if total == 0:
            raise empty_profile_error(binary, samples)
        return total

    @staticmethod
    def total(path: Path) -> int:
        """Sum of the top-level functions' totals (``name total:N head:M`` in dump_gcov)."""
        if not path.is_file() or path.stat().st_size == 0:
            return 0
        res = run_process(["dump_gcov", str(path)], timeout=120)
        if not res.ok:
            raise HoneError(f"dump_gcov cannot read {path}: {res.describe_failure()}")
        return sum(int(m.group(1)) for m in re.finditer(r"^\S.* total:(\d+) head:\d+", res.stdout, re.MULTILINE))

    def merge_files(self, inputs: Sequence[tuple[Path, int]], out: Path) -> int:
        # profile_merger has no weights: a file given w times counts w times.
        files = [str(p) for p, w in inputs for _ in range(w)]
        res = run_process(["profile_merger", f"--output_file={out}", *files], timeout=600)
        if not res.ok or not out.is_file():
            raise HoneError(f"profile_merger failed: {res.describe_failure()}")
        return self.total(out)

    def finish(self, merged: Path, out: Path) -> Path:
        afdo_for_gcc(merged, out)
        return out

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        flags.cflags.append(f"-fauto-profile={merged.path}")
        flags.ldflags.append(f"-fauto-profile={merged.path}")


class AutoFdoClang(AutoFdoMode):
    kind = "autofdo-clang"
    family = "clang"
    description = "sampled PGO from branch stacks for clang (perf record -b, llvm-profgen, -fprofile-sample-use)"
    tools = ("clang", "perf", "llvm-profgen", "llvm-profdata")
    sampled_flags = ("-gline-tables-only", "-fdebug-info-for-profiling")
    problem_patterns = (r"profile data may be out of date", r"could not read profile", r"error in profile")
    use_flag = "-fprofile-sample-use"  # the sampled build is an ordinary optimized one: no marker

    def find_tools(self) -> None:
        self.profdata = clang_profdata()
        self.profgen = str(LLVM_BIN / "llvm-profgen")
        if not Path(self.profgen).exists():
            raise CapabilityError(f"{self.profgen} not found (autofdo-clang)", hint="apt-get install llvm-16")
        self.versions = {"llvm-profgen": tool_version(self.profgen), "perf": tool_version("perf"),
                         "merge": self.profdata}

    def profile_of(self, binary: Path, samples: Path, out: Path, kind: SampleKind = "perf") -> int:
        source = f"--perfdata={samples}" if kind == "perf" else f"--unsymbolized-profile={samples}"
        res = run_process([self.profgen, f"--binary={binary}", source, f"--output={out}"], timeout=1200)
        if not res.ok or not out.is_file():
            # llvm-profgen fails ("Invalid … profile") where it finds nothing of the binary.
            raise empty_profile_error(binary, samples, f"llvm-profgen: {res.stderr_tail(2) or res.describe_failure()}")
        total = self.total(out)
        if total == 0:
            raise empty_profile_error(binary, samples)
        return total

    def total(self, path: Path) -> int:
        res = run_process([self.profdata, "show", "-sample", "--detailed-summary", str(path)], timeout=120)
        return llvm_total_count(res.stdout) if res.ok else 0

    def merge_files(self, inputs: Sequence[tuple[Path, int]], out: Path) -> int:
        weighted = [f"-weighted-input={w},{p}" for p, w in inputs]
        run_process([self.profdata, "merge", "-sample", "-o", str(out), *weighted], timeout=600, check=True)
        return self.total(out)

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        extra = [f"-fprofile-sample-use={merged.path}", "-fdebug-info-for-profiling", "-gline-tables-only"]
        flags.cflags += extra
        flags.ldflags += extra


def _dpkg_version(package: str) -> str:
    try:
        res = run_process(["dpkg-query", "-W", "-f=${Version}", package], timeout=30)
    except HoneError:
        return ""
    return f"{package} {res.stdout.strip()}" if res.ok and res.stdout.strip() else ""
