"""BOLT in instrument mode (no LBR needed): relink with relocations, ``llvm-bolt
-instrument``, run the scenarios (one ``.fdata`` each), merge with weights, and
``llvm-bolt -data`` the relinked binary into its optimized layout.

gcc's hot/cold function splitting (``-freorder-blocks-and-partition``, on with a
profile) made BOLT 16 emit a wrong-answer binary (docs/machine-facts.md), so gcc
builds that BOLT will process are compiled without it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hone.build.profiles import MergedProfile, ScenarioProfile, fdata_total, merge_fdata, sha256_path
from hone.build.recipe import Family
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import bolt_tools
from hone.core.errors import HoneError
from hone.core.process import run_process

OPTIMIZE_FLAGS = ["-reorder-blocks=ext-tsp", "-reorder-functions=hfsort", "-split-functions",
                  "-split-all-cold", "-icf=1", "-use-gnu-stack", "-dyno-stats"]


class BoltPass:
    kind = "bolt"

    def __init__(self) -> None:
        self.bolt, self.versions = bolt_tools()

    @staticmethod
    def prepare_flags(flags: BuildFlags, family: Family) -> None:
        """Link flags BOLT needs (relocations kept) and gcc's split disabled."""
        if family == "rust":
            flags.rustflags.append("-Clink-args=-Wl,--emit-relocs")
            return
        flags.ldflags.append("-Wl,--emit-relocs")
        if family == "gcc":
            flags.cflags.append("-fno-reorder-blocks-and-partition")
            flags.ldflags.append("-fno-reorder-blocks-and-partition")

    def instrument(self, binary: Path, out: Path, profile_dir: Path) -> None:
        profile_dir.mkdir(parents=True, exist_ok=True)
        run_process([self.bolt, str(binary), "-instrument", "-o", str(out),
                     f"--instrumentation-file={profile_dir / 'prof.fdata'}",
                     "--instrumentation-file-append-pid"], timeout=1200, check=True)

    def collect(self, scenario: str, weight: float, profile_dir: Path, scenario_dir: Path) -> ScenarioProfile:
        """Move the files the last scenario wrote (``prof.fdata.<pid>.fdata``) into one file."""
        written = sorted(profile_dir.glob("prof.fdata*"))
        if not written:
            raise HoneError(f"bolt: scenario {scenario!r} wrote no .fdata profile",
                            hint="does the scenario run {binary}, and does it exit normally?")
        scenario_dir.mkdir(parents=True, exist_ok=True)
        out = scenario_dir / f"{scenario}.fdata"
        merge_fdata([(p, 1.0) for p in written], out)
        for p in written:
            p.unlink()
        return ScenarioProfile(scenario, str(out), sha256_path(out), fdata_total(out), weight)

    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        out = out_dir / "merged.fdata"
        merge_fdata([(Path(p.path), p.weight) for p in parts], out)
        return MergedProfile(self.kind, str(out), sha256_path(out), parts, tool=self.bolt)

    def optimize(self, binary: Path, merged: MergedProfile, out: Path) -> str:
        """Write the optimized binary to ``out``; returns llvm-bolt's output (for the log)."""
        res = run_process([self.bolt, str(binary), "-o", str(out), f"-data={merged.path}", *OPTIMIZE_FLAGS],
                          timeout=1800)
        if not res.ok or not out.exists():
            raise HoneError(f"llvm-bolt failed: {res.describe_failure()}")
        return res.stdout + res.stderr

    @staticmethod
    def keep_original(binary: Path, dest: Path) -> None:
        shutil.copy2(binary, dest)
