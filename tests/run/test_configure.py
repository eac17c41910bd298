"""Configurations are rendered from the starting state: several knobs on one file are one
resource (one original, one restart per configuration), and every arm — the baseline
included — is exactly what it claims, a key that was absent being absent again."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

# Reads a=/b= from a conf file (0 when absent or commented) and prints a score; the knobs'
# restart command appends a line to a log, so restarts can be counted.
BENCH = ("import re, sys\n"
         "t = open(sys.argv[1]).read()\n"
         "def v(k):\n"
         "    m = re.findall(r'^' + k + r' = (\\d+)', t, re.M)\n"
         "    return int(m[-1]) if m else 0\n"
         "print('score:', 1 + v('a') + 2 * v('b'))\n")


def _two_knob_spec(tmp_path: Path, conf_text: str, tune: str = "") -> tuple[Path, Path, Path]:
    conf = tmp_path / "app.conf"
    conf.write_text(conf_text)
    log = tmp_path / "restarts.log"
    (tmp_path / "bench.py").write_text(BENCH)
    restart = json.dumps(["sh", "-c", 'echo restart >> "$0"', str(log)])
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: two-keys
        benchmark: {{command: [python3, bench.py, {conf}], timeout: 30}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}, goal: maximize}}]
        knobs:
          - {{name: a, kind: file, path: {conf}, key: a, values: [1, 2, 3], restart: {restart}}}
          - {{name: b, kind: file, path: {conf}, key: b, values: [1, 2, 3], restart: {restart}}}
        """) + tune)
    return spec, conf, log


@pytest.mark.parametrize("seed", range(1, 7))
def test_two_file_knobs_on_one_file_leave_it_byte_identical_after_tune(hone, tmp_path: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    # b is absent (only commented) at the start: the knob that keeps its value in the first
    # trial is first written later, after the other one changed the file.
    original = "# app\na = 1\n# b = 9\n"
    spec, conf, _ = _two_knob_spec(tmp_path, original)
    res = hone("tune", spec, "--sampler", "random", "--trials", "4", "--seed", str(seed), "--confirm", "0",
               "--repeats", "1")
    assert res.code == 0, res.err
    assert conf.read_text() == original
    status = hone("status")
    assert status.out.strip() == "nothing changed by hone on this machine", status.out


def test_one_restart_per_configuration_not_per_knob(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf, log = _two_knob_spec(tmp_path, "a = 1\nb = 1\n")
    res = hone("run", spec, "--set", "a=2", "--set", "b=3")
    assert res.code == 0, res.err
    assert conf.read_text() == "a = 1\nb = 1\n"
    # once after both writes, once after the restore — not once per changed knob
    assert log.read_text().splitlines() == ["restart", "restart"]


def test_apply_of_two_keys_restarts_once_and_status_names_both_keys(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec, conf, log = _two_knob_spec(tmp_path, "a = 1\n# b = 9\n")
    res = hone("apply", spec, "--set", "a=3", "--set", "b=2")
    assert res.code == 0, res.err
    assert log.read_text().splitlines() == ["restart"]
    status = hone("status")
    assert status.code == 0
    assert f"file:{conf}" in status.out
    assert "a=1; b=(absent)" in status.out and "a=3; b=2" in status.out, status.out
    back = hone("rollback")
    assert back.code == 0, back.err
    assert conf.read_text() == "a = 1\n# b = 9\n"
    assert log.read_text().splitlines() == ["restart", "restart"]


def test_confirmation_baseline_is_the_absent_key_not_the_previous_arm(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # latency = 100 + cache_mb, 100 when the key is absent: the start is the best there is.
    conf = tmp_path / "app.conf"
    conf.write_text("# cache_mb = 64\nworkers = 2\n")
    (tmp_path / "bench.py").write_text(
        "import re, sys\nm = re.findall(r'^cache_mb = (\\d+)', open(sys.argv[1]).read(), re.M)\n"
        "print('latency:', 100 + (int(m[-1]) if m else 0))\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: absent-key
        benchmark: {{command: [python3, bench.py, {conf}], timeout: 30}}
        metrics: [{{name: latency, extract: {{regex: 'latency: ([0-9]+)'}}, goal: minimize}}]
        knobs:
          - {{name: cache_mb, kind: file, path: {conf}, key: cache_mb, values: [1, 50]}}
        """))
    res = hone("tune", spec, "--trials", "3", "--seed", "1", "--confirm", "12", "--repeats", "1", "--json", "-")
    assert res.code == 0, res.err
    doc = json.loads(res.out[res.out.index("{"):])
    assert doc["recommended"] is None and doc["verdict"] == "keep the current configuration"
    for c in doc["confirmations"]:
        assert c["baseline_means"]["latency"] == 100.0
        assert c["means"]["latency"] == 100.0 + c["config"]["cache_mb"]
    assert conf.read_text() == "# cache_mb = 64\nworkers = 2\n"


def test_compare_variant_against_a_commented_out_key(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Every key of a stock postgresql.conf is commented out: "absent" is the normal start.
    conf = tmp_path / "postgresql.conf"
    stock = "#synchronous_commit = on\t\t# synchronization level;\n#wal_buffers = -1\n"
    conf.write_text(stock)
    (tmp_path / "bench.py").write_text(
        "import re, sys\nm = re.findall(r'^synchronous_commit = (\\w+)', open(sys.argv[1]).read(), re.M)\n"
        "print('tps:', 2000 if m and m[-1] == 'off' else 1000)\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: pg-like
        benchmark: {{command: [python3, bench.py, {conf}], timeout: 30}}
        metrics: [{{name: tps, extract: {{regex: 'tps: ([0-9]+)'}}, goal: maximize}}]
        knobs:
          - {{name: synchronous_commit, kind: file, path: {conf}, key: synchronous_commit, values: ['on', 'off']}}
        """))
    out = tmp_path / "c.json"
    res = hone("compare", spec, "--variant", "off:synchronous_commit=off", "--rounds", "6", "--export-json", out)
    assert res.code == 0, res.err
    doc = json.loads(out.read_text())
    runs = {v["name"]: v["runs"] for v in doc["rows"][0]["variants"]}
    assert {r["metrics"]["tps"] for r in runs["baseline"]} == {1000.0}
    assert {r["metrics"]["tps"] for r in runs["off"]} == {2000.0}
    assert conf.read_text() == stock


def test_a_knob_changed_under_the_benchmark_fails_the_run_loudly(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The benchmark rewrites the key hone set: the next run must not measure that silently.
    conf = tmp_path / "app.conf"
    conf.write_text("workers = 2\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark:
          command: [sh, -c, 'echo "workers = 7" > "$0"; echo score: 1', {conf}]
          repeats: 2
          timeout: 30
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}}}]
        knobs:
          - {{name: workers, kind: file, path: {conf}, key: workers, range: [1, 16]}}
        """))
    res = hone("run", spec, "--set", "workers=4", "--json", "-")
    assert res.code == 0, res.err
    doc = json.loads(res.out[res.out.index("{"):])
    assert doc["runs"][0]["error"] is None
    assert "workers" in doc["runs"][1]["error"] and "reads '7', expected '4'" in doc["runs"][1]["error"]
    assert conf.read_text() == "workers = 2\n"


def _spec_with(tmp_path: Path, service: str, knobs: str) -> Path:
    spec = tmp_path / "lock.yaml"
    spec.write_text(f"name: lock\nservice: {service}\nbenchmark: {{command: [\"true\"]}}\n"
                    f"metrics: [{{name: wall_time}}]\nknobs: {knobs}\n")
    return spec


def test_a_server_hone_starts_needs_no_machine_lock_but_one_managed_elsewhere_does(tmp_path: Path) -> None:
    from hone.run.configure import changes_machine
    from hone.spec import load_spec

    started = "{start: [sleep, '60'], ready: {log: 'x'}}"
    managed = "{restart: ['true']}"
    params = "[{name: n, kind: param, values: [1, 2]}]"
    sysctl = "[{name: vm.swappiness, kind: sysctl, values: [10, 60]}]"
    assert not changes_machine(load_spec(_spec_with(tmp_path, started, params)))
    assert changes_machine(load_spec(_spec_with(tmp_path, managed, params)))
    assert changes_machine(load_spec(_spec_with(tmp_path, started, sysctl)))
