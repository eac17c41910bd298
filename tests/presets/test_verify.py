"""hone preset verify on a real PostgreSQL (the examples/postgresql spec in a private copy:
scale-1 tables, a free loopback port, short pgbench runs, the minimum 6 rounds): the preset is
measured against the current configuration, the leave-one-out ablation keeps only settings that
measured better, every other measured setting is named as dropped with its reason, the result
validates as hone-preset-verify/1, the kept settings become a user preset, and
postgresql.conf, the sysctl and the machine are as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hone.presets.catalogue import read_preset_file
from hone.report.formats import validate
from tests.conftest import REPO, is_root
from tests.net import free_port, listening

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not is_root(), reason="runs PostgreSQL as postgres and sets a sysctl")]
PG = Path("/usr/lib/postgresql/15/bin/postgres")
SWAPPINESS = Path("/proc/sys/vm/swappiness")
REASONS = {"no effect", "not shown to matter", "slower with it",
           "its gain did not hold: the kept settings did not beat the current configuration"}


@pytest.fixture
def example() -> Iterator[tuple[Path, Path, int]]:
    """A private copy of examples/postgresql with its cluster (scale 1): (spec, postgresql.conf, port)."""
    if not PG.exists() or shutil.which("pgbench") is None:
        pytest.skip("PostgreSQL 15 and pgbench are needed (Debian package postgresql)")
    root = Path(tempfile.mkdtemp(prefix="hone-preset-pg-"))
    root.chmod(0o755)
    try:
        dst = root / "examples" / "postgresql"
        shutil.copytree(REPO / "examples" / "postgresql", dst)
        port = free_port()
        doc = yaml.safe_load((dst / "hone.yaml").read_text().replace("25432", str(port)))
        command = doc["benchmark"]["command"]
        i = command.index("-T")
        command[i:i + 2] = ["-t", "100"]  # 4 clients × 100 transactions: well under a second
        warm = doc["service"]["warmup"]["command"]
        warm[warm.index("-t") + 1] = "100"
        doc["knobs"] = []  # the preset brings its own; postgresql.conf is bound with --config
        spec = dst / "hone.yaml"
        spec.write_text(yaml.safe_dump(doc, sort_keys=False))
        res = subprocess.run(["bash", str(dst / "setup.sh")], capture_output=True, text=True, timeout=300,
                             env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "SCALE": "1"})
        assert res.returncode == 0, res.stderr
        yield spec, root / "build" / "examples" / "postgresql" / "data" / "postgresql.conf", port
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_verify_keeps_only_settings_that_measured_better(hone, example, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf, port = example
    preset = tmp_path / "pg-two.yaml"
    preset.write_text(textwrap.dedent("""\
        preset: pg-two
        version: 1
        description: one setting with a large gain, one with none
        classes: [database-oltp]
        files:
          postgresql: {format: conf, match: [postgresql.conf]}
        settings:
          - {file: postgresql, key: synchronous_commit, value: "off", risk: durability,
             source: "PostgreSQL docs: non-durability", why: "commits return before their WAL is flushed"}
          - {sysctl: vm.swappiness, value: 11, source: "tuned: test", why: "no effect on an in-memory benchmark"}
        """))
    before = (conf.read_bytes(), SWAPPINESS.read_text())
    result, saved = tmp_path / "r.json", tmp_path / "kept.yaml"
    # 12 rounds: the fewest whose signed-rank test stays below 0.05 with any one round of fsync
    # timing the other way (at 8, one such round under the suite's load gave p = 0.055)
    args = ["preset", "verify", preset, "--spec", spec, "--config", f"postgresql={conf}", "--rounds", "12",
            "--json", result, "--save", "pg-kept", "-o", saved]
    shown = hone("preset", "show", preset, "--config", f"postgresql={conf}", "--json", "-")
    held = {s["name"]: s for s in json.loads(shown.out)["settings"]}["postgresql.synchronous_commit"]
    assert held["status"] == "held" and "--opt-in durability" in held["why_status"]  # not measured without it
    res = hone(*args, "--opt-in", "durability", timeout=900)
    assert res.code == 0, res.err[-3000:]
    doc = json.loads(result.read_text())
    assert validate(doc, str(result)).name == "hone-preset-verify/1"
    effects = {s["name"]: s for s in doc["settings"]}
    # the large gain is kept, and shows in the verdict
    assert "postgresql.synchronous_commit" in doc["kept"], doc["why"]
    assert effects["postgresql.synchronous_commit"]["effect"]["verdict"] == "faster"
    assert doc["kept_vs_current"]["verdict"] == "faster"
    # every measured setting is kept (measured better) or dropped with its reason
    dropped = {d["name"]: d for d in doc["dropped"]}
    for name, s in effects.items():
        assert (name in doc["kept"]) != (name in dropped), name
        if name in doc["kept"]:
            assert s["effect"]["verdict"] == "faster" or doc["ablation"]["recommended"] == "winner", s
        else:
            assert dropped[name]["reason"] in REASONS
    assert "kept" in res.out and ("dropped" in res.out or len(doc["kept"]) == 2)
    # the kept settings as a user preset, with the value measured and where
    kept = read_preset_file(saved)
    assert [s.name for s in kept.settings] == [n for n in effects if n in doc["kept"]]
    assert kept.files["postgresql"].path == str(conf.resolve())
    assert all(s.verified and "hone preset verify pg-two" in s.verified for s in kept.settings)
    # everything restored, nothing left running
    assert (conf.read_bytes(), SWAPPINESS.read_text()) == before
    assert not listening(port)
    assert "nothing changed by hone" in hone("status").out
