"""Spec mistakes that used to slip through or end in a traceback: each is one line naming
the file, line and field, exit 2, and nothing on the machine changes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


def _write(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(text))
    return spec


def _one_line(res) -> str:  # type: ignore[no-untyped-def]
    lines = res.err.strip().splitlines()
    assert res.code == 2, res.err
    assert len(lines) == 1 and "Traceback" not in res.err, res.err
    return lines[0]


@pytest.mark.parametrize(("where", "text"), [
    ("benchmark.timeout", "benchmark: {command: [/bin/true], timeout: 1e300}\n"),
    ("metrics[0].extract.timeout",
     "benchmark: {command: [echo, '1']}\nmetrics: [{name: n, extract: {command: [cat], timeout: 1.0e+300}}]\n"),
    ("knobs[0].timeout",
     "benchmark: {command: [/bin/true]}\nknobs: [{name: s, kind: script, get: [echo, a], set: [/bin/true], values: [a],"
     " timeout: .inf}]\n"),
])
def test_timeout_beyond_a_week_is_refused_not_a_traceback(hone, tmp_path: Path, where: str, text: str) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, text)
    line = _one_line(hone("run", spec))
    assert line.startswith(f"{spec}:") and f"{where}: expected a number <= 604800" in line


def test_yaml_nested_5000_deep_is_one_error_line(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, "benchmark: {command: [/bin/true]}\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    line = _one_line(hone("run", spec))
    assert line == f"{spec}:2: invalid YAML: nested more than 100 levels deep"


def test_duplicate_key_is_refused_with_the_line_of_the_second(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, """\
        benchmark: {command: [echo, "ops: 5"]}
        metrics:
          - {name: ops, extract: {regex: 'ops: (\\d+)'}}
        knobs: []
        metrics:
          - name: cpu_time
        """)
    assert _one_line(hone("run", spec)) == f"{spec}:5: metrics: duplicate key (first at line 2)"


def test_duplicate_key_inside_a_knob_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, """\
        benchmark: {command: [/bin/true]}
        knobs:
          - name: n
            kind: param
            values: [1, 2]
            kind: env
        """)
    assert _one_line(hone("run", spec)) == f"{spec}:6: knobs[0].kind: duplicate key (first at line 4)"


def test_duplicate_key_in_an_atune_client_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    client = tmp_path / "client.yaml"
    client.write_text('project: "a"\nbenchmark: "echo tps: 1"\nproject: "b"\n'
                      'evaluations: [{name: tps, info: {get: "echo 1", type: negative}}]\n')
    server = tmp_path / "server.yaml"
    server.write_text('project: "a"\nobject: [{name: k, info: {get: "echo 1", set: "true", options: ["1"]}}]\n')
    res = hone("tune", client, "--atune-server", server)
    assert _one_line(res) == f"{client}:3: project: duplicate key (first at line 1)"


@pytest.mark.parametrize(("value", "word"), [("true", "true"), ("null", "null"), ("no", "false")])
def test_yaml_boolean_or_null_in_an_argv_list_is_refused(hone, tmp_path: Path, value: str, word: str) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app.conf"
    conf.write_text("a = 1\n")
    spec = _write(tmp_path, f"""\
        benchmark: {{command: [/bin/true]}}
        knobs:
          - {{name: a, kind: file, path: {conf}, key: a, values: [1, 2], restart: [systemctl, {value}]}}
        """)
    line = _one_line(hone("apply", spec, "--set", "a=2"))
    assert line.startswith(f"{spec}:3: knobs[0].restart: expected strings (quote '{word}')")
    assert conf.read_text() == "a = 1\n"


def test_missing_benchmark_cwd_is_named_at_validation(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, "benchmark:\n  command: [/bin/true]\n  cwd: nope\n")
    line = _one_line(hone("run", spec))
    assert line == (f"{spec}:3: benchmark.cwd: expected an existing directory (relative to the spec file), "
                    f"got 'nope': {tmp_path / 'nope'} is not one")


def test_benchmark_cwd_that_vanishes_at_run_time_is_named(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "work"
    work.mkdir()
    # the prepare hook removes the directory the benchmark is about to run in
    spec = _write(tmp_path, f"benchmark:\n  command: [/bin/true]\n  cwd: work\n  prepare: [rmdir, {work}]\n")
    res = hone("run", spec)
    assert res.code == 2 and "Traceback" not in res.err
    assert f"cannot run /bin/true: its working directory {work} does not exist" in res.err
    assert "command not found" not in res.err


def test_an_unknown_build_system_is_refused_naming_the_known_ones(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write(tmp_path, """\
        benchmark: {command: "true"}
        build:
          system: ninja
          binary: prog
          train: [{command: "{binary} 1"}]
        """)
    line = _one_line(hone("pgo", spec))
    assert line.startswith(f"{spec}:3: build.system: expected one of 'make', 'cmake', 'autotools', 'meson'"), line
    assert "got 'ninja'" in line


@pytest.mark.parametrize("system", ["autotools", "meson"])
def test_the_configuring_build_systems_are_accepted(system: str) -> None:
    from hone.spec.models import BuildSpec

    assert BuildSpec.model_validate({"system": system, "binary": "p", "train": [{"command": "{binary}"}]}).system \
        == system
