"""clang instrumented PGO: ``-fprofile-instr-generate`` → ``.profraw`` → ``llvm-profdata
merge`` (per scenario, then weighted across scenarios) → ``-fprofile-instr-use``."""

from __future__ import annotations

from pathlib import Path

from hone.build.modes.base import NoProfileWrittenError, ProfileMode
from hone.build.profiles import MergedProfile, ScenarioProfile, integer_weights, llvm_total_count, sha256_path
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import clang_profdata, tool_version
from hone.core.process import run_process


class LlvmProfileMode(ProfileMode):
    """Shared by clang and rustc: both write LLVM ``.profraw`` files."""

    profdata = ""
    marker = "llvm"

    def scenario_env(self, scenario_dir: Path) -> dict[str, str]:
        # %p: one file per started process (scenarios may start the program several times); %m: per
        # binary, and online merging under a file lock. %p is expanded when the program starts, so
        # a forking server's workers merge into their master's file (not files of their own), safely
        # even when they all exit at once; the file cannot tell how many processes merged into it.
        return {"LLVM_PROFILE_FILE": str(scenario_dir / "raw" / "%p-%m.profraw")}

    def collect(self, scenario: str, weight: float, scenario_dir: Path, instr_tree: Path) -> ScenarioProfile:
        raws = sorted((scenario_dir / "raw").glob("*.profraw"))
        if not raws:
            raise NoProfileWrittenError(f"{self.kind}: scenario {scenario!r} wrote no .profraw file",
                                        hint="does the scenario run {binary}, and does it exit normally?")
        out = scenario_dir / f"{scenario}.profdata"
        run_process([self.profdata, "merge", "-o", str(out), *map(str, raws)], timeout=600, check=True)
        for r in raws:
            r.unlink()
        show = run_process([self.profdata, "show", "--detailed-summary", str(out)], timeout=120)
        return ScenarioProfile(scenario, str(out), sha256_path(out), llvm_total_count(show.stdout), weight)

    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        out = out_dir / "merged.profdata"
        weights = integer_weights([p.weight for p in parts])
        inputs = [f"-weighted-input={w},{p.path}" for w, p in zip(weights, parts, strict=True)]
        run_process([self.profdata, "merge", "-o", str(out), *inputs], timeout=600, check=True)
        return MergedProfile(self.kind, str(out), sha256_path(out), parts, tool=self.profdata)


class InstrClang(LlvmProfileMode):
    kind = "instr-clang"
    description = "clang instrumented PGO (-fprofile-instr-generate, llvm-profdata merge, -fprofile-instr-use)"
    tools = ("clang", "llvm-profdata")
    problem_patterns = (r"profile data may be out of date", r"no profile data available", r"Wprofile-instr",
                        r"profile data may be corrupt", r"could not read profile", r"error in profile")
    use_flag = "-fprofile-instr-use"

    def preflight(self) -> None:
        self.profdata = clang_profdata()
        self.versions = {"llvm-profdata": f"{self.profdata}: {tool_version(self.profdata)}"}

    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        flags.cflags.append("-fprofile-instr-generate")
        flags.ldflags.append("-fprofile-instr-generate")

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        # -Wprofile-instr-missing: a function without profile data means the code changed.
        extra = [f"-fprofile-instr-use={merged.path}", "-Wprofile-instr-missing"]
        flags.cflags += extra
        flags.ldflags += extra
