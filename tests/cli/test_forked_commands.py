"""The ``hone`` fixture forks commands from tests/zygote.py: what a command prints and returns
must be what the console script prints and returns."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import HONE_BIN, Zygote
from tests.procs import MARK_ENV, marked, new_mark


def _script(args: list[str], env: dict[str, str], cwd: str) -> tuple[int, str, str]:
    proc = subprocess.run([HONE_BIN, *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [
    ["status"],
    ["--version"],
    ["tune", "missing.yaml"],  # a user error: exit 2, one line on stderr
    ["tune", "bad.yaml"],  # a spec error naming the file and line, relative to the working directory
    ["rollback", "--no-such-option"],
])
def test_a_forked_command_prints_and_returns_what_the_console_script_does(
        zygote: Zygote | None, state_dir: Path, tmp_path: Path, args: list[str]) -> None:
    if zygote is None:
        pytest.skip("HONE_TEST_FORK=0: commands run from the console script")
    (tmp_path / "bad.yaml").write_text("name: x\nbenchmark: {command: [true]}\nknobs: 3\n")
    env = {**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "400"}
    forked = zygote.run(args, env, str(tmp_path), 60)
    assert (forked.code, forked.out, forked.err) == _script(args, env, str(tmp_path))
    assert forked.code == (0 if args[0] in ("status", "--version") else 2)


def test_a_forked_command_past_its_timeout_is_killed(zygote: Zygote | None, tmp_path: Path) -> None:
    if zygote is None:
        pytest.skip("HONE_TEST_FORK=0: commands run from the console script")
    spec = tmp_path / "hone.yaml"
    spec.write_text("name: slow\nbenchmark: {command: [sleep, '30'], timeout: 60}\n"
                    "metrics: [{name: t, extract: {regex: '(x)'}, goal: minimize}]\n")
    mark = new_mark()
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            zygote.run(["run", str(spec)], {**os.environ, MARK_ENV: mark}, str(tmp_path), 2)
    finally:  # hone killed -9 leaves its benchmark behind, as subprocess.run's timeout would
        for pid, _ in marked(mark):
            os.kill(pid, signal.SIGKILL)
