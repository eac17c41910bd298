"""gcc instrumented PGO: ``-fprofile-generate`` → ``.gcda`` per object → ``-fprofile-use``.

gcc names each ``.gcda`` after its object's path, so profiles are stored relative to
the tree root; the optimizing build (same tree path) reads them from a directory outside
the tree (``-fprofile-use=DIR``), named as gcc looks them up there.
The training build writes into one directory compiled into it (``-fprofile-generate=DIR``),
not one named by ``GCOV_PREFIX`` at exit: servers clear their workers' environment (nginx keeps
only what its ``env`` directives name), and a worker without ``GCOV_PREFIX`` would write
into the build tree. Scenarios run one at a time; each one's files are moved from DIR into
its own directory; ``gcov-tool merge`` adds them up with integer weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hone.build.modes.base import NoProfileWrittenError, ProfileMode
from hone.build.profiles import (
    MergedProfile,
    ScenarioProfile,
    gcda_dir_runs,
    gcda_dir_total,
    integer_weights,
    sha256_path,
)
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import gcov_tool, tool_version
from hone.core.errors import HoneError
from hone.core.process import run_process

MAX_WEIGHT_RATIO = 64


class InstrGcc(ProfileMode):
    kind = "instr-gcc"
    description = "gcc instrumented PGO (-fprofile-generate, gcov-tool merge, -fprofile-use)"
    tools = ("gcc", "gcov-tool")
    problem_patterns = (r"profile count data file not found", r"coverage mismatch", r"Wcoverage-mismatch",
                        r"corrupted profile info", r"profile data .* mismatch", r"number of counters .* mismatch")
    marker = "gcov"
    use_flag = "-fprofile-use"

    def __init__(self, *, threads: bool = False, partial_training: bool = False) -> None:
        super().__init__()
        self.threads = threads
        self.partial_training = partial_training
        self.gcov_tool = ""

    def preflight(self) -> None:
        self.gcov_tool = gcov_tool()
        self.versions = {"gcov-tool": tool_version(self.gcov_tool)}

    @staticmethod
    def _live(profile_root: Path) -> Path:
        """The directory the training build writes into (``profile_root``: its scenarios' parent)."""
        return profile_root.parent / "gcda-live"

    def instrument(self, flags: BuildFlags, profile_root: Path) -> None:
        live = self._live(profile_root)
        live.mkdir(parents=True, exist_ok=True)
        extra = [f"-fprofile-generate={live}"]
        if self.threads:
            extra.append("-fprofile-update=atomic")  # exact counts when threads race on counters
        flags.cflags += extra
        flags.ldflags += extra

    def write_dir(self, scenario_dir: Path) -> Path:
        return self._live(scenario_dir.parent)

    def scenario_env(self, scenario_dir: Path) -> dict[str, str]:
        # Called just before the scenario runs: what the build itself ran (configure's test
        # programs) wrote is not the scenario's.
        live = self.write_dir(scenario_dir)
        shutil.rmtree(live, ignore_errors=True)
        live.mkdir(parents=True)
        # A GCOV_PREFIX of the user's would be put in front of the compiled-in directory.
        return {"GCOV_PREFIX": "", "GCOV_PREFIX_STRIP": "0"}

    def collect(self, scenario: str, weight: float, scenario_dir: Path, instr_tree: Path) -> ScenarioProfile:
        live = self.write_dir(scenario_dir)
        rel = scenario_dir / "gcda"
        root = instr_tree.resolve()
        moved = 0
        for gcda in sorted(live.rglob("*.gcda")) if live.is_dir() else []:
            target = _object_path(gcda, live)
            if target.is_relative_to(root):  # a library built elsewhere (not this tree) is not ours to use
                dest = rel / target.relative_to(root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(gcda, dest)
                moved += 1
        if live.is_dir():
            shutil.rmtree(live)
            live.mkdir()
        if not moved:
            raise NoProfileWrittenError(
                f"instr-gcc: scenario {scenario!r} wrote no .gcda files for {root} under {live}",
                hint="does the scenario run {binary} (not another copy of the program), and does it exit normally"
                " (exit() or return from main; not a signal, abort() or _exit())?")
        # Forked processes (a pre-forking server's workers) merge into the same .gcda under
        # libgcov's file lock; the run count says how many did.
        return ScenarioProfile(scenario, str(rel), sha256_path(rel), gcda_dir_total(rel), weight,
                               profile_writers=gcda_dir_runs(rel))

    def merge(self, parts: list[ScenarioProfile], out_dir: Path) -> MergedProfile:
        # gcc 12's gcov-tool dies on value-profile (topn) counters when asked to scale
        # (`rewrite -s`, `merge -w`), but plain merges work: a weight w is w−1 merges of
        # the profile into itself (weights are made integers, the smallest being 1).
        weights = integer_weights([p.weight for p in parts])
        if max(weights) > MAX_WEIGHT_RATIO:
            raise HoneError(f"instr-gcc: weight ratio {max(weights)}:1 is too large (at most {MAX_WEIGHT_RATIO}:1)")
        step = 0

        def merge2(a: Path, b: Path) -> Path:
            nonlocal step
            step += 1
            dst = out_dir / f"step-{step}"
            run_process([self.gcov_tool, "merge", "-o", str(dst), str(a), str(b)], timeout=600, check=True)
            return dst

        acc: Path | None = None
        for p, w in zip(parts, weights, strict=True):
            src = Path(p.path)
            scaled = src
            for _ in range(w - 1):
                scaled = merge2(scaled, src)
            acc = scaled if acc is None else merge2(acc, scaled)
        assert acc is not None
        merged = out_dir / "merged"
        shutil.copytree(acc, merged)
        for d in out_dir.iterdir():
            if d.name != "merged":
                shutil.rmtree(d)
        return MergedProfile(self.kind, str(merged), sha256_path(merged), parts, tool=self.gcov_tool)

    @staticmethod
    def use_dir(merged: MergedProfile) -> Path:
        """Where the optimizing build reads the profile: outside the tree, because some builds
        delete ``*.gcda`` before they compile (Redis's Makefile cleans whenever its flags change)."""
        return Path(merged.path).parent / "use"

    def prepare_tree(self, tree: Path, merged: MergedProfile) -> None:
        # gcc -fprofile-use=DIR reads DIR/<absolute object path, '/' → '#'>.gcda for an object named
        # relative to the compiler's directory, DIR/<absolute object path>.gcda for an absolute one:
        # both layouts, for the tree's path (the build slot the training build ran in).
        use = self.use_dir(merged)
        if use.exists():
            shutil.rmtree(use)
        use.mkdir(parents=True)
        root = tree.resolve()
        for gcda in Path(merged.path).rglob("*.gcda"):
            absolute = root / gcda.relative_to(merged.path)
            shutil.copy2(gcda, use / str(absolute).replace("/", "#"))
            nested = use / str(absolute).lstrip("/")
            nested.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(gcda, nested)

    def apply(self, flags: BuildFlags, merged: MergedProfile) -> None:
        # -fprofile-use=DIR: the profile prepare_tree lays out outside the tree.
        # -fprofile-correction: counters of threaded programs can be slightly inconsistent.
        # -Wno-error=coverage-mismatch: a project that compiles a source twice (bzlib.o and the
        # PIC bzlib.sho of its shared library) gets one .gcda for both; the copy whose profile
        # does not fit is built without it, with a warning hone reports (profile_problems),
        # instead of failing the whole build.
        extra = [f"-fprofile-use={self.use_dir(merged)}", "-fprofile-correction", "-Wmissing-profile",
                 "-Wno-error=coverage-mismatch"]
        if self.partial_training:
            extra.append("-fprofile-partial-training")
        flags.cflags += extra
        flags.ldflags += extra


def _object_path(gcda: Path, live: Path) -> Path:
    """The object path a ``.gcda`` under ``-fprofile-generate=live`` stands for: gcc names it
    ``live/<absolute path, '/' → '#'>.gcda`` for an object named relative to its directory, and
    ``live/<absolute path>.gcda`` for one named by absolute path."""
    rel = gcda.relative_to(live)
    if len(rel.parts) == 1 and "#" in rel.name:
        return Path(rel.name.replace("#", "/"))
    return Path("/") / rel
