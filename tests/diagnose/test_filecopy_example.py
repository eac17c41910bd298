"""examples/filecopy end to end (the UnixBench file-copy profile reproduced): one command builds nothing new but
profiles fcopy, finds the kernel-time share, proposes and runs tmpfs-vs-disk and
buffer-size experiments, and writes a report with tables and both flame graphs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.diagnose.conftest import REPO

pytestmark = pytest.mark.integration


def test_filecopy_doctor_run_end_to_end(hone, caps, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    example = tmp_path / "filecopy"
    shutil.copytree(REPO / "examples" / "filecopy", example, ignore=shutil.ignore_patterns("fcopy", "hone-doctor"))
    subprocess.run(["make", "-s", "-C", str(example), "fcopy"], check=True, timeout=60)
    res = hone("doctor", "hone.yaml", "--run", "--rounds", "6", "-r", "2", "--flame-seconds", "0.2", "-o", "out",
               cwd=example, timeout=240)
    assert res.code == 0, res.err
    out = example / "out"
    doc = json.loads((out / "doctor.json").read_text())
    rules = [f["rule"] for f in doc["findings"]]
    assert {"kernel-time", "filesystem", "small-io"} <= set(rules)  # their order follows the host's sys share
    assert doc["profile"]["derived"]["sys_share_pct"]["summary"]["mean"] >= 40
    by_title = {e["title"]: e for e in doc["experiments"]}
    assert set(by_title) >= {"buffer size"} and any(t.endswith("vs tmpfs") for t in by_title)
    buf = by_title["buffer size"]
    assert buf["comparisons"]["buf-4096"]["verdict"] == "faster"  # 16× fewer syscalls per byte
    for exp in doc["experiments"]:
        for c in exp["comparisons"].values():
            assert c["verdict"] in {"faster", "slower", "equivalent", "inconclusive"}
            inside = c["ci_pct"][0] > -1.0 and c["ci_pct"][1] < 1.0  # --threshold 1 (%)
            assert c["verdict"] != "equivalent" or inside
            assert c["ci_pct"][0] <= c["change_pct"] <= c["ci_pct"][1]
    md = (out / "report.md").read_text()
    assert "## Experiments" in md and "95% CI" in md and "| variant |" in md
    assert md.count("![") >= 3  # profile flame graph, the tmpfs/buffer flame graphs, differentials
    html = (out / "report.html").read_text()
    assert html.count('<object type="image/svg+xml"') >= 3
    assert "hone compare hone.yaml --variant" in res.out  # the exact next commands
    assert "bytes per read/write call" in md
