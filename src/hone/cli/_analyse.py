"""``hone analyse``: observe a command, running processes or the machine and name the workload class;
list the presets that fit it and, with ``--apply``, verify the best one (``hone preset verify``)."""

from __future__ import annotations

from pathlib import Path

import click

from hone.cli import main
from hone.cli._common import console, err_console, load_checked, stdout_for_data, write_json
from hone.cli._preset import binding_options
from hone.core.errors import HoneError


def analyse(command: list[str], pids: tuple[int, ...], duration: float | None, *, timeout: float,
            json_path: str | None, mount_tracefs: bool, env: dict[str, str] | None = None,
            cwd: str | None = None) -> dict:  # type: ignore[type-arg]
    """Observe, classify, print; returns the hone-analyse/1 document."""
    from hone.diagnose.capabilities import probe_capabilities
    from hone.diagnose.workload import analyse_document, classify, observe_command, observe_pids, observe_system
    from hone.report.analyse_terminal import render

    if command and pids:
        raise HoneError("give either a command (-- CMD ARGS) or --pid, not both")
    if command and duration is not None:
        raise HoneError("--duration is for --pid or the whole machine; a command is observed until it ends",
                        hint="hone analyse -- CMD ARGS  |  hone analyse --pid PID --duration S")
    if not command and not pids and duration is None:
        raise HoneError("nothing to analyse",
                        hint="hone analyse -- CMD ARGS  |  --pid PID --duration S  |  --duration S (whole machine)")
    if duration is not None and duration <= 0:
        raise HoneError(f"--duration: expected a positive number of seconds, got {duration:g}")
    for pid in pids:
        if not Path(f"/proc/{pid}").is_dir():
            raise HoneError(f"--pid {pid}: no such process")
    caps = probe_capabilities(allow_mount=mount_tracefs)
    if caps.tracefs_mounted_by_hone:
        err_console.print("hone mounted tracefs at /sys/kernel/tracing (journaled: `hone rollback` unmounts it)",
                          style="yellow")
    if command:
        err_console.print(f"observing {' '.join(command)} until it ends", style="dim")
        obs = observe_command(command, pmu=caps.pmu, timeout=timeout, env=env, cwd=cwd)
    elif pids:
        err_console.print(f"observing pid {', '.join(map(str, pids))} and descendants for {duration or 10:g} s",
                          style="dim")
        obs = observe_pids(list(pids), duration or 10.0, pmu=caps.pmu)
    else:
        err_console.print(f"observing the whole machine for {duration:g} s", style="dim")
        obs = observe_system(duration or 10.0, pmu=caps.pmu)
    doc = analyse_document(obs, classify(obs.signals))
    doc["presets"] = _fitting_presets(doc)
    console.print(render(doc))
    if json_path:
        write_json(json_path, doc)
    return doc


def _fitting_presets(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    """The catalogue's presets that fit the classes named (or, when none is named, the
    candidates), those fitting the most of them first."""
    from hone.presets import for_classes

    classes = doc["decided"] or [c for g in doc["groups"] for c in g["candidates"]]
    return [{"name": p.name, "classes": [c for c in p.classes if c in classes]} for p in for_classes(classes)]


@main.command("analyse", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--pid", "pids", type=int, multiple=True, help="Observe this running process and its descendants "
              "(repeatable).")
@click.option("--duration", type=float, default=None,
              help="Seconds to observe --pid (default 10), or the whole machine when no command or --pid is given.")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds before a command is killed.")
@click.option("--mount-tracefs", is_flag=True,
              help="Mount tracefs if missing (root; journaled: `hone rollback` unmounts it): syscall and block "
                   "tracepoints need it.")
@click.option("--rules", "show_rules", is_flag=True, help="Print every trait and class rule and exit.")
@click.option("--json", "json_path", metavar="FILE", help="Write the hone-analyse/1 result (- = stdout).")
@click.option("--apply", "apply_preset", is_flag=True,
              help="Then verify the best-fitting preset with --spec's benchmark (`hone preset verify`): only its "
                   "settings that measure better are kept; everything is restored at the end.")
@click.option("--spec", "spec", metavar="FILE", default=None, help="With --apply: the spec that measures the preset.")
@binding_options
@click.pass_context
def analyse_cmd(ctx: click.Context, command: tuple[str, ...], pids: tuple[int, ...], duration: float | None,
                timeout: float, mount_tracefs: bool, show_rules: bool, json_path: str | None, apply_preset: bool,
                spec: str | None, configs: tuple[str, ...], restarts: tuple[str, ...], devices: tuple[str, ...],
                opt_in: tuple[str, ...]) -> None:
    """Name the class of a workload, with the evidence: run COMMAND, watch --pid PID, or the machine.

    Classes: database-oltp, database-analytics, kv-cache, web-server, message-queue,
    cpu-bound-compute, io-sequential, io-random, network-throughput, latency-sensitive,
    memory-bound. Each is scored from traits (one signal against one threshold each: CPU
    demand, kernel share, context switches, fsyncs, block request pattern, sockets, packets,
    memory); when the evidence cannot tell classes apart, all candidates are listed with what
    is known and what would tell them apart.

        hone analyse -- gzip -9 -k big.tar
        hone analyse --pid $(pgrep -o postgres) --duration 15
        hone analyse --duration 30
    """
    stdout_for_data(json_path)
    if show_rules:
        _print_rules()
        return
    if apply_preset and spec is None:
        raise HoneError("--apply needs --spec SPEC: the preset is verified with that spec's benchmark",
                        hint="hone analyse --pid PID --apply --spec hone.yaml")
    if not apply_preset and (spec or configs or restarts or devices or opt_in):
        raise HoneError("--spec, --config, --restart, --device and --opt-in go with --apply")
    if apply_preset:
        load_checked(spec)  # a bad spec fails now, not after the observation
    doc = analyse(list(command), pids, duration, timeout=timeout, json_path=json_path, mount_tracefs=mount_tracefs)
    if apply_preset:
        if not doc["presets"]:
            raise HoneError(f"no preset fits {doc['summary']}: nothing verified or applied",
                            hint="hone preset list shows the catalogue and the classes each fits")
        from hone.cli._preset import verify_cmd

        name = doc["presets"][0]["name"]
        err_console.print(f"verifying preset {name} with {spec} (hone preset verify {name} --spec {spec})",
                          style="dim")
        ctx.invoke(verify_cmd, name=name, spec=spec, configs=configs, restarts=restarts, devices=devices,
                   opt_in=opt_in)


def _print_rules() -> None:
    from hone.diagnose.workload import CLASSES, TRAITS

    for t in TRAITS.values():
        console.print(f"trait {t.name}: {t.describe()} — {t.phrase}")
        console.print(f"  source: {t.source}", style="dim")
    for rule in CLASSES.values():
        d = rule.describe()
        console.print(f"class {d['name']} ({d['group']}): {d['conclusion']}", style="bold")
        for key in ("requires", "requires_any", "supports", "excludes"):
            if d[key]:
                console.print(f"  {key}: {', '.join(d[key])}")
        console.print(f"  source: {d['source']}", style="dim")


__all__ = ["analyse", "analyse_cmd"]
