"""``hone preset list|show|apply|verify|define``: the preset catalogue (docs/presets.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from hone.cli import main
from hone.cli._common import console, err_console, load_checked, stdout_for_data, write_json
from hone.core.errors import HoneError, KnobError

if TYPE_CHECKING:
    from hone.presets.bind import Binding, Planned
    from hone.presets.model import Preset
    from hone.spec.loader import LoadedSpec


def binding_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--config/--restart/--device/--opt-in: how a preset meets this machine."""
    f = click.option("--opt-in", "opt_in", multiple=True, metavar="RISK|SETTING",
                     help="Also apply settings of this risk class (durability, machine, security) or this one"
                          " setting (repeatable, or comma-separated).")(f)
    f = click.option("--device", "devices", multiple=True, metavar="DEV",
                     help="Block device (in /sys/block) the preset's {device} settings apply to (repeatable).")(f)
    f = click.option("--restart", "restarts", multiple=True, metavar="NAME=CMD",
                     help="Command that restarts the server of config file NAME after a change (split like a shell"
                          " line, never run by a shell).")(f)
    f = click.option("--config", "configs", multiple=True, metavar="NAME=PATH",
                     help="Where the preset's config file NAME is here, e.g. postgresql=/etc/postgresql/15/main/"
                          "postgresql.conf (repeatable).")(f)
    return f


def _bound(name: str, configs: tuple[str, ...], restarts: tuple[str, ...], devices: tuple[str, ...],
           opt_in: tuple[str, ...], spec: LoadedSpec | None = None) -> tuple[Preset, Binding, list[Planned]]:
    from hone.presets import get_preset
    from hone.presets.bind import bind, plan

    preset = get_preset(name)
    binding = bind(preset, configs=configs, restarts=restarts, devices=devices, opt_in=opt_in, spec=spec)
    return preset, binding, plan(preset, binding)


def _table(planned: list[Planned], title: str, *, why: bool = True) -> Table:
    table = Table(title=title)
    for col in ("setting", "value", "now", "status", "risk", "from"):
        table.add_column(col)
    if why:
        table.add_column("why")
        table.add_column("source")
    for p in planned:
        status = p.status + (f": {p.why}" if p.why and p.status != "apply" else "")
        row = [p.name, p.text or p.setting.value_text(), "" if p.current is None else p.current, status,
               p.setting.risk, p.setting.origin]
        if why:
            row += [p.setting.spec.why, p.setting.spec.source]
        table.add_row(*row)
    return table


@main.group("preset")
def preset_group() -> None:
    """Versioned knob sets for common workloads (PostgreSQL, MySQL, Redis, nginx, Kafka, …),
    each setting with its source, rationale and risk; applied through the journal and verified
    by measurement. docs/presets.md."""


@preset_group.command("list")
@click.option("--class", "classes", multiple=True, metavar="CLASS", help="Only presets that fit this workload class"
              " (repeatable; best fitting first).")
@click.option("--json", "json_path", metavar="FILE", default=None, help="Write the catalogue as JSON (- = stdout).")
def list_cmd(classes: tuple[str, ...], json_path: str | None) -> None:
    """The catalogue: built-in presets and the user's (STATE_DIR/presets)."""
    from hone.presets import for_classes, load_catalogue

    stdout_for_data(json_path)
    catalogue = load_catalogue()
    presets = for_classes(classes, catalogue) if classes else list(catalogue.values())
    table = Table(title="presets")
    for col in ("name", "version", "classes", "settings", "risky (opt-in)", "includes", "where", "description"):
        table.add_column(col)
    for p in presets:
        risky = ", ".join(f"{s.name} ({s.risk})" for s in p.risky)
        table.add_row(p.name, str(p.version), ", ".join(p.classes), str(len(p.settings)), risky or "-",
                      ", ".join(p.include) or "-", "user" if p.user else "built-in", p.description)
    console.print(table)
    if json_path is not None:
        write_json(json_path, [{"name": p.name, "version": p.version, "classes": p.classes,
                                "settings": len(p.settings), "risky": [s.name for s in p.risky],
                                "include": p.include, "user": p.user, "path": p.path,
                                "description": p.description} for p in presets])


@preset_group.command("show")
@click.argument("name")
@binding_options
@click.option("--spec", "spec", metavar="FILE", default=None, help="Bind config files through this spec's file knobs.")
@click.option("--json", "json_path", metavar="FILE", default=None, help="Write the resolved settings as JSON.")
def show_cmd(name: str, configs: tuple[str, ...], restarts: tuple[str, ...], devices: tuple[str, ...],
             opt_in: tuple[str, ...], spec: str | None, json_path: str | None) -> None:
    """NAME's settings with includes resolved: value, the value on this machine now, what apply
    would do, risk, the preset each comes from, rationale and source. Changes nothing."""
    stdout_for_data(json_path)
    loaded = load_checked(spec) if spec else None
    preset, binding, planned = _bound(name, configs, restarts, devices, opt_in, loaded)
    chain = f", includes {', '.join(preset.include)}" if preset.include else ""
    console.print(f"{preset.name} v{preset.version} ({'user' if preset.user else 'built-in'}: {preset.path}){chain}")
    console.print(f"  {preset.description}")
    console.print(f"  classes: {', '.join(preset.classes)}" + (f"; tuned: {preset.tuned}" if preset.tuned else ""))
    for fname, bound in binding.files.items():
        console.print(f"  file {fname}: {bound.path} ({bound.origin})")
    console.print(_table(planned, f"preset {preset.name}"))
    if json_path is not None:
        write_json(json_path, {"name": preset.name, "version": preset.version, "classes": preset.classes,
                               "include": preset.include, "settings": [p.to_dict() for p in planned]})


def _now(p: Planned) -> str:
    return "(not set)" if p.current is None else p.current


def _service_restart(binding: Binding, loaded: LoadedSpec | None) -> None:
    """``hone preset apply`` runs no service: a file bound through a spec restarts with the
    spec's ``service.restart`` command, or not at all (said per setting)."""
    from hone.spec.models import to_argv

    service = loaded.spec.service if loaded is not None else None
    for bound in binding.files.values():
        if bound.restart == "service":
            bound.restart = (to_argv(service.restart, service.shell) if service is not None
                             and service.restart is not None else None)


@preset_group.command("apply")
@click.argument("name")
@binding_options
@click.option("--spec", "spec", metavar="FILE", default=None, help="Bind config files through this spec's file knobs.")
@click.option("--dry-run", is_flag=True, help="Say what would change, change nothing.")
@click.option("--strict", is_flag=True, help="Refuse (exit 2, nothing changed) when a daemon that changes settings "
              "on its own runs (tuned, bpftune, irqbalance, power daemons …).")
def apply_cmd(name: str, configs: tuple[str, ...], restarts: tuple[str, ...], devices: tuple[str, ...],
              opt_in: tuple[str, ...], spec: str | None, dry_run: bool, strict: bool) -> None:
    """Apply NAME's settings and leave them set: journaled per resource like `hone apply`
    (`hone status` lists them, `hone rollback` restores them). Settings this kernel lacks, files
    not bound and devices not named are skipped; risky ones need --opt-in."""
    from hone.presets.apply import apply_planned
    from hone.presets.bind import plan

    loaded = load_checked(spec) if spec else None
    preset, binding, planned = _bound(name, configs, restarts, devices, opt_in, loaded)
    _service_restart(binding, loaded)
    planned = plan(preset, binding)
    for p in planned:
        if p.status != "apply":
            err_console.print(f"{p.status} {p.name}: {p.why}", style="yellow" if p.status != "already" else "dim")
    todo = [p for p in planned if p.status == "apply"]
    if not todo:
        console.print(f"preset {preset.name}: nothing to change here")
        return
    _check_conflicts(todo, strict, "hone preset apply")
    if dry_run:
        for p in todo:
            console.print(f"would set {p.driver.describe()}: {_now(p)} -> {p.text}"
                          + (f" ({p.why})" if p.why else ""))
        return
    results = apply_planned(planned, f"hone preset apply {preset.name}")
    for r in results:
        p = r.planned
        if r.ok:
            console.print(f"{p.driver.describe()}: {_now(p)} -> {p.text}" + (f" ({p.why})" if p.why else ""))
            if p.setting.risk != "safe":
                err_console.print(f"warning: {p.name}={p.text} — {p.setting.risk}: {p.setting.spec.why}",
                                  style="yellow")
        else:
            err_console.print(f"FAILED {p.driver.describe()}: {r.message}", style="red")
    err_console.print("journaled; `hone status` lists the changes, `hone rollback` restores the originals", style="dim")
    failed = [r for r in results if not r.ok]
    if failed:
        raise KnobError(f"{len(failed)} of {len(results)} setting(s) were refused: "
                        + ", ".join(r.planned.name for r in failed),
                        hint="the others are applied; `hone rollback` undoes them")


@preset_group.command("verify")
@click.argument("name")
@click.option("--spec", "spec", metavar="FILE", required=True,
              help="The spec whose benchmark (and service) measures the preset.")
@binding_options
@click.option("--rounds", type=click.IntRange(1), default=6, show_default=True,
              help="Interleaved rounds of each block (confirmation, leave-one-out; at least 6).")
@click.option("--warmup", type=click.IntRange(0), default=1, show_default=True, help="Untimed rounds first.")
@click.option("--seed", type=int, default=0, show_default=True, help="Order of the arms in each round.")
@click.option("--threshold", type=float, default=0.01, show_default=True,
              help="Smallest change that matters (fraction).")
@click.option("--json", "json_path", metavar="FILE", default=None, help="Write the result (hone-preset-verify/1).")
@click.option("--save", "save", metavar="NAME", default=None,
              help="Write the kept settings as user preset NAME (STATE_DIR/presets/NAME.yaml, or -o).")
@click.option("-o", "--output", "output", metavar="FILE", default=None, help="Where --save writes the preset file.")
@click.option("--force", is_flag=True, help="Replace an existing preset file.")
@click.option("--strict", is_flag=True, help="Refuse (exit 2, nothing changed) when a daemon that changes settings "
              "on its own runs (tuned, bpftune, irqbalance, power daemons …).")
def verify_cmd(name: str, spec: str, configs: tuple[str, ...], restarts: tuple[str, ...], devices: tuple[str, ...],
               opt_in: tuple[str, ...], rounds: int, warmup: int, seed: int, threshold: float,
               json_path: str | None, save: str | None, output: str | None, force: bool, strict: bool) -> None:
    """Measure preset NAME against the current configuration with SPEC's benchmark, then keep
    only the settings whose leave-one-out ablation shows a gain; say which were dropped and
    why. Everything is restored at the end."""
    from hone.presets.verify import provenance, verify_preset
    from hone.presets.write import output_path

    stdout_for_data(json_path)
    if output is not None and save is None:
        raise click.UsageError("-o/--output goes with --save NAME")
    target = output_path(save, output) if save is not None else None
    if target is not None and target.exists() and not force:
        raise HoneError(f"{target}: exists; give --force to replace it")
    loaded = load_checked(spec)
    preset, binding, planned = _bound(name, configs, restarts, devices, opt_in, loaded)
    for p in planned:
        if p.status != "apply":
            err_console.print(f"not measured: {p.name} ({p.status}: {p.why})", style="dim")

    _check_conflicts([p for p in planned if p.status == "apply"], strict, "hone preset verify")

    def on_phase(what: str, message: str) -> None:
        err_console.print(f"[{what}] {message}", style="cyan")

    def on_run(round_no: int, arm: str, m: Any) -> None:
        if not m.ok:
            err_console.print(f"  round {round_no} {arm}: failed: {m.error}", style="yellow")

    outcome = verify_preset(preset, loaded, planned, rounds=rounds, warmup=warmup, seed=seed, threshold=threshold,
                            on_phase=on_phase, on_run=on_run)
    doc = outcome.to_json()
    from hone.report import preset_terminal

    console.print(preset_terminal.render_verify(doc))
    if json_path is not None:
        write_json(json_path, doc)
    if target is not None:
        _save_kept(outcome, binding, save or "", target, provenance(outcome))
    if outcome.restore_problems:
        from hone.core.errors import RestoreError

        raise RestoreError("; ".join(outcome.restore_problems), hint="fix the cause, then `hone rollback`")


def _check_conflicts(todo: list[Planned], strict: bool, verb: str) -> None:
    """Daemons that could change the preset's settings underneath: a warning each, or refused."""
    from hone.run.conflicts import check_conflicts_for

    check_conflicts_for({p.name: p.driver.ident() for p in todo}, strict=strict, verb=verb,
                        warn=lambda m: err_console.print(m, style="yellow"))


def _save_kept(outcome: Any, binding: Binding, name: str, target: Any, verified: str) -> None:
    from hone.presets.write import file_entry, preset_text, setting_entry, write_preset

    kept = [p for p in outcome.measured if p.name in outcome.kept]
    if not kept:
        err_console.print(f"nothing kept: {target} not written", style="yellow")
        return
    files = {}
    for p in kept:
        if p.setting.file is not None and p.setting.spec.file not in files:
            d = p.setting.file
            files[p.setting.spec.file] = file_entry(d.format, d.match, d.about, binding.files.get(p.setting.spec.file))
    doc: dict[str, Any] = {"preset": name, "version": 1,
                           "description": f"The settings of {outcome.preset.name} v{outcome.preset.version} measured"
                                          f" better here ({outcome.spec})",
                           "classes": list(outcome.preset.classes)}
    if files:
        doc["files"] = files
    doc["settings"] = [setting_entry(p, verified) for p in kept]
    text = preset_text(doc, f"Written by hone preset verify on {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %z}")
    write_preset(target, text, force=True)
    console.print(f"wrote preset {name} ({len(kept)} setting(s)): {target}")


@preset_group.command("define")
@click.argument("name")
@click.option("--from", "result", metavar="RESULT.json", required=True, help="A hone tune result (hone-tune/2).")
@click.option("--class", "classes", multiple=True, required=True, metavar="CLASS",
              help="Workload class the preset fits (repeatable).")
@click.option("--description", default=None, help="One line describing the preset.")
@click.option("--include", "include", multiple=True, metavar="PRESET", help="A preset to build on (repeatable).")
@click.option("--spec", "spec", metavar="FILE", default=None,
              help="The spec of RESULT when its 'spec' path no longer finds it.")
@click.option("-o", "--output", "output", metavar="FILE", default=None,
              help="Write here instead of STATE_DIR/presets/NAME.yaml.")
@click.option("--force", is_flag=True, help="Replace an existing preset file.")
def define_cmd(name: str, result: str, classes: tuple[str, ...], description: str | None, include: tuple[str, ...],
               spec: str | None, output: str | None, force: bool) -> None:
    """Turn a confirmed `hone tune` RESULT (its recommendation: the ablation's minimal
    configuration when it has one) into user preset NAME."""
    from hone.cli._persist import _from_result
    from hone.presets import CLASSES, load_catalogue
    from hone.presets.define import preset_from_tune
    from hone.presets.write import output_path, preset_text, write_preset
    from hone.report.base import load_result

    target = output_path(name, output)
    if target.exists() and not force:
        raise HoneError(f"{target}: exists; give --force to replace it")
    bad = [c for c in classes if c not in CLASSES]
    if bad:
        raise HoneError(f"--class {bad[0]}: expected one of {', '.join(CLASSES)}")
    catalogue = load_catalogue()
    if name in catalogue and catalogue[name].path != str(target):
        raise HoneError(f"preset {name!r} already exists ({catalogue[name].path}); choose another name")
    for base in include:
        if base not in catalogue:
            raise HoneError(f"--include {base}: no preset of that name", hint=f"known: {', '.join(catalogue)}")
    loaded, values, _ = _from_result(result, spec, check=False)
    data = load_result(result)
    doc, skipped = preset_from_tune(name, result, data, loaded, values, classes=list(classes),
                                    description=description, include=list(include))
    for why in skipped:
        err_console.print(f"left out {why}", style="yellow")
    if not doc["settings"]:
        raise HoneError(f"{result}: no sysctl, sysfs or file knob in the recommendation; no preset written")
    header = f"Written by hone preset define from {result} on {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %z}"
    write_preset(target, preset_text(doc, header), force=force)
    console.print(f"wrote preset {name} ({len(doc['settings'])} setting(s)): {target}")


__all__ = ["preset_group"]
