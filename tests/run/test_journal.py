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

from hone.core.errors import LockedError
from hone.knobs import driver_for
from hone.run.journal import Journal, MachineLock
from hone.spec.models import FileKnobSpec
from tests.conftest import HONE_BIN, block_readahead, needs_root


def _other(value: str, choices: list[str]) -> str:
    return next(c for c in choices if c != value)


@needs_root
def test_kill_9_mid_run_then_rollback_restores_sysctl_sysfs_file_script(tmp_path: Path, state_dir: Path) -> None:
    readahead = block_readahead()
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
    env = {**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "400"}
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


@pytest.fixture
def locked(machine_dir: Path):  # type: ignore[no-untyped-def]
    """This test process holds the machine lock (journal changes need it)."""
    with MachineLock(machine_dir, purpose="test"):
        yield


def test_original_is_on_disk_before_the_change(tmp_path: Path, state_dir: Path, locked: None) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("x = 1\n")
    driver = driver_for(FileKnobSpec(name="x", kind="file", path=str(conf), key="x", range=[1, 9]))
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


def test_torn_last_line_is_ignored(tmp_path: Path, state_dir: Path, locked: None) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("x = 1\n")
    driver = driver_for(FileKnobSpec(name="x", kind="file", path=str(conf), key="x", range=[1, 9]))
    journal = Journal(state_dir)
    journal.write(driver, "3")
    with (state_dir / "journal.jsonl").open("a") as fh:
        fh.write('{"op": "orig')  # killed mid-append
    assert len(journal.active()) == 1
    journal.restore()
    assert conf.read_text() == "x = 1\n"


def _holder(machine_dir: Path) -> subprocess.Popen[str]:
    """Another process that holds the machine lock until killed."""
    code = (
        "import time; from pathlib import Path; from hone.run.journal import MachineLock\n"
        f"lock = MachineLock(Path({str(machine_dir)!r}), purpose='test holder').acquire()\n"
        "print('locked', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([os.sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_second_process_gets_a_clear_lock_error_naming_the_holder(machine_dir: Path) -> None:
    proc = _holder(machine_dir)
    try:
        with pytest.raises(LockedError, match=r"another hone .*pid \d+: test holder"):
            MachineLock(machine_dir).acquire()
    finally:
        proc.kill()
        proc.wait()
    MachineLock(machine_dir).acquire().release()  # free again


def test_lock_is_freed_when_the_holder_is_killed(machine_dir: Path) -> None:
    proc = _holder(machine_dir)
    with pytest.raises(LockedError):
        MachineLock(machine_dir).acquire()
    proc.kill()
    proc.wait()
    MachineLock(machine_dir).acquire().release()


# ---------------------------------------------------------------- a journal that cannot lose an original


def _conf_spec(tmp_path: Path, restart: list[str] | None = None, body: str = "x = 10\n") -> tuple[Path, Path]:
    conf = tmp_path / "app.conf"
    conf.write_text(body)
    spec = tmp_path / "hone.yaml"
    extra = f", restart: {json.dumps(restart)}" if restart else ""
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [sh, -c, 'echo score: 1'], timeout: 30}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}}}]
        knobs:
          - {{name: x, kind: file, path: {conf}, key: x, range: [1, 100]{extra}}}
        """))
    return spec, conf


def test_a_torn_last_line_does_not_swallow_the_next_original(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf = _conf_spec(tmp_path)
    # What a full disk leaves: 24 KB of an original record, no newline.
    torn = json.dumps({"v": 2, "op": "original", "res": "file:/x", "snapshot": {"bytes_b64": "A" * 40000}})
    (state_dir / "journal.jsonl").write_text(torn[:24000])
    res = hone("apply", spec, "--set", "x=20")
    assert res.code == 0, res.err
    assert conf.read_text() == "x = 20\n"
    status = hone("status")
    assert "x=10" in status.out and "x=20" in status.out, status.out
    assert "unreadable line skipped" in status.err
    back = hone("rollback")
    assert back.code == 0, back.err
    assert f"restored file:{conf}" in back.out
    assert conf.read_text() == "x = 10\n"


def test_foreign_json_lines_are_skipped_with_a_warning(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf = _conf_spec(tmp_path)
    assert hone("apply", spec, "--set", "x=30").code == 0
    with (state_dir / "journal.jsonl").open("a") as fh:
        fh.write('123\nnull\n"text"\n{"op": "original"}\n{"no": "op"}\n')
    status = hone("status")
    assert status.code == 0 and "Traceback" not in status.err
    assert "x=30" in status.out and "not a journal record" in status.err
    back = hone("rollback")
    assert back.code == 0 and "Traceback" not in back.err, back.err
    assert conf.read_text() == "x = 10\n"


def _mount(kind_args: list[str], point: Path) -> None:
    subprocess.run(["mount", *kind_args, str(point)], check=True, timeout=30)


def _umount(point: Path) -> None:
    subprocess.run(["umount", "-l", str(point)], check=False, timeout=30)


@needs_root
def test_full_state_dir_refuses_before_changing_and_never_tears_the_journal(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "full-state"
    state.mkdir()
    _mount(["-t", "tmpfs", "-o", "size=512k", "tmpfs"], state)
    try:
        spec, conf = _conf_spec(tmp_path, body="x = 10\n" + "# padding\n" * 8000)  # an 80 KB config
        before = conf.read_bytes()
        filler = state / "filler"
        with filler.open("wb") as fh:  # leave ~100 KB: the preflight must see it is too little
            fh.write(b"\0" * (412 * 1024))
        res = hone("apply", spec, "--set", "x=20", env={"HONE_STATE_DIR": str(state)})
        assert res.code == 2 and "Traceback" not in res.err, res.err
        assert "KiB free" in res.err and "nothing was changed" in res.err
        assert conf.read_bytes() == before
        # An append that runs out of space is cut back: the journal holds whole records only.
        journal = Journal(state)
        (state / "journal.jsonl").write_text('{"op": "set", "res": "r", "value": "1"}\n')
        with MachineLock(), pytest.raises(Exception, match="disk is full"):
            journal._append({"op": "set", "res": "r", "value": "x" * (400 * 1024)})
        assert (state / "journal.jsonl").read_text() == '{"op": "set", "res": "r", "value": "1"}\n'
    finally:
        _umount(state)


@needs_root
def test_read_only_state_dir_refuses_apply_but_rollback_still_restores(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "ro-state"
    state.mkdir()
    spec, conf = _conf_spec(tmp_path)
    env = {"HONE_STATE_DIR": str(state)}
    assert hone("apply", spec, "--set", "x=20", env=env).code == 0
    _mount(["--bind", str(state)], state)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(state)], check=True, timeout=30)
        res = hone("apply", spec, "--set", "x=30", env=env)
        assert res.code == 2 and "not writable" in res.err and "nothing was changed" in res.err, res.err
        assert conf.read_text() == "x = 20\n"
        back = hone("rollback", env=env)
        assert back.code == 0 and "Traceback" not in back.err, back.err
        assert conf.read_text() == "x = 10\n"
        assert "cannot write the journal" in back.err  # said, not hidden
    finally:
        _umount(state)
    again = hone("rollback", env=env)  # writable again: the restore is recorded, nothing to do
    assert again.code == 0 and conf.read_text() == "x = 10\n"
    assert hone("status", env=env).out.strip() == "nothing changed by hone on this machine"


# ---------------------------------------------------------------- one machine, several state directories


def test_a_second_hone_with_another_state_dir_is_refused_while_one_changes_the_machine(
        hone, tmp_path: Path, machine_dir: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("x = 10\n")
    started = tmp_path / "started"
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [sh, -c, 'touch "$0"; sleep 30', {started}], timeout: 60}}
        knobs:
          - {{name: x, kind: file, path: {conf}, key: x, range: [1, 100]}}
        """))
    env_a = {**os.environ, "HONE_STATE_DIR": str(tmp_path / "a"), "HONE_MACHINE_DIR": str(machine_dir)}
    first = subprocess.Popen([HONE_BIN, "run", str(spec), "--set", "x=15"], env=env_a,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while not started.exists():
            assert first.poll() is None and time.time() < deadline
            time.sleep(0.05)
        second = hone("run", spec, "--set", "x=20", env={"HONE_STATE_DIR": str(tmp_path / "b")})
        assert second.code == 2, second.err
        assert "another hone process is changing this machine" in second.err
        assert f"pid {first.pid}: hone run" in second.err and str(tmp_path / "a") in second.err
        assert conf.read_text() == "x = 15\n"
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    assert conf.read_text() == "x = 10\n"


def test_a_change_journaled_in_another_state_dir_is_not_taken_for_an_original(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf = _conf_spec(tmp_path)
    a, b = {"HONE_STATE_DIR": str(tmp_path / "a")}, {"HONE_STATE_DIR": str(tmp_path / "b")}
    assert hone("apply", spec, "--set", "x=20", env=a).code == 0
    refused = hone("apply", spec, "--set", "x=30", env=b)
    assert refused.code == 2, refused.err
    assert f"file:{conf} was changed by hone with the state directory {tmp_path / 'a'}" in refused.err
    assert f"HONE_STATE_DIR={tmp_path / 'a'} hone rollback" in refused.err
    assert conf.read_text() == "x = 20\n"
    run_b = hone("run", spec, "--set", "x=40", env=b)
    assert run_b.code == 2 and conf.read_text() == "x = 20\n"
    status_b = hone("status", env=b)
    assert f"also changed by hone with the state directory {tmp_path / 'a'}: file:{conf}" in status_b.out
    assert hone("rollback", env=a).code == 0 and conf.read_text() == "x = 10\n"
    assert hone("apply", spec, "--set", "x=30", env=b).code == 0
    assert hone("rollback", env=b).code == 0 and conf.read_text() == "x = 10\n"


# ---------------------------------------------------------------- restarts while restoring


def _flaky_restart(tmp_path: Path) -> tuple[list[str], Path, Path]:
    """A restart that fails (once, or while FLAG exists with 'always') and logs successes."""
    flag, log = tmp_path / "flag", tmp_path / "restarts.log"
    script = ('if [ -e "$0" ]; then grep -q always "$0" || rm "$0"; echo "server still stopping" >&2; exit 1; fi;'
              ' echo ok >> "$1"')
    return ["sh", "-c", script, str(flag), str(log)], flag, log


def test_a_restart_that_fails_once_while_restoring_is_retried(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    restart, flag, log = _flaky_restart(tmp_path)
    spec, conf = _conf_spec(tmp_path, restart)
    # The benchmark leaves the server "still stopping" once: the restore's first restart fails.
    spec.write_text(spec.read_text().replace("'echo score: 1'", f"'echo once > {flag}; echo score: 1'"))
    res = hone("run", spec, "--set", "x=20")
    assert res.code == 0, res.err
    assert "restore problem" not in res.err
    assert conf.read_text() == "x = 10\n" and log.read_text().splitlines() == ["ok", "ok"]
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_restart_that_keeps_failing_stays_owed_and_rollback_runs_it(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    restart, flag, log = _flaky_restart(tmp_path)
    spec, conf = _conf_spec(tmp_path, restart)
    spec.write_text(spec.read_text().replace("'echo score: 1'", f"'echo always > {flag}; echo score: 1'"))
    res = hone("run", spec, "--set", "x=20")
    assert res.code == 3, res.err
    assert "restore problem" in res.err and "server still stopping" in res.err
    assert conf.read_text() == "x = 10\n"  # the bytes are back; the restart is still owed
    status = hone("status")
    assert f"file:{conf}" in status.out
    flag.unlink()
    back = hone("rollback")
    assert back.code == 0, back.err
    assert log.read_text().splitlines() == ["ok", "ok"]  # after the change, and the owed one
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_service_is_journaled_without_the_machine_lock_a_setting_is_not(tmp_path: Path, state_dir: Path) -> None:
    from hone.knobs.service import ServiceDriver, ServiceRecord

    journal = Journal()
    assert journal.ensure_original(ServiceDriver(ServiceRecord(name="svc")))
    assert [e.resource for e in journal.active()] == ["service:svc"]
    conf = tmp_path / "a.conf"
    conf.write_text("a = 1\n")
    setting = driver_for(FileKnobSpec(name="a", kind="file", path=str(conf), key="a", values=[1, 2]))
    with pytest.raises(RuntimeError, match="machine lock"):
        journal.ensure_original(setting)
    assert all(o.ok for o in journal.restore())
    assert not journal.path.exists()  # archived: nothing pending
    journal.ensure_original(ServiceDriver(ServiceRecord(name="svc")))  # an append after the archiving
    assert [e.resource for e in journal.active()] == ["service:svc"]
