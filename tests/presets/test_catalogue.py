"""The catalogue: every preset file shipped validates and resolves, cites its source, carries
a rationale and an honest risk class; a bad file fails loading with one line naming it (the
checks can fail: each is shown failing on a broken copy)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hone.core.errors import HoneError, SpecError
from hone.knobs import danger_of, driver_for
from hone.knobs.risk import risk_of
from hone.presets import CLASSES, for_classes, load_catalogue
from hone.presets.catalogue import BUILTIN_DIR, read_preset_file
from hone.presets.model import Preset, RamShare
from hone.spec.models import FileKnobSpec, SysctlKnobSpec, SysfsKnobSpec

#: A setting's source names the published profile or documentation it comes from.
SOURCES = ("tuned: ", "A-Tune: ", "PostgreSQL docs: ", "MySQL docs: ", "Redis docs: ", "nginx docs: ", "Kafka docs: ")
REQUIRED = {"postgresql", "mysql", "redis", "nginx", "kafka", "throughput-server", "latency-server"}


def _files() -> list[Path]:
    return sorted(BUILTIN_DIR.glob("*.yaml"))


def check_catalogue(catalogue: dict[str, Preset]) -> list[str]:
    """Every problem of a resolved catalogue, as lines (empty: fine)."""
    problems = []
    for p in catalogue.values():
        if not p.settings:
            problems.append(f"{p.name}: no settings")
        for s in p.settings:
            spec = s.spec
            where = f"{p.name}: {s.name}"
            if not spec.source.startswith(SOURCES):
                problems.append(f"{where}: source {spec.source!r} names no known profile or documentation")
            if len(spec.why) < 15 or "\n" in spec.why:
                problems.append(f"{where}: expected a one-line rationale, got {spec.why!r}")
            text = "1" if isinstance(spec.value, RamShare) else str(spec.value)
            if spec.sysctl:
                model = SysctlKnobSpec(name=spec.sysctl, kind="sysctl", key=spec.sysctl)
            elif spec.sysfs:
                model = SysfsKnobSpec(name=spec.sysfs, kind="sysfs", path="/sys/" + spec.sysfs.replace("{device}", "x"))
            else:
                model = FileKnobSpec(name=s.name, kind="file", path="/x/y.conf", key=spec.key or "")
            # hone's durability table and the preset must agree: a trade-off is never "safe"
            marked = risk_of(model, text)
            if marked and spec.risk == "safe":
                problems.append(f"{where}={text}: hone.knobs.risk marks it ({marked}), the preset says safe")
            if danger_of(driver_for(model)):
                problems.append(f"{where}: a dangerous knob ({danger_of(driver_for(model))}) has no place in a preset")
            if spec.file and (s.file is None or not s.file.match):
                problems.append(f"{where}: its file declares no file names to bind by (match:)")
    return problems


def test_every_shipped_preset_file_validates_and_resolves() -> None:
    files = _files()
    assert len(files) >= 9
    for path in files:
        doc = read_preset_file(path)
        assert doc.preset == path.stem, f"{path.name}: preset: {doc.preset} (the file is named after the preset)"
    catalogue = load_catalogue(user=False)
    assert set(catalogue) >= REQUIRED
    assert check_catalogue(catalogue) == []
    for p in catalogue.values():
        assert set(p.classes) <= set(CLASSES)
    # every workload class but one or two has a preset; each built-in preset is listed by its class
    covered = {c for p in catalogue.values() for c in p.classes}
    assert len(covered) >= 9, sorted(set(CLASSES) - covered)


def test_the_checks_fail_on_a_bad_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "catalogue"
    shutil.copytree(BUILTIN_DIR, broken)
    monkeypatch.setattr("hone.presets.catalogue.BUILTIN_DIR", broken)
    text = (broken / "postgresql.yaml").read_text()
    # a durability trade-off called safe, and a source that cites nothing
    (broken / "postgresql.yaml").write_text(text.replace("    risk: durability\n", "")
                                           .replace('"PostgreSQL docs: wal-configuration (max_wal_size)"', "blog"))
    problems = check_catalogue(load_catalogue(user=False))
    assert any("synchronous_commit=off: hone.knobs.risk marks it" in p for p in problems), problems
    assert any("max_wal_size: source 'blog'" in p for p in problems), problems


@pytest.mark.parametrize(("change", "message"), [
    (("classes: [database-oltp, io-random]", "classes: [database]"), "classes: expected classes from"),
    (("  - sysctl: vm.swappiness\n", "  - sysctl: vm.swappiness\n    sysfs: x\n"), "expected exactly one of"),
    (('    value: "off"', "    value: off"), "quote it"),
    (("include: throughput-server", "include: nonesuch"), "include: no preset named 'nonesuch'"),
    (("version: 1", "version: one"), "version: expected"),
    (("    restart: true\n", "    restart: true\n    colour: blue\n"), "unknown key"),
])
def test_a_bad_preset_file_is_one_error_naming_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             change: tuple[str, str], message: str) -> None:
    broken = tmp_path / "catalogue"
    shutil.copytree(BUILTIN_DIR, broken)
    monkeypatch.setattr("hone.presets.catalogue.BUILTIN_DIR", broken)
    path = broken / "postgresql.yaml"
    old, new = change
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises((SpecError, HoneError)) as err:
        load_catalogue(user=False)
    assert str(path) in err.value.message and message in err.value.message, err.value.message
    assert "\n" not in err.value.message


def test_include_resolves_overrides_and_excludes_and_says_where_each_value_comes_from() -> None:
    catalogue = load_catalogue(user=False)
    latency = catalogue["latency-server"]
    origin = {s.name: (s.origin, s.value_text()) for s in latency.settings}
    assert origin["vm.swappiness"] == ("throughput-server", "10")  # inherited as is
    assert origin["vm.dirty_ratio"] == ("latency-server", "10")  # overridden (throughput-server: 40)
    assert "block/{device}/queue/read_ahead_kb" not in origin  # excluded
    hpc = {s.name: s.origin for s in catalogue["hpc-compute"].settings}  # two levels, re-added
    assert hpc["vm.swappiness"] == "throughput-server" and hpc["block/{device}/queue/read_ahead_kb"] == "hpc-compute"
    assert catalogue["postgresql"].tuned == "postgresql" and catalogue["redis"].tuned == "throughput-performance"


def test_an_include_cycle_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text("preset: a\nversion: 1\ndescription: x\nclasses: [io-random]\ninclude: b\n")
    (tmp_path / "b.yaml").write_text("preset: b\nversion: 1\ndescription: x\nclasses: [io-random]\ninclude: a\n")
    monkeypatch.setattr("hone.presets.catalogue.BUILTIN_DIR", tmp_path)
    with pytest.raises(HoneError, match="a cycle"):
        load_catalogue(user=False)


def test_for_classes_finds_presets_by_workload_class_best_fit_first() -> None:
    names = [p.name for p in for_classes(["database-oltp", "io-random"])]
    assert set(names[:2]) == {"mysql", "postgresql"}
    assert [p.name for p in for_classes(["message-queue"])] == ["kafka"]
    assert "redis" in [p.name for p in for_classes(["kv-cache"])]
    assert for_classes(["web-server"])[0].name == "nginx"
    with pytest.raises(HoneError, match="unknown workload class 'databases'"):
        for_classes(["databases"])


def test_preset_list_shows_the_catalogue(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("preset", "list")
    assert res.code == 0, res.err
    for name in REQUIRED:
        assert f"│ {name} " in res.out
    assert "postgresql.synchronous_commit" in res.out and "(durability)" in res.out
    only = hone("preset", "list", "--class", "message-queue")
    assert "│ kafka " in only.out and "│ redis " not in only.out
