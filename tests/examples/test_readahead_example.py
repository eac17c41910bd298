"""examples/readahead: `hone run` on the shipped spec (a copy with shorter phases) runs the
read-ahead controller as its service on a loop device. The study itself has only param
knobs and takes no machine lock; the controller it starts takes it (it could not start
otherwise), switches the device and gives it back when the service stops."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import HONE_BIN, REPO, LoopFs

pytestmark = pytest.mark.integration


def test_the_controller_runs_as_the_service_of_a_param_only_study(
        loop_fs: LoopFs, tmp_path: Path, state_dir: Path, hone) -> None:  # type: ignore[no-untyped-def]
    example = tmp_path / "examples" / "readahead"
    shutil.copytree(REPO / "examples" / "readahead", example)
    (tmp_path / "build" / "examples").mkdir(parents=True)
    (tmp_path / "build" / "examples" / "readahead").symlink_to(loop_fs.root)
    spec = yaml.safe_load((example / "hone.yaml").read_text())
    cmd = spec["benchmark"]["command"]
    for flag, value in (("--phases", "2"), ("--rand-ops", "800"), ("--seq-mib", "512"), ("--budget-mib", "8")):
        cmd[cmd.index(flag) + 1] = value
    spec["benchmark"]["repeats"] = 1
    (example / "hone.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    original = loop_fs.readahead.read_text().strip()

    res = hone("run", example / "hone.yaml", "--set", "interval=0.1", "--set", "sequential_kb=512",
               env={"PATH": f"{Path(HONE_BIN).parent}{os.pathsep}{os.environ['PATH']}"})

    assert res.code == 0, res.out + res.err
    logs = sorted((state_dir / "services").glob("readahead-*/readahead-1.log"))
    log = logs[-1].read_text()
    assert "hone adapt readahead: watching" in log
    assert "-> 512 (sequential:" in log and "-> 16 (random:" in log, log
    assert f"back to {original}" in log
    assert loop_fs.readahead.read_text().strip() == original
    assert hone("status").out.strip() == "nothing changed by hone on this machine"
