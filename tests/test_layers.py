"""The layers of docs/architecture.md hold: import-linter's contracts (.importlinter) pass on
the tree, and catch a backward import when one is added."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path) -> subprocess.CompletedProcess[str]:
    # --no-cache: a cached graph of the real tree must not answer for the copy.
    return subprocess.run([str(LINT), str(REPO / ".importlinter"), "--no-cache"], cwd=src,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_every_contract() -> None:
    res = _lint(REPO / "src")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout


def test_a_backward_import_breaks_the_layers(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "hone", src / "hone", ignore=shutil.ignore_patterns("__pycache__"))
    knob = src / "hone" / "knobs" / "env.py"
    knob.write_text(knob.read_text() + "\nfrom hone.tune import storage as _storage  # noqa\n")
    res = _lint(src)
    assert res.returncode != 0
    assert "hone.knobs is not allowed to import hone.tune" in res.stdout
    assert "hone.knobs.env -> hone.tune.storage" in res.stdout


def test_stats_stays_pure(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "hone", src / "hone", ignore=shutil.ignore_patterns("__pycache__"))
    mod = src / "hone" / "stats" / "summary.py"
    mod.write_text(mod.read_text() + "\nfrom hone.core.errors import HoneError as _E  # noqa\n")
    res = _lint(src)
    assert res.returncode != 0 and "hone.stats.summary -> hone.core.errors" in res.stdout
