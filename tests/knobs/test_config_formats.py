"""One key edited, every other byte kept: conf (PostgreSQL, redis), INI, KEY=VALUE, YAML,
JSON, TOML, nginx blocks, Java properties. Real servers (nginx, redis, Java) read back what
hone wrote where that is the question."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hone.knobs._config_formats import ConfigError, get_value, guess_format, set_value, split_path
from hone.knobs._properties import entries

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


def test_formats_are_guessed_from_the_file_name() -> None:
    assert guess_format("/etc/nginx/nginx.conf", None) == "nginx"
    assert guess_format("/etc/nginx/sites-enabled/default", None) == "nginx"
    assert guess_format("/srv/site.nginx", None) == "nginx"
    assert guess_format("/etc/app/config.toml", None) == "toml"
    assert guess_format("/opt/kafka/config/server.properties", None) == "properties"
    assert guess_format("/etc/redis/redis.conf", None) == "conf"
    assert guess_format("/etc/postgresql/15/main/postgresql.conf", None) == "conf"


# ---------------------------------------------------------------- redis.conf (the conf format)

REDIS = """# Redis configuration
maxmemory-policy noeviction
io-threads 4
io-threads-do-reads no
save 900 1
save 300 10
save 60 10000
"""


def test_redis_dashed_keys_and_a_key_that_prefixes_another() -> None:
    assert get_value(REDIS, "conf", "maxmemory-policy") == "noeviction"
    assert get_value(REDIS, "conf", "io-threads") == "4"
    assert set_value(REDIS, "conf", "io-threads", "8") == REDIS.replace("io-threads 4", "io-threads 8")
    out = set_value(REDIS, "conf", "maxmemory-policy", "allkeys-lru")
    assert out == REDIS.replace("noeviction", "allkeys-lru")


def test_redis_repeated_save_lines_the_last_counts_and_an_index_names_one() -> None:
    assert get_value(REDIS, "conf", "save") == "60 10000"
    assert get_value(REDIS, "conf", "save[0]") == "900 1"
    assert set_value(REDIS, "conf", "save[1]", "600 50") == REDIS.replace("save 300 10", "save 600 50")
    assert set_value(REDIS, "conf", "save", "120 5") == REDIS.replace("save 60 10000", "save 120 5")
    with pytest.raises(ConfigError, match=r"save\[3\]: there are 3 active 'save' lines"):
        set_value(REDIS, "conf", "save[3]", "1 1")


def test_redis_server_reads_the_values_hone_wrote(tmp_path: Path) -> None:
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        pytest.fail("redis-server/redis-cli not installed (Debian redis-server, redis-tools; `make setup`)")
    sock = tmp_path / "r.sock"
    text = REDIS + f"port 0\nunixsocket {sock}\ndir {tmp_path}\n"
    for key, value in (("maxmemory-policy", "allkeys-lru"), ("save[1]", "600 50"), ("io-threads", "2")):
        text = set_value(text, "conf", key, value)
    (tmp_path / "redis.conf").write_text(text)
    proc = subprocess.Popen([server, str(tmp_path / "redis.conf")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if sock.exists():
                break
            assert proc.poll() is None, "redis-server refused the config hone wrote"
            subprocess.run(["sleep", "0.05"], check=True)

        def config_get(name: str) -> str:
            out = subprocess.run([cli, "-s", str(sock), "CONFIG", "GET", name], capture_output=True, text=True,
                                 timeout=10, check=True).stdout
            return out.splitlines()[1]

        assert config_get("maxmemory-policy") == "allkeys-lru"
        assert config_get("save") == "900 1 600 50 60 10000"  # the three save lines, the second changed
        assert config_get("io-threads") == "2"
    finally:
        proc.kill()
        proc.wait(timeout=10)


# ---------------------------------------------------------------- nginx blocks

NGINX = """user www-data;
worker_processes auto;  # one per core

events {
\tworker_connections 768;
}

http {
    keepalive_timeout 65;
    # gzip on;
    add_header X-Frame-Options "SAMEORIGIN";
    server {
        listen 80 default_server;
        server_name _;
        location / { root /var/www; }
    }
    server {
        listen 443 ssl;  # tls
        location /api {
            proxy_pass http://backend;
        }
    }
}
"""


def test_nginx_value_is_the_arguments_without_the_semicolon() -> None:
    assert get_value("keepalive_timeout 0;\n", "conf", "keepalive_timeout") == "0;"  # why conf does not fit
    assert get_value("keepalive_timeout 0;\n", "nginx", "keepalive_timeout") == "0"
    assert get_value(NGINX, "nginx", "worker_processes") == "auto"
    assert get_value(NGINX, "nginx", "http.keepalive_timeout") == "65"
    assert get_value(NGINX, "nginx", "http.server[0].listen") == "80 default_server"
    assert get_value(NGINX, "nginx", "http.add_header") == 'X-Frame-Options "SAMEORIGIN"'
    assert get_value(NGINX, "nginx", "http.gzip") is None  # commented out


def test_nginx_set_changes_only_the_arguments() -> None:
    out = set_value(NGINX, "nginx", "http.server[1].listen", "8443 ssl")
    assert out == NGINX.replace("listen 443 ssl;  # tls", "listen 8443 ssl;  # tls")
    out = set_value(NGINX, "nginx", "http.keepalive_timeout", "0")
    assert out == NGINX.replace("keepalive_timeout 65;", "keepalive_timeout 0;")


def test_nginx_absent_directive_goes_before_the_closing_brace_indented_like_its_block() -> None:
    out = set_value(NGINX, "nginx", "events.multi_accept", "on")
    assert out == NGINX.replace("\tworker_connections 768;\n}", "\tworker_connections 768;\n\tmulti_accept on;\n}")
    out = set_value(NGINX, "nginx", "http.gzip", "on")
    assert out == NGINX.replace("        }\n    }\n}\n", "        }\n    }\n    gzip on;\n}\n")
    out = set_value(NGINX, "nginx", "http.server[1].location[/api].proxy_read_timeout", "30s")
    assert "            proxy_pass http://backend;\n            proxy_read_timeout 30s;\n        }" in out
    # a block on one line gets the directive on that line; an empty block one level deeper
    out = set_value(NGINX, "nginx", "http.server[0].location[/].index", "index.html")
    assert out == NGINX.replace("{ root /var/www; }", "{ root /var/www; index index.html; }")
    assert set_value("events {\n}\n", "nginx", "events.use", "epoll") == "events {\n    use epoll;\n}\n"
    assert set_value("pid /run/x.pid;", "nginx", "worker_processes", "2") == "pid /run/x.pid;\nworker_processes 2;\n"
    crlf = "http {\r\n    a 1;\r\n}\r\n"  # a file with CRLF line ends keeps them
    assert set_value(crlf, "nginx", "http.b", "2") == "http {\r\n    a 1;\r\n    b 2;\r\n}\r\n"


def test_nginx_repeated_block_without_an_index_is_an_error_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"http\.server matches 2 blocks \(line 12, line 17\): name one as "
                                          r"http\.server\[0\] … http\.server\[1\]"):
        set_value(NGINX, "nginx", "http.server.listen", "81")
    with pytest.raises(ConfigError, match=r"there are 2 'server' blocks here \(0 … 1\)"):
        get_value(NGINX, "nginx", "http.server[2].listen")
    twice = "server {\n    listen 80;\n    listen 443;\n}\n"
    with pytest.raises(ConfigError, match=r"server\.listen matches 2 directives"):
        get_value(twice, "nginx", "server.listen")
    assert get_value(twice, "nginx", "server.listen[1]") == "443"


def test_nginx_a_block_is_picked_by_its_arguments() -> None:
    assert get_value(NGINX, "nginx", "http.server[1].location[/api].proxy_pass") == "http://backend"
    assert get_value(NGINX, "nginx", "http.server[0].location[/].root") == "/var/www"


def test_nginx_missing_block_reads_as_absent_and_cannot_be_set() -> None:
    assert get_value(NGINX, "nginx", "stream.server.listen") is None
    with pytest.raises(ConfigError, match=r"no 'stream' block at the top level, so stream\.server\.listen cannot"):
        set_value(NGINX, "nginx", "stream.server.listen", "53")
    with pytest.raises(ConfigError, match=r"no 'location' block with arguments '/x' in http\.server\[0\]"):
        set_value(NGINX, "nginx", "http.server[0].location[/x].root", "/srv")
    with pytest.raises(ConfigError, match=r"http\.server\[0\] is a block, not a directive"):
        set_value(NGINX, "nginx", "http.server[0]", "x")


def test_nginx_values_that_would_break_the_syntax_are_quoted() -> None:
    out = set_value(NGINX, "nginx", "http.server[0].server_name", "a; b")
    assert '        server_name "a; b";\n' in out
    assert get_value(out, "nginx", "http.server[0].server_name") == "a; b"
    out = set_value(NGINX, "nginx", "http.server[0].server_name", '"quoted" # not a comment {')
    assert get_value(out, "nginx", "http.server[0].server_name") == '"quoted" # not a comment {'
    out = set_value("root /x;\n", "nginx", "root", '"a b"')  # quotes given as the value are kept
    assert get_value(out, "nginx", "root") == '"a b"'
    # a quoted argument stays quoted, with its quote character
    out = set_value("add_header 'X-A';\n", "nginx", "add_header", "it's")
    assert out == "add_header 'it\\'s';\n" and get_value(out, "nginx", "add_header") == "it's"


def test_nginx_accepts_the_config_hone_wrote(tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.fail("nginx not installed (Debian nginx-light; `make setup`)")
    text = ("events {\n    worker_connections 64;\n}\nhttp {\n    access_log off;\n    server {\n"
            "        listen 127.0.0.1:8080;\n        location / { return 200 'ok'; }\n    }\n}\n")
    for key, value in (("http.server.listen", "127.0.0.1:8081 default_server"), ("http.keepalive_timeout", "0"),
                       ("http.server.location[/].add_header", "X-Test \"a b\""), ("events.multi_accept", "on"),
                       ("http.server.server_name", "example.com; other.com")):
        text = set_value(text, "nginx", key, value)
    conf = tmp_path / "nginx.conf"
    conf.write_text(text)
    res = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log"),
                          "-g", f"pid {tmp_path / 'nginx.pid'};"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    dump = subprocess.run([nginx, "-T", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log"),
                           "-g", f"pid {tmp_path / 'nginx.pid'};"], capture_output=True, text=True, timeout=30)
    assert "listen 127.0.0.1:8081 default_server;" in dump.stdout


_NAMES = st.sampled_from(["listen", "root", "gzip", "worker", "proxy_pass", "add_header"])
_BLOCKS = st.sampled_from(["http", "server", "location", "events"])
_WORD = st.from_regex(r"[a-z0-9_/:.$=-]{1,8}", fullmatch=True)
_QUOTED = st.text(st.sampled_from("ab ;{}#'\\\"x"), max_size=6).map(
    lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')
_ARGS = st.lists(st.one_of(_WORD, _QUOTED), max_size=3)
_COMMENT = st.sampled_from(["", "  # c", "\t# } ; { 'x"])
_TREE = st.recursive(
    st.tuples(_NAMES, _ARGS, _COMMENT),
    lambda inner: st.tuples(_BLOCKS, st.lists(_WORD, max_size=2), st.lists(inner, max_size=4)),
    max_leaves=14,
)
_VALUE = st.text(st.one_of(st.sampled_from(" ;{}#\"'\\$"), st.characters(codec="utf-8", exclude_categories=(
    "Cc", "Cs", "Zl", "Zp"))), min_size=1, max_size=12).filter(lambda v: v.strip() != "")


def _render(nodes: list, depth: int = 0, prefix: str = "") -> tuple[list[str], list[str], list[str]]:  # type: ignore[type-arg]
    """Config lines, the indexed path of every directive and of every block."""
    lines: list[str] = []
    directives: list[str] = []
    blocks: list[str] = []
    counts: dict[tuple[str, bool], int] = {}
    pad = "    " * depth
    for node in nodes:
        is_block = len(node) == 3 and isinstance(node[2], list)
        n = counts[(node[0], is_block)] = counts.get((node[0], is_block), -1) + 1
        path = f"{prefix}{node[0]}[{n}]"
        if is_block:
            lines.append(f"{pad}{' '.join([node[0], *node[1]])} {{")
            sub_lines, sub_directives, sub_blocks = _render(node[2], depth + 1, path + ".")
            lines += sub_lines
            directives += sub_directives
            blocks += [path, *sub_blocks]
            lines.append(f"{pad}}}")
        else:
            lines.append(f"{pad}{' '.join([node[0], *node[1]])};{node[2]}")
            directives.append(path)
    return lines, directives, blocks


def _same_words(a: str | None, b: str) -> bool:
    return a is not None and " ".join(a.split()) == " ".join(b.split())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TREE, min_size=1, max_size=4), st.integers(0, 10_000), _VALUE)
def test_nginx_set_then_get_returns_the_value_and_keeps_every_other_line(tree: list, pick: int,  # type: ignore[type-arg]
                                                                         value: str) -> None:
    lines, directives, _ = _render(tree)
    if not directives:
        return
    text = "\n".join(lines) + "\n"
    path = directives[pick % len(directives)]
    out = set_value(text, "nginx", path, value)
    assert _same_words(get_value(out, "nginx", path), value)
    new_lines = out.splitlines()
    assert len(new_lines) == len(lines)
    assert sum(a != b for a, b in zip(lines, new_lines, strict=True)) <= 1
    for other in directives:
        if other != path:
            assert get_value(out, "nginx", other) == get_value(text, "nginx", other)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TREE, min_size=1, max_size=4), st.integers(0, 10_000), _VALUE)
def test_nginx_an_absent_directive_adds_one_line_inside_its_block(tree: list, pick: int,  # type: ignore[type-arg]
                                                                  value: str) -> None:
    lines, _, blocks = _render(tree)
    if not blocks:
        return
    text = "\n".join(lines) + "\n"
    path = f"{blocks[pick % len(blocks)]}.keepalive_timeout"
    out = set_value(text, "nginx", path, value)
    assert _same_words(get_value(out, "nginx", path), value)
    new_lines = out.splitlines()
    added = [i for i, line in enumerate(new_lines) if "keepalive_timeout" in line]
    assert len(added) == 1
    assert new_lines[: added[0]] + new_lines[added[0] + 1 :] == lines


# ---------------------------------------------------------------- TOML

TOML = """# service config
title = "hone"   # shown in the UI

[server]
port    = 8080  # listen here
host = 'localhost'
debug = false
ratio = 0.25
limits.max_conn = 100
tls = { enabled = true, cert = "/etc/cert.pem" }

[[workers]]
name = "a"
threads = 2

[[workers]]
name = "b"
threads = 4
"""


@pytest.mark.parametrize(("key", "value", "old_line", "new_line"), [
    ("server.port", "9090", "port    = 8080  # listen here", "port    = 9090  # listen here"),
    ("server.host", "example.com", "host = 'localhost'", "host = 'example.com'"),
    ("server.host", "it's", "host = 'localhost'", 'host = "it\'s"'),  # a literal string cannot hold a '
    ("server.debug", "true", "debug = false", "debug = true"),
    ("server.ratio", "0.5", "ratio = 0.25", "ratio = 0.5"),
    ("server.limits.max_conn", "500", "limits.max_conn = 100", "limits.max_conn = 500"),
    ("server.tls.enabled", "false", "enabled = true, cert", "enabled = false, cert"),
    ("workers[1].threads", "8", "threads = 4", "threads = 8"),
    ("title", "42", 'title = "hone"   # shown', 'title = "42"   # shown'),
])
def test_toml_one_value_changes_in_its_type_and_every_other_byte_stays(key: str, value: str, old_line: str,
                                                                       new_line: str) -> None:
    out = set_value(TOML, "toml", key, value)
    assert out == TOML.replace(old_line, new_line)
    assert get_value(out, "toml", key) == value


def test_toml_values_keep_their_type() -> None:
    doc = tomllib.loads(set_value(set_value(TOML, "toml", "server.port", "9090"), "toml", "title", "7"))
    assert doc["server"]["port"] == 9090 and doc["title"] == "7"
    assert tomllib.loads(set_value(TOML, "toml", "server.debug", "1"))["server"]["debug"] is True
    with pytest.raises(ConfigError, match=r"server\.port is an integer: expected a whole number, got '1\.5'"):
        set_value(TOML, "toml", "server.port", "1.5")
    with pytest.raises(ConfigError, match=r"server\.debug is a boolean: expected true or false, got 'maybe'"):
        set_value(TOML, "toml", "server.debug", "maybe")


def test_toml_absent_key_is_added_to_its_table_and_a_missing_table_is_an_error() -> None:
    out = set_value(TOML, "toml", "server.backlog", "512")
    assert tomllib.loads(out)["server"]["backlog"] == 512
    assert out.startswith(TOML.split("[[workers]]")[0].rstrip("\n"))  # the lines before stay
    assert get_value(TOML, "toml", "cache.size") is None
    with pytest.raises(ConfigError, match=r"no table cache, so cache\.size cannot be set"):
        set_value(TOML, "toml", "cache.size", "1")
    with pytest.raises(ConfigError, match=r"not valid TOML"):
        get_value("a = = 1\n", "toml", "a")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["server.port", "server.host", "title", "workers[0].name", "server.limits.max_conn"]),
       st.one_of(st.integers(-10**6, 10**6).map(str), st.text(st.characters(exclude_categories=("Cs",)),
                                                              max_size=10)))
def test_toml_set_then_get_returns_the_value_and_other_keys_stay(key: str, value: str) -> None:
    try:
        out = set_value(TOML, "toml", key, value)
    except ConfigError:
        assert key.endswith(("port", "max_conn"))  # only an integer refuses a value
        return
    got = get_value(out, "toml", key)
    if key.endswith(("port", "max_conn")):  # an integer: the same number as TOML writes it ("00" reads "0")
        assert got is not None
        assert int(got) == (int(value, 0) if value.lower().startswith(("0x", "0o", "0b")) else int(value))
    else:
        assert got == value
    expected = tomllib.loads(TOML)
    *parents, last = split_path(key)
    holder = expected
    for part in parents:
        holder = holder[part]
    holder[last] = type(holder[last])(value)  # an int stays an int, a string a string
    assert tomllib.loads(out) == expected
    old_lines, new_lines = TOML.split("\n"), out.split("\n")  # not splitlines: U+0085 is no TOML line end
    assert len(new_lines) == len(old_lines)
    assert sum(a != b for a, b in zip(old_lines, new_lines, strict=True)) <= 1


# ---------------------------------------------------------------- Java properties

PROPS = r"""# Kafka broker
broker.id=0
! a bang comment
log.dirs = /var/lib/kafka
num.network.threads: 3
listeners PLAINTEXT://:9092
my\ key\=x = spaced
long.value = one, \
    two, \
    three
empty
"""


def test_properties_separators_comments_and_continuations() -> None:
    assert get_value(PROPS, "properties", "broker.id") == "0"
    assert get_value(PROPS, "properties", "log.dirs") == "/var/lib/kafka"
    assert get_value(PROPS, "properties", "num.network.threads") == "3"
    assert get_value(PROPS, "properties", "listeners") == "PLAINTEXT://:9092"
    assert get_value(PROPS, "properties", "long.value") == "one, two, three"
    assert get_value(PROPS, "properties", "empty") == ""
    assert get_value(PROPS, "properties", "a") is None  # "! a bang comment" is a comment


def test_properties_set_keeps_the_separator_and_replaces_continued_values_whole() -> None:
    out = set_value(PROPS, "properties", "num.network.threads", "8")
    assert out == PROPS.replace("num.network.threads: 3", "num.network.threads: 8")
    out = set_value(PROPS, "properties", "long.value", "a,b")
    assert out == PROPS.replace("one, \\\n    two, \\\n    three", "a,b")
    assert set_value(PROPS, "properties", "empty", "1") == PROPS.replace("\nempty\n", "\nempty=1\n")


def test_properties_escaped_keys_and_values() -> None:
    assert get_value(PROPS, "properties", "my key=x") == "spaced"
    out = set_value(PROPS, "properties", "my key=x", " lead\\tab\tü")
    assert "my\\ key\\=x = \\ lead\\\\tab\\t\\u00FC\n" in out
    assert get_value(out, "properties", "my key=x") == " lead\\tab\tü"


def test_properties_absent_key_is_appended_with_the_files_last_separator() -> None:
    out = set_value(PROPS, "properties", "num.io.threads", "16")
    assert out == PROPS + "num.io.threads = 16\n"  # the last entry with a separator: "long.value = "
    assert set_value("a: 1", "properties", "b c", "2") == "a: 1\nb\\ c: 2\n"


_PKEY = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
_PVALUE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_PKEY, _PVALUE), min_size=1, max_size=6))
def test_properties_set_then_get_returns_every_value(pairs: list[tuple[str, str]]) -> None:
    text = PROPS
    expected = {e.key: e.value for e in entries(PROPS)}
    for key, value in pairs:
        text = set_value(text, "properties", key, value)
        expected[key] = value
    assert {e.key: e.value for e in entries(text)} == expected
    if not {k for k, _ in pairs} & {e.key for e in entries(PROPS)}:
        assert text.startswith(PROPS)  # new keys only append


_JAVA_DUMP = """
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

public class Dump {
    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x));
        return b.toString();
    }
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(file)) { p.load(in); }
            for (String k : new TreeSet<>(p.stringPropertyNames()))
                System.out.println(file + "\\t" + hex(k) + "\\t" + hex(p.getProperty(k)));
        }
    }
}
"""


@settings(max_examples=3, deadline=None)
@given(st.lists(st.lists(st.tuples(_PKEY, _PVALUE), min_size=1, max_size=8), min_size=10, max_size=10))
def test_java_reads_the_properties_hone_wrote(tmp_path_factory: pytest.TempPathFactory,
                                              batches: list[list[tuple[str, str]]]) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.fail("java not installed (Debian default-jdk-headless; `make setup`)")
    tmp = tmp_path_factory.mktemp("props")
    (tmp / "Dump.java").write_text(_JAVA_DUMP)
    expected: dict[str, dict[str, str]] = {}
    for i, pairs in enumerate(batches):
        text = PROPS
        for key, value in pairs:
            text = set_value(text, "properties", key, value)
        path = tmp / f"{i}.properties"
        path.write_bytes(text.encode("latin-1"))  # hone writes ASCII: the same bytes in any encoding
        expected[str(path)] = {e.key: e.value for e in entries(text)}
    res = subprocess.run([java, str(tmp / "Dump.java"), *expected], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    got: dict[str, dict[str, str]] = {path: {} for path in expected}
    for line in res.stdout.splitlines():
        path, key, value = line.split("\t")
        got[path][bytes.fromhex(key).decode()] = bytes.fromhex(value).decode()
    assert got == expected


def test_an_absent_key_is_added_the_way_the_file_writes_its_keys() -> None:
    from hone.knobs._config_formats import set_value

    assert set_value('port 6379\nsave ""\n', "conf", "hz", "50") == 'port 6379\nsave ""\nhz 50\n'  # redis.conf
    assert set_value("a = 1\n#b = 2\n", "conf", "hz", "50") == "a = 1\n#b = 2\nhz = 50\n"  # postgresql.conf
    assert set_value("a = 1\r\n", "conf", "hz", "50") == "a = 1\r\nhz = 50\r\n"
