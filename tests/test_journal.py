"""The journal: originals before changes, rollback after kill -9, one process at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from hone.errors import LockedError
from hone.journal import Journal, StateLock
from hone.knobs import driver_for
from hone.spec.models import FileKnob
from tests.conftest import HONE_BIN, needs_root


def _block_queue_knob() -> Path | None:
    for dev in sorted(Path("/sys/block").iterdir()):
        path = dev / "queue" / "read_ahead_kb"
        if path.exists() and not dev.name.startswith(("loop", "ram")):
            return path
    return None


def _other(value: str, choices: list[str]) -> str:
    return next(c for c in choices if c != value)


@needs_root
def test_kill_9_mid_run_then_rollback_restores_sysctl_sysfs_file_script(tmp_path: Path, state_dir: Path) -> None:
    readahead = _block_queue_knob()
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if readahead is None or not thp.exists():
        pytest.skip("needs a block device queue and THP in sysfs")
    conf = tmp_path / "app.conf"
    conf.write_text("# app\nworkers = 4   # threads\ncache = 64MB\n")
    script_file = tmp_path / "script-value"
    script_file.write_text("alpha")
    started = tmp_path / "started"

    originals = {
        "swappiness": Path("/proc/sys/vm/swappiness").read_text().strip(),
        "readahead": readahead.read_text().strip(),
        "thp": thp.read_text().split("[")[1].split("]")[0],
        "conf": conf.read_bytes(),
        "script": "alpha",
    }
    new = {
        "swappiness": str(int(originals["swappiness"]) % 100 + 1),
        "readahead": _other(originals["readahead"], ["256", "512"]),
        "thp": _other(originals["thp"], ["madvise", "never"]),
    }
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark:
          command: [sh, -c, "touch {started}; sleep 60"]
          timeout: 120
        knobs:
          - {{name: vm.swappiness, kind: sysctl, range: [0, 100]}}
          - {{name: readahead, kind: sysfs, path: {readahead}, values: [128, 256, 512]}}
          - {{name: thp, kind: sysfs, path: {thp}, values: [always, madvise, never]}}
          - {{name: workers, kind: file, path: {conf}, key: workers, range: [1, 64]}}
          - name: label
            kind: script
            get: [cat, {script_file}]
            set: [sh, -c, 'printf %s "$1" > "$0"', {script_file}, $value]
            values: [alpha, beta]
        """))
    env = {**os.environ, "HONE_STATE_DIR": str(state_dir)}
    proc = subprocess.Popen(
        [HONE_BIN, "run", str(spec), "--set", f"vm.swappiness={new['swappiness']}",
         "--set", f"readahead={new['readahead']}", "--set", f"thp={new['thp']}",
         "--set", "workers=32", "--set", "label=beta"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.time() + 60
        while not started.exists():
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.time() < deadline, "benchmark never started"
            time.sleep(0.05)
        # Everything is changed now.
        assert Path("/proc/sys/vm/swappiness").read_text().strip() == new["swappiness"]
        assert readahead.read_text().strip() == new["readahead"]
        assert f"[{new['thp']}]" in thp.read_text()
        assert "workers = 32   # threads" in conf.read_text()
        assert script_file.read_text() == "beta"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        subprocess.run(["pkill", "-f", f"touch {started}"], check=False)
    assert len(Journal(state_dir).active()) == 5

    status = subprocess.run([HONE_BIN, "status"], env=env, capture_output=True, text=True, timeout=60)
    assert "sysctl:vm.swappiness" in status.stdout

    rb = subprocess.run([HONE_BIN, "rollback"], env=env, capture_output=True, text=True, timeout=60)
    assert rb.returncode == 0, rb.stderr
    assert Path("/proc/sys/vm/swappiness").read_text().strip() == originals["swappiness"]
    assert readahead.read_text().strip() == originals["readahead"]
    assert f"[{originals['thp']}]" in thp.read_text()
    assert conf.read_bytes() == originals["conf"]
    assert script_file.read_text() == originals["script"]
    # Idempotent: a second rollback has nothing to do.
    again = subprocess.run([HONE_BIN, "rollback"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "nothing to restore" in again.stdout


def test_original_is_on_disk_before_the_change(tmp_path: Path, state_dir: Path) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("x = 1\n")
    driver = driver_for(FileKnob(name="x", kind="file", path=str(conf), key="x", range=[1, 9]))
    journal = Journal(state_dir)
    journal.write(driver, "5")
    journal.write(driver, "7")
    records = [json.loads(line) for line in (state_dir / "journal.jsonl").read_text().splitlines()]
    assert [r["op"] for r in records] == ["original", "set", "set"]
    assert records[0]["snapshot"]["value"] == "1"
    assert conf.read_text() == "x = 7\n"
    outcomes = journal.restore()
    assert [o.ok for o in outcomes] == [True]
    assert conf.read_text() == "x = 1\n"
    assert not (state_dir / "journal.jsonl").exists()  # archived once all is restored
    assert (state_dir / "journal-history.jsonl").exists()


def test_torn_last_line_is_ignored(tmp_path: Path, state_dir: Path) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("x = 1\n")
    driver = driver_for(FileKnob(name="x", kind="file", path=str(conf), key="x", range=[1, 9]))
    journal = Journal(state_dir)
    journal.write(driver, "3")
    with (state_dir / "journal.jsonl").open("a") as fh:
        fh.write('{"op": "orig')  # killed mid-append
    assert len(journal.active()) == 1
    journal.restore()
    assert conf.read_text() == "x = 1\n"


def test_second_process_gets_a_clear_lock_error(state_dir: Path) -> None:
    with StateLock(state_dir, purpose="test"), pytest.raises(LockedError, match=r"another hone .*pid \d+"):
        StateLock(state_dir).acquire()
    StateLock(state_dir).acquire().release()  # free again


def test_lock_is_freed_when_the_holder_is_killed(state_dir: Path) -> None:
    code = (
        "import time; from pathlib import Path; from hone.journal import StateLock\n"
        f"lock = StateLock(Path({str(state_dir)!r})).acquire(); print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([os.sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    with pytest.raises(LockedError):
        StateLock(state_dir).acquire()
    proc.kill()
    proc.wait()
    StateLock(state_dir).acquire().release()
