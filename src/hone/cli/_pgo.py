"""``hone pgo`` (profile-guided builds) and ``hone pgo report``."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any

import click

from hone.build import BuildPlan, PgoRun, Scenario, latest_result, load_result, parse_modes, scenario_name
from hone.build.recipe import EXAMPLE_MODES
from hone.cli import main
from hone.cli._common import console, err_console, load_checked, stdout_for_data, write_json
from hone.core.errors import HoneError
from hone.report import pgo_terminal

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
    default_cflags = "" if b.system == "cargo" else "-O2"
    return BuildPlan(
        system=b.system, project=(base / b.dir).resolve(), binary=b.binary,
        recipes=parse_modes(b.modes, b.system), train=train, evaluate=evaluate, build_command=command,
        base_cflags=shlex.split(b.cflags if b.cflags is not None else default_cflags),
        base_ldflags=shlex.split(b.ldflags), base_rustflags=shlex.split(b.rustflags), check=b.check,
        rounds=b.rounds, noise_builds=b.noise_builds, counts=b.counts, jobs=b.jobs, threads=b.threads,
        partial_training=b.partial_training, build_timeout=b.build_timeout, run_timeout=b.run_timeout,
        name=loaded.spec.name or loaded.path.stem, scenario_dir=base,
        service=loaded if loaded.spec.service is not None and loaded.spec.service.start is not None else None,
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


@main.command("pgo", context_settings={"ignore_unknown_options": False})
@click.argument("args", nargs=-1, metavar="[SPEC | report [RESULT]]")
@click.option("--make", "make_dir", metavar="DIR", help="Quick form: a make project.")
@click.option("--cmake", "cmake_dir", metavar="DIR", help="Quick form: a cmake project.")
@click.option("--cargo", "cargo_dir", metavar="DIR", help="Quick form: a cargo project.")
@click.option("--binary", metavar="PATH", help="The program the build produces, relative to DIR.")
@click.option("--train", multiple=True, metavar="CMD",
              help="Training scenario, shell text with {binary}; '@name:weight CMD' names and weights it. Repeatable.")
@click.option("--evaluate", multiple=True, metavar="CMD", help="Evaluate scenario (same syntax). Repeatable.")
@click.option("--mode", "modes", multiple=True, metavar="MODE",
              help=f"Variant(s) to build, e.g. {', '.join(EXAMPLE_MODES)}. Repeatable or comma-separated.")
@click.option("--build-command", metavar="CMD", help="Build argv instead of the system's default ({cflags} etc.).")
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
def pgo_cmd(args: tuple[str, ...], make_dir: str | None, cmake_dir: str | None, cargo_dir: str | None,
            binary: str | None, train: tuple[str, ...], evaluate: tuple[str, ...], modes: tuple[str, ...],
            build_command: str | None, cflags: str | None, check: str | None, rounds: int | None,
            noise_builds: int | None, no_counts: bool, threads: bool, partial_training: bool, workdir: str | None,
            keep_trees: bool, json_path: str | None) -> None:
    """Build profile-guided variants (PGO, LTO, BOLT; AutoFDO where LBR exists) of a
    program and measure each against the default build.

    \b
    hone pgo SPEC                          a spec with a build: section
    hone pgo --make DIR --binary PATH --train CMD --evaluate CMD --mode instr-gcc …
    hone pgo report [RESULT]               show a result again (default: the latest)

    Every variant is built from a fresh copy of the project (in one build directory,
    emptied between builds) and kept in its own directory; it must give the default
    binary's output on every scenario, and is compared on CPU time (interleaved rounds,
    CI) and on cachegrind's deterministic counts; gains within the layout-noise floor are
    not called gains.
    """
    stdout_for_data(json_path)
    if args and args[0] == "report":
        if len(args) > 2:
            raise HoneError("usage: hone pgo report [RESULT.json | WORKDIR]")
        path = Path(args[1]) if len(args) == 2 else latest_result()
        if path.is_dir():
            path = path / "result.json"
        result = load_result(path)
        render(result)
        if json_path:
            write_json(json_path, json_view(result))
        return
    quick = [d for d in (make_dir, cmake_dir, cargo_dir) if d]
    if args:
        if len(args) > 1:
            raise HoneError(f"one SPEC expected, got {' '.join(args)}")
        if quick or train or evaluate or binary:
            raise HoneError("give either a SPEC or the quick form (--make/--cmake/--cargo …), not both")
        plan = plan_from_spec(args[0])
        if modes:
            plan.recipes = parse_modes(list(modes), plan.system)
    else:
        if len(quick) != 1:
            raise HoneError("give a SPEC, or exactly one of --make DIR, --cmake DIR, --cargo DIR",
                            hint="hone pgo --make DIR --binary PATH --train 'CMD {binary}' --evaluate 'CMD {binary}'")
        if not binary:
            raise HoneError("--binary PATH is required with the quick form (relative to the project directory)")
        system = "make" if make_dir else "cmake" if cmake_dir else "cargo"
        taken: set[str] = set()
        cwd = os.getcwd()
        plan = BuildPlan(
            system=system, project=Path(quick[0]).resolve(), binary=binary,
            recipes=parse_modes(list(modes) or (["instr-rust"] if system == "cargo" else ["instr-gcc"]), system),
            train=[parse_scenario(t, taken) for t in train],
            evaluate=[parse_scenario(e, taken) for e in evaluate],
            build_command=shlex.split(build_command) if build_command else None,
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
    if json_path:
        write_json(json_path, json_view(result))
