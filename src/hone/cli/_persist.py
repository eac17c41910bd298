"""``hone export`` and ``hone verify``: confirmed settings written for boot, and checked."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hone.cli import main
from hone.cli._common import console, err_console, load_checked, stdout_for_data, write_json
from hone.core.errors import DriftError, HoneError

if TYPE_CHECKING:
    from hone.run.persist import Setting
    from hone.spec.loader import LoadedSpec


def _is_result(path: str) -> bool:
    """A JSON document (a hone result) rather than a spec (``.yaml``/``.yml``, even one
    written as a YAML flow mapping) or a sysctl.d file."""
    if Path(path).suffix in (".yaml", ".yml"):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip()
    except FileNotFoundError:
        raise HoneError(f"{path}: no such file") from None
    except OSError as exc:
        raise HoneError(f"{path}: cannot read: {exc.strerror}") from None
    return head.startswith(b"{")


def _result_spec(result: str, data: dict[str, Any], spec: str | None) -> Path:
    """The spec a tune result was made with: --spec, else its ``spec`` field as given (from
    the current directory, then from the result's directory)."""
    if spec is not None:
        return Path(spec)
    given = Path(data["spec"])
    for candidate in (given, Path(result).parent / given):
        if candidate.is_file():
            return candidate
    raise HoneError(f"{result}: field 'spec': {given} not found (from here or from {Path(result).parent})",
                    hint="give the spec with --spec FILE")


def _from_result(result: str, spec: str | None, check: bool) -> tuple[LoadedSpec, dict[str, Any], dict[str, str]]:
    """The spec, the recommended values (typed) and each one's source, from a tune result."""
    from hone.report.formats import load_tune_result
    from hone.spec import load_spec
    from hone.tune.start import recommended_values

    data = load_tune_result(result)
    if data["recommended"] is None:
        raise HoneError(f"{result}: field 'recommended' is null: the tune kept the current configuration"
                        f" ({data.get('verdict')}), there is nothing to export or verify")
    path = _result_spec(result, data, spec)
    loaded = load_checked(path) if check else load_spec(path)
    values: dict[str, Any] = recommended_values(loaded, data, result, str(path))
    return loaded, values, {n: f"{result}: recommended.{n}" for n in values}


def _is_preset(source: str) -> bool:
    """A preset: a preset file, or the name of one in the catalogue (and no file of that name)."""
    from hone.presets.catalogue import is_preset_file, load_catalogue

    if is_preset_file(source):
        return True
    return not Path(source).exists() and source in load_catalogue()


def _preset_settings(source: str, sets: tuple[str, ...], spec: str | None, bound: PresetOptions,
                     check: bool) -> tuple[list[Setting], str, str | None]:
    """The settings a preset holds on this machine (applicable or already set; risky ones only
    when opted in), a line naming it, and its tuned profile."""
    from hone.presets import get_preset
    from hone.presets.bind import bind, plan
    from hone.run.persist import Setting
    from hone.spec import load_spec

    if sets:
        raise HoneError(f"--set goes with a spec or a tune result, not the preset {source}")
    preset = get_preset(source)
    loaded = (load_checked(spec) if check else load_spec(spec)) if spec is not None else None
    binding = bind(preset, configs=bound.configs, devices=bound.devices, opt_in=bound.opt_in, spec=loaded)
    settings = []
    for p in plan(preset, binding):
        if p.status in ("apply", "already"):
            origin = "" if p.setting.origin == preset.name else f", from {p.setting.origin}"
            settings.append(Setting(p.name, p.driver, p.text or "", f"preset {preset.name} v{preset.version}{origin}",
                                    at_least=p.setting.spec.at_least))
        else:
            err_console.print(f"skipped {p.name}: {p.why}", style="yellow")
    if not settings:
        raise HoneError(f"preset {preset.name}: no setting applies on this machine (see `hone preset show {source}`)")
    return settings, f"preset {preset.name} v{preset.version}", preset.tuned


class PresetOptions:
    """--config/--device/--opt-in of export and verify: how a PRESET source meets this machine."""

    def __init__(self, configs: tuple[str, ...] = (), devices: tuple[str, ...] = (),
                 opt_in: tuple[str, ...] = ()) -> None:
        self.configs, self.devices, self.opt_in = configs, devices, opt_in

    def given(self) -> bool:
        return bool(self.configs or self.devices or self.opt_in)


def _preset_options(f: Any) -> Any:
    f = click.option("--opt-in", "opt_in", multiple=True, metavar="RISK|SETTING",
                     help="PRESET: also its settings of this risk class or this setting (repeatable).")(f)
    f = click.option("--device", "devices", multiple=True, metavar="DEV",
                     help="PRESET: the block device its {device} settings apply to (repeatable).")(f)
    f = click.option("--config", "configs", multiple=True, metavar="NAME=PATH",
                     help="PRESET: where its config file NAME is (repeatable).")(f)
    return f


def _settings(source: str, sets: tuple[str, ...], spec: str | None, check: bool,
              bound: PresetOptions | None = None) -> tuple[list[Setting], str]:
    """The settings of SOURCE (a tune result, a spec with --set, or a preset) and a line naming it."""
    from hone.run.configure import parse_assignments
    from hone.run.persist import spec_setting
    from hone.spec import load_spec

    bound = bound or PresetOptions()
    if _is_preset(source):
        settings, what, _ = _preset_settings(source, sets, spec, bound, check)
        return settings, what
    if bound.given():
        raise HoneError("--config, --device and --opt-in go with a PRESET source")
    if _is_result(source):
        loaded, values, sources = _from_result(source, spec, check)
        what = f"hone tune result {source} (spec {loaded.path})"
    else:
        if spec is not None:
            raise HoneError(f"--spec {spec}: only with a tune result; {source} is a spec")
        if not sets:
            raise HoneError(f"{source}: a spec needs the values to use: --set NAME=VALUE")
        loaded = load_checked(source) if check else load_spec(source)
        values, sources = {}, {}
        what = f"spec {source}"
    extra = parse_assignments(loaded, list(sets))
    values.update(extra)
    sources.update({n: f"--set {n}" for n in extra})
    settings = [spec_setting(loaded.spec.knob(n), loaded.spec.knob(n).format_value(v), sources[n])
                for n, v in values.items()]
    return settings, what


def _note_skipped(skipped: list[Setting], why: str) -> None:
    for s in skipped:
        err_console.print(f"skipped {s.name} ({s.kind} knob): {why}", style="yellow")


@main.command("export")
@click.argument("source", metavar="SPEC|RESULT|PRESET", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Knob value (repeatable): with a spec, the settings; with a result, on top of its recommendation.")
@click.option("--spec", "spec", metavar="FILE", default=None,
              help="The spec of a tune RESULT when its 'spec' path no longer finds it.")
@click.option("--sysctl-d", "sysctl_d", metavar="FILE", default=None,
              help="Write the sysctl knobs as a sysctl.d file (`sysctl -p FILE` applies it; boot: /etc/sysctl.d/).")
@click.option("--config-diff", "config_diff", metavar="FILE", default=None,
              help="Write a unified diff of every file knob's config file to its content with the settings"
                   " (`patch -d / -p1 < FILE` applies it).")
@click.option("--tuned-profile", "tuned_dir", metavar="DIR", default=None,
              help="Write a tuned profile: DIR/tuned.conf with [sysctl], [vm] and per-device [disk] sections"
                   " (`tuned-adm profile NAME` with DIR in /etc/tuned).")
@click.option("--tuned-include", "tuned_include", metavar="PROFILE", default=None,
              help="The tuned profile DIR builds on (include=); default: the preset's own, 'none' for none.")
@_preset_options
def export_cmd(source: str, sets: tuple[str, ...], spec: str | None, sysctl_d: str | None,
               config_diff: str | None, tuned_dir: str | None, tuned_include: str | None,
               configs: tuple[str, ...], devices: tuple[str, ...], opt_in: tuple[str, ...]) -> None:
    """Write the confirmed settings of a tune RESULT (its recommendation), of SPEC with --set,
    or of a PRESET (bound with --config/--device, risky settings with --opt-in) in the form the
    system re-applies at boot. Nothing but FILE (or DIR/tuned.conf) is written; an existing one
    under /etc is journaled first (`hone rollback` restores it)."""
    from hone.run.persist import config_diff_text, header_text, sysctl_d_text, tuned_profile_text, write_output

    if sum(x is not None for x in (sysctl_d, config_diff, tuned_dir)) != 1:
        raise click.UsageError("give one of --tuned-profile DIR, --sysctl-d FILE or --config-diff FILE")
    if tuned_include is not None and tuned_dir is None:
        raise click.UsageError("--tuned-include goes with --tuned-profile DIR")
    bound = PresetOptions(configs, devices, opt_in)
    tuned_base = None
    if _is_preset(source):
        settings, what, tuned_base = _preset_settings(source, sets, spec, bound, check=True)
    else:
        settings, what = _settings(source, sets, spec, check=True, bound=bound)
    header = [header_text(f"Written by hone export from the {what}"),
              f"on {dt.datetime.now().astimezone().isoformat(timespec='seconds')}"]
    if tuned_dir is not None:
        include = tuned_base if tuned_include is None else (None if tuned_include == "none" else tuned_include)
        if include is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", include):
            raise HoneError(f"--tuned-include {include}: expected a tuned profile name")
        out, kind = _tuned_conf(tuned_dir), "kernel"
        text, skipped = tuned_profile_text(settings, header, f"hone: {what}", include)
        why = "a config-file key: tuned has no plugin for it (use --config-diff)"
    elif sysctl_d is not None:
        out, kind = sysctl_d, "sysctl"
        text, skipped = sysctl_d_text(settings, header)
        why = "not a sysctl (only sysctl knobs go into a sysctl.d file)"
    else:
        out, kind = config_diff, "file"
        text, skipped = config_diff_text(settings, header)
        why = "not a local file knob (only their config files are diffed)"
    _note_skipped(skipped, why)
    if len(skipped) == len(settings):
        raise HoneError(f"{source}: no {kind} knob among the settings ({', '.join(s.name for s in settings)});"
                        f" {out} not written")
    if tuned_dir is not None:
        Path(tuned_dir).mkdir(exist_ok=True)
    journaled = write_output(out, text.encode(), "hone export")
    count = len(settings) - len(skipped)
    note = " (the file it replaced is journaled: `hone rollback` restores it)" if journaled else ""
    console.print(f"wrote {out}: {count} {kind} setting(s){note}")


def _tuned_conf(directory: str) -> str:
    """DIR/tuned.conf; DIR may be new, its parent must exist."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise HoneError(f"--tuned-profile {directory}: not a directory")
    if not d.parent.is_dir():
        raise HoneError(f"--tuned-profile {directory}: the directory {d.parent} does not exist")
    return str(d / "tuned.conf")


def _verify_settings(source: str, sets: tuple[str, ...], spec: str | None,
                     bound: PresetOptions | None = None) -> list[Setting]:
    from hone.run.persist import read_sysctl_d

    bound = bound or PresetOptions()
    if _is_preset(source) or _is_result(source) or Path(source).suffix in (".yaml", ".yml"):
        settings, _ = _settings(source, sets, spec, check=False, bound=bound)
        system = [s for s in settings if s.driver.changes_system]
        _note_skipped([s for s in settings if not s.driver.changes_system],
                      "exists only inside a benchmark run, nothing to read")
        return system
    if sets or spec is not None or bound.given():
        raise HoneError(f"{source}: --set, --spec, --config, --device and --opt-in do not go with a sysctl.d file")
    return read_sysctl_d(source)


@main.command("verify")
@click.argument("source", metavar="FILE|RESULT|SPEC|PRESET", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Expected knob value (repeatable): with a spec, the settings; with a result, on top of it.")
@click.option("--spec", "spec", metavar="FILE", default=None,
              help="The spec of a tune RESULT when its 'spec' path no longer finds it.")
@click.option("--json", "json_path", metavar="FILE", default=None, help="Write the checks as JSON (- = stdout).")
@_preset_options
def verify_cmd(source: str, sets: tuple[str, ...], spec: str | None, json_path: str | None,
               configs: tuple[str, ...], devices: tuple[str, ...], opt_in: tuple[str, ...]) -> None:
    """Check that each knob still holds its expected value: every key of a sysctl.d FILE,
    the recommendation of a tune RESULT (a JSON file), SPEC (.yaml) with --set, or a PRESET
    (its settings bound with --config/--device; risky ones with --opt-in).

    Per knob: expected, actual, where the expectation comes from, and ok / drifted /
    unreadable. Exit 0 when every knob is ok, 5 when one drifted or cannot be read.
    Changes nothing."""
    from hone.report import verify_terminal
    from hone.run.persist import verify

    stdout_for_data(json_path)
    checks = verify(_verify_settings(source, sets, spec, PresetOptions(configs, devices, opt_in)))
    bad = [c for c in checks if c.status != "ok"]
    doc = {"format": "hone-verify/1", "source": source, "ok": not bad, "checks": [c.to_dict() for c in checks]}
    console.print(verify_terminal.render(doc))
    if json_path is not None:
        write_json(json_path, doc)
    if bad:
        raise DriftError(f"{len(bad)} of {len(checks)} setting(s) not as expected: "
                         + ", ".join(f"{c.name} ({c.status})" for c in bad))
    console.print(f"all {len(checks)} setting(s) hold their expected values")


__all__ = ["export_cmd", "verify_cmd"]
