"""``hone pgo`` from start to end: preflight → default → noise probes → training →
variants → correctness → counts → interleaved timing → result JSON.

Layout of the work directory (``<state>/pgo/<run>/`` unless ``--workdir``)::

    variants/<name>/<binary>        each variant's program (the original is never touched)
    variants/<name>/manifest.json   tools, flags, profile checksums, scenarios
    variants/<name>/build.log       every build command and its output
    build/<project>/                the one build directory (emptied after each build)
    train/<kind>/scenarios/<name>/  one profile per training scenario
    train/<kind>/merged/            the weighted merge the optimizing builds read
    result.json                     what `hone pgo report` shows

Every build starts from a fresh copy of the project (never a stale object built with
another profile); a build that fails has its directory removed.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hone.build.bundle import bundle_project_libraries
from hone.build.correctness import Mismatch, Reference, difference, reference_of, run_check, verify
from hone.build.counts import Counts, CountsUnavailable, measure_counts
from hone.build.evaluate import (
    NOISE_PREFIX,
    geomean,
    pick_best,
    scenario_rows,
    service_rows,
    time_scenario,
    time_service_scenario,
)
from hone.build.manifest import Manifest, Stage
from hone.build.modes import PROFILE_MODES, AutoFdoMode, BoltPass, InstrGcc, ProfileMode, add_lto
from hone.build.modes.autofdo import recording
from hone.build.modes.base import NoProfileWrittenError
from hone.build.plan import NOISE_CFLAGS, NOISE_RUSTFLAGS, BuildPlan
from hone.build.profiles import MergedProfile, ScenarioProfile
from hone.build.recipe import Family, Recipe, default_recipe
from hone.build.scenario import Scenario, run_scenario
from hone.build.service import SERVER_CPU_PER_OP, ServiceLoad, ServiceRun
from hone.build.systems import SYSTEMS, BuildFlags, BuildSystem
from hone.build.toolchain import Compilers, clang_compilers, gcc_compilers, rust_tools
from hone.build.verify import FlagsNotAppliedError, Verification, check_instrumented, check_profile_use, explain
from hone.core.errors import BenchmarkError, HoneError
from hone.core.paths import numbered, state_dir
from hone.core.process import ProcessResult

RESULT_FORMAT = "hone-pgo/1"
Log = Callable[[str], None]


@dataclass
class BuiltVariant:
    """One binary hone built. ``status``: ok, failed (build), rejected (wrong output)."""

    name: str
    mode: str
    kind: str  # reference | noise | variant
    status: str = "ok"
    binary: Path | None = None
    manifest: Path | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"variant": self.name, "mode": self.mode, "kind": self.kind, "status": self.status,
                "binary": str(self.binary) if self.binary else None,
                "manifest": str(self.manifest) if self.manifest else None, "error": self.error,
                "profile_problems": self.problems, "build_seconds": round(self.seconds, 2)}


def default_workdir(name: str, now: datetime | None = None) -> Path:
    """A new, empty ``STATE/pgo/YYYYmmdd-HHMMSS-NAME``, made here so that a run started in the same
    second (``-2``, ``-3`` …) never gets the same one."""
    parent = state_dir() / "pgo"
    parent.mkdir(parents=True, exist_ok=True)
    for candidate in numbered(f"{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}-{name or 'project'}"):
        path = parent / candidate
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")


class PgoRun:
    """Run one plan. ``log`` receives progress lines (for stderr)."""

    def __init__(self, plan: BuildPlan, log: Log | None = None) -> None:
        self.plan = plan
        self.log = log or (lambda _msg: None)
        self.system: BuildSystem = SYSTEMS[plan.system](
            binary=plan.binary, command=plan.build_command, jobs=plan.jobs, timeout=plan.build_timeout,
            configure_args=plan.configure_args)
        self.compilers: dict[Family, Compilers] = {}
        self.modes: dict[str, ProfileMode] = {}
        self.bolt: BoltPass | None = None
        self.tools: dict[str, str] = {}
        self.profiles: dict[str, MergedProfile] = {}
        self.train_stages: dict[str, Stage] = {}
        self.references: dict[str, Reference] = {}
        self.warnings: list[str] = []
        self.work = Path()
        self.service: ServiceLoad | None = ServiceLoad(plan.service) if plan.service is not None else None
        if self.service is not None and not self.service.names_binary:
            self.warnings.append("service.start does not name the program as {binary}: the scenarios run the"
                                 " program themselves, the service is not started")
            self.service = None

    # ------------------------------------------------------------------ preflight

    def preflight(self) -> None:
        """Every tool every variant needs, before anything is built (a refusal — autofdo
        without LBR, a missing llvm-profdata — leaves nothing behind)."""
        plan = self.plan
        if not plan.project.is_dir():
            raise HoneError(f"project directory {plan.project} does not exist")
        if not plan.train:
            raise HoneError("no train scenario", hint="--train 'CMD with {binary}' (repeatable)")
        if not plan.evaluate:
            raise HoneError("no evaluate scenario", hint="--evaluate 'CMD with {binary}' (repeatable)")
        for scn in [] if self.service is not None else [*plan.train, *plan.evaluate]:
            if "{binary}" not in scn.command:
                raise HoneError(f"scenario {scn.name!r} does not name the program as {{binary}}: {scn.command}",
                                hint="write the program as {binary}; hone puts each variant's path there")
        families: set[Family] = {default_recipe(plan.system).family, *(r.family for r in plan.recipes)}
        for fam in sorted(families):
            self._compilers(fam)
        for r in plan.recipes:
            if r.profile and r.profile not in self.modes:
                mode = (InstrGcc(threads=plan.threads, partial_training=plan.partial_training)
                        if r.profile == "instr-gcc" else PROFILE_MODES[r.profile]())
                mode.preflight()
                self.modes[r.profile] = mode
                self.tools.update(mode.versions)
            if r.bolt and self.bolt is None:
                self.bolt = BoltPass()
                self.tools.update(self.bolt.versions)
            if r.lto and r.family == "clang":
                add_lto(BuildFlags(), "clang", r.lto, plan.jobs)  # raises without lld
        warn = plan.overlap_warning()
        if warn:
            self.warnings.append(warn)

    def _compilers(self, family: Family) -> Compilers:
        if family not in self.compilers:
            if family == "gcc":
                self.compilers[family] = gcc_compilers()
            elif family == "clang":
                self.compilers[family] = clang_compilers()
            else:
                tools = rust_tools() if any(r.profile == "instr-rust" for r in self.plan.recipes) else None
                versions = tools.versions if tools else {}
                self.compilers[family] = Compilers("cc", "c++", "ar", "ranlib", versions)
            self.tools.update(self.compilers[family].versions)
        return self.compilers[family]

    # ------------------------------------------------------------------ building

    def base_flags(self, family: Family) -> BuildFlags:
        c = self._compilers(family)
        p = self.plan
        return BuildFlags(cc=c.cc, cxx=c.cxx, ar=c.ar, ranlib=c.ranlib, cflags=list(p.base_cflags),
                          ldflags=list(p.base_ldflags), rustflags=list(p.base_rustflags), family=family)

    def build_slot(self) -> Path:
        """The one directory every build happens in, one build at a time.

        gcc's profile checksums include each function's source file name, so a build
        with absolute source paths (cmake) finds no profile if the optimizing build runs
        elsewhere than the training build; identical paths also keep ``__FILE__``
        strings and debug info equal across variants, so their layouts differ only by
        what the variant changes.
        """
        return self.work / "build" / self.plan.project.name

    def release_slot(self, tree: Path, keep_as: Path) -> None:
        """Empty the build slot (or move the tree to ``keep_as`` with --keep-trees)."""
        if self.plan.keep_trees:
            shutil.move(str(tree), str(keep_as))
        else:
            shutil.rmtree(tree)

    def fresh_tree(self, dest: Path) -> Path:
        """A clean copy of the project in ``dest`` (build outputs and the binary left out)."""
        if dest.exists():
            shutil.rmtree(dest)
        ignore = shutil.ignore_patterns(".git", ".hg", *self.system.ignore_patterns())
        shutil.copytree(self.plan.project, dest, symlinks=True, ignore=ignore)
        stale = dest / self.plan.binary
        if stale.is_file():
            stale.unlink()
        return dest

    def build_tree(self, tree: Path, flags: BuildFlags, log_path: Path, stage: str,
                   mode: ProfileMode | None = None, check: Callable[[Path], Verification | None] | None = None,
                   variant: str = "") -> tuple[Path, Stage]:
        """Build ``tree`` with ``flags``; append its log; return the binary and a manifest stage.

        ``check`` verifies the binary carries the mode (:mod:`hone.build.verify`); a
        binary without it raises FlagsNotAppliedError naming ``variant`` and the cause."""
        t0 = time.perf_counter()
        try:
            binary, log = self.system.build(tree, flags)
        except HoneError as exc:
            blog = getattr(exc, "log", None)
            with log_path.open("a") as f:
                f.write(f"### {stage}\n{blog.text if blog else ''}\n{exc.message}\n")
            raise
        verification = check(binary) if check else None
        with log_path.open("a") as f:
            f.write(f"### {stage}\n{log.text}\n")
            if verification is not None:
                f.write(f"[hone verify: {verification.line}]\n")
        if verification is not None and verification.status == "missing":
            shown = flags.rustflags if flags.family == "rust" else flags.cflags
            raise explain(variant, stage, binary, verification, log, flags.family or "gcc", shown, log_path,
                          self.plan.system)
        problems = mode.problems(log.text) if mode else []
        argv = self.system.steps(tree, flags)[-1][0]
        return binary, Stage(stage, flags.to_dict(), argv, round(time.perf_counter() - t0, 2), problems,
                             verification.line if verification else "")

    @staticmethod
    def _bundle(binary: Path, tree: Path, log_path: Path) -> None:
        """The project's own shared libraries beside the copied program (hone.build.bundle)."""
        bundled = bundle_project_libraries(binary, tree)
        if bundled:
            with log_path.open("a") as f:
                f.write(f"[hone bundle: {', '.join(bundled)} built by the project, copied beside {binary.name};"
                        " the program and they load from their own directory ($ORIGIN)]\n")

    def build_variant(self, name: str, recipe: Recipe, kind: str, extra_flags: list[str] | None = None) -> BuiltVariant:
        """Build one variant into ``variants/<name>/``; on failure remove that directory."""
        vdir = self.work / "variants" / name
        vdir.mkdir(parents=True)
        built = BuiltVariant(name, recipe.name, kind)
        t0 = time.perf_counter()
        self.log(f"build {name} …")
        try:
            built = self._build_variant(vdir, built, recipe, extra_flags or [])
        except HoneError as exc:
            # Nothing half-built stays: only the log, to see why.
            for item in vdir.iterdir():
                if item.name != "build.log":
                    shutil.rmtree(item) if item.is_dir() else item.unlink()
            shutil.rmtree(self.build_slot(), ignore_errors=True)
            if isinstance(exc, FlagsNotAppliedError) and not exc.other_family:
                raise  # the project's build ignores hone's flags: no variant can work, say why now
            hint = f"; hint: {exc.hint}" if isinstance(exc, FlagsNotAppliedError) and exc.hint else ""
            built.status, built.error = "failed", f"{exc.message} (log: {vdir / 'build.log'}){hint}"
            self.log(f"build {name} FAILED: {exc.message}")
        built.seconds = time.perf_counter() - t0
        return built

    def _build_variant(self, vdir: Path, built: BuiltVariant, recipe: Recipe, extra: list[str]) -> BuiltVariant:
        plan = self.plan
        flags = self.base_flags(recipe.family)
        if recipe.family == "rust":
            flags.rustflags += extra
        else:
            flags.cflags += extra
            flags.ldflags += extra
        manifest = Manifest(variant=built.name, mode=recipe.name, family=recipe.family, system=plan.system,
                            project=str(plan.project), binary="",
                            scenarios={"train": [s.to_dict() for s in plan.train],
                                       "evaluate": [s.to_dict() for s in plan.evaluate]})
        manifest.tools = {**self.compilers[recipe.family].versions}
        mode = self.modes.get(recipe.profile) if recipe.profile else None
        merged: MergedProfile | None = None
        if mode is not None and recipe.profile:
            merged = self.train_profile(recipe.profile, recipe.family, recipe.lto)
            manifest.tools.update(mode.versions)
            manifest.profiles.append(merged.to_dict())
            key = self.profile_key(recipe.profile, recipe.family, recipe.lto)
            if key in self.train_stages:
                manifest.stages.append(self.train_stages[key])
            mode.apply(flags, merged)
        if recipe.lto:
            add_lto(flags, recipe.family, recipe.lto, plan.jobs)
        if recipe.bolt:
            BoltPass.prepare_flags(flags, recipe.family)
        tree = self.fresh_tree(self.build_slot())
        if mode is not None and merged is not None:
            mode.prepare_tree(tree, merged)
        log_path = vdir / "build.log"
        use_flag = mode.use_flag if mode else None
        check = (lambda b: check_profile_use(b, use_flag)) if use_flag else None
        binary, stage = self.build_tree(tree, flags, log_path, "optimizing build" if mode else "build", mode,
                                        check=check, variant=built.name)
        manifest.stages.append(stage)
        if stage.profile_problems:
            built.problems = stage.profile_problems
            self.warnings.append(f"{built.name}: the compiler reports the profile missing or mismatched:"
                                 f" {stage.profile_problems[0]}"
                                 + (f" (+{len(stage.profile_problems) - 1} more)" if len(stage.profile_problems) > 1
                                    else ""))
        final = vdir / Path(plan.binary).name
        shutil.copy2(binary, vdir / (final.name + ".built"))
        binary = vdir / (final.name + ".built")
        self._bundle(binary, tree, log_path)
        self.release_slot(tree, vdir / "tree")
        if recipe.bolt:
            assert self.bolt is not None
            bolt_merged = self.train_bolt(built.name, binary, vdir)
            manifest.profiles.append(bolt_merged.to_dict())
            manifest.tools.update(self.bolt.versions)
            t0 = time.perf_counter()
            out = self.bolt.optimize(binary, bolt_merged, final)
            with log_path.open("a") as f:
                f.write(f"### llvm-bolt optimize\n{out}\n")
            argv = [self.bolt.bolt, str(binary), "-o", str(final), f"-data={bolt_merged.path}"]
            seconds = round(time.perf_counter() - t0, 2)
            manifest.stages.append(Stage("llvm-bolt", {"bolt_flags": argv[3:]}, argv, seconds))
            binary.unlink()
        else:
            binary.rename(final)
        manifest.binary = str(final)
        manifest.write(vdir / "manifest.json")
        built.binary, built.manifest = final, vdir / "manifest.json"
        return built

    # ------------------------------------------------------------------ training

    @staticmethod
    def profile_key(kind: str, family: Family, lto: str | None) -> str:
        """Profiles are shared across variants of one kind (instr-gcc, instr-gcc+lto …),
        except for cargo: its profile settings (lto, codegen-units) enter the crate's
        symbol hashes, so a profile trained without LTO matches nothing in an LTO build."""
        return f"{kind}+lto-{lto}" if family == "rust" and lto else kind

    def train_profile(self, kind: str, family: Family, lto: str | None = None) -> MergedProfile:
        """Train once per profile key (see :meth:`profile_key`): instrumented build,
        every train scenario into its own profile, weighted merge."""
        key = self.profile_key(kind, family, lto)
        if key in self.profiles:
            return self.profiles[key]
        mode = self.modes[kind]
        tdir = self.work / "train" / key
        tdir.mkdir(parents=True, exist_ok=True)
        if isinstance(mode, AutoFdoMode):
            merged = self._train_autofdo(mode, family, tdir)
        else:
            self.log(f"train {key}: instrumented build …")
            flags = self.base_flags(family)
            mode.instrument(flags, tdir / "scenarios")
            if key != kind and lto:
                add_lto(flags, family, lto, self.plan.jobs)  # type: ignore[arg-type]
            tree = self.fresh_tree(self.build_slot())
            marker = mode.marker
            check = (lambda b: check_instrumented(b, marker)) if marker in ("gcov", "llvm") else None
            built_binary, stage = self.build_tree(tree, flags, tdir / "build.log", "training build",
                                                  check=check, variant=key)
            self.train_stages[key] = stage
            binary = tdir / (built_binary.name + ".instrumented")
            shutil.copy2(built_binary, binary)
            self._bundle(binary, tree, tdir / "build.log")
            self.release_slot(tree, tdir / "tree")
            parts: list[ScenarioProfile] = []
            for scn in self.plan.train:
                sdir = tdir / "scenarios" / scn.name
                sdir.mkdir(parents=True, exist_ok=True)
                res, srun = self.run_load(scn, binary, timeout=self.plan.run_timeout * 20,
                                          env=mode.scenario_env(sdir), what=f"{kind}: train scenario",
                                          profile_dir=mode.write_dir(sdir))
                if res.timed_out or res.returncode != self.references[scn.name].returncode:
                    raise HoneError(f"{kind}: train scenario {scn.name!r} failed on the instrumented binary:"
                                    f" {res.describe_failure()}")
                try:
                    part = mode.collect(scn.name, scn.weight, sdir, self.build_slot())
                except NoProfileWrittenError as exc:
                    server = f". {srun.exit_note()}" if srun is not None else ""
                    raise NoProfileWrittenError(f"{exc.message}. {_training_binary_note(stage, tdir)}{server}",
                                                hint=exc.hint) from exc
                part.train_cpu_s = round(res.cpu_s if srun is None else srun.server_cpu_s or 0.0, 3)
                if srun is not None:
                    part.server_exit = srun.exit_status
                    part.server_processes = srun.processes or None
                    part.profile_errors = len(srun.profile_errors)
                    if srun.handover and not srun.profile_errors:
                        self.log(f"train {kind}: {scn.name}: {srun.handover}")
                    for lost in (_lost_processes(kind, scn.name, part), _unwritten(kind, scn.name, srun)):
                        if lost:
                            self.warnings.append(lost)
                            self.log(f"warning: {lost}")
                parts.append(part)
                self.log(f"train {kind}: {scn.name} (weight {scn.weight:g}) → {part.total_count:,} counts")
            mdir = tdir / "merged"
            mdir.mkdir(exist_ok=True)
            merged = mode.merge(parts, mdir)
            binary.unlink()
        self.profiles[key] = merged
        return merged

    def _train_autofdo(self, mode: AutoFdoMode, family: Family, tdir: Path) -> MergedProfile:
        # Not reachable on machines without LBR: preflight refused already.
        flags = self.base_flags(family)
        mode.instrument(flags, tdir)
        tree = self.fresh_tree(self.build_slot())
        built_binary, stage = self.build_tree(tree, flags, tdir / "build.log", "sampled build")
        self.train_stages[mode.kind] = stage
        binary = tdir / built_binary.name
        shutil.copy2(built_binary, binary)
        self._bundle(binary, tree, tdir / "build.log")
        self.release_slot(tree, tdir / "tree")
        parts = []
        for scn in self.plan.train:
            sdir = tdir / "scenarios" / scn.name
            sdir.mkdir(parents=True, exist_ok=True)
            if self.service is not None:
                # The sampled build runs as the service; perf attaches to it during the load.
                srun = self.service.run(scn, binary, timeout=self.plan.run_timeout * 5, cwd=self.plan.scenario_cwd,
                                        attach=lambda pids, sdir=sdir: recording(pids, sdir / "perf.data"))
                if srun.died:
                    raise BenchmarkError(f"autofdo: train scenario {scn.name!r}: {srun.died}")
                res = srun.result
            else:
                wrapped = Scenario(scn.name, scn.command.replace(
                    "{binary}", " ".join(mode.wrapper(sdir)) + " {binary}"), scn.weight, scn.cwd)
                res = run_scenario(wrapped, binary, timeout=self.plan.run_timeout * 5, cwd=self.plan.scenario_cwd)
            if not res.ok:
                raise HoneError(f"autofdo: perf record on {scn.name!r} failed: {res.describe_failure()}")
            part = mode.collect_from_binary(scn.name, scn.weight, sdir, binary)
            part.train_cpu_s = round(res.cpu_s, 3)
            parts.append(part)
            self.log(f"train {mode.kind}: {scn.name} (weight {scn.weight:g}) → {part.total_count:,} samples")
        mdir = tdir / "merged"
        mdir.mkdir(exist_ok=True)
        return mode.merge(parts, mdir)

    def train_bolt(self, name: str, binary: Path, vdir: Path) -> MergedProfile:
        """BOLT profiles belong to one binary: instrument it, run every train scenario."""
        assert self.bolt is not None
        bdir = vdir / "bolt"
        inst = bdir / (binary.name + ".instrumented")
        raw = bdir / "raw"
        bdir.mkdir(parents=True, exist_ok=True)
        self.log(f"bolt {name}: instrument …")
        self.bolt.instrument(binary, inst, raw)
        parts = []
        for scn in self.plan.train:
            res, _ = self.run_load(scn, inst, timeout=self.plan.run_timeout * 20, what="bolt: train scenario")
            if res.timed_out or res.returncode != self.references[scn.name].returncode:
                raise HoneError(f"bolt: train scenario {scn.name!r} failed on the instrumented binary:"
                                f" {res.describe_failure()}")
            part = self.bolt.collect(scn.name, scn.weight, raw, bdir / "scenarios")
            part.train_cpu_s = round(res.cpu_s, 3)
            parts.append(part)
        merged = self.bolt.merge(parts, bdir)
        inst.unlink()
        return merged

    # ------------------------------------------------------------------ servers

    def run_load(self, scn: Scenario, binary: Path, *, timeout: float, env: dict[str, str] | None = None,
                 what: str = "scenario", profile_dir: Path | None = None) -> tuple[ProcessResult, ServiceRun | None]:
        """Run ``scn`` on ``binary``: itself, or as the load of ``binary`` started as the
        service (stopped gracefully after it; a server that died before raises HoneError
        with its log's tail). ``profile_dir``: where a trained server writes its profiles."""
        if self.service is None:
            return run_scenario(scn, binary, timeout=timeout, cwd=self.plan.scenario_cwd, env=env), None
        srun = self.service.run(scn, binary, timeout=timeout, cwd=self.plan.scenario_cwd, env=env,
                                profile_dir=profile_dir)
        if srun.died:
            raise BenchmarkError(f"{what} {scn.name!r}: {srun.died}")
        return srun.result, srun

    def verify_service(self, binary: Path, scenarios: list[Scenario]) -> list[Mismatch]:
        """A server variant's correctness: every scenario's load exits as it did against the
        default (its output holds measurements, not answers), or ``check`` accepts it; the
        server must not die."""
        assert self.service is not None
        bad: list[Mismatch] = []
        for scn in scenarios:
            srun = self.service.run(scn, binary, timeout=self.plan.run_timeout, cwd=self.plan.scenario_cwd)
            ref = self.references[scn.name]
            res = srun.result
            why = srun.died or (run_check(self.plan.check, scn, binary, res, ref, timeout=self.plan.run_timeout,
                                          cwd=self.plan.scenario_cwd) if self.plan.check
                                else difference(Reference(ref.returncode, res.stdout), res))
            if why:
                bad.append(Mismatch(scn.name, why))
        return bad

    # ------------------------------------------------------------------ the run

    def run(self) -> dict[str, Any]:
        """Everything; returns the result document (also written to ``result.json``)."""
        plan = self.plan
        self.preflight()
        self.work = plan.workdir or default_workdir(plan.name)
        if self.work.exists() and any(self.work.iterdir()):
            raise HoneError(f"work directory {self.work} is not empty",
                            hint="a run never builds over an earlier one's files: remove the directory (its build.log"
                            " files tell what an earlier run did) or give another --workdir")
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            return self._run()
        except BaseException:
            # Nothing half-built stays behind: a run that did not finish leaves no tree.
            shutil.rmtree(self.work / "build", ignore_errors=True)
            raise
        finally:
            if self.service is not None:
                self.service.close()  # no server of hone's outlives the run

    def _run(self) -> dict[str, Any]:
        plan = self.plan
        started = time.perf_counter()
        default = self.build_variant("default", default_recipe(plan.system), "reference")
        if default.status != "ok" or default.binary is None:
            raise HoneError(f"the default build failed: {default.error}",
                            hint=f"see {self.work}/variants; the build must work before hone can improve it")
        scenarios = _unique([*plan.train, *plan.evaluate])
        for scn in scenarios:
            res, _ = self.run_load(scn, default.binary, timeout=plan.run_timeout, what="scenario")
            if res.timed_out:
                raise HoneError(f"scenario {scn.name!r} timed out on the default binary ({plan.run_timeout:g} s)")
            if res.returncode != 0:
                self.warnings.append(f"scenario {scn.name!r} exits with {res.returncode} on the default binary;"
                                     " variants must do the same")
            self.references[scn.name] = reference_of(res)
        built: list[BuiltVariant] = [default]
        perturb = NOISE_RUSTFLAGS if plan.system == "cargo" else NOISE_CFLAGS
        for i in range(plan.noise_builds):
            extra = perturb[i % len(perturb)]
            built.append(self.build_variant(f"{NOISE_PREFIX}{i + 1}", default_recipe(plan.system), "noise", extra))
        for recipe in plan.recipes:
            built.append(self.build_variant(recipe.name, recipe, "variant"))
        # Correctness before speed.
        for b in built[1:]:
            if b.status != "ok" or b.binary is None:
                continue
            bad = (self.verify_service(b.binary, scenarios) if self.service is not None else
                   verify(b.binary, scenarios, self.references, check=plan.check, timeout=plan.run_timeout,
                          cwd=plan.scenario_cwd))
            if bad:
                b.status = "rejected"
                b.error = "; ".join(f"{m.scenario}: {m.detail}" for m in bad)
                self.log(f"REJECTED {b.name}: its output differs from the default's — {b.error}")
        ok = [b for b in built if b.status == "ok" and b.binary is not None]
        binaries = {b.name: b.binary for b in ok if b.binary is not None}
        modes = {b.name: b.mode for b in ok}
        rows: list[dict[str, Any]] = []
        floors: dict[str, float] = {}
        counts_note: str | None = None
        if self.service is not None:
            counts_note = "no cachegrind counts: the program runs as a service (compared on the spec's metrics)"
        for i, scn in enumerate(plan.evaluate):
            if self.service is not None:
                self.log(f"serve {scn.name}: {plan.rounds} interleaved rounds × {len(binaries)} binaries as the"
                         " service …")
                stiming = time_service_scenario(scn, binaries, self.references[scn.name], self.service,
                                                rounds=plan.rounds, warmup=plan.warmup, seed=plan.seed + i,
                                                timeout=plan.run_timeout, cwd=plan.scenario_cwd, threshold=0.01,
                                                cpu_per=plan.cpu_per)
                srows, floor = service_rows(stiming, binaries, modes)
                rows += srows
                floors[scn.name] = floor
                continue
            counts: dict[str, Counts | None] = {}
            if plan.counts and counts_note is None:
                for b in ok:
                    if b.kind == "noise" or b.binary is None:
                        continue
                    try:
                        counts[b.name] = measure_counts(scn, b.binary, timeout=plan.run_timeout,
                                                        cwd=plan.scenario_cwd)
                    except CountsUnavailable as exc:
                        counts_note = exc.message
                        self.log(exc.message)
                        counts = {}
                        break
            self.log(f"time {scn.name}: {plan.rounds} interleaved rounds × {len(binaries)} binaries …")
            timing = time_scenario(scn, binaries, self.references[scn.name], rounds=plan.rounds,
                                   warmup=plan.warmup, seed=plan.seed + i, timeout=plan.run_timeout,
                                   cwd=plan.scenario_cwd, threshold=0.01)
            srows, floor = scenario_rows(timing, counts, binaries, modes)
            rows += srows
            floors[scn.name] = floor
        variant_names = [b.name for b in ok if b.kind == "variant"]
        if self.service is not None:
            primary = self.service.metrics[0].name
            best = pick_best(rows, variant_names, rank="metric_score", figure=f"{primary} (goal-oriented)")
            if best.get("variant"):
                mine = [r for r in rows if r["variant"] == best["variant"]]
                best["time_ratio_geomean"] = geomean([r["time_ratio"] for r in mine])
                best["metric_ratio_geomean"] = geomean([r["metrics"][primary]["ratio"] for r in mine])
                if all(SERVER_CPU_PER_OP in r["metrics"] for r in mine):
                    best["cpu_per_op_ratio_geomean"] = geomean([r["metrics"][SERVER_CPU_PER_OP]["ratio"] for r in mine])
            best["metric"] = primary
        else:
            best = pick_best(rows, variant_names)
        result = {
            "format": RESULT_FORMAT,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "name": plan.name,
            "project": str(plan.project),
            "system": plan.system,
            "binary": plan.binary,
            "workdir": str(self.work),
            "rounds": plan.rounds,
            "scenarios": {"train": [s.to_dict() for s in plan.train],
                          "evaluate": [s.to_dict() for s in plan.evaluate]},
            "tools": self.tools,
            "builds": [b.to_dict() for b in built],
            "profiles": {k: v.to_dict() for k, v in self.profiles.items()},
            "noise_floor_pct": floors,
            "counts_note": counts_note,
            "warnings": self.warnings,
            "variants": rows,
            "best": best,
            "seconds": round(time.perf_counter() - started, 1),
        }
        if self.service is not None:
            spec = self.service.loaded.spec
            assert spec.service is not None
            result["service"] = {"name": self.service.manager.name,
                                 "metrics": [{"name": m.name, "goal": m.goal, "unit": m.unit} for m in spec.metrics],
                                 "stop_signal": spec.service.stop.signal if not spec.service.stop.command else None,
                                 "starts": self.service.manager.starts}
        (self.work / "result.json").write_text(json.dumps(result, indent=2, default=_json_default) + "\n")
        return result


def _training_binary_note(stage: Stage, tdir: Path) -> str:
    """What the check of the instrumented binary found, as the likely cause of a missing profile."""
    where = f"'hone verify' in {tdir / 'build.log'}"
    if stage.verification.startswith("ok"):
        found = stage.verification.removeprefix("ok: ").removeprefix("instrumented: ")
        return (f"The training binary is instrumented ({found}; {where}), so hone's flags did"
                " arrive: the likely cause is the scenario — it ran another copy of the program, or the program"
                " did not exit normally")
    return (f"The training binary could not be checked for instrumentation ({stage.verification or 'no check'};"
            f" {where}): either hone's flags never reached the compiler (does the build assign CC/CFLAGS"
            " itself and call the compiler by path?), or the scenario did not run it to a normal exit")


def _lost_processes(kind: str, scenario: str, part: ScenarioProfile) -> str | None:
    """A server whose processes did not all write a profile (a pre-forking server's worker
    killed, or ending through _exit()): the training is missing their counts; say so."""
    seen, wrote = part.server_processes, part.profile_writers
    if seen is None or wrote is None or wrote >= seen:
        return None
    return (f"{kind}: train scenario {scenario!r}: {seen} processes of the server ran the program, only {wrote}"
            f" wrote a profile — the counts of {seen - wrote} are lost (a process killed by a signal or leaving"
            " through _exit() writes nothing: the server must stop its workers on its stop signal, wait for them,"
            " and each must exit normally)")


def _unwritten(kind: str, scenario: str, srun: ServiceRun) -> str | None:
    """A server whose processes said in its log that they could not write their profile (the
    only sign an LLVM profile gives: its workers merge into one file)."""
    if not srun.profile_errors:
        return None
    n = len(srun.profile_errors)
    cause = f"; {srun.handover}" if srun.handover else ""
    return (f"{kind}: train scenario {scenario!r}: the server's processes could not write their profile"
            f" ({n} error line{'s' if n > 1 else ''} of the profiling runtime in its log, first:"
            f" {srun.profile_errors[0]!r}){cause}; their counts are lost (log: {srun.log})")


def _unique(scenarios: list[Scenario]) -> list[Scenario]:
    seen: dict[str, Scenario] = {}
    for s in scenarios:
        seen.setdefault(s.name, s)
    return list(seen.values())


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def load_result(path: Path) -> dict[str, Any]:
    """A ``result.json`` written by :meth:`PgoRun.run` (HoneError if it is not one)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise HoneError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT:
        raise HoneError(f"{path} is not a hone pgo result (format {RESULT_FORMAT})")
    return data


def latest_result() -> Path:
    """The newest ``result.json`` under ``<state>/pgo/``."""
    found = sorted((state_dir() / "pgo").glob("*/result.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise HoneError("no hone pgo result yet", hint="run `hone pgo …` first, or give a result.json")
    return found[-1]
