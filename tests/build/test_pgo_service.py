"""hone pgo on a server (examples/pgo/toy-server): the instrumented build trains as the
service under load and writes its profile through a graceful stop; every variant is
evaluated as the service on the spec's metrics (tps, p95) and the server's CPU time on the
A/B engine; a server killed without flushing, or dying under load, says so; no server of
hone's is left running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hone.cli._pgo import plan_from_spec
from hone.core.errors import SpecError
from hone.report.formats import validate
from hone.spec import load_spec
from tests.build.conftest import EXAMPLES, build, read_json, rows
from tests.net import free_port, listening
from tests.procs import MARK_ENV, marked, new_mark

PORT_IN_EXAMPLE = "18347"
VERDICTS = {"faster", "slower", "equivalent", "inconclusive", "within noise floor"}


def _server(project, port: int, replace: dict[str, str] | None = None) -> Path:  # type: ignore[no-untyped-def]
    """A copy of the example with its port (and any other text in ``replace``) changed."""
    src = project("toy-server")
    spec = src / "hone.yaml"
    text = spec.read_text().replace(PORT_IN_EXAMPLE, str(port))
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    spec.write_text(text)
    return spec


def _env(mark: str) -> dict[str, str]:
    # load.py runs with the venv's python; the mark finds every process hone started.
    return {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", MARK_ENV: mark}


def _nothing_left(mark: str, port: int) -> None:
    assert marked(mark) == [], "a process of hone's outlived it"
    assert not listening(port)


def test_the_scenarios_of_a_server_spec_are_its_load(tmp_path: Path) -> None:
    plan = plan_from_spec(str(EXAMPLES / "toy-server" / "hone.yaml"))
    assert plan.service is not None and [s.name for s in plan.train] == ["train-load"]
    assert "{binary}" not in plan.train[0].command
    spec = tmp_path / "hone.yaml"
    # Without {binary} in service.start the scenarios must run the program themselves …
    spec.write_text("benchmark: {command: 'true'}\nservice: {start: [srv, '1'], ready: {tcp: '127.0.0.1:1'}}\n"
                    "build:\n  binary: srv\n  train: [{command: 'python3 load.py'}]\n")
    with pytest.raises(SpecError, match=r"\{binary\}"):
        load_spec(spec)
    # … and {binary} in service.start needs a build: section to name the program.
    spec.write_text("benchmark: {command: 'true'}\nservice: {start: ['{binary}'], ready: {tcp: '127.0.0.1:1'}}\n")
    with pytest.raises(SpecError, match="names no param knob"):
        load_spec(spec)


@pytest.mark.integration
def test_pgo_trains_under_load_and_compares_servers_on_their_metrics(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    spec = _server(project, port, {"  counts: false": "  counts: false\n  cpu_per: tps"})
    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    res = hone("pgo", spec, "--mode", "instr-gcc", "--rounds", "6", "--workdir", tmp_path / "work", "--json", out,
               "--markdown", md, env=_env(mark), timeout=240)
    assert res.code == 0, res.err
    result = read_json(out)
    assert validate(result, "r.json").name == "hone-pgo/1"
    # The AutoFDO before/after layout per figure: six runs each, then the summary rows.
    text = md.read_text()
    assert "**tps** (higher is better)" in text and "**server CPU s** (lower is better)" in text
    assert "|**6**|" in text and "|**STDDEVP/Mean**|" in text and "|**Opt/Default**|100.00%|" in text
    # Training: the instrumented server wrote its .gcda at its exit after SIGTERM (status 0).
    (part,) = result["profiles"]["instr-gcc"]["scenarios"]
    assert part["server_exit"] == 0 and part["total_count"] > 0
    assert list(Path(part["path"]).rglob("*.gcda"))
    # Variants verified: the training build instrumented, the optimizing build used the profile.
    b = build(result, "instr-gcc")
    assert b["status"] == "ok" and b["profile_problems"] == [], b
    stages = {s["name"]: s for s in json.loads(Path(b["manifest"]).read_text())["stages"]}
    assert stages["training build"]["verification"].startswith("ok"), stages["training build"]
    assert stages["optimizing build"]["verification"].startswith("ok"), stages["optimizing build"]
    # Evaluation as the service: tps and p95 from load.py's output, the server's CPU time, a verdict.
    (row,) = rows(result, "instr-gcc")
    assert row["metric"] == "tps" and row["verdict"] in VERDICTS, row
    assert row["metrics"]["tps"]["goal"] == "maximize" and row["metrics"]["p95_ms"]["goal"] == "minimize"
    assert row["metrics"]["tps"]["n"] == 6 and row["metrics"]["tps"]["verdict"] in VERDICTS
    assert row["cpu_s_median"] > 0 and row["time_ratio"] is not None
    (ref,) = rows(result, "default")
    assert ref["metrics"]["tps"]["median"] > 0 and ref["verdict"] == "reference"
    # cpu_per: tps — the server's CPU µs per request: CPU ÷ (tps × the load's wall time, which
    # also holds load.py's start-up, so at least its 600 requests).
    per_op = row["metrics"]["server_cpu_us_per_op"]
    assert per_op["goal"] == "minimize" and per_op["verdict"] in VERDICTS
    for us, cpu in zip(ref["metrics"]["server_cpu_us_per_op"]["values"], ref["cpu_s_values"], strict=True):
        assert 0 < us <= cpu * 1e6 / 600, (us, cpu)
    assert "**server CPU µs per op** (lower is better)" in text
    assert result["best"]["metric"] == "tps"
    assert result["service"]["stop_signal"] == "TERM" and result["service"]["starts"] >= 1 + 2 + 2 + 2 * 7
    assert "as the service" in res.out
    _nothing_left(mark, port)


@pytest.mark.integration
def test_instr_clang_trains_a_server_through_llvm_profile_file(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    # The Makefile hard-codes CC = gcc: a clang variant passes its compiler on the command.
    spec = _server(project, port, {"  train:": '  command: [make, "CC={cc}", "CFLAGS={cflags}", "LDFLAGS={ldflags}"]\n'
                                               "  train:"})
    out = tmp_path / "r.json"
    res = hone("pgo", spec, "--mode", "instr-clang", "--rounds", "4", "--workdir", tmp_path / "work", "--json", out,
               env=_env(mark), timeout=240)
    assert res.code == 0, res.err
    result = read_json(out)
    (part,) = result["profiles"]["instr-clang"]["scenarios"]
    assert part["server_exit"] == 0 and part["total_count"] > 0
    assert build(result, "instr-clang")["profile_problems"] == []
    assert rows(result, "instr-clang")[0]["metrics"]["tps"]["n"] == 4
    _nothing_left(mark, port)


@pytest.mark.integration
def test_a_server_killed_without_flushing_says_it_may_not_have_exited_cleanly(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    spec = _server(project, port, {"signal: TERM": "signal: KILL"})
    out = tmp_path / "r.json"
    res = hone("pgo", spec, "--rounds", "2", "--workdir", tmp_path / "work", "--json", out, env=_env(mark),
               timeout=240)
    # The variant whose training wrote nothing fails (the run goes on), saying why.
    assert res.code == 0, res.err
    b = build(read_json(out), "instr-gcc")
    assert b["status"] == "failed"
    for words in ("wrote no .gcda", "may not have exited cleanly", "SIGKILL"):
        assert words in b["error"] and words in res.err, b["error"]
    _nothing_left(mark, port)


@pytest.mark.integration
def test_a_server_that_dies_under_load_fails_with_its_log(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    spec = _server(project, port, {f'"python3 load.py {port} 400 2"': f'"python3 load.py {port} exit"'})
    res = hone("pgo", spec, "--workdir", tmp_path / "work", env=_env(mark), timeout=240)
    assert res.code == 1  # the workload failed (here on the default build already, before any training)
    assert "exited with code 3 during the load" in res.err and "exit requested, dying" in res.err, res.err
    _nothing_left(mark, port)


@pytest.mark.integration
def test_hone_run_starts_the_projects_own_build_as_the_service(hone, project, tmp_path: Path) -> None:
    port, mark = free_port(), new_mark()
    spec = _server(project, port)
    subprocess.run(["make", "-s", "-C", str(spec.parent)], check=True, timeout=60)
    res = hone("run", spec, "--json", tmp_path / "run.json", env=_env(mark), timeout=60)
    assert res.code == 0, res.err
    assert "tps" in res.out and "p95_ms" in res.out
    _nothing_left(mark, port)
