"""``hone apply``, ``hone status``, ``hone rollback``."""

from __future__ import annotations

import datetime as dt

import click
from rich.table import Table

from hone.cli import main
from hone.cli._common import console, err_console, load_checked
from hone.core.errors import HoneError, RestoreError
from hone.core.process import stop_orphans
from hone.knobs import driver_for
from hone.knobs.risk import risks
from hone.run.configure import parse_assignments
from hone.run.conflicts import check_conflicts
from hone.run.journal import Journal, MachineLock


@main.command("apply")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", required=True,
              help="Knob value to apply (repeatable).")
@click.option("--strict", is_flag=True, help="Refuse (exit 2, nothing changed) when a daemon that changes settings "
              "on its own runs (tuned, bpftune, irqbalance, power daemons …).")
def apply_cmd(spec: str, sets: tuple[str, ...], strict: bool) -> None:
    """Set system knobs of SPEC and leave them set (journaled; undo with `hone rollback`).

    Only system knobs (sysctl, sysfs, file, script) can be applied; param and env knobs
    exist only inside a benchmark run.
    """
    loaded = load_checked(spec)
    values = parse_assignments(loaded, list(sets))
    drivers = {name: driver_for(loaded.spec.knob(name)) for name in values}
    for name, driver in drivers.items():
        if not driver.changes_system:
            raise HoneError(f"--set {name}: {driver.kind} knobs only exist inside a benchmark run",
                            hint="use `hone run --set` for param and env knobs")
    check_conflicts(loaded, strict=strict, verb="hone apply", warn=lambda m: err_console.print(m, style="yellow"),
                    only=values)
    journal = Journal()
    with MachineLock(purpose="hone apply"):
        before = {name: d.read() for name, d in drivers.items()}
        journal.apply([(d, d.model.format_value(values[name])) for name, d in drivers.items()])
        for name, driver in drivers.items():
            console.print(f"{driver.describe()}: {before[name]} -> {driver.model.format_value(values[name])}")
    for r in risks([loaded.spec.knob(n) for n in values], values):
        err_console.print(f"warning: {r['knob']}={r['value']} — {r['risk']}", style="yellow")
    err_console.print("journaled; `hone rollback` restores the originals", style="dim")


@main.command("status")
@click.option("--diff", "show_diff", is_flag=True, help="Also print each changed config file as a unified diff"
              " against its original.")
def status_cmd(show_diff: bool) -> None:
    """Show what hone has changed on this machine and not yet restored."""
    journal = Journal()
    rows = journal.status()
    for warning in journal.warnings:
        err_console.print(f"warning: {warning}", style="yellow")
    foreign = journal.foreign()
    if not rows and not foreign:
        console.print("nothing changed by hone on this machine")
        return
    if rows:
        table = Table(title=f"changed by hone ({journal.path})")
        for col in ("resource", "original", "set by hone", "current", "since", "pid"):
            table.add_column(col)
        for r in rows:
            since = dt.datetime.fromtimestamp(r["since"]).strftime("%Y-%m-%d %H:%M:%S")
            current = str(r["current"]) if r["changed"] else "= original"
            table.add_row(r["id"], str(r["original"]), str(r["set_by_hone"]), current, since, str(r["pid"]))
        console.print(table)
        if show_diff:
            for text in journal.diffs():
                console.print(text, end="", soft_wrap=True)
    else:
        console.print(f"nothing changed by hone with this state directory ({journal.directory})")
    dirs = dict.fromkeys(str(d) for d, _ in foreign)
    for d in dirs:
        held = [e.resource for other, e in foreign if str(other) == d]
        console.print(f"also changed by hone with the state directory {d}: {', '.join(held)}"
                      f" (HONE_STATE_DIR={d} hone status / rollback)")


@main.command("rollback")
def rollback_cmd() -> None:
    """Restore every original value hone recorded, newest change first (idempotent)."""
    # First stop what a dead hone left running (a knob's set after kill -9): it would change
    # a value again after it was restored.
    for stopped in stop_orphans():
        console.print(f"stopped {stopped}")
    journal = Journal()
    with MachineLock(purpose="hone rollback"):
        outcomes = journal.restore()
    for warning in journal.warnings:
        err_console.print(f"warning: {warning}", style="yellow")
    if not outcomes:
        console.print("nothing to restore")
        return
    failed = [o for o in outcomes if not o.ok]
    for o in outcomes:
        console.print(f"{'restored' if o.ok else 'FAILED  '} {o.ident}" + ("" if o.ok else f": {o.message}"))
    if failed:
        raise RestoreError(f"{len(failed)} resource(s) could not be restored; they stay in the journal",
                           hint="fix the cause and run `hone rollback` again")
