"""``hone run``."""

from __future__ import annotations

import click
from rich.table import Table

from hone.cli import main
from hone.cli._common import console, err_console, fmt_num, load_checked, stdout_for_data, write_json
from hone.core.errors import RestoreError
from hone.core.metrics import BUILTIN
from hone.run.configure import parse_assignments
from hone.run.session import run_spec


@main.command("run")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help="Knob value for this run (repeatable).")
@click.option("--repeats", type=click.IntRange(min=1), default=None,
              help="Timed runs (default: the spec's benchmark.repeats).")
@click.option("--warmup", type=click.IntRange(min=0), default=None,
              help="Untimed runs first (default: benchmark.warmup).")
@click.option("--json", "json_path", metavar="FILE", help="Write every run and the summary as JSON (- = stdout).")
def run_cmd(spec: str, sets: tuple[str, ...], repeats: int | None, warmup: int | None, json_path: str | None) -> None:
    """Run SPEC's benchmark under one configuration and print its metrics.

    Knobs given with --set are applied (system knobs journaled), the benchmark runs
    warm-up + repeats times, and every knob is restored afterwards — also on failure,
    Ctrl-C or SIGTERM. Unset knobs keep the machine's current values.
    """
    stdout_for_data(json_path)
    loaded = load_checked(spec)
    values = parse_assignments(loaded, list(sets))

    def progress(stage: str, i: int, m) -> None:  # type: ignore[no-untyped-def]
        status = "ok" if m.ok else f"FAILED: {m.error}"
        where = "" if m.timed else " (under valgrind)"
        err_console.print(f"{stage} {i + 1}: wall {m.wall_s:.3f}s cpu {m.cpu_s:.3f}s{where} {status}", style="dim",
                          soft_wrap=True)

    result = run_spec(loaded, values, repeats=repeats, warmup=warmup, on_run=progress)
    table = Table(title=f"hone run {loaded.spec.name}" + (f"  ({', '.join(sets)})" if sets else ""))
    for col in ("metric", "n", "mean", "stddev", "stddev/mean", "min", "max", "unit"):
        table.add_column(col, justify="left" if col in ("metric", "unit") else "right")
    units = {name: m.unit for name, m in BUILTIN.items()} | {m.name: m.unit for m in loaded.spec.metrics if m.unit}
    for name, s in result.summaries().items():
        table.add_row(
            name, str(s.n), fmt_num(s.mean), fmt_num(s.stddev), f"{s.cv * 100:.2f}%", fmt_num(s.min), fmt_num(s.max),
            units.get(name, ""),
        )
    console.print(table)
    for note in result.notes:
        console.print(note, style="dim", soft_wrap=True)
    failed = len(result.runs) - len(result.ok_runs)
    if failed:
        err_console.print(f"warning: {failed} of {len(result.runs)} runs failed: "
                          f"{next(r.error for r in result.runs if not r.ok)}", style="yellow")
    for problem in result.restore_problems:
        err_console.print(f"restore problem: {problem} (run `hone rollback`)", style="red")
    if json_path:
        write_json(json_path, result.to_json())
    if result.restore_problems:
        raise RestoreError(f"{len(result.restore_problems)} change(s) could not be restored; they stay in the"
                           " journal", hint="fix the cause and run `hone rollback`")
