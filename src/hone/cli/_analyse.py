"""``hone analyse``: observe a command, running processes or the machine and name the workload class."""

from __future__ import annotations

from pathlib import Path

import click

from hone.cli import main
from hone.cli._common import console, err_console, stdout_for_data, write_json
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
    console.print(render(doc))
    if json_path:
        write_json(json_path, doc)
    return doc


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
def analyse_cmd(command: tuple[str, ...], pids: tuple[int, ...], duration: float | None, timeout: float,
                mount_tracefs: bool, show_rules: bool, json_path: str | None) -> None:
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
    analyse(list(command), pids, duration, timeout=timeout, json_path=json_path, mount_tracefs=mount_tracefs)


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
