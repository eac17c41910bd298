"""A-Tune client/server YAML pairs → hone specs (and back)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import optuna
import pytest
import yaml

from hone.core.errors import SpecError
from hone.core.process import ProcessResult
from hone.knobs import driver_for
from hone.run.metrics import extract
from hone.spec.atune import load_atune, quote_var, to_atune
from tests.net import free_port

REPO = Path(__file__).resolve().parents[2]

CLIENT = """\
project: "demo"
engine: "bayes"
iterations: 4
random_starts: 2
benchmark: "{py} bench.py"
evaluations:
  -
    name: "tps"
    info:
      get: "echo '$out' | grep 'tps:' | awk '{{print $2}}'"
      type: "negative"
      weight: 60
  -
    name: "delay"
    info:
      get: "echo '$out' | grep 'delay:' | awk '{{print $2}}'"
      type: "positive"
      weight: 40
      threshold: 50
"""

SERVER = """\
project: "demo"
maxiterations: 4
startworkload: ""
stopworkload: ""
object :
  -
    name : "ratio"
    info :
      desc : "a ratio kept in a file"
      get : "cat {d}/ratio"
      set : "printf '%s' $value > {d}/ratio"
      needrestart : "false"
      type : "discrete"
      scope :
        - 0
        - 100
      step : 5
      items :
      dtype : "int"
  -
    name : "mode"
    info :
      get : "cat {d}/mode"
      set : "printf '%s' $value > {d}/mode"
      needrestart : "false"
      type : "discrete"
      options :
        - "fast"
        - "safe"
      dtype : "string"
"""

BENCH = """\
import pathlib
r = int(pathlib.Path("ratio").read_text()); m = pathlib.Path("mode").read_text()
print("tps:", 1000 + 10 * r - (300 if m == "safe" else 0))
print("delay:", 20 + r / 10)
print("it's a line with 'quotes' and $(touch pwned)")
"""


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "ratio").write_text("10")
    (tmp_path / "mode").write_text("safe")
    (tmp_path / "bench.py").write_text(BENCH)
    client = tmp_path / "client.yaml"
    server = tmp_path / "server.yaml"
    client.write_text(CLIENT.format(py=sys.executable))
    server.write_text(SERVER.format(d=tmp_path))
    return client, server


def test_pair_translates_to_ordered_knobs_goals_weights_and_constraints(pair):
    loaded = load_atune(*pair)
    spec = loaded.spec
    # iterations count A-Tune's benchmark runs: hone's run budget, not its trials
    assert spec.name == "demo" and spec.tune.max_runs == 4 and spec.tune.random_starts == 2
    assert spec.tune.objective == "weighted"
    tps, delay = spec.metrics
    assert (tps.goal, tps.weight, delay.goal, delay.weight) == ("maximize", 60, "minimize", 40)
    assert delay.constraint == "<= 50"
    ratio, mode = spec.knobs
    assert (ratio.type, ratio.range, ratio.step) == ("int", [0, 100], 5)  # ordered, not 21 categories
    assert mode.values == ["fast", "safe"]
    assert driver_for(ratio).read() == "10"


def test_round_trip_through_atune_files(pair, tmp_path):
    first = load_atune(*pair).spec
    client, server = to_atune(first)
    (tmp_path / "c2.yaml").write_text(yaml.safe_dump(client))
    (tmp_path / "s2.yaml").write_text(yaml.safe_dump(server))
    second = load_atune(tmp_path / "c2.yaml", tmp_path / "s2.yaml").spec
    dump = [s.model_dump(mode="json", exclude={"description"}) for s in (first, second)]
    assert dump[0] == dump[1]


def test_out_reaches_get_through_the_environment_never_as_shell_text(pair, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = load_atune(*pair).spec
    out = "tps: 1234\nit's 'quoted' $(touch pwned) `touch pwned2`\n"
    res = ProcessResult(argv=["x"], returncode=0, stdout=out, stderr="", wall_s=1, user_s=0, sys_s=0, max_rss_kb=0)
    assert extract(spec.metrics[0], res) == 1234.0
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


def test_value_reaches_set_as_one_argument(pair, tmp_path):
    spec = load_atune(*pair).spec
    driver = driver_for(spec.knobs[1])
    driver.write("two words; touch pwned")
    assert (tmp_path / "mode").read_text() == "two words; touch pwned"
    assert not (tmp_path / "pwned").exists()


def test_quote_var_rewrites_every_spelling():
    assert quote_var("echo '$out' | x", "out") == 'echo "$out" | x'
    assert quote_var('echo "$out"; echo ${out}; echo $out', "out") == 'echo "$out"; echo "$out"; echo "$out"'
    assert quote_var("echo $outside", "out") == "echo $outside"


def test_bad_scope_points_at_the_server_line(pair):
    client, server = pair
    server.write_text(server.read_text().replace("        - 0\n        - 100\n", "        - 0\n"))
    with pytest.raises(SpecError, match=r"server.yaml:14: object\[0\]\.info\.scope: expected scope"):
        load_atune(client, server)


def test_hone_tune_runs_an_atune_pair(pair, hone, tmp_path):
    client, server = pair
    # iterations: 4 cannot pay for a confirmation (6 rounds × 2 arms): 17 = baseline 1 + 4 trials + 12
    # (--fixed-repeats: the baseline stays 1 run, not the 3 that would show the runs identical)
    res = hone("tune", client, "--atune-server", server, "--repeats", "1", "--confirm", "6", "--top-k", "1",
               "--json", tmp_path / "r.json", "--seed", "1", "--max-runs", "17", "--fixed-repeats")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["trials"] == 4 and doc["failed_trials"] == 0 and doc["budget"]["runs_total"] <= 17
    assert doc["objective"]["mode"] == "weighted"
    # A-Tune's score drives the search; the verdict is on the weighted geometric mean: both are named
    assert ("objective: a trial's score (its `best`) is the weighted % change vs baseline (tps×60, delay×40); "
            "the confirmation's % change is of the weighted geometric mean") in res.out
    assert doc["recommended"] and doc["confirmations"][0]["judged_alone"] is None
    assert "vs baseline (the weighted geometric mean of the 2 metrics)" in res.out
    assert "weighted geometric mean (the verdict)" in hone("report", tmp_path / "r.json").out
    assert "--variant alone:ratio=60 --metric objective" in res.out  # compared on the verdict's figure
    # the HTML report and `hone report STUDY` read the study's copy: its commands name the translated spec
    stored = optuna.load_study(study_name=doc["study"], storage=doc["storage"]).user_attrs["hone_result"]
    assert "/atune/" in doc["spec"] and stored["spec"] == doc["spec"]
    assert stored["apply_command"] == doc["apply_command"]
    assert (tmp_path / "ratio").read_text() == "10" and (tmp_path / "mode").read_text() == "safe"
    assert not (tmp_path / "pwned").exists()


def test_example_pair_in_the_repo_loads():
    loaded = load_atune(REPO / "examples/atune/dirty_client.yaml", REPO / "examples/atune/dirty_server.yaml")
    assert [k.name for k in loaded.spec.knobs] == ["vm.dirty_background_ratio", "vm.dirty_expire_centisecs"]
    assert textwrap.dedent(loaded.spec.metrics[0].extract.command).startswith('echo "$out"')


REDIS_CLIENT = """\
project: "redis"
engine: "gridsearch"
iterations: 3  # benchmark runs: the baseline's and one for each option
benchmark: "{py} bench.py"
evaluations:
  -
    name: "score"
    info:
      get: "echo \\"$out\\" | awk '/^score:/ {{print $2}}'"
      type: "negative"
      weight: 100
"""

# A-Tune's redis_server.yaml idiom: $value inside sed's single-quoted script.
REDIS_SERVER = """\
project: "redis"
maxiterations: 2
startworkload: ""
stopworkload: ""
object :
  -
    name : "supervised"
    info :
      get : "sed -n 's/^supervised *//p' {d}/redis.conf"
      set : "sed -i 's/supervised .*/supervised  $value/g' {d}/redis.conf"
      needrestart : "false"
      type : "discrete"
      options :
        - "no"
        - "systemd"
      dtype : "string"
"""

REDIS_BENCH = """\
import pathlib
line = [x for x in pathlib.Path("redis.conf").read_text().splitlines() if x.startswith("supervised")][0]
with open("seen.txt", "a") as f:
    print(line, file=f)
print("score:", 1)
"""


@pytest.fixture
def redis_pair(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "redis.conf").write_text("port 6379\nsupervised yes\n")
    (tmp_path / "bench.py").write_text(REDIS_BENCH)
    client, server = tmp_path / "client.yaml", tmp_path / "server.yaml"
    client.write_text(REDIS_CLIENT.format(py=sys.executable))
    server.write_text(REDIS_SERVER.format(d=tmp_path))
    return client, server


def test_sed_value_in_single_quotes_reaches_the_file_as_the_value(redis_pair, tmp_path):
    spec = load_atune(*redis_pair).spec
    driver = driver_for(spec.knobs[0])
    driver.write("no")
    assert (tmp_path / "redis.conf").read_text() == "port 6379\nsupervised  no\n"
    driver.write("$(touch pwned); 'x' `touch pwned`")
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "redis.conf").read_text() == "port 6379\nsupervised  $(touch pwned); 'x' `touch pwned`\n"


def test_hone_tune_sets_the_sed_idiom_values_and_restores_the_file(redis_pair, hone, tmp_path):
    client, server = redis_pair
    res = hone("tune", client, "--atune-server", server, "--repeats", "1", "--confirm", "0", "--sampler", "grid",
               "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    assert json.loads((tmp_path / "r.json").read_text())["failed_trials"] == 0
    assert set((tmp_path / "seen.txt").read_text().splitlines()) == {"supervised yes", "supervised  no",
                                                                      "supervised  systemd"}
    # the file sed edits is kept whole (its set would leave the idiom's double space): back byte for byte
    assert load_atune(client, server).spec.knobs[0].files == [str(tmp_path / "redis.conf")]
    assert (tmp_path / "redis.conf").read_text() == "port 6379\nsupervised yes\n"


@pytest.mark.parametrize("get", ["echo '$out' | grep 'tps:' | awk '{print $2}'",
                                 "echo \"$out\" | awk '/tps:/ {print $2}'"])
def test_get_reads_out_of_any_size_and_never_runs_it(get, pair, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    client, server = pair
    client.write_text(client.read_text().replace("\"echo '$out' | grep 'tps:' | awk '{print $2}'\"", json.dumps(get)))
    spec = load_atune(client, server).spec
    out = "it's 'quoted' $(touch pwned) `touch pwned`\n" * 40_000 + "tps: 1234\n"  # 1.7 MiB
    res = ProcessResult(argv=["x"], returncode=0, stdout=out, stderr="", wall_s=1, user_s=0, sys_s=0, max_rss_kb=0)
    assert extract(spec.metrics[0], res) == 1234.0
    assert not (tmp_path / "pwned").exists()


def test_value_in_a_quoted_heredoc_points_at_the_server_line(pair):
    client, server = pair
    heredoc = SERVER.replace("set : \"printf '%s' $value > {d}/ratio\"", "set : \"cat > {d}/ratio <<'E'\\n$value\\nE\"")
    server.write_text(heredoc.format(d=server.parent))
    with pytest.raises(SpecError, match=r"server.yaml:\d+: object\[0\]\.info\.set: \$value: it stands inside a quoted"):
        load_atune(client, server)


def test_needrestart_knobs_restart_the_workload_once_per_configuration(pair, hone, tmp_path):
    client, server = pair
    log = tmp_path / "workload.log"
    text = server.read_text().replace('startworkload: ""', f'startworkload: "echo start >> {log}"')
    text = text.replace('stopworkload: ""', f'stopworkload: "echo stop >> {log}"')
    server.write_text(text.replace('needrestart : "false"', 'needrestart : "true"'))
    loaded = load_atune(client, server)
    assert loaded.spec.service is not None and loaded.spec.service.shell
    assert [k.restart for k in loaded.spec.knobs] == ["service", "service"]
    assert "stop" not in loaded.spec.knobs[0].set  # the set itself is not wrapped any more
    res = hone("tune", client, "--atune-server", server, "--repeats", "1", "--confirm", "0", "--trials", "2",
               "--sampler", "random", "--seed", "3")
    assert res.code == 0, res.err
    lines = log.read_text().splitlines()
    # A-Tune stops and starts the workload once per knob; hone once per configuration that
    # changed (2 trials) and once for the restore: never more than that, always stop before start.
    assert lines == ["stop", "start"] * (len(lines) // 2) and 2 <= len(lines) // 2 <= 3, lines
    assert (tmp_path / "ratio").read_text() == "10" and (tmp_path / "mode").read_text() == "safe"


def test_a_startworkload_that_leaves_its_server_in_the_background_keeps_it_running(pair, hone, tmp_path):
    # No systemd (a container, a VM like this one): the start script runs the server with `&`, as
    # `mariadbd --defaults-file=… &` would; it stays in the script's process group and holds its
    # output. Every trial needs it up, and at the end it runs again on the original values.
    client, server = pair
    port = free_port()
    (tmp_path / "start.sh").write_text(
        f"{sys.executable} -m http.server {port} --bind 127.0.0.1 &\necho $! > {tmp_path}/server.pid\n"
        f"for i in $(seq 1 100); do {sys.executable} -c 'import socket; socket.create_connection"
        f"((\"127.0.0.1\", {port}), 1)' 2>/dev/null && exit 0; sleep 0.1; done; exit 1\n")
    (tmp_path / "stop.sh").write_text(f"kill $(cat {tmp_path}/server.pid) 2>/dev/null; sleep 0.3; true\n")
    (tmp_path / "bench.py").write_text(
        f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read()\n" + BENCH)
    text = server.read_text().replace('startworkload: ""', f'startworkload: "sh {tmp_path}/start.sh"')
    server.write_text(text.replace('stopworkload: ""', f'stopworkload: "sh {tmp_path}/stop.sh"')
                      .replace('needrestart : "false"', 'needrestart : "true"'))
    try:
        subprocess.run(["sh", str(tmp_path / "start.sh")], check=True, timeout=30, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)  # the user's server, up before the job
        first = int((tmp_path / "server.pid").read_text())
        res = hone("tune", client, "--atune-server", server, "--repeats", "1", "--confirm", "0", "--trials", "3",
                   "--sampler", "random", "--seed", "3", "--json", tmp_path / "r.json")
        assert res.code == 0, res.err
        assert json.loads((tmp_path / "r.json").read_text())["failed_trials"] == 0, res.out
        assert "left 1 process running" not in res.err
        pid = int((tmp_path / "server.pid").read_text())
        assert pid != first and Path(f"/proc/{pid}").exists()  # the last start, on the original values, serves
        assert (tmp_path / "ratio").read_text() == "10" and (tmp_path / "mode").read_text() == "safe"
    finally:
        subprocess.run(["sh", str(tmp_path / "stop.sh")], timeout=30)


# A-Tune's compress example (examples/tuning/compress): the level is `type: continuous`,
# `dtype: int`, set by a sed that replaces digits only. A float there is pasted into the
# program and the sed cannot take it back out.
COMPRESS_CLIENT = """\
project: "compress"
engine : "gbrt"
iterations : 14
benchmark : "{py} {d}/compress.py"
evaluations :
  -
    name: "time"
    info:
        get: "echo '$out' | grep 'time' | awk '{{print $3}}'"
        type: "positive"
        weight: 20
  -
    name: "compress_ratio"
    info:
        get: "echo '$out' | grep 'compress_ratio' | awk '{{print $3}}'"
        type: "negative"
        weight: 80
"""

COMPRESS_SERVER = """\
project: "compress"
maxiterations: 500
startworkload: ""
stopworkload: ""
object :
  -
    name : "compressLevel"
    info :
        get : "cat {d}/compress.py | grep 'COMPRESS_LEVEL =' | awk -F '=' '{{print $2}}'"
        set : "sed -i 's/^COMPRESS_LEVEL =\\\\s*[0-9]*/COMPRESS_LEVEL = $value/g' {d}/compress.py"
        needrestart : "false"
        type : "continuous"
        scope :
          - 1
          - 9
        dtype : "int"
"""

COMPRESS_PY = """\
import zlib
COMPRESS_LEVEL = 6
data = bytes(range(256)) * 64 + b"hone " * 4000
res = zlib.compress(data, COMPRESS_LEVEL)
print("time = %f" % (0.01 * COMPRESS_LEVEL))
print("compress_ratio = %f" % (len(data) / len(res)))
"""


def test_a_continuous_integer_knob_is_tuned_as_integers_and_its_file_comes_back(hone, tmp_path):
    (tmp_path / "compress.py").write_text(COMPRESS_PY)
    client, server = tmp_path / "compress_client.yaml", tmp_path / "compress_server.yaml"
    client.write_text(COMPRESS_CLIENT.format(py=sys.executable, d=tmp_path))
    server.write_text(COMPRESS_SERVER.format(d=tmp_path))
    knob = load_atune(client, server).spec.knobs[0]
    assert (knob.type, list(knob.range)) == ("int", [1, 9])
    res = hone("tune", client, "--atune-server", server, "--sampler", "random", "--seed", "3",
               "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["failed_trials"] == 0, res.out
    levels = set(re.findall(r"^trial .* compressLevel=(\S+)", res.out, re.M))
    assert len(levels) > 1 and all(v.isdigit() and 1 <= int(v) <= 9 for v in levels), levels
    assert (tmp_path / "compress.py").read_text() == COMPRESS_PY


def _server_with(tmp_path: Path, info: str) -> tuple[Path, Path]:
    client, server = tmp_path / "client.yaml", tmp_path / "server.yaml"
    client.write_text(CLIENT.format(py=sys.executable))
    server.write_text(f"""\
project: "demo"
object :
  -
    name : "threads"
    info :
      get : "cat {tmp_path}/threads"
      set : "printf '%s' $value > {tmp_path}/threads"
{textwrap.indent(textwrap.dedent(info), '      ')}""")
    return client, server


def test_a_discrete_scope_of_several_ranges_is_their_union_as_a_scope_atune_reads(tmp_path):
    # A-Tune's optimizer reads a discrete integer scope as [low, high] pairs
    client, server = _server_with(tmp_path, """\
        type : "discrete"
        scope : [1, 3, 8, 9]
        items : [16]
        dtype : "int"
        """)
    assert load_atune(client, server).spec.knobs[0].values == [1, 2, 3, 8, 9, 16]


def test_items_alone_are_the_values(tmp_path):
    client, server = _server_with(tmp_path, """\
        type : "discrete"
        items : [4, 1, 2]
        dtype : "int"
        """)
    assert load_atune(client, server).spec.knobs[0].values == [1, 2, 4]


def test_a_knob_named_twice_is_refused_at_the_second_name(pair):
    client, server = pair
    text = server.read_text()
    server.write_text(text.replace('name : "mode"', 'name : "ratio"'))
    with pytest.raises(SpecError, match=r"server.yaml:21: object\[1\]\.name: expected distinct knob names, got "
                                        r"'ratio' again \(first at line 7\)"):
        load_atune(client, server)


@pytest.mark.parametrize(("info", "error"), [
    # A-Tune would tune 10-20 and 30-40 and drop 50 without a word
    ('type : "discrete"\nscope : [10, 20, 30, 40, 50]\ndtype : "int"\n',
     r"server.yaml:9: object\[0\]\.info\.scope: A-Tune reads a discrete scope as \[low, high\] pairs and would drop "
     r"the last of \[10, 20, 30, 40, 50\]"),
    # A-Tune's cluster mode: hosts that must not set the knob
    ('type : "discrete"\noptions : [1, 2]\ndtype : "int"\nExcept : "ip1"\n',
     r"server.yaml:11: object\[0\]\.info\.Except: hone tunes an A-Tune pair on this machine only.*expected no Except"),
    # a step hone cannot use is refused, not replaced by 1 (integers) or A-Tune's 0.1 (floats)
    ('type : "discrete"\nscope : [1, 10]\nstep : "two"\ndtype : "int"\n',
     r"server.yaml:10: object\[0\]\.info\.step: expected a positive integer, got 'two'"),
    ('type : "discrete"\nscope : [1, 10]\nstep : 0\ndtype : "int"\n',
     r"server.yaml:10: object\[0\]\.info\.step: expected a positive integer, got 0"),
    ('type : "discrete"\nscope : [1, 10]\nstep : 2.5\ndtype : "int"\n',
     r"server.yaml:10: object\[0\]\.info\.step: expected a positive integer, got 2\.5"),
    ('type : "discrete"\nscope : [0.5, 1.5]\nstep : -0.1\ndtype : "float"\n',
     r"server.yaml:10: object\[0\]\.info\.step: expected a positive number, got -0\.1"),
    ('type : "continuous"\nscope : [0.5, 1.5]\nstep : "fine"\ndtype : "float"\n',
     r"server.yaml:10: object\[0\]\.info\.step: expected a positive number, got 'fine'"),
])
def test_what_atune_would_read_otherwise_is_refused_at_its_line(tmp_path, info, error):
    client, server = _server_with(tmp_path, info)
    with pytest.raises(SpecError, match=error):
        load_atune(client, server)


def test_atunes_redis_persistence_knobs_are_marked_as_durability_trade_offs(tmp_path):
    from hone.knobs.risk import risk_of
    client, server = _server_with(tmp_path, 'type : "discrete"\noptions : ["yes", "no"]\ndtype : "string"\n')
    for name, value in (("redis.AOF", "no"), ("redis.RDB", "off")):
        server.write_text(server.read_text().replace('name : "threads"', f'name : "{name}"')
                          .replace('name : "redis.AOF"', f'name : "{name}"'))
        knob = load_atune(client, server).spec.knobs[0]
        assert (risk_of(knob, value) or "").startswith("durability:"), name
        assert risk_of(knob, "yes" if value == "no" else "on") is None


@pytest.mark.parametrize(("info", "step", "values"), [
    # A-Tune's ceph example: a grid of its step, high included here (A-Tune's arange leaves it out)
    ('type : "discrete"\nscope : [1.0, 10.0]\nstep : 1.0\ndtype : "float"\n', 1.0, 10),
    # no step: A-Tune's 0.1, not a continuous range
    ('type : "discrete"\nscope : [0.5, 1.5]\ndtype : "float"\n', 0.1, 11),
    # continuous stays continuous
    ('type : "continuous"\nscope : [0.5, 1.5]\ndtype : "float"\n', None, None),
])
def test_a_discrete_float_scope_is_a_grid_of_its_step(tmp_path, info, step, values):
    from hone.tune.space import dimension_for
    client, server = _server_with(tmp_path, info)
    knob = load_atune(client, server).spec.knobs[0]
    assert knob.type == "float" and knob.step == step
    dist = dimension_for(knob).distribution
    assert dist.step == step
    if values is not None:
        assert round((dist.high - dist.low) / step) + 1 == values and dist.high == pytest.approx(knob.range[1])


def test_a_knob_this_machine_cannot_read_is_refused_at_its_server_line(hone, tmp_path):
    # A-Tune's memcached pair names kernel.sched_* sysctls newer kernels do not have
    client, server = _server_with(tmp_path, """\
        type : "discrete"
        scope : [1, 8]
        dtype : "int"
    """)
    server.write_text(server.read_text().replace(f"cat {tmp_path}/threads", "sysctl -n kernel.hone_no_such_knob"))
    res = hone("tune", client, "--atune-server", server)
    assert res.code == 2 and "Traceback" not in res.err
    assert res.err.startswith(f"{server}:4: object[0]: script knob threads: get failed: sh exited with code 1;")
    assert "/proc/sys/kernel/hone_no_such_knob: No such file or directory" in res.err


def test_a_threshold_the_baseline_misses_is_said_before_the_search(hone, tmp_path):
    # A-Tune's go_gc pair: ns/op (lower is better) with threshold 100 where the program runs ~48 µs
    (tmp_path / "threads").write_text("4")
    (tmp_path / "bench.py").write_text("print('ns/op:', 48000)\n")
    client = tmp_path / "client.yaml"
    client.write_text(f'project: "gc"\niterations: 12\nbenchmark: "{sys.executable} bench.py"\nevaluations:\n'
                      "  - {name: ns, info: {get: \"echo '$out' | awk '{print $2}'\", type: positive, weight: 100,"
                      " threshold: 100}}\n")
    server = tmp_path / "server.yaml"
    server.write_text(f'project: "gc"\nobject:\n  - {{name: threads, info: {{get: "cat {tmp_path}/threads", '
                      f'set: "printf %s $value > {tmp_path}/threads", type: discrete, options: ["4", "8"]}}}}\n')
    res = hone("tune", client, "--atune-server", server)
    assert res.code == 0, res.err + res.out
    assert "warning: the baseline does not meet ns <= 100 (its mean: 48,000): only configurations that do can be" \
        " recommended" in res.out
    assert res.out.index("warning: the baseline does not meet") < res.out.index("trial 1/")
