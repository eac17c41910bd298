"""hone preset apply: every setting journaled per resource like `hone apply`, listed by `hone
status`, restored byte for byte by `hone rollback` (config file, sysctl, sysfs); settings this
kernel lacks are skipped, risky ones held back without --opt-in; bad input is one line, exit 2,
nothing changed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import needs_root

SYSCTL = Path("/proc/sys/vm/vfs_cache_pressure")
SYSFS = Path("/sys/kernel/mm/transparent_hugepage/defrag")
CONF = "# app config\nshared_buffers = 128MB\n#synchronous_commit = on\n\nlisten = '*'\n"


def _preset(tmp_path: Path, pressure: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(textwrap.dedent(f"""\
        preset: mine
        version: 2
        description: a test preset
        classes: [database-oltp]
        include: throughput-server
        exclude: [vm.swappiness, vm.dirty_ratio, vm.dirty_background_ratio, net.core.somaxconn,
                  "block/{{device}}/queue/read_ahead_kb"]
        files:
          db: {{format: conf, match: [app.conf]}}
        settings:
          - {{sysctl: vm.vfs_cache_pressure, value: {pressure}, source: "tuned: test", why: "a harmless sysctl to set"}}
          - {{sysfs: kernel/mm/transparent_hugepage/defrag, value: never, source: "tuned: test", why: "a sysfs file"}}
          - {{sysctl: kernel.sched_min_granularity_ns, value: 3000000, source: "A-Tune: test", why: "absent on EEVDF"}}
          - {{file: db, key: shared_buffers, value: 256MB, restart: true, source: "PostgreSQL docs: x", why: "a key"}}
          - {{file: db, key: synchronous_commit, value: "off", risk: durability, source: "PostgreSQL docs: y",
             why: "a durability trade-off"}}
        """))
    return path


def _sysfs_choice() -> str:
    text = SYSFS.read_text()
    return text[text.index("[") + 1:text.index("]")]


@needs_root
def test_apply_status_rollback_restores_every_byte(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text(CONF)
    conf.chmod(0o640)
    marker = tmp_path / "restarted"
    before = (SYSCTL.read_text(), _sysfs_choice())
    pressure = "117" if before[0].strip() != "117" else "118"
    preset = _preset(tmp_path, pressure)
    try:
        res = hone("preset", "apply", preset, "--config", f"db={conf}", "--restart", f"db=touch {marker}")
        assert res.code == 0, res.err
        assert "skipped kernel.sched_min_granularity_ns: not on this kernel" in res.err
        assert "held db.synchronous_commit" in res.err and "--opt-in durability" in res.err
        assert SYSCTL.read_text().strip() == pressure and _sysfs_choice() == "never"
        assert "shared_buffers = 256MB" in conf.read_text() and "synchronous_commit = off" not in conf.read_text()
        assert marker.exists()  # the file's restart ran once its keys were written
        marker.unlink()

        again = hone("preset", "apply", preset, "--config", f"db={conf}", "--opt-in", "durability")
        assert again.code == 0, again.err
        assert "synchronous_commit = off" in conf.read_text()
        status = hone("status", env={"COLUMNS": "600"})
        assert status.code == 0
        for resource in ("sysctl:vm.vfs_cache_pressure", f"sysfs:{SYSFS}", f"file:{conf}"):
            assert resource in status.out, status.out

        back = hone("rollback")
        assert back.code == 0, back.err
        assert conf.read_text() == CONF and (conf.stat().st_mode & 0o777) == 0o640
        assert (SYSCTL.read_text(), _sysfs_choice()) == before
        assert marker.exists()  # rollback restarted the server on its original file
        assert "nothing changed by hone" in hone("status").out
    finally:
        hone("rollback")


@pytest.mark.parametrize(("args", "message"), [
    (("nonesuch",), "no preset named 'nonesuch'"),
    (("postgresql", "--config", "mysql=/etc/hosts"), "preset postgresql has no config file 'mysql'"),
    (("postgresql", "--config", "postgresql=/nonexistent/postgresql.conf"), "no such file"),
    (("postgresql", "--config", "postgresql"), "expected NAME=VALUE"),
    (("postgresql", "--device", "nosuchdisk"), "--device nosuchdisk: no block device of that name"),
    (("postgresql", "--device", "../vda"), "no block device of that name"),
    (("postgresql", "--opt-in", "speed"), "--opt-in speed: expected a risk class"),
    (("postgresql", "--restart", "postgresql=pg_ctl restart"), "the file postgresql is not bound"),
])
def test_bad_binding_is_one_line_exit_2_and_nothing_changes(hone, args: tuple[str, ...],  # type: ignore[no-untyped-def]
                                                             message: str) -> None:
    res = hone("preset", "apply", *args)
    assert res.code == 2, res
    first = res.err.splitlines()[0]
    assert first.startswith("hone: error: ") and message in first, res.err
    assert "Traceback" not in res.err
    assert "nothing changed by hone" in hone("status").out


def test_show_resolves_includes_and_reads_the_current_values(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("preset", "show", "latency-server", "--json", "-")
    assert res.code == 0, res.err
    import json

    doc = json.loads(res.out)
    rows = {s["name"]: s for s in doc["settings"]}
    assert rows["vm.swappiness"]["from"] == "throughput-server"
    assert rows["vm.dirty_ratio"]["from"] == "latency-server"
    assert rows["vm.swappiness"]["current"] == Path("/proc/sys/vm/swappiness").read_text().strip()
    assert rows["net.core.busy_poll"]["status"] in ("held", "already")
    assert rows["net.core.busy_poll"]["risk"] == "machine"
