"""AutoFDO: sample the optimized binary's taken branches with ``perf record -b`` (LBR),
turn them into a sample profile (``llvm-profgen``), rebuild with
``-fprofile-sample-use``.

Everything depends on branch-stack sampling from the CPU (Intel LBR, AMD BRS). Without
it there is no profile to build, so :func:`check_lbr` refuses before anything is built.
The use path below follows the documented clang flow; it could not be exercised on the
development VM (no PMU at all), which is said wherever it is reported.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hone.build.modes.base import ProfileMode
from hone.build.profiles import MergedProfile, ScenarioProfile, integer_weights, llvm_total_count, sha256_path
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import LLVM_BIN, clang_profdata, tool_version
from hone.core.errors import CapabilityError, HoneError
from hone.core.process import run_process

WORKING_ELSEWHERE = ("instr-gcc", "instr-clang", "instr-rust", "lto", "lto-thin", "bolt (instrument mode)")


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
        " (on a VM, the hypervisor must expose the PMU and LBR). Nothing was built.",
        hint="modes that work here: " + ", ".join(WORKING_ELSEWHERE),
    )


class AutoFdo(ProfileMode):
    kind = "autofdo"
    description = "sampled PGO from branch stacks (perf record -b, llvm-profgen, -fprofile-sample-use)"
    tools = ("clang", "perf", "llvm-profgen", "llvm-profdata")
    problem_patterns = (r"profile data may be out of date", r"could not read profile", r"error in profile")
    use_flag = "-fprofile-sample-use"  # the sampled build is an ordinary optimized one: no marker

    def preflight(self) -> None:
        check_lbr()
        self.profdata = clang_profdata()
        self.profgen = str(LLVM_BIN / "llvm-profgen")
        if not Path(self.profgen).exists():
            raise CapabilityError(f"{self.profgen} not found (autofdo)", hint="apt-get install llvm-16")
        self.versions = {"llvm-profgen": tool_version(self.profgen), "perf": tool_version("perf")}

    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        # The training binary is the optimized one, with line tables so samples map to source.
        extra = ["-gline-tables-only", "-fdebug-info-for-profiling"]
        flags.cflags += extra
        flags.ldflags += extra

    def wrapper(self, scenario_dir: Path) -> list[str]:
        return ["perf", "record", "-b", "-o", str(scenario_dir / "perf.data"), "--"]

    def scenario_env(self, scenario_dir: Path) -> dict[str, str]:
        return {}

    def collect(self, scenario: str, weight: float, scenario_dir: Path, instr_tree: Path) -> ScenarioProfile:
        raise HoneError("autofdo collection runs through collect_from_binary")

    def collect_from_binary(self, scenario: str, weight: float, scenario_dir: Path, binary: Path) -> ScenarioProfile:
        out = scenario_dir / f"{scenario}.afdo"
        run_process([self.profgen, f"--binary={binary}", f"--perfdata={scenario_dir / 'perf.data'}",
                     f"--output={out}"], timeout=1200, check=True)
        show = run_process([self.profdata, "show", "-sample", "--detailed-summary", str(out)], timeout=120)
        return ScenarioProfile(scenario, str(out), sha256_path(out), llvm_total_count(show.stdout), weight)

    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        out = out_dir / "merged.afdo"
        weights = integer_weights([p.weight for p in parts])
        inputs = [f"-weighted-input={w},{p.path}" for w, p in zip(weights, parts, strict=True)]
        run_process([self.profdata, "merge", "-sample", "-o", str(out), *inputs], timeout=600, check=True)
        return MergedProfile(self.kind, str(out), sha256_path(out), parts, tool=self.profdata)

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        extra = [f"-fprofile-sample-use={merged.path}", "-fdebug-info-for-profiling", "-gline-tables-only"]
        flags.cflags += extra
        flags.ldflags += extra
