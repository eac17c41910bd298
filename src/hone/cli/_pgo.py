"""``hone pgo`` (profile-guided builds) and ``hone pgo report``."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import click

from hone.build import BuildPlan, PgoRun, Scenario, latest_result, load_result, parse_modes, scenario_name
from hone.build.recipe import EXAMPLE_MODES
from hone.cli import main
from hone.cli._common import console, err_console, load_checked, stdout_for_data, write_json
from hone.core.errors import HoneError
from hone.report import pgo_markdown, pgo_terminal
from hone.report.base import write_text

_SCENARIO_PREFIX = re.compile(r"^@([A-Za-z0-9_.-]+)(?::([0-9]*\.?[0-9]+))?\s+(.+)$", re.DOTALL)


def parse_scenario(text: str, taken: set[str], cwd: str | None = None) -> Scenario:
    """``CMD`` or ``@name[:weight] CMD`` (quick form) → Scenario."""
    m = _SCENARIO_PREFIX.match(text.strip())
    if m:
        name, weight, command = m.group(1), float(m.group(2) or 1), m.group(3)
        if name in taken:
            raise HoneError(f"two scenarios named {name!r}")
        if weight <= 0:
            raise HoneError(f"scenario {name!r}: weight must be > 0, got {weight:g}")
        taken.add(name)
        return Scenario(name, command, weight, cwd)
    return Scenario(scenario_name(text, taken), text.strip(), 1.0, cwd)


def plan_from_spec(spec_path: str) -> BuildPlan:
    loaded = load_checked(spec_path)
    b = loaded.spec.build
    if b is None:
        raise HoneError(f"{spec_path}: no build: section", hint="hone pgo needs build: {system, dir, binary, train, …}")
    base = loaded.base_dir.resolve()
    taken: set[str] = set()

    def scn(s: Any) -> Scenario:
        if s.name:
            if s.name in taken:
                raise HoneError(f"{spec_path}: two scenarios named {s.name!r}")
            taken.add(s.name)
        name = s.name or scenario_name(s.command, taken)
        return Scenario(name, s.command, s.weight, str(base / s.cwd) if s.cwd else None)

    train = [scn(s) for s in b.train]
    evaluate = [scn(s) for s in b.evaluate]
    if not evaluate:
        bench = loaded.spec.benchmark
        text = bench.command if isinstance(bench.command, str) else shlex.join(bench.command)
        evaluate = [Scenario("benchmark", text.replace("'{binary}'", "{binary}"), 1.0, None)]
    command = None
    if b.command is not None:
        command = shlex.split(b.command) if isinstance(b.command, str) else list(b.command)
    configure = []
    if b.configure is not None:
        configure = shlex.split(b.configure) if isinstance(b.configure, str) else list(b.configure)
    default_cflags = "" if b.system == "cargo" else "-O2"
    return BuildPlan(
        system=b.system, project=(base / b.dir).resolve(), binary=b.binary,
        recipes=parse_modes(b.modes, b.system), train=train, evaluate=evaluate, build_command=command,
        configure_args=configure,
        base_cflags=shlex.split(b.cflags if b.cflags is not None else default_cflags),
        base_ldflags=shlex.split(b.ldflags), base_rustflags=shlex.split(b.rustflags), check=b.check,
        rounds=b.rounds, noise_builds=b.noise_builds, counts=b.counts, jobs=b.jobs, threads=b.threads,
        partial_training=b.partial_training, build_timeout=b.build_timeout, run_timeout=b.run_timeout,
        name=loaded.spec.name or loaded.path.stem, scenario_dir=base,
        service=loaded if loaded.spec.service is not None and loaded.spec.service.start is not None else None,
        cpu_per=b.cpu_per,
    )


# ---------------------------------------------------------------- output


def render(result: dict[str, Any]) -> None:
    """The AutoFDO-style before/after table per evaluate scenario, then builds, profiles and the pick; rejected
    or failed builds and warnings go to stderr (:mod:`hone.report.pgo_terminal`)."""
    for note in pgo_terminal.notes(result):
        err_console.print(note)
    for part in pgo_terminal.tables(result):
        console.print(part)


def json_view(result: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` document: the result with ``variants`` rows first."""
    return {"variants": result["variants"], "best": result["best"], "builds": result["builds"],
            **{k: v for k, v in result.items() if k not in ("variants", "best", "builds")}}


# ---------------------------------------------------------------- command


class _PgoCommand(click.Command):
    """``hone pgo`` with one subcommand beside its SPEC argument: ``hone pgo autofdo-profile …``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] == "autofdo-profile":
            ctx.meta["hone.pgo.sub"] = args[1:]
            return []
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        if "hone.pgo.sub" in ctx.meta:
            sub = autofdo_profile_cmd
            with sub.make_context("hone pgo autofdo-profile", list(ctx.meta["hone.pgo.sub"])) as sctx:
                return sub.invoke(sctx)
        return super().invoke(ctx)


@main.command("pgo", cls=_PgoCommand, context_settings={"ignore_unknown_options": False})
@click.argument("args", nargs=-1, metavar="[SPEC | report [RESULT]]")
@click.option("--make", "make_dir", metavar="DIR", help="Quick form: a make project.")
@click.option("--cmake", "cmake_dir", metavar="DIR", help="Quick form: a cmake project (--binary _hone_build/PROG).")
@click.option("--autotools", "autotools_dir", metavar="DIR", help="Quick form: ./configure && make.")
@click.option("--meson", "meson_dir", metavar="DIR", help="Quick form: a meson project (--binary _hone_build/PROG).")
@click.option("--cargo", "cargo_dir", metavar="DIR", help="Quick form: a cargo project.")
@click.option("--binary", metavar="PATH", help="The program the build produces, relative to DIR.")
@click.option("--train", multiple=True, metavar="CMD",
              help="Training scenario, shell text with {binary}; '@name:weight CMD' names and weights it. Repeatable.")
@click.option("--evaluate", multiple=True, metavar="CMD", help="Evaluate scenario (same syntax). Repeatable.")
@click.option("--mode", "modes", multiple=True, metavar="MODE",
              help=f"Variant(s) to build, e.g. {', '.join(EXAMPLE_MODES)}. Repeatable or comma-separated.")
@click.option("--build-command", metavar="CMD", help="Build argv instead of the system's default ({cflags} etc.).")
@click.option("--configure", "configure", metavar="ARGS",
              help="Arguments added to the configure step (--autotools: ./configure, --cmake, --meson setup).")
@click.option("--cflags", default=None, help="Flags of every C build (default -O2).")
@click.option("--check", metavar="CMD", help="Correctness check: shell command, variant output on stdin, exit 0 = ok.")
@click.option("--rounds", type=int, default=None,
              help="Interleaved timed rounds per evaluate scenario (default 7; below 6 the rank test can never"
              " reach p < 0.05).")
@click.option("--noise-builds", type=click.IntRange(0, 3), default=None,
              help="Defaults rebuilt with alignment perturbations for the noise floor (default 2).")
@click.option("--no-counts", is_flag=True, help="Skip cachegrind instruction/branch/cache counts.")
@click.option("--threads", is_flag=True, help="instr-gcc: -fprofile-update=atomic (threaded programs).")
@click.option("--partial-training", is_flag=True, help="instr-gcc: -fprofile-partial-training.")
@click.option("--workdir", type=click.Path(file_okay=False), help="Where variants go (default: state dir).")
@click.option("--keep-trees", is_flag=True, help="Keep each variant's build tree.")
@click.option("--json", "json_path", metavar="FILE", help="Write the result as JSON (- = stdout).")
@click.option("--markdown", "markdown_path", metavar="FILE",
              help="Write the AutoFDO before/after tables (runs, STDDEVP, Mean, Opt/Default, CI) as Markdown.")
def pgo_cmd(args: tuple[str, ...], make_dir: str | None, cmake_dir: str | None, autotools_dir: str | None,
            meson_dir: str | None, cargo_dir: str | None,
            binary: str | None, train: tuple[str, ...], evaluate: tuple[str, ...], modes: tuple[str, ...],
            build_command: str | None, configure: str | None, cflags: str | None, check: str | None, rounds: int | None,
            noise_builds: int | None, no_counts: bool, threads: bool, partial_training: bool, workdir: str | None,
            keep_trees: bool, json_path: str | None, markdown_path: str | None) -> None:
    """Build profile-guided variants (PGO, LTO, BOLT; AutoFDO where LBR exists) of a
    program and measure each against the default build.

    \b
    hone pgo SPEC                          a spec with a build: section
    hone pgo --make DIR --binary PATH --train CMD --evaluate CMD --mode instr-gcc …
    hone pgo --cmake | --autotools | --meson | --cargo DIR …   other build systems
    hone pgo report [RESULT]               show a result again (default: the latest)
    hone pgo autofdo-profile --pid PID --binary PATH --duration S -o FILE
                                           an AutoFDO profile of running processes (needs LBR)

    Every variant is built from a fresh copy of the project (in one build directory,
    emptied between builds) and kept in its own directory; it must give the default
    binary's output on every scenario, and is compared on CPU time (interleaved rounds,
    CI) and on cachegrind's deterministic counts; gains within the layout-noise floor are
    not called gains.
    """
    stdout_for_data(json_path, markdown_path)
    if args and args[0] == "report":
        if len(args) > 2:
            raise HoneError("usage: hone pgo report [RESULT.json | WORKDIR]")
        path = Path(args[1]) if len(args) == 2 else latest_result()
        if path.is_dir():
            path = path / "result.json"
        result = load_result(path)
        render(result)
        _write(result, json_path, markdown_path)
        return
    dirs = {"make": make_dir, "cmake": cmake_dir, "autotools": autotools_dir, "meson": meson_dir, "cargo": cargo_dir}
    quick = [d for d in dirs.values() if d]
    if args:
        if len(args) > 1:
            raise HoneError(f"one SPEC expected, got {' '.join(args)}")
        if quick or train or evaluate or binary or configure:
            raise HoneError("give either a SPEC or the quick form (--make/--cmake/--autotools/--meson/--cargo …),"
                            " not both")
        plan = plan_from_spec(args[0])
        if modes:
            plan.recipes = parse_modes(list(modes), plan.system)
    else:
        if len(quick) != 1:
            raise HoneError("give a SPEC, or exactly one of --make DIR, --cmake DIR, --autotools DIR, --meson DIR,"
                            " --cargo DIR",
                            hint="hone pgo --make DIR --binary PATH --train 'CMD {binary}' --evaluate 'CMD {binary}'")
        if not binary:
            raise HoneError("--binary PATH is required with the quick form (relative to the project directory)")
        system = next(s for s, d in dirs.items() if d)
        if configure and system not in ("cmake", "autotools", "meson"):
            raise HoneError(f"--configure: only --cmake, --autotools and --meson have a configure step, not --{system}",
                            hint="put the options in --build-command instead")
        taken: set[str] = set()
        cwd = os.getcwd()
        plan = BuildPlan(
            system=system, project=Path(quick[0]).resolve(), binary=binary,
            recipes=parse_modes(list(modes) or (["instr-rust"] if system == "cargo" else ["instr-gcc"]), system),
            train=[parse_scenario(t, taken) for t in train],
            evaluate=[parse_scenario(e, taken) for e in evaluate],
            build_command=shlex.split(build_command) if build_command else None,
            configure_args=shlex.split(configure) if configure else [],
            base_cflags=shlex.split(cflags) if cflags is not None else ([] if system == "cargo" else ["-O2"]),
            check=check, threads=threads, partial_training=partial_training,
            name=Path(quick[0]).resolve().name, scenario_dir=Path(cwd),
        )
    if rounds is not None:
        if rounds < 2:
            raise HoneError(f"--rounds must be at least 2, got {rounds}")
        plan.rounds = rounds
    if noise_builds is not None:
        plan.noise_builds = noise_builds
    if no_counts:
        plan.counts = False
    if check:
        plan.check = check
    plan.threads = plan.threads or threads
    plan.partial_training = plan.partial_training or partial_training
    plan.keep_trees = keep_trees
    if workdir:
        plan.workdir = Path(workdir).resolve()
    result = PgoRun(plan, log=lambda msg: err_console.print(msg, style="dim")).run()
    render(result)
    _write(result, json_path, markdown_path)


def _write(result: dict[str, Any], json_path: str | None, markdown_path: str | None) -> None:
    if json_path:
        write_json(json_path, json_view(result))
    if markdown_path:
        write_text(markdown_path, pgo_markdown.render(result))


@click.command("autofdo-profile")
@click.option("--pid", "pids", type=int, multiple=True, metavar="PID",
              help="A running process to sample (repeatable: graphd and storaged of one project).")
@click.option("--binary", "binaries", multiple=True, metavar="PATH", required=True,
              help="The program(s) the samples are of, built with -g (repeatable): one profile each, merged.")
@click.option("--duration", type=float, default=60.0, show_default=True, help="Seconds to sample.")
@click.option("--perf-data", type=click.Path(dir_okay=False), metavar="FILE",
              help="Use this perf.data (perf record -b) instead of sampling --pid.")
@click.option("--compiler", type=click.Choice(["gcc", "clang"]), default="gcc", show_default=True,
              help="gcc: create_gcov + profile_merger, for -fauto-profile; clang: llvm-profgen, for"
              " -fprofile-sample-use.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="The merged profile to write.")
def autofdo_profile_cmd(pids: tuple[int, ...], binaries: tuple[str, ...], duration: float, perf_data: str | None,
                        compiler: str, output: str) -> None:
    """Sample running processes with perf record -b (LBR) and write one AutoFDO profile for
    every given binary, to build them with (gcc: -fauto-profile=FILE, clang:
    -fprofile-sample-use=FILE)."""
    import tempfile

    from hone.build.modes import AutoFdo, AutoFdoClang
    from hone.build.modes.autofdo import check_lbr, record_pids

    if perf_data is None and not pids:
        raise HoneError("nothing to sample", hint="--pid PID (repeatable), or --perf-data FILE")
    if perf_data is not None and pids:
        raise HoneError("give --pid or --perf-data, not both")
    if duration <= 0:
        raise HoneError(f"--duration must be > 0, got {duration:g}")
    paths = [Path(b).resolve() for b in binaries]
    for b in paths:
        if not b.is_file():
            raise HoneError(f"binary {b} does not exist")
    mode = AutoFdo() if compiler == "gcc" else AutoFdoClang()
    if perf_data is None:
        check_lbr()
    elif not Path(perf_data).is_file():
        raise HoneError(f"perf data {perf_data} does not exist")
    mode.find_tools()
    out = Path(output).resolve()
    with tempfile.TemporaryDirectory(prefix="hone-autofdo-") as tmp:
        samples = Path(perf_data).resolve() if perf_data else Path(tmp) / "perf.data"
        if perf_data is None:
            err_console.print(f"perf record -b on {', '.join(map(str, pids))} for {duration:g} s …", style="dim")
            record_pids(pids, duration, samples)
        raw = Path(tmp) / f"merged{mode.suffix}"
        total = mode.profile_set(paths, samples, raw)
        out.parent.mkdir(parents=True, exist_ok=True)
        written = mode.finish(raw, out)
        if written != out:
            shutil.copyfile(written, out)
    console.print(f"{out}: {total:,} samples of {', '.join(p.name for p in paths)}; build with {mode.use_flag}={out}")
