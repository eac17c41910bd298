"""``hone adapt readahead``: the adaptive read-ahead controller."""

from __future__ import annotations

import sys

import click

from hone.cli import main
from hone.cli._common import console, err_console
from hone.core.errors import CapabilityError, RestoreError


@main.group("adapt")
def adapt_group() -> None:
    """Controllers that change a setting while the workload runs, as its behaviour changes."""


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    from hone.core.durations import parse_duration

    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@adapt_group.command("readahead")
@click.option("--device", required=True, metavar="DEV",
              help="The disk whose read_ahead_kb is switched (loop0, /dev/vdb, /dev/mapper/vg-data); "
                   "no other is touched.")
@click.option("--duration", callback=_duration, metavar="S",
              help="Stop after this long (90s, 10m, 2h); default: until Ctrl-C or SIGTERM.")
@click.option("--lower", "lower_pct", type=float, default=30.0, show_default=True, metavar="PCT",
              help="Sequential share at or below which the device gets --random-kb (A-Tune lower-bound-percentage).")
@click.option("--upper", "upper_pct", type=float, default=70.0, show_default=True, metavar="PCT",
              help="Sequential share at or above which it gets --sequential-kb (A-Tune upper-bound-percentage); "
                   "in between it keeps what it has.")
@click.option("--min-reads", type=int, default=10, show_default=True, metavar="N",
              help="Accesses a file needs in an interval to count (A-Tune total-read-threshold).")
@click.option("--min-file-kb", type=int, default=4096, show_default=True, metavar="KB",
              help="Smaller files do not count (A-Tune filesz-threshold).")
@click.option("--interval", "interval_s", type=float, default=0.5, show_default=True, metavar="S",
              help="Seconds per decision (A-Tune read-time-threshold).")
@click.option("--random-kb", type=int, default=16, show_default=True, metavar="KB",
              help="read_ahead_kb while reads are random.")
@click.option("--sequential-kb", type=int, default=1024, show_default=True, metavar="KB",
              help="read_ahead_kb while reads are sequential (equal to --random-kb: hold that value, no probe).")
@click.option("--advise/--no-advise", default=True, show_default=True,
              help="After a switch, give POSIX_FADV_NORMAL to the open files that agree with the new mode, "
                   "so readers that opened them before it take the new window too.")
def readahead_cmd(device: str, duration: float | None, lower_pct: float, upper_pct: float, min_reads: int,
                  min_file_kb: int, interval_s: float, random_kb: int, sequential_kb: int, advise: bool) -> None:
    """Switch DEV's read-ahead between two sizes as its readers turn sequential or random.

    A bpftrace probe on the page cache's tracepoints counts, per process and file on DEV,
    how many accesses (reads, mmap faults) continue where the previous one ended; every
    --interval the files with at least --min-reads accesses and --min-file-kb pool their
    share, and the device gets --random-kb at or below --lower, --sequential-kb at or above
    --upper. Every switch is journaled; the end (--duration, Ctrl-C, SIGTERM) restores the
    device, and `hone rollback` does after kill -9.

    \b
        hone adapt readahead --device vdb
        hone adapt readahead --device loop0 --duration 10m --lower 20 --upper 80
    """
    from hone.adapt.device import block_device
    from hone.adapt.policy import ReadaheadPolicy
    from hone.adapt.readahead import ReadaheadController

    policy = ReadaheadPolicy(lower_pct=lower_pct, upper_pct=upper_pct, min_file_kb=min_file_kb, min_reads=min_reads,
                             interval_s=interval_s, random_kb=random_kb, sequential_kb=sequential_kb)
    policy.check()
    target = block_device(device)

    def say(line: str) -> None:
        console.print(line)
        sys.stdout.flush()  # a service's log is a file: readiness is read from it

    summary = ReadaheadController(target, policy, advise=advise, say=say).run(duration)
    modes = ", ".join(f"{k} {v:.1f} s" for k, v in summary.in_mode_s.items() if v >= 0.05) or "-"
    say(f"hone adapt readahead: {len(summary.switches)} switch(es) in {summary.seconds:.1f} s ({modes}); "
        f"{target.name} read_ahead_kb back to {summary.original_kb}" if summary.restored else
        f"hone adapt readahead: {len(summary.switches)} switch(es) in {summary.seconds:.1f} s")
    if summary.advise_failed:
        err_console.print(f"warning: {summary.advise_failed} open file(s) could not be advised (gone, or not ours "
                          "to reach)", style="yellow")
    if summary.probe_error:
        raise CapabilityError(f"the readseq probe stopped before the controller did: {summary.probe_error}",
                              hint=f"{target.name} is restored; `hone doctor --capabilities` says what is traceable")
    if not summary.restored:
        raise RestoreError(f"{target.name} read_ahead_kb is not back to {summary.original_kb}; it stays in the journal",
                           hint="hone rollback")
