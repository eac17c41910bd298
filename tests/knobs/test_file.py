"""`file` knobs on real config files: symlinks stay symlinks, owner and mode survive,
`hone status --diff` shows what hone changed, nginx and TOML configs come back byte for
byte, and a key in an included file is edited (and journaled) where it lives."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hone.knobs._errors import ConfigError
from hone.knobs._files import LocalFiles
from hone.knobs._includes import locate
from tests.conftest import needs_root

POSTGRES = "/usr/lib/postgresql/15/bin/postgres"


def _spec(tmp_path: Path, path: Path) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [sh, -c, 'echo score: 1']}}
        knobs:
          - {{name: x, kind: file, path: {path}, key: x, range: [1, 100]}}
        """))
    return spec


def test_a_config_reached_through_a_symlink_is_edited_where_it_lives(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real = tmp_path / "etc-real" / "app.conf"
    real.parent.mkdir()
    real.write_text("x = 10\n")
    link = tmp_path / "app.conf"
    link.symlink_to(real)
    spec = _spec(tmp_path, link)
    assert hone("apply", spec, "--set", "x=20").code == 0
    assert link.is_symlink() and real.read_text() == "x = 20\n"
    status = hone("status")
    assert f"file:{real}" in status.out, status.out
    assert hone("rollback").code == 0
    assert link.is_symlink() and real.read_text() == "x = 10\n"


@needs_root
def test_owner_and_mode_survive_the_change_and_the_rollback(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("x = 10\n")
    os.chown(conf, 65534, 65534)
    os.chmod(conf, 0o640)
    spec = _spec(tmp_path, conf)
    assert hone("apply", spec, "--set", "x=20").code == 0
    st = conf.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)
    os.chown(conf, 0, 0)  # someone changes the owner meanwhile: the rollback puts the original back
    assert hone("rollback").code == 0
    st = conf.stat()
    assert conf.read_text() == "x = 10\n"
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)


def test_status_diff_shows_the_change_as_a_unified_diff(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("# app\nx = 10\nother = 1\n")
    spec = _spec(tmp_path, conf)
    assert hone("apply", spec, "--set", "x=20").code == 0
    res = hone("status", "--diff")
    assert res.code == 0
    assert f"--- {conf} (original)" in res.out and f"+++ {conf} (now)" in res.out
    assert "\n-x = 10\n+x = 20\n" in res.out, res.out


def _knobs_spec(tmp_path: Path, knobs: str, command: str = "[sh, -c, 'echo score: 1']") -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(f"benchmark: {{command: {command}}}\nknobs:\n{textwrap.dedent(knobs)}")
    return spec


def _journal(state_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (state_dir / "journal.jsonl").read_text().splitlines()]


NGINX = """# main config
events {
\tworker_connections 64;
}

http {
    access_log off;
    keepalive_timeout 65;   # seconds
    server {
        listen 127.0.0.1:8080 default_server;
        location / { return 200 'ok'; }
    }
}
"""


def _nginx_t(conf: Path) -> subprocess.CompletedProcess[str]:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.fail("nginx not installed (Debian nginx-light; `make setup`)")
    return subprocess.run([nginx, "-t", "-p", str(conf.parent), "-c", str(conf), "-e", str(conf.parent / "err.log"),
                           "-g", f"pid {conf.parent / 'nginx.pid'};"], capture_output=True, text=True, timeout=30)


def test_apply_and_rollback_of_an_nginx_config_are_byte_exact(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX)
    spec = _knobs_spec(tmp_path, f"""\
        - {{name: keepalive, kind: file, path: {conf}, key: http.keepalive_timeout, values: [0, 65, 120]}}
        - {{name: listen, kind: file, path: {conf}, key: http.server.listen,
            values: ["127.0.0.1:8080 default_server", "127.0.0.1:8081 default_server"]}}
        - {{name: multi, kind: file, path: {conf}, key: events.multi_accept, values: ["on", "off"]}}
        """)
    res = hone("apply", spec, "--set", "keepalive=0", "--set", "listen=127.0.0.1:8081 default_server",
               "--set", "multi=on")
    assert res.code == 0, res.err
    assert conf.read_text() == NGINX.replace("keepalive_timeout 65;", "keepalive_timeout 0;").replace(
        ":8080 default_server", ":8081 default_server").replace("64;\n}", "64;\n\tmulti_accept on;\n}")
    assert _nginx_t(conf).returncode == 0
    assert hone("rollback").code == 0
    assert conf.read_text() == NGINX


TOML = """# app
[server]
port = 8080  # keep this comment
name = 'edge'

[cache]
enabled   = true
"""


def test_apply_and_rollback_of_a_toml_file_are_byte_exact(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.toml"
    conf.write_bytes(TOML.encode())
    spec = _knobs_spec(tmp_path, f"""\
        - {{name: port, kind: file, path: {conf}, key: server.port, values: [8080, 9090]}}
        - {{name: cache, kind: file, path: {conf}, key: cache.enabled, type: bool, encode: ["0", "1"]}}
        """)
    res = hone("apply", spec, "--set", "port=9090", "--set", "cache=false")
    assert res.code == 0, res.err
    assert conf.read_text() == TOML.replace("8080", "9090").replace("= true", "= false")
    assert tomllib.loads(conf.read_text())["server"] == {"port": 9090, "name": "edge"}
    assert hone("rollback").code == 0
    assert conf.read_bytes() == TOML.encode()


def test_a_run_renders_two_keys_of_one_file_from_its_original_and_restores_it(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX)
    spec = _knobs_spec(tmp_path, f"""\
        - {{name: keepalive, kind: file, path: {conf}, key: http.keepalive_timeout, values: [0, 65]}}
        - {{name: gzip, kind: file, path: {conf}, key: http.gzip, values: ["on", "off"]}}
        """, command=f"[grep, -c, -e, 'keepalive_timeout 0;', -e, '    gzip on;', {conf}]")
    res = hone("run", spec, "--set", "keepalive=0", "--set", "gzip=on", "--json", "-")
    assert res.code == 0, res.err
    doc = json.loads(res.out[res.out.index("{"):])
    assert [r["returncode"] for r in doc["runs"]] == [0]  # grep found both lines while it ran
    assert conf.read_text() == NGINX


PG_MAIN = """# PostgreSQL configuration
shared_buffers = 128MB
#work_mem = 4MB
include_dir = 'conf.d'
"""
PG_TUNE = "# tuning\nwork_mem = 8MB\t# per sort\n"


@pytest.fixture
def pgdata() -> Iterator[Path]:
    """A data directory PostgreSQL (run as nobody) may read: outside pytest's 0700 tree."""
    top = Path(tempfile.mkdtemp(prefix="hone-pg-", dir="/tmp"))
    os.chmod(top, 0o755)
    try:
        yield top / "pgdata"
    finally:
        shutil.rmtree(top)


def test_a_key_set_in_an_included_file_is_edited_there_and_rolled_back(hone, tmp_path: Path, pgdata: Path,  # type: ignore[no-untyped-def]
                                                                        state_dir: Path) -> None:
    data = pgdata
    (data / "conf.d").mkdir(parents=True)
    main, tune = data / "postgresql.conf", data / "conf.d" / "tune.conf"
    main.write_text(PG_MAIN)
    tune.write_text(PG_TUNE)
    spec = _knobs_spec(tmp_path, f"""\
        - {{name: work_mem, kind: file, path: {main}, key: work_mem, values: [8MB, 64MB]}}
        - {{name: shared_buffers, kind: file, path: {main}, key: shared_buffers, values: [128MB, 256MB]}}
        """)
    res = hone("apply", spec, "--set", "work_mem=64MB", "--set", "shared_buffers=256MB")
    assert res.code == 0, res.err
    assert tune.read_text() == PG_TUNE.replace("8MB", "64MB")
    assert main.read_text() == PG_MAIN.replace("128MB", "256MB")  # "#work_mem" stays a comment
    originals = {r["res"]: r["snapshot"] for r in _journal(state_dir) if r["op"] == "original"}
    assert set(originals) == {f"file:{tune}", f"file:{main}"}
    assert base64.b64decode(originals[f"file:{tune}"]["bytes_b64"]) == PG_TUNE.encode()
    if os.geteuid() == 0:  # PostgreSQL itself reads the edited include (as nobody: it refuses root)
        if not Path(POSTGRES).exists():
            pytest.fail("PostgreSQL not installed (Debian postgresql; `make setup`)")
        os.chown(data, 65534, 65534)
        os.chmod(data, 0o700)
        out = subprocess.run(["runuser", "-u", "nobody", "--", POSTGRES, "-D", str(data), "-C", "work_mem"],
                             capture_output=True, text=True, timeout=30)
        assert out.stdout.strip() == "65536", out.stderr  # kB
    res = hone("status", "--diff")
    assert f"--- {tune} (original)" in res.out and "\n-work_mem = 8MB" in res.out, res.out
    assert "\n+work_mem = 64MB" in res.out
    assert hone("rollback").code == 0
    assert tune.read_bytes() == PG_TUNE.encode() and main.read_bytes() == PG_MAIN.encode()


def test_an_nginx_directive_in_an_included_file_is_edited_there(hone, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                state_dir: Path) -> None:
    conf = tmp_path / "nginx.conf"
    (tmp_path / "conf.d").mkdir()
    site = tmp_path / "conf.d" / "site.conf"
    conf.write_text("events {}\nhttp {\n    access_log off;\n    include conf.d/*.conf;\n}\n")
    site_text = "# site\nserver {\n    listen 127.0.0.1:8080;\n}\n"
    site.write_text(site_text)
    spec = _knobs_spec(tmp_path, f"""\
        - {{name: listen, kind: file, path: {conf}, key: http.server.listen, values: ["127.0.0.1:8081"]}}
        - {{name: keepalive, kind: file, path: {conf}, key: http.server.keepalive_timeout, values: [5]}}
        """)
    res = hone("apply", spec, "--set", "listen=127.0.0.1:8081", "--set", "keepalive=5")
    assert res.code == 0, res.err
    assert site.read_text() == "# site\nserver {\n    listen 127.0.0.1:8081;\n    keepalive_timeout 5;\n}\n"
    assert [r["res"] for r in _journal(state_dir) if r["op"] == "original"] == [f"file:{site}"]
    assert _nginx_t(conf).returncode == 0
    assert hone("rollback").code == 0
    assert site.read_text() == site_text


def test_a_key_set_in_two_files_is_one_error_naming_both(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "conf.d").mkdir()
    main = tmp_path / "postgresql.conf"
    main.write_text("work_mem = 4MB\ninclude_dir 'conf.d'\n")
    (tmp_path / "conf.d" / "tune.conf").write_text("work_mem = 8MB\n")
    spec = _knobs_spec(tmp_path, f"  - {{name: w, kind: file, path: {main}, key: work_mem, values: [16MB]}}\n")
    res = hone("apply", spec, "--set", "w=16MB")
    assert res.code == 2
    assert f"work_mem is set in {main} and in {tmp_path / 'conf.d' / 'tune.conf'}" in res.err
    assert "give the file that should hold it as path:" in res.err and "Traceback" not in res.err
    assert main.read_text() == "work_mem = 4MB\ninclude_dir 'conf.d'\n"


def test_an_nginx_key_whose_block_is_missing_is_refused_at_load(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX)
    spec = _knobs_spec(tmp_path, f"  - {{name: l, kind: file, path: {conf}, key: stream.server.listen, values: [53]}}")
    res = hone("apply", spec, "--set", "l=53")
    assert res.code == 2
    assert len(res.err.strip().splitlines()) <= 2, res.err
    assert f"hone.yaml:3: knobs[0]: file knob l: {conf}: no 'stream' block at the top level" in res.err, res.err
    assert conf.read_text() == NGINX


def test_an_nginx_index_counts_blocks_across_included_files(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    main = tmp_path / "nginx.conf"
    main.write_text("http {\n    server { listen 1; }\n    include conf.d/*.conf;\n}\n")
    a, b = tmp_path / "conf.d" / "a.conf", tmp_path / "conf.d" / "b.conf"
    a.write_text("server { listen 2; }\n")
    b.write_text("# two\nserver { listen 3; }\nserver { listen 4; }\n")
    files = LocalFiles()
    assert locate(files, str(main), "nginx", "http.server[0].listen") == (str(main), "http[0].server[0].listen[0]")
    assert locate(files, str(main), "nginx", "http.server[3].listen") == (str(b), "server[1].listen[0]")
    assert locate(files, str(main), "nginx", "http.server[1].gzip") == (str(a), "server[0].gzip")
    with pytest.raises(ConfigError, match=rf"http\.server matches 4 blocks \(line 2, {a}:1, {b}:2, {b}:3\)"):
        locate(files, str(main), "nginx", "http.server.listen")


def test_an_include_loop_is_an_error_and_a_missing_include_is_skipped(tmp_path: Path) -> None:
    a, b = tmp_path / "a.conf", tmp_path / "b.conf"
    a.write_text("include 'b.conf'\ninclude_if_exists 'missing.conf'\n")
    b.write_text("include 'a.conf'\n")
    with pytest.raises(ConfigError, match=rf"include loop: {a} -> {b} -> {a}"):
        locate(LocalFiles(), str(a), "conf", "work_mem")
    b.write_text("work_mem = 1MB\n")
    assert locate(LocalFiles(), str(a), "conf", "work_mem") == (str(b), "work_mem")
    assert locate(LocalFiles(), str(a), "conf", "max_connections") == (str(a), "max_connections")


def test_an_absent_key_reads_as_its_built_in_default_and_the_file_is_left_alone(tmp_path: Path) -> None:
    from hone.run.configure import Configurator
    from hone.spec.loader import load_spec

    conf = tmp_path / "postgresql.conf"
    conf.write_text("#commit_delay = 0\t\t# range 0-100000\nshared_buffers = 128MB\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [sh, -c, 'echo score: 1']}}
        knobs:
          - {{name: commit_delay, kind: file, path: {conf}, key: commit_delay, values: [0, 100, 1000], absent: 0}}
          - {{name: wal_buffers, kind: file, path: {conf}, key: wal_buffers, values: ['-1', 16MB]}}
          - {{name: shared_buffers, kind: file, path: {conf}, key: shared_buffers, values: [16MB, 128MB],
              absent: 16MB}}
        """))
    before = conf.read_bytes()
    current = Configurator(load_spec(spec)).current_values()
    # absent: the built-in default; without `absent` unknown; a key in the file: what it says
    assert current == {"commit_delay": 0, "wal_buffers": None, "shared_buffers": "128MB"}
    assert conf.read_bytes() == before
