"""The service lifecycle with a real Redis started by hone: one start per configuration,
kept across configurations that need no restart, a port in use refused, a server that dies
failing only its trial, `kill -9` of hone cleaned up by `hone rollback`, and a server managed
elsewhere restarted on its original configuration at the end."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import HONE_BIN
from tests.net import free_port, listening

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (setup installs it)")]


def _redis_conf(tmp_path: Path, port: int) -> Path:
    conf = tmp_path / "redis.conf"
    conf.write_text(textwrap.dedent(f"""\
        # test server
        port {port}
        bind 127.0.0.1
        save ""
        appendonly no
        dir {tmp_path}
        maxmemory-policy noeviction
        hz 10
        """))
    return conf


def _spec(tmp_path: Path, port: int, knobs: str, bench: str | None = None, service_extra: str = "",
          repeats: int = 1) -> Path:
    conf = _redis_conf(tmp_path, port)
    bench = bench or json.dumps(["redis-benchmark", "-p", str(port), "-t", "set", "-n", "2000", "-q"])
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: redis-test
        service:
          start: [redis-server, {conf}, --io-threads, "{{io_threads}}"]
          ready: {{tcp: "127.0.0.1:{port}", timeout: 20}}
        """) + service_extra + textwrap.dedent(f"""\
        benchmark: {{command: {bench}, timeout: 60, repeats: {repeats}}}
        metrics: [{{name: rps, extract: {{regex: 'SET: ([0-9.]+) requests per second'}}, goal: maximize}}]
        knobs:
          - {{name: io_threads, kind: param, values: [1, 2], default: 1}}
        """) + knobs)
    return spec


def _starts(state_dir: Path) -> list[Path]:
    return sorted((state_dir / "services").glob("*/*.log"))


def test_run_starts_the_server_once_after_the_writes_and_stops_it(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    knobs = "".join(
        f"  - {{name: {k}, kind: file, path: {tmp_path / 'redis.conf'}, key: {k}, values: {v}, restart: service}}\n"
        for k, v in (("maxmemory-policy", "[noeviction, allkeys-lru]"), ("hz", "[10, 50]")))
    spec = _spec(tmp_path, port, knobs, repeats=2)
    original = (tmp_path / "redis.conf").read_bytes()
    res = hone("run", spec, "--set", "maxmemory-policy=allkeys-lru", "--set", "hz=50", "--set", "io_threads=2")
    assert res.code == 0, res.err
    assert len(_starts(state_dir)) == 1  # one start for two restart-level knobs and a start param
    assert not listening(port)
    assert (tmp_path / "redis.conf").read_bytes() == original
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_the_server_stays_up_across_trials_that_need_no_restart(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    # A runtime knob (CONFIG SET): no restart; the start param io_threads stays at its default.
    # Its get fails while the server is down: it is read only once hone started the server.
    knob = (f"  - {{name: lazyfree, kind: script, get: [sh, -c, 'v=$(redis-cli -p {port} config get"
            f" lazyfree-lazy-eviction) && echo \"$v\" | tail -1'], set: [redis-cli, -p, '{port}', config, set,"
            f" lazyfree-lazy-eviction, $value], values: ['yes', 'no'], scope: service}}\n")
    spec = _spec(tmp_path, port, knob)
    spec.write_text(spec.read_text().replace("values: [1, 2], default: 1", "values: [1], default: 1"))
    res = hone("tune", spec, "--sampler", "grid", "--trials", "2", "--confirm", "0", "--repeats", "1",
               "--json", tmp_path / "t.json")
    assert res.code == 0, res.err
    assert json.loads((tmp_path / "t.json").read_text())["baseline_config"]["lazyfree"] == "no"
    assert len(_starts(state_dir)) == 1
    assert not listening(port)


def test_a_port_in_use_is_a_clear_error_and_nothing_changes(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    knob = (f"  - {{name: hz, kind: file, path: {tmp_path / 'redis.conf'}, key: hz, values: [10, 50],"
            " restart: service}\n")
    spec = _spec(tmp_path, port, knob)
    original = (tmp_path / "redis.conf").read_bytes()
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen()
    try:
        res = hone("run", spec, "--set", "hz=50")
    finally:
        squatter.close()
    assert res.code == 2, res.err
    assert f"127.0.0.1:{port} is already in use before hone starts it" in res.err
    assert "Traceback" not in res.err
    assert (tmp_path / "redis.conf").read_bytes() == original
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_server_that_dies_fails_its_trial_with_the_log_tail_and_the_study_goes_on(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    flag = tmp_path / "crash-once"
    flag.touch()
    # The first measured run away from the baseline's io_threads=1 crashes the server (SIGSEGV)
    # once; 3 configurations, so one is left to measure after the failed trial, whatever the order.
    bench = json.dumps(["sh", "-c", f'if [ "$0" != 1 ] && [ -e {flag} ]; then rm {flag}; '
                        f'kill -SEGV $(redis-cli -p {port} info server | sed -n "s/^process_id:\\([0-9]*\\).*/\\1/p");'
                        f' sleep 0.5; fi; redis-benchmark -p {port} -t set -n 2000 -q', "{io_threads}"])
    spec = _spec(tmp_path, port, "", bench=bench, repeats=2)
    spec.write_text(spec.read_text().replace("values: [1, 2], default: 1", "values: [1, 2, 3], default: 1"))
    out = tmp_path / "tune.json"
    res = hone("tune", spec, "--sampler", "grid", "--trials", "2", "--confirm", "0", "--json", out)
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    assert doc["failed_trials"] == 1 and doc["trials"] == 2
    import optuna

    study = optuna.load_study(study_name=doc["study"], storage=doc["storage"])
    reasons = [t.user_attrs.get("fail_reason", "") for t in study.trials if t.state.name == "FAIL"]
    died = "service redis-test was killed by signal 11 during the trial"
    assert any(died in r and "redis-server" in r.split("log ")[1] for r in reasons), reasons
    assert not listening(port)


def test_kill_9_of_hone_mid_trial_then_rollback_restores_the_config_and_stops_the_server(  # type: ignore[no-untyped-def]
        hone, tmp_path: Path, state_dir: Path) -> None:
    port = free_port()
    started = tmp_path / "bench-started"
    knob = (f"  - {{name: hz, kind: file, path: {tmp_path / 'redis.conf'}, key: hz, values: [10, 50],"
            " restart: service}\n")
    bench = json.dumps(["sh", "-c", f"touch {started}; sleep 60"])
    spec = _spec(tmp_path, port, knob, bench=bench)
    original = (tmp_path / "redis.conf").read_bytes()
    proc = subprocess.Popen([HONE_BIN, "run", str(spec), "--set", "hz=50"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "HONE_STATE_DIR": str(state_dir)})
    deadline = time.time() + 60
    while not started.exists():
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.05)
    assert listening(port) and b"hz 50" in (tmp_path / "redis.conf").read_bytes()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert listening(port)  # the server outlived hone
    status = hone("status")
    assert "service:redis-test" in status.out and "started pid" in status.out
    back = hone("rollback")
    assert back.code == 0, back.err
    assert "restored service:redis-test" in back.out
    assert (tmp_path / "redis.conf").read_bytes() == original
    deadline = time.time() + 10
    while listening(port) and time.time() < deadline:
        time.sleep(0.1)
    assert not listening(port)
    assert not _starts(state_dir)[0].read_text().count("Ready to accept") > 1


def test_a_server_managed_elsewhere_is_restarted_per_trial_and_on_its_original_config_at_the_end(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    conf = _redis_conf(tmp_path, port)
    restart = tmp_path / "restart.sh"
    restart.write_text(f"#!/bin/sh\nredis-cli -p {port} shutdown nosave >/dev/null 2>&1\n"
                       f"while redis-cli -p {port} ping >/dev/null 2>&1; do sleep 0.05; done\n"
                       f"echo restart >> {tmp_path / 'restarts.log'}\n"
                       f"exec redis-server {conf} --daemonize yes --pidfile {tmp_path / 'redis.pid'}\n")
    restart.chmod(0o755)
    subprocess.run(["redis-server", str(conf), "--daemonize", "yes", "--pidfile", str(tmp_path / "redis.pid")],
                   check=True, timeout=30)
    try:
        spec = tmp_path / "hone.yaml"
        spec.write_text(textwrap.dedent(f"""\
            name: redis-external
            service:
              restart: [{restart}]
              ready: {{tcp: "127.0.0.1:{port}", timeout: 20}}
            benchmark: {{command: [redis-benchmark, -p, "{port}", -t, set, -n, "2000", -q], timeout: 60}}
            metrics: [{{name: rps, extract: {{regex: 'SET: ([0-9.]+) requests per second'}}, goal: maximize}}]
            knobs:
              - {{name: policy, kind: file, path: {conf}, key: maxmemory-policy,
                 values: [noeviction, allkeys-lru], restart: service}}
            """))
        deadline = time.time() + 10
        while not listening(port) and time.time() < deadline:
            time.sleep(0.05)
        res = hone("run", spec, "--set", "policy=allkeys-lru")
        assert res.code == 0, res.err
        # once for the configuration, once on the original configuration at the end
        assert (tmp_path / "restarts.log").read_text().splitlines() == ["restart", "restart"]
        live = subprocess.run(["redis-cli", "-p", str(port), "config", "get", "maxmemory-policy"],
                              capture_output=True, text=True, timeout=10).stdout.split()
        assert live[-1] == "noeviction"
        assert b"maxmemory-policy noeviction" in conf.read_bytes()
    finally:
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True, timeout=10)


@pytest.mark.parametrize(("service", "expected"), [
    ("{start: [redis-server], restart: [x]}", "expected start: (hone runs the server) or restart:"),
    ("{start: [redis-server]}", "expected ready: {tcp: HOST:PORT}"),
    ("{start: [redis-server], ready: {tcp: 'localhost'}}", "expected host:port like 127.0.0.1:6379"),
    ("{start: [redis-server], ready: {timeout: 5}}", "expected at least one of tcp, http, command, log"),
    ("{start: [redis-server], ready: {tcp: '127.0.0.1:1'}, stop: {signal: NOPE}}", "expected one of TERM"),
    ("{restart: [x], user: postgres}", "expected no user with restart:"),
    ("{start: [redis-server, '{nope}'], ready: {tcp: '127.0.0.1:1'}}", "placeholder {nope} names no param knob"),
])
def test_a_bad_service_section_is_one_line_and_exit_2(hone, tmp_path: Path, service: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "hone.yaml"
    spec.write_text(f"service: {service}\nbenchmark: {{command: ['true']}}\n")
    res = hone("run", spec)
    assert res.code == 2 and "Traceback" not in res.err
    assert expected in res.err and len(res.err.strip().splitlines()) <= 2, res.err


def test_restart_service_without_a_service_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "a.conf"
    conf.write_text("x = 1\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(f"benchmark: {{command: ['true']}}\nknobs:\n  - {{name: x, kind: file, path: {conf}, key: x,"
                    " values: [1, 2], restart: service}\n")
    res = hone("run", spec)
    assert res.code == 2 and "x restarts the service, but the spec has no service: section" in res.err


def test_log_probe_warmup_and_user(hone, tmp_path_factory: pytest.TempPathFactory) -> None:  # type: ignore[no-untyped-def]
    # The redis user must reach the config: a directory outside pytest's private tree.
    tmp_path = Path(tempfile.mkdtemp(prefix="hone-service-user-"))
    tmp_path.chmod(0o777)
    try:
        _log_probe_warmup_and_user(hone, tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _log_probe_warmup_and_user(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    warm = tmp_path / "warmups"
    spec = _spec(tmp_path, port, "", service_extra=(
        "  user: redis\n"
        f"  warmup: {{command: [sh, -c, 'redis-cli -p {port} set k v >/dev/null && echo w >> {warm}']}}\n"), repeats=2)
    spec.write_text(spec.read_text().replace(f'ready: {{tcp: "127.0.0.1:{port}", timeout: 20}}',
                                             "ready: {log: 'Ready to accept connections', timeout: 20}"))
    seen = tmp_path / "seen-user"
    spec.write_text(spec.read_text().replace(
        "benchmark: {command: ", f"benchmark: {{prepare: [sh, -c, 'ps -o user= -p $(redis-cli -p {port} info server"
        f" | sed -n \"s/^process_id:\\\\([0-9]*\\\\).*/\\\\1/p\") > {seen}'], command: "))
    res = hone("run", spec)
    assert res.code == 0, res.err
    assert warm.read_text().splitlines() == ["w"]  # once, after the one start
    assert seen.read_text().strip() == "redis"
    assert not listening(port)


def test_compare_variants_restart_the_server_between_arms(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    spec = _spec(tmp_path, port, "")
    out = tmp_path / "c.json"
    res = hone("compare", spec, "--variant", "one:io_threads=1", "--variant", "two:io_threads=2", "--rounds", "3",
               "--warmup", "0", "--export-json", out)
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    assert all(r["error"] is None for v in doc["rows"][0]["variants"] for r in v["runs"])
    assert len(_starts(state_dir)) >= 2  # a start per change of io_threads, never a run on the wrong one
    assert not listening(port)
