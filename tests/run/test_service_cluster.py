"""A cluster managed elsewhere (the Kafka cluster of A-Tune's example, in small): three nodes, each a real
Redis on its own loopback address behind its own sshd. A knob on every node is journaled per
node; the service restarts node by node, each ready before the next; at the end every node's
configuration is back and every node restarted on it."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net import free_port
from tests.sshd import SshHosts, available, sshd_hosts

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (setup installs it)")]

NODES = 3


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshHosts]:
    why = available()
    if why:
        pytest.skip(why)
    with sshd_hosts(tmp_path_factory.mktemp("sshd"), NODES) as hosts:
        yield hosts


def _cli(addr: str, port: int, *args: str) -> str:
    return subprocess.run(["redis-cli", "-h", addr, "-p", str(port), *args], capture_output=True, text=True,
                          timeout=10).stdout


def _wait_up(addr: str, port: int) -> None:
    deadline = time.time() + 20
    while _cli(addr, port, "ping").strip() != "PONG":
        assert time.time() < deadline, f"redis on {addr}:{port} did not come up"
        time.sleep(0.05)


def test_rolling_restart_over_three_nodes_with_per_node_journals(cluster: SshHosts, hone, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  state_dir: Path) -> None:
    port = free_port("127.0.0.1")
    log = tmp_path / "restarts.log"
    for i, name in enumerate(cluster.names):
        (tmp_path / f"node-{name}.conf").write_text(textwrap.dedent(f"""\
            bind {cluster.address(i)}
            port {port}
            save ""
            appendonly no
            maxmemory-policy noeviction
            """))
    originals = {n: (tmp_path / f"node-{n}.conf").read_bytes() for n in cluster.names}
    # Each node's restart: stop its Redis, then start it again 0.4 s later in the background,
    # so only a wait for `ready` keeps the next node from restarting too soon.
    restart = (f'case "$HONE_TEST_HOST" in a) A=127.0.0.1;; b) A=127.0.0.2;; c) A=127.0.0.3;; esac; '
               f'echo "$HONE_TEST_HOST $(date +%s.%N)" >> {log}; '
               f'redis-cli -h $A -p {port} shutdown nosave >/dev/null 2>&1; '
               f'while redis-cli -h $A -p {port} ping >/dev/null 2>&1; do sleep 0.05; done; '
               f'setsid sh -c "sleep 0.4; exec redis-server {tmp_path}/node-$HONE_TEST_HOST.conf" '
               f'>/dev/null 2>&1 </dev/null &')
    conf = f"{tmp_path}/node-$HONE_TEST_HOST.conf"
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: cluster
        service:
          restart: [sh, -c, {json.dumps(restart)}]
          hosts: {json.dumps(cluster.hosts)}
          ssh_options: {json.dumps(cluster.options)}
          ready: {{tcp: "{{host}}:{port}", timeout: 20}}
        benchmark:
          command: [redis-benchmark, -h, 127.0.0.1, -p, "{port}", -t, set, -n, "2000", -q]
          timeout: 60
        metrics: [{{name: rps, extract: {{regex: 'SET: ([0-9.]+) requests per second'}}, goal: maximize}}]
        knobs:
          - name: policy
            kind: script
            shell: true
            get: 'sed -n "s/^maxmemory-policy //p" "{conf}"'
            set: 'sed -i "s/^maxmemory-policy .*/maxmemory-policy $value/" "{conf}"'
            values: [noeviction, allkeys-lru]
            restart: service
            hosts: {json.dumps(cluster.hosts)}
            ssh_options: {json.dumps(cluster.options)}
        """))
    for i, name in enumerate(cluster.names):
        subprocess.run(["redis-server", str(tmp_path / f"node-{name}.conf"), "--daemonize", "yes"], check=True,
                       timeout=30)
        _wait_up(cluster.address(i), port)
    try:
        res = hone("run", str(spec), "--set", "policy=allkeys-lru", timeout=240)
        assert res.code == 0, res.err
        lines = [line.split() for line in log.read_text().splitlines()]
        # one rolling restart for the configuration, one on the original configuration at the end
        # (newest change first, so in the other order)
        assert [n for n, _ in lines] == cluster.names + cluster.names[::-1], lines
        for rolling in (lines[:NODES], lines[NODES:]):
            times = [float(t) for _, t in rolling]
            assert all(b - a >= 0.35 for a, b in itertools.pairwise(times)), times  # each node ready before the next
        history = [json.loads(x) for x in (state_dir / "journal-history.jsonl").read_text().splitlines()]
        originals_res = [r["res"] for r in history if r["op"] == "original"]
        assert sorted(originals_res) == sorted(f"script:policy@{h}" for h in cluster.hosts)
        assert {n: (tmp_path / f"node-{n}.conf").read_bytes() for n in cluster.names} == originals
        for i in range(NODES):
            _wait_up(cluster.address(i), port)
            assert _cli(cluster.address(i), port, "config", "get", "maxmemory-policy").split()[-1] == "noeviction"
    finally:
        for i in range(NODES):
            _cli(cluster.address(i), port, "shutdown", "nosave")
