"""``hone profile``, ``hone flame``, ``hone doctor``: from symptom to the experiment that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from hone.cli import main
from hone.cli._common import console, err_console, stdout_for_data, write_json
from hone.core.errors import HoneError
from hone.diagnose.capabilities import Capabilities, probe_capabilities
from hone.diagnose.report_markdown import num, pct, verdict_note


def _caps(mount_tracefs: bool = False) -> Capabilities:
    caps = probe_capabilities(allow_mount=mount_tracefs)
    if caps.tracefs_mounted_by_hone:
        # A system change: say it loudly (journaled like a knob before the mount).
        err_console.print("hone mounted tracefs at /sys/kernel/tracing (journaled: "
                          "`hone rollback` unmounts it)", style="yellow")
    return caps


def _target_argv(spec_or_cmd: tuple[str, ...]) -> tuple[list[str], str | None]:
    """(argv, spec path): a single *.yaml argument is a spec, anything else a command."""
    if len(spec_or_cmd) == 1 and spec_or_cmd[0].endswith((".yaml", ".yml")) and Path(spec_or_cmd[0]).is_file():
        return [], spec_or_cmd[0]
    return list(spec_or_cmd), None


def _print_missing(missing: dict[str, str], to_stdout: bool = False) -> None:
    by_reason: dict[str, list[str]] = {}
    for ev, why in missing.items():
        by_reason.setdefault(why, []).append(ev)
    for why, evs in by_reason.items():
        (console if to_stdout else err_console).print(f"not collected: {', '.join(evs)} — {why}")


@main.command("profile", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--pid", type=int, help="Watch a running process instead of starting one.")
@click.option("--duration", type=float, default=5.0, show_default=True, help="Seconds to watch --pid.")
@click.option("-r", "--repeats", type=int, default=3, show_default=True, help="Runs (each under perf stat).")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds per run before it is killed.")
@click.option("--json", "json_path", metavar="FILE", help="Write the hone-profile/1 JSON result (- = stdout).")
def profile_cmd(command: tuple[str, ...], pid: int | None, duration: float, repeats: int, timeout: float,
                json_path: str | None) -> None:
    """Count every supported perf event for COMMAND (or SPEC, or --pid), repeated.

    Prints each quantity's mean and variation over the runs, then the derived metrics
    (IPC, miss ratios, kernel-time share, rates) with their formulas. A derived metric
    whose counters are missing is not computed: the output names the counters and why
    (e.g. no hardware PMU in a VM).

        hone profile -- ./fcopy -b 256 -t 1
    """
    from hone.diagnose.profile import profile_command, profile_pid

    stdout_for_data(json_path)

    argv, spec = _target_argv(command)
    if pid is None and not argv and not spec:
        raise HoneError("nothing to profile", hint="hone profile -- CMD ARGS…  |  hone profile SPEC  |  --pid PID")
    caps = _caps()
    if pid is not None:
        result = profile_pid(pid, caps, duration=duration, repeats=repeats)
    else:
        env = cwd = None
        if spec:
            from hone.cli._common import load_checked
            from hone.diagnose.doctor import target_from_spec

            target = target_from_spec(load_checked(spec))
            argv, cwd = target.argv, target.cwd
            env = {**__import__("os").environ, **target.env} if target.env else None
        if not argv:
            raise HoneError("nothing to profile", hint="hone profile -- CMD ARGS…  |  hone profile SPEC  |  --pid PID")
        result = profile_command(argv, caps, repeats=repeats, timeout=timeout, env=env, cwd=cwd,
                                 on_run=lambda i, r: err_console.print(
                                     f"run {i + 1}/{repeats}: {r.wall_s:.3f} s wall", style="dim"))
    table = Table(title=f"hone profile: {result.command_text} ({len(result.runs)} runs)")
    for col in ("quantity", "mean", "stddev/mean", "min", "max"):
        table.add_column(col, justify="left" if col == "quantity" else "right")
    for name, s in result.quantities.items():
        table.add_row(name, num(s.mean), pct(s.cv * 100 if s.mean else None), num(s.min), num(s.max))
    console.print(table)
    derived = Table(title="derived metrics (only from counters that have data)")
    for col in ("metric", "mean", "stddev/mean", "unit", "formula"):
        derived.add_column(col, justify="right" if col in ("mean", "stddev/mean") else "left")
    skipped = []
    for d in result.derived.values():
        if d.summary is None:
            skipped.append(d)
            continue
        derived.add_row(d.name, num(d.summary.mean), pct(d.summary.cv * 100 if d.summary.mean else None), d.unit,
                        d.formula)
    console.print(derived)
    for d in skipped:
        reasons = sorted(set(d.missing.values()))
        console.print(f"{d.name}: not computed — missing {', '.join(d.missing)}"
                      + (f" ({reasons[0]})" if reasons else ""))
    _print_missing(result.missing)
    if json_path:
        write_json(json_path, result.to_json())


@main.command("flame", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--pid", type=int, help="Sample a running process instead of starting one.")
@click.option("--duration", type=float, default=10.0, show_default=True, help="Seconds to sample --pid.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Directory for NAME.svg, NAME.folded, NAME.speedscope.json.")
@click.option("--name", default="flame", show_default=True, help="Base name of the output files.")
@click.option("-F", "--frequency", type=int, default=999, show_default=True, help="Samples per second.")
@click.option("--call-graph", type=click.Choice(["fp", "dwarf"]), default="fp", show_default=True,
              help="Stack unwinding: frame pointers, or DWARF for code built without them.")
@click.option("--off-cpu", is_flag=True, help="Also record an off-CPU graph (sched_switch stacks).")
@click.option("--diff", "diff_paths", nargs=2, type=click.Path(exists=True), metavar="BEFORE AFTER",
              help="Differential flame graph of two .folded files or two `hone flame` directories.")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds before the command is killed.")
def flame_cmd(command: tuple[str, ...], pid: int | None, duration: float, out_dir: str, name: str, frequency: int,
              call_graph: str, off_cpu: bool, diff_paths: tuple[str, str] | None, timeout: float) -> None:
    """Record COMMAND (or --pid) with perf and draw an interactive SVG flame graph (inferno).

    Writes NAME.svg, NAME.folded (inferno's folded stacks) and NAME.speedscope.json into
    --out and prints their paths. Kernel frames end in _[k].

        hone flame -o out -- ./myprog args
        hone flame --diff before/flame.folded after/flame.folded -o out
    """
    from hone.diagnose.flame import diff_flame, folded_from, record_flame, record_offcpu

    out = Path(out_dir)
    if diff_paths:
        if command or pid is not None:
            raise HoneError("--diff takes two folded files (or directories), not a command")
        before, after = (folded_from(Path(p)) for p in diff_paths)
        result = diff_flame(before, after, out, name=name if name != "flame" else "diff")
        for d in result.deltas[:5]:
            console.print(f"{d.function:40s} self share {d.before * 100:5.1f}% → {d.after * 100:5.1f}% "
                          f"({d.delta * 100:+.1f} pt)")
        for p in result.paths():
            console.print(str(p))
        return
    argv, spec = _target_argv(command)
    env = cwd = None
    if spec:
        from hone.cli._common import load_checked
        from hone.diagnose.doctor import target_from_spec

        target = target_from_spec(load_checked(spec))
        argv, cwd = target.argv, target.cwd
        env = {**__import__("os").environ, **target.env} if target.env else None
    caps = _caps()
    result = record_flame(argv or None, out, caps, name=name, pid=pid, duration=duration, frequency=frequency,
                          call_graph=call_graph, timeout=timeout, env=env, cwd=cwd)
    total = result.samples or 1
    console.print(f"{result.samples:.0f} samples; "
                  f"{pct((result.kernel_share or 0) * 100)} in the kernel; hottest (self):")
    for func, weight in result.hottest[:5]:
        console.print(f"  {weight / total * 100:5.1f}%  {func}")
    paths = result.paths()
    if off_cpu:
        if not argv:
            raise HoneError("--off-cpu needs a command")
        off = record_offcpu(argv, out, caps, name=f"{name}-offcpu", timeout=timeout, env=env, cwd=cwd)
        paths += off.paths()
    for p in paths:
        console.print(str(p))


@main.command("doctor", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--capabilities", "show_caps", is_flag=True, help="Only probe and print what this machine can measure.")
@click.option("--rules", "show_rules", is_flag=True, help="Print every rule: signal, threshold, source, remedy.")
@click.option("--mount-tracefs", is_flag=True,
              help="Mount tracefs if missing (root; a system change, journaled: `hone rollback` unmounts it).")
@click.option("--run", "run_experiments", is_flag=True, help="Run the proposed experiments and report verdicts.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default="hone-doctor", show_default=True,
              help="Directory for doctor.json, report.md, report.html and the flame graphs.")
@click.option("-r", "--repeats", type=int, default=3, show_default=True, help="perf stat runs.")
@click.option("--rounds", type=int, default=10, show_default=True, help="Interleaved rounds per experiment.")
@click.option("--no-flame", is_flag=True, help="Skip the flame graph.")
@click.option("--flame-seconds", type=float, default=1.0, show_default=True,
              help="CPU seconds of samples per flame graph: a short command is recorded up to 4 times.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the experiments' run order.")
@click.option("--threshold", type=float, default=1.0, show_default=True, help="Smallest change that matters, %.")
@click.option("--probe", "probes", multiple=True, metavar="NAME",
              help="Also run a bpftrace probe during one run (syscount, biolatency, readseq, runqlat).")
@click.option("--report", "report_dir", type=click.Path(exists=True, file_okay=False),
              help="Only re-render report.md/report.html from DIR/doctor.json.")
@click.option("--json", "json_path", metavar="FILE", help="Also write doctor.json here (- = stdout).")
@click.option("--classify", is_flag=True, help="Only name the workload class of COMMAND (or SPEC's benchmark), as "
              "`hone analyse -- COMMAND` does; --json writes its hone-analyse/1 result.")
def doctor_cmd(command: tuple[str, ...], show_caps: bool, show_rules: bool, mount_tracefs: bool, classify: bool,
               run_experiments: bool, out_dir: str, repeats: int, rounds: int, no_flame: bool, flame_seconds: float,
               seed: int,
               threshold: float, probes: tuple[str, ...], report_dir: str | None, json_path: str | None) -> None:
    """Profile COMMAND (or SPEC), apply the rules, rank findings and propose experiments.

    Each finding shows its evidence, threshold and source, and the exact next command. With
    --run the experiments are executed in interleaved rounds and judged round by round:
    faster, slower, equivalent (within --threshold) or inconclusive (with the range not
    ruled out). Reports: OUT/report.md and OUT/report.html.

        hone doctor --capabilities
        hone doctor examples/filecopy/hone.yaml --run
        hone doctor -- ./myprog args
    """
    from hone.diagnose.report_html import write_reports

    stdout_for_data(json_path)

    if report_dir:
        doc_path = Path(report_dir) / "doctor.json"
        if not doc_path.is_file():
            raise HoneError(f"{doc_path}: no doctor result there")
        for p in write_reports(json.loads(doc_path.read_text()), Path(report_dir)):
            console.print(str(p))
        return
    if show_rules:
        from hone.diagnose.rules import RULES

        for rule in RULES.values():
            console.print(rule.name, style="bold")
            for key, value in rule.describe().items():
                if key != "name":
                    console.print(f"  {key}: {value}")
        return
    argv, spec = _target_argv(command)
    if not show_caps and not argv and not spec:
        raise HoneError("nothing to diagnose", hint="hone doctor -- CMD ARGS…  |  hone doctor SPEC  |  --capabilities")
    if classify:
        from hone.cli._analyse import analyse

        env = cwd = None
        if spec:
            from hone.cli._common import load_checked
            from hone.diagnose.doctor import target_from_spec

            target = target_from_spec(load_checked(spec))
            argv, cwd = target.argv, target.cwd
            env = {**__import__("os").environ, **target.env} if target.env else None
        analyse(argv, (), None, timeout=600.0, json_path=json_path, mount_tracefs=mount_tracefs, env=env, cwd=cwd)
        return
    caps = _caps(mount_tracefs)
    if show_caps:
        _print_capabilities(caps)
        if json_path:
            write_json(json_path, caps.to_json())
        return
    from hone.diagnose.doctor import run_doctor, target_from_spec
    from hone.diagnose.rules import Target

    if spec:
        from hone.cli._common import load_checked

        target = target_from_spec(load_checked(spec))
    else:
        target = Target(argv, metric="cpu_time", goal="minimize", unit="s")
    out = Path(out_dir)
    report = run_doctor(target, caps, out, repeats=repeats, flame=not no_flame, run=run_experiments, rounds=rounds,
                        seed=seed, threshold=threshold / 100, flame_seconds=flame_seconds,
                        log=lambda m: err_console.print(m, style="dim"))
    doc = report.to_json()
    if probes:
        from hone.diagnose.bpftrace import run_probes

        wall = report.profile.value("wall_s") or 5.0
        results = run_probes(list(probes), target, caps, out, seconds=wall + 1.0,
                             log=lambda m: err_console.print(m, style="dim"))
        doc["probes"] = [{"name": r.name, "seconds": r.seconds, "ok": r.ok, "output": r.output, "error": r.error}
                         for r in results]
        (out / "doctor.json").write_text(json.dumps(doc, indent=1, default=str))
    _print_findings(doc)
    md, page = write_reports(doc, out)
    for p in (out / "doctor.json", md, page):
        console.print(str(p))
    if json_path:
        write_json(json_path, doc)


def _print_capabilities(caps: Capabilities) -> None:
    table = Table(title="hone doctor --capabilities")
    table.add_column("what")
    table.add_column("status")
    table.add_row("CPU", f"{caps.cpu_model} ({caps.cpus} CPUs), kernel {caps.kernel}")
    table.add_row("perf", caps.perf_version or "missing")
    table.add_row("hardware counters (PMU)", "yes" if caps.pmu else f"no — {caps.pmu_why}")
    table.add_row("cpu-clock sampling", "yes" if caps.cpu_clock_sampling else "no")
    table.add_row("--call-graph dwarf", "yes" if caps.call_graph_dwarf else "no")
    table.add_row("LBR (perf record -b)", "yes" if caps.lbr else f"no — {caps.lbr_why}")
    table.add_row("tracefs", ("mounted" + (" (by hone)" if caps.tracefs_mounted_by_hone else ""))
                  if caps.tracefs_mounted else "not mounted")
    table.add_row("debugfs", "mounted" if caps.debugfs_mounted else "not mounted")
    table.add_row("bpftrace", caps.bpftrace or f"unusable — {caps.bpftrace_why}")
    kprobes = {True: "yes", False: "no (kernel built without CONFIG_KPROBES)", None: "unknown"}[caps.kprobes]
    table.add_row("kprobes", kprobes)
    table.add_row("audit", f"kernel: {caps.audit_kernel}, auditctl: {caps.auditctl or 'not installed'}")
    table.add_row("THP", f"enabled={caps.thp_enabled} defrag={caps.thp_defrag}")
    table.add_row("governor", caps.governor or "none (no cpufreq)")
    table.add_row("perf_event_paranoid", str(caps.perf_event_paranoid))
    table.add_row("inferno", ", ".join(f"{k}: {'ok' if v else 'missing'}" for k, v in caps.inferno.items()))
    console.print(table)
    ok = caps.supported_events
    console.print(f"events that count: {', '.join(ok)}")
    _print_missing({e: (f"<not supported>: {caps.pmu_why}" if s == "not supported" and not caps.pmu else s)
                    for e, s in caps.missing_events().items()}, to_stdout=True)
    for note in caps.notes:
        console.print(f"note: {note}")


def _print_findings(doc: dict) -> None:  # type: ignore[type-arg]
    if not doc["findings"]:
        console.print("No rule fired.")
    for i, f in enumerate(doc["findings"], 1):
        console.print(Text.assemble((f"{i}. {f['title']}", "bold"), f" ({f['rule']}, score {f['score']:.2f})"))
        for e in f["evidence"]:
            console.print(f"   - {e}")
        console.print(f"   threshold: {f['threshold']}")
        console.print(f"   remedy: {f['remedy']}")
        for e in f["experiments"]:
            console.print(f"   next: {e.get('command', '')}")
        for s in f["suggestions"]:
            console.print(f"   next: {s}")
    for exp in doc["experiments"]:
        ref = exp["variants"][0]["name"]
        console.print(Text.assemble((f"experiment {exp['title']}", "bold"),
                                    f" ({exp['metric']}, {exp['rounds']} rounds)"))
        for name, s in exp["summaries"].items():
            console.print(f"   {name:12s} mean {num(s['mean'])} {exp['unit']}  (stddev/mean {pct(s['cv'] * 100)})")
        for name, c in exp["comparisons"].items():
            console.print(f"   {name} vs {ref}: {c['change_pct']:+.1f}% [{c['ci_pct'][0]:+.1f}%, "
                          f"{c['ci_pct'][1]:+.1f}%] p={c['p_value']:.3g} → {c['verdict']}{verdict_note(c)}")
    missing = {k for m in doc["not_evaluated"].values() for k in m}
    if doc["not_evaluated"]:
        reasons = sorted({v for m in doc["not_evaluated"].values() for v in m.values()})
        console.print(f"not evaluated: {', '.join(doc['not_evaluated'])} — missing {', '.join(sorted(missing))}"
                      f" ({reasons[0] if reasons else ''})")


__all__ = ["doctor_cmd", "flame_cmd", "profile_cmd"]
