"""examples/mariadb end to end on Debian's MariaDB: A-Tune's pair format as a user brings it,
`sed -i` on my.cnf and a restart per trial through a start script that leaves `mariadbd &` in
the background. A private copy with a free port and a small table set; checked: every trial
completes (the server each restart starts is not killed as a stray), my.cnf comes back byte for
byte, the server runs again on it afterwards, `hone status` is clean."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import is_root
from tests.examples.conftest import copy_example
from tests.net import free_port

NEEDS = ("mariadbd", "mariadb-install-db", "mariadb-admin", "sysbench")
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not is_root(), reason="the example runs mariadbd as root"),
              pytest.mark.skipif(any(shutil.which(n) is None for n in NEEDS),
                                 reason="MariaDB or sysbench not installed (make example-mariadb installs them)")]


def _copy(root: Path, port: int) -> Path:
    """The example under ``root`` with ``port`` and 8 tables of 2 000 rows, 1 s runs."""
    return copy_example("mariadb", root, {"33306": str(port), "--table-size=100000": "--table-size=2000",
                                          "--time=10": "--time=1", "--time=4": "--time=1"})


def test_the_atune_mariadb_pair_tunes_a_real_server_and_leaves_it_running_on_its_config(  # type: ignore[no-untyped-def]
        hone, root: Path) -> None:
    port = free_port()
    example = _copy(root, port)
    build = root / "build" / "examples" / "mariadb"
    setup = subprocess.run(["bash", str(example / "setup.sh")], capture_output=True, text=True, timeout=300)
    try:
        assert setup.returncode == 0, setup.stderr
        before = (build / "my.cnf").read_bytes()
        first = int((build / "run" / "mysqld.pid").read_text())
        res = hone("tune", build / "mariadb_client.yaml", "--atune-server", build / "mariadb_server.yaml",
                   "--trials", "3", "--repeats", "1", "--confirm", "0", "--seed", "1", "--json", root / "r.json")
        assert res.code == 0, res.err
        doc = json.loads((root / "r.json").read_text())
        assert doc["failed_trials"] == 0, res.out
        assert "left 1 process running" not in res.err
        assert (build / "my.cnf").read_bytes() == before
        # restarted once per trial and once on the original file: a new server, up, on that file
        pid = int((build / "run" / "mysqld.pid").read_text())
        assert pid != first and Path(f"/proc/{pid}").exists()
        ping = subprocess.run(["mariadb-admin", f"--defaults-file={build / 'my.cnf'}", "-uroot", "variables"],
                              capture_output=True, text=True, timeout=30)
        assert ping.returncode == 0 and "| innodb_buffer_pool_size " in ping.stdout
        assert [ln.split()[3] for ln in ping.stdout.splitlines() if "| innodb_buffer_pool_size " in ln] == ["134217728"]
        assert "nothing changed" in hone("status").out
    finally:
        subprocess.run(["sh", str(example / "stop.sh"), str(build)], capture_output=True, timeout=90)
