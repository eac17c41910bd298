"""One key edited, every other byte kept: conf, INI, KEY=VALUE, YAML, JSON."""

from __future__ import annotations

import json

import pytest
import yaml

from hone.knobs._config_formats import get_value, set_value

PG = """# PostgreSQL configuration
shared_buffers = 128MB			# min 128kB
#work_mem = 4MB
listen_addresses = 'localhost'  # what IP address(es) to listen on
"""


def test_conf_changes_value_keeps_comment_and_tabs() -> None:
    out = set_value(PG, "conf", "shared_buffers", "1GB")
    assert out == PG.replace("128MB", "1GB")
    assert get_value(out, "conf", "shared_buffers") == "1GB"


def test_conf_commented_key_is_absent_and_gets_appended() -> None:
    assert get_value(PG, "conf", "work_mem") is None
    out = set_value(PG, "conf", "work_mem", "64MB")
    assert out == PG + "work_mem = 64MB\n"


def test_conf_quoted_value_keeps_quotes() -> None:
    out = set_value(PG, "conf", "listen_addresses", "*")
    assert "listen_addresses = '*'  # what IP" in out
    assert get_value(out, "conf", "listen_addresses") == "*"


INI = """[client]
port = 3306

[mysqld]
# tuning
innodb_buffer_pool_size = 128M
max_connections=151
"""


def test_ini_section_key() -> None:
    out = set_value(INI, "ini", "max_connections", "500", section="mysqld")
    assert out == INI.replace("max_connections=151", "max_connections=500")
    assert get_value(out, "ini", "port", section="client") == "3306"
    assert get_value(out, "ini", "port", section="mysqld") is None


def test_ini_missing_key_is_added_inside_its_section() -> None:
    out = set_value(INI, "ini", "thread_cache_size", "16", section="client")
    assert out.startswith("[client]\nport = 3306\nthread_cache_size = 16\n\n[mysqld]")
    assert get_value(out, "ini", "thread_cache_size", section="client") == "16"


ENV = 'export MALLOC_ARENA_MAX=4\nJAVA_OPTS="-Xmx1g"  # heap\n'


def test_env_file_quotes_preserved() -> None:
    out = set_value(ENV, "env", "JAVA_OPTS", "-Xmx4g -XX:+UseG1GC")
    assert out == 'export MALLOC_ARENA_MAX=4\nJAVA_OPTS="-Xmx4g -XX:+UseG1GC"  # heap\n'
    out = set_value(ENV, "env", "MALLOC_ARENA_MAX", "2")
    assert out.startswith("export MALLOC_ARENA_MAX=2\n")


def test_env_value_with_spaces_gets_quoted_when_new() -> None:
    out = set_value("", "env", "OPTS", "a b")
    assert out == "OPTS='a b'\n"


YAML = """# server
server:
  threads: 8   # worker threads
  cache:
    size_mb: 256
listeners: [a, b]
"""


def test_yaml_path_edit_keeps_comments() -> None:
    out = set_value(YAML, "yaml", "server.cache.size_mb", "1024")
    assert out == YAML.replace("256", "1024")
    assert yaml.safe_load(out)["server"]["cache"]["size_mb"] == 1024
    assert get_value(out, "yaml", "server.threads") == "8"
    assert get_value(YAML, "yaml", "listeners[1]") == "b"


def test_yaml_missing_path_raises() -> None:
    with pytest.raises(KeyError):
        set_value(YAML, "yaml", "server.nope", "1")


JSON = '{\n  "db": {"pool": 10, "name": "main"},\n  "debug": false\n}\n'


def test_json_number_and_string() -> None:
    out = set_value(JSON, "json", "db.pool", "32")
    assert out == JSON.replace("10", "32")
    out = set_value(out, "json", "db.name", 'we"ird')
    assert json.loads(out)["db"] == {"pool": 32, "name": 'we"ird'}
