"""Shared fixtures: an isolated state directory per test and an in-process CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pg import PgCluster, start_cluster

REPO = Path(__file__).resolve().parents[1]
HONE_BIN = str(Path(sys.executable).with_name("hone"))


@pytest.fixture(autouse=True)
def machine_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test is its own machine (HONE_MACHINE_DIR: the machine-wide lock and the list
    of state directories with changes), so test runs never block each other."""
    path = tmp_path_factory.mktemp("hone-machine")
    monkeypatch.setenv("HONE_MACHINE_DIR", str(path))
    return path


@pytest.fixture(autouse=True)
def state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, machine_dir: Path) -> Path:
    """Every test gets its own HONE_STATE_DIR (journal, studies)."""
    path = tmp_path_factory.mktemp("hone-state")
    monkeypatch.setenv("HONE_STATE_DIR", str(path))
    return path


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def hone(state_dir: Path):  # type: ignore[no-untyped-def]
    """Run the real ``hone`` console script in a subprocess: ``hone("run", spec)``."""

    def _run(*args: str, timeout: float = 300, cwd: str | os.PathLike[str] | None = None,
             env: dict[str, str] | None = None) -> CliResult:
        proc = subprocess.run(
            [HONE_BIN, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env={**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "200", **(env or {})},
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    return _run


def is_root() -> bool:
    return os.geteuid() == 0


def block_readahead() -> Path | None:
    """A real block device's read_ahead_kb (not a loop or ram disk), or None."""
    for dev in sorted(Path("/sys/block").iterdir()):
        path = dev / "queue" / "read_ahead_kb"
        if path.exists() and not dev.name.startswith(("loop", "ram")):
            return path
    return None


needs_root = pytest.mark.skipif(not is_root(), reason="changes kernel knobs; CI runs as root")


@pytest.fixture(scope="session")
def pg() -> Iterator[PgCluster]:
    """A throwaway PostgreSQL cluster on a loopback port for the whole session (tests/pg.py)."""
    if os.geteuid() != 0:
        pytest.skip("the throwaway cluster is created as the postgres user; needs root")
    try:
        with start_cluster() as cluster:
            yield cluster
    except RuntimeError as exc:
        pytest.fail(str(exc))
