"""``files:`` on a script knob: the files its ``set`` edits are journaled whole and written
back on restore, so a one-way ``set`` (A-Tune's redis ``save`` idiom comments lines out and
has no way back) is still put back byte for byte — by the run itself, and by ``hone rollback``
after a kill."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hone.spec.atune import sed_targets
from tests.conftest import HONE_BIN

CONF = "port 6379\nsave 900 1\nsave 60 10000\nappendonly no\n"


def _spec(tmp_path: Path, files: bool, command: str = "cp redis.conf seen.txt") -> Path:
    conf = tmp_path / "redis.conf"
    conf.write_text(CONF)
    conf.chmod(0o640)
    # the RDB knob of A-Tune's redis_server.yaml: "off" comments the save lines out, "on" does nothing
    knob = {"name": "rdb", "kind": "script", "shell": True,
            "get": f"grep -q '^save' {conf} && echo on || echo off",
            "set": f"if [ \"$value\" = off ]; then sed -i 's/^save.*/#&/g' {conf}; fi",
            "values": ["on", "off"], **({"files": [str(conf)]} if files else {})}
    spec = tmp_path / "hone.yaml"
    spec.write_text(json.dumps({"name": "rdb", "benchmark": {"command": ["sh", "-c", command], "timeout": 30},
                                "knobs": [knob]}))
    return spec


def test_a_one_way_set_is_put_back_byte_for_byte_from_its_kept_files(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("run", _spec(tmp_path, files=True), "--set", "rdb=off", cwd=tmp_path)
    assert res.code == 0, res.err
    assert "#save 900 1" in (tmp_path / "seen.txt").read_text()  # the run saw the change
    assert (tmp_path / "redis.conf").read_text() == CONF
    assert (tmp_path / "redis.conf").stat().st_mode & 0o777 == 0o640
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_without_files_the_same_set_cannot_be_put_back(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("run", _spec(tmp_path, files=False), "--set", "rdb=off", cwd=tmp_path)
    assert res.code == 3, res.err
    assert "#save 900 1" in (tmp_path / "redis.conf").read_text()
    assert "script:rdb" in hone("status").out


def test_rollback_after_kill_9_writes_the_kept_bytes_back(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path, files=True, command="touch started; sleep 30")
    proc = subprocess.Popen([HONE_BIN, "run", str(spec), "--set", "rdb=off"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "HONE_STATE_DIR": str(state_dir)}, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the benchmark never started"
            time.sleep(0.05)
        assert "#save" in (tmp_path / "redis.conf").read_text()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    res = hone("rollback")
    assert res.code == 0, res.err + res.out
    assert (tmp_path / "redis.conf").read_text() == CONF
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


@pytest.mark.parametrize(("text", "want"), [
    ("sed -i 's/^LEVEL =\\s*[0-9]*/LEVEL = $value/g' app/app.py", ["/w/app/app.py"]),
    ('if [ "${value}" = "off" ]; then sed -i "s/^save.*/#&/g" /etc/redis.conf; fi', ["/etc/redis.conf"]),
    ("sed -i -e 's/a/$value/' -e 's/c/d/' /a/b.conf /c/d.conf && systemctl restart x", ["/a/b.conf", "/c/d.conf"]),
    ("sed -i.bak 's/x/$value/' $FILE /etc/a", ["/etc/a"]),  # $FILE: not a file hone can name
    ("echo $value > /sys/block/sda/queue/scheduler", []),
    ("cat f | sed 's/x/$value/' > /etc/out", []),  # no -i: sed edits nothing
])
def test_the_files_a_sed_set_edits_are_found(text: str, want: list[str]) -> None:
    assert sed_targets(text, "/w") == want


def test_files_must_be_absolute_and_local(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path, files=True)
    doc = json.loads(spec.read_text())
    doc["knobs"][0]["files"] = ["redis.conf"]
    spec.write_text(json.dumps(doc))
    res = hone("run", spec, "--set", "rdb=off", cwd=tmp_path)
    assert res.code == 2 and "knobs[0].files: expected absolute paths, got 'redis.conf'" in res.err, res.err
    assert (tmp_path / "redis.conf").read_text() == CONF


def test_two_knobs_keeping_one_file_leave_it_exact_and_do_not_undo_each_other(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    original = "# app\nthreads 4\nmode  safe\n"
    conf.write_text(original)

    def knob(key: str, values: list[str]) -> dict[str, object]:
        # A-Tune's spacing: the set writes two spaces, so its own restore would not give the bytes back
        return {"name": key, "kind": "script", "shell": True, "get": f"sed -n 's/^{key} *//p' {conf}",
                "set": f"sed -i 's/^{key} .*/{key}  $value/' {conf}", "values": values, "files": [str(conf)]}

    spec = tmp_path / "hone.yaml"
    spec.write_text(json.dumps({"name": "two", "benchmark": {"command": ["sh", "-c", f"cat {conf} >> seen.txt"]},
                                "metrics": [{"name": "wall_time", "goal": "minimize"}],
                                "knobs": [knob("threads", ["4", "8"]), knob("mode", ["safe", "fast"])]}))
    res = hone("tune", spec, "--sampler", "grid", "--trials", "4", "--repeats", "1", "--confirm", "0", cwd=tmp_path)
    assert res.code == 0, res.err + res.out
    assert re.search(r"trials: [34] \(0 failed\)", res.out), res.out  # the grid skips the baseline's
    seen = (tmp_path / "seen.txt").read_text()
    assert "threads  8\nmode  fast" in seen and "threads  8\nmode  safe" in seen  # both held, together
    assert conf.read_text() == original
    res = hone("run", spec, "--set", "mode=fast", cwd=tmp_path)  # the other knob stays as it is
    assert res.code == 0, res.err
    assert conf.read_text() == original
