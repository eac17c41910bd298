"""End to end on real programs: hone analyse runs or watches them and names their class."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")


def test_a_compressor_is_cpu_bound_compute(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "text.txt"
    data.write_text("".join(f"line {i} of some words {i * 7 % 1000}\n" for i in range(600_000)))
    out = tmp_path / "a.json"
    res = hone("analyse", "--json", out, "--", "gzip", "-9", "-c", data)
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    assert doc["format"] == "hone-analyse/1" and doc["mode"] == "command" and doc["returncode"] == 0
    assert "cpu-bound-compute" in doc["decided"], doc["summary"]
    assert "cpu-bound-compute" in res.out and "cpu_demand" in res.out


def test_a_cold_sequential_read_is_io_sequential(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "cold.bin"
    subprocess.run(["dd", "if=/dev/urandom", f"of={data}", "bs=1M", "count=256", "status=none"], check=True,
                   timeout=120)
    subprocess.run(["sync"], timeout=120)
    subprocess.run(["dd", f"if={data}", "iflag=nocache", "count=0", "status=none"], check=True, timeout=60)
    out = tmp_path / "a.json"
    # block tracepoints need tracefs: mounted if missing (journaled in the test's state), unmounted after
    try:
        res = hone("analyse", "--mount-tracefs", "--json", out, "--", "dd", f"if={data}", "of=/dev/null", "bs=1M")
    finally:
        assert hone("rollback").code == 0
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    values = doc["signals"]["values"]
    assert values["storage_read_mb_s"] > 2 and values["bio_run_kb"] >= 1024, values
    assert "io-sequential" in doc["decided"], doc["summary"]


@pytest.mark.skipif(shutil.which("redis-server") is None or shutil.which("redis-benchmark") is None,
                    reason="redis is not installed")
def test_redis_under_its_benchmark_is_a_kv_cache(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    load = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        load = subprocess.Popen(["timeout", "120", "redis-benchmark", "-p", str(port), "-c", "20", "-n", "100000000",
                                 "-t", "get", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        out = tmp_path / "a.json"
        res = hone("analyse", "--pid", server.pid, "--duration", "4", "--json", out)
        assert res.code == 0, res.err
        doc = json.loads(out.read_text())
        assert doc["mode"] == "pids" and doc["pids"] == [server.pid]
        assert doc["primary"] == "kv-cache", doc["summary"]
        assert doc["signals"]["values"]["connections"] >= 20
        # the catalogue's presets for the classes named: Redis's own first
        fitting = {p["name"]: p["classes"] for p in doc["presets"]}
        assert "kv-cache" in fitting.get("redis", []), doc["presets"]
        assert "preset that fits: redis" in res.out
    finally:
        for p in (load, server):
            if p is not None:
                p.kill()
                p.wait()


@pytest.mark.parametrize(("args", "message"), [
    ((), "hone: error: nothing to analyse"),
    (("--pid", "1", "--", "true"), "hone: error: give either a command (-- CMD ARGS) or --pid, not both"),
    (("--duration", "5", "--", "true"), "hone: error: --duration is for --pid or the whole machine"),
    (("--pid", "999999999", "--duration", "1"), "hone: error: --pid 999999999: no such process"),
    (("--duration", "0"), "hone: error: --duration: expected a positive number of seconds, got 0"),
    (("--apply", "--", "true"), "hone: error: --apply needs --spec SPEC"),
    (("--spec", "x.yaml", "--", "true"), "hone: error: --spec, --config, --restart, --device and --opt-in go with"),
    (("--apply", "--spec", "/nonexistent/hone.yaml", "--", "true"), "/nonexistent/hone.yaml"),
])
def test_bad_input_is_one_line_and_exit_2(hone, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    res = hone("analyse", *args)
    assert res.code == 2 and res.out == "" and "Traceback" not in res.err
    assert res.err.startswith(message), res.err


def test_rules_lists_every_trait_and_class(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("analyse", "--rules")
    assert res.code == 0
    assert "trait fsync-heavy: fsyncs_per_s >= 10 /s" in res.out
    assert "class database-oltp (service)" in res.out and "requires: listens, connected, fsync-heavy" in res.out




def test_apply_with_no_fitting_preset_verifies_nothing(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "hone.yaml"
    spec.write_text("name: idle\nbenchmark:\n  command: ['true']\nmetrics:\n  - {name: wall_time}\n")
    res = hone("analyse", "--apply", "--spec", spec, "--", "sleep", "0.3")
    assert res.code == 2 and "Traceback" not in res.err
    assert "hone: error: no preset fits no class fits" in res.err and "nothing verified or applied" in res.err
    assert "nothing changed by hone" in hone("status").out


def test_postgresql_without_fsync_is_not_called_a_database(hone, pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The test cluster runs with fsync=off: under pgbench it commits without forcing anything to
    disk, and the one trait that tells a database server apart here is absent. hone must say what
    it knows and not pretend."""
    pg.createdb("analyse")
    env = {**os.environ, "PGPASSWORD": "s3cret-Pw"}
    base = [str(pg.bindir / "pgbench"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "hone"]
    subprocess.run([*base, "-i", "-s", "1", "analyse"], check=True, capture_output=True, timeout=120, env=env)
    load = subprocess.Popen([*base, "-c", "4", "-j", "2", "-T", "120", "analyse"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(1)
        out = tmp_path / "a.json"
        res = hone("analyse", "--pid", pg.proc.pid, "--duration", "4", "--json", out)
        assert res.code == 0, res.err
    finally:
        load.kill()
        load.wait()
    doc = json.loads(out.read_text())
    values = doc["signals"]["values"]
    assert values["processes"] >= 5 and values["connections"] >= 4 and values["fsyncs_per_s"] < 10, values
    assert "database-oltp" not in doc["decided"]
    service = next(g for g in doc["groups"] if g["group"] == "service")
    assert service["decided"] is None, doc["summary"]  # no single server kind is claimed …
    assert (len(service["candidates"]) != 1 and service["tells_apart"]) or not service["candidates"]
    # … and what is known is said
    assert "holds client connections" in doc["known"] and "accepts connections (a server)" in doc["known"]
