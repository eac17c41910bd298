"""hone preset define: a confirmed hone tune result becomes a user preset — its sysctl and file
knobs as settings (the file keeps its path and restart command as the default binding), the
others named as left out — that `hone preset list` shows beside the built-in ones and that can
build on them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from hone.presets.catalogue import read_preset_file
from tests.conftest import REPO

SAMPLE = REPO / "tests" / "report" / "formats" / "samples" / "hone-tune-2.json"


def _result(tmp_path: Path) -> Path:
    (tmp_path / "app.conf").write_text("workers = 1\n")
    (tmp_path / "hone.yaml").write_text(textwrap.dedent("""\
        name: app
        benchmark: {command: ['true']}
        metrics: [{name: wall_time}]
        knobs:
          - {name: vm.dirty_writeback_centisecs, kind: sysctl, values: [300, 600]}
          - {name: workers, kind: file, path: app.conf, key: workers, values: [1, 2, 4], restart: [touch, /tmp/x]}
          - {name: n, kind: param, values: [1, 2]}
        """))
    doc = json.loads(SAMPLE.read_text())
    doc.update(spec="hone.yaml", spec_name="app", recommended={"vm.dirty_writeback_centisecs": 600, "workers": 4,
                                                                "n": 2})
    doc["ablation"]["changes"][0]["knob"] = "workers"
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(doc))
    return path


def test_define_turns_a_tune_result_into_a_user_preset(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = _result(tmp_path)
    res = hone("preset", "define", "app-tuned", "--from", result, "--class", "web-server",
               "--include", "throughput-server")
    assert res.code == 0, res.err
    assert "left out n: a param knob" in res.err
    path = state_dir / "presets" / "app-tuned.yaml"
    doc = read_preset_file(path)
    assert [s.name for s in doc.settings] == ["vm.dirty_writeback_centisecs", "app.workers"]
    assert doc.settings[1].value == "4" and doc.settings[1].restart
    assert doc.files["app"].path == str(tmp_path / "app.conf") and doc.files["app"].restart == ["touch", "/tmp/x"]
    assert all(s.source.startswith(f"hone tune {result}") and s.verified for s in doc.settings)
    assert "worth" in doc.settings[1].why  # its own effect from the result's ablation

    listed = json.loads(hone("preset", "list", "--json", "-").out)
    mine = next(p for p in listed if p["name"] == "app-tuned")
    assert mine["user"] and mine["include"] == ["throughput-server"] and mine["settings"] == 7
    shown = json.loads(hone("preset", "show", "app-tuned", "--json", "-").out)
    rows = {s["name"]: s for s in shown["settings"]}
    assert rows["app.workers"]["current"] == "1" and rows["app.workers"]["status"] == "apply"  # bound by default
    assert rows["vm.swappiness"]["from"] == "throughput-server"

    again = hone("preset", "define", "app-tuned", "--from", result, "--class", "web-server")
    assert again.code == 2 and "exists; give --force" in again.err
    clash = hone("preset", "define", "postgresql", "--from", result, "--class", "web-server")
    assert clash.code == 2 and "preset 'postgresql' already exists" in clash.err
    bad = hone("preset", "define", "x", "--from", result, "--class", "databases")
    assert bad.code == 2 and "--class databases: expected one of" in bad.err
