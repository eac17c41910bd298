"""``hone apply``, ``hone status``, ``hone rollback``."""

from __future__ import annotations

import datetime as dt

import click
from rich.table import Table

from hone.cli import main
from hone.cli._common import console, err_console
from hone.errors import HoneError
from hone.journal import Journal, StateLock
from hone.knobs import driver_for
from hone.run.configure import parse_assignments
from hone.spec import load_spec


@main.command("apply")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", required=True,
              help="Knob value to apply (repeatable).")
def apply_cmd(spec: str, sets: tuple[str, ...]) -> None:
    """Set system knobs of SPEC and leave them set (journaled; undo with `hone rollback`).

    Only system knobs (sysctl, sysfs, file, script) can be applied; param and env knobs
    exist only inside a benchmark run.
    """
    loaded = load_spec(spec)
    values = parse_assignments(loaded, list(sets))
    journal = Journal()
    with StateLock(purpose="hone apply"):
        for name in values:
            driver = driver_for(loaded.spec.knob(name))
            if not driver.changes_system:
                raise HoneError(f"--set {name}: {driver.kind} knobs only exist inside a benchmark run",
                                hint="use `hone run --set` for param and env knobs")
        for name, value in values.items():
            driver = driver_for(loaded.spec.knob(name))
            before = driver.read()
            text = driver.model.format_value(value)
            journal.write(driver, text)
            console.print(f"{driver.describe()}: {before} -> {text}")
    err_console.print("[dim]journaled; `hone rollback` restores the originals[/dim]")


@main.command("status")
def status_cmd() -> None:
    """Show what hone has changed on this machine and not yet restored."""
    journal = Journal()
    rows = journal.status()
    if not rows:
        console.print("nothing changed by hone on this machine")
        return
    table = Table(title=f"changed by hone ({journal.path})")
    for col in ("knob", "original", "set by hone", "current", "since", "pid"):
        table.add_column(col)
    for r in rows:
        since = dt.datetime.fromtimestamp(r["since"]).strftime("%Y-%m-%d %H:%M:%S")
        current = str(r["current"]) + ("" if r["changed"] else " (= original)")
        table.add_row(r["id"], str(r["original"]), str(r["set_by_hone"]), current, since, str(r["pid"]))
    console.print(table)


@main.command("rollback")
def rollback_cmd() -> None:
    """Restore every original value hone recorded, newest change first (idempotent)."""
    journal = Journal()
    with StateLock(purpose="hone rollback"):
        outcomes = journal.restore()
    if not outcomes:
        console.print("nothing to restore")
        return
    failed = [o for o in outcomes if not o.ok]
    for o in outcomes:
        console.print(f"{'restored' if o.ok else 'FAILED  '} {o.ident}" + ("" if o.ok else f": {o.message}"))
    if failed:
        raise HoneError(f"{len(failed)} knob(s) could not be restored; they stay in the journal",
                        hint="fix the cause and run `hone rollback` again")
