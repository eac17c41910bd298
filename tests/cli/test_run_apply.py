"""hone run / apply / status / rollback through the real console script."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

VERBS = ("run", "apply", "status", "rollback")


def test_help_lists_the_verbs(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("--help")
    assert res.code == 0
    for verb in VERBS:
        assert f"  {verb} " in res.out
    for verb in VERBS:
        sub = hone(verb, "--help")
        assert sub.code == 0 and "Usage: hone " + verb in sub.out


def spec(tmp_path: Path, command: str, extra: str = "") -> Path:
    conf = tmp_path / "app.conf"
    conf.write_text("threads = 2\n")
    path = tmp_path / "hone.yaml"
    path.write_text(textwrap.dedent(f"""\
        benchmark:
          command: {command}
          repeats: 2
          timeout: 20
        metrics:
          - name: score
            extract: {{regex: 'score=([0-9.]+)'}}
            goal: maximize
        knobs:
          - {{name: n, kind: param, range: [1, 100], default: 3}}
          - {{name: MODE, kind: env, values: [fast, slow], default: slow}}
          - {{name: threads, kind: file, path: {conf}, key: threads, range: [1, 16]}}
        """) + extra)
    return path


def test_run_substitutes_params_env_and_restores_file_knob(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cmd = '[sh, -c, "echo score=$(( $0 * 10 )) mode=$MODE; cat ' + str(tmp_path / "app.conf") + '", "{n}"]'
    path = spec(tmp_path, cmd)
    out_json = tmp_path / "r.json"
    res = hone("run", path, "--set", "n=7", "--set", "MODE=fast", "--set", "threads=8", "--json", out_json)
    assert res.code == 0, res.err
    data = json.loads(out_json.read_text())
    assert data["format"] == "hone-run/1"
    assert [r["metrics"]["score"] for r in data["runs"]] == [70.0, 70.0]
    assert data["summary"]["score"]["mean"] == 70.0
    assert data["config"]["threads"] == 8 and data["config"]["MODE"] == "fast"
    assert (tmp_path / "app.conf").read_text() == "threads = 2\n"  # restored after the run
    assert "score" in res.out and "cpu_time" in res.out


def test_failing_benchmark_is_reported_and_knobs_restored(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = spec(tmp_path, '[sh, -c, "echo disk full >&2; exit 3"]')
    res = hone("run", path, "--set", "threads=9")
    assert res.code == 1
    assert "sh exited with code 3; stderr: disk full" in res.err
    assert "Traceback" not in res.err
    assert (tmp_path / "app.conf").read_text() == "threads = 2\n"


def test_timeout_is_reported(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = spec(tmp_path, "[sleep, '30']")
    path.write_text(path.read_text().replace("timeout: 20", "timeout: 0.5").replace("repeats: 2", "repeats: 1"))
    res = hone("run", path)
    assert res.code == 1 and "timed out after 0.5 s" in res.err


def test_bad_set_value_is_a_clear_error(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = spec(tmp_path, "[echo, score=1]")
    res = hone("run", path, "--set", "threads=99")
    assert res.code == 2
    assert res.err.strip() == "hone: error: --set threads=99: knob threads: expected an integer in [1, 16], got '99'"
    res = hone("run", path, "--set", "nope=1")
    assert res.code == 2 and "no knob named 'nope'" in res.err


def test_apply_status_rollback_cycle(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = spec(tmp_path, "[echo, score=1]")
    conf = tmp_path / "app.conf"
    res = hone("apply", path, "--set", "threads=12")
    assert res.code == 0, res.err
    assert conf.read_text() == "threads = 12\n"
    status = hone("status")
    assert "threads" in status.out and "12" in status.out
    res = hone("apply", path, "--set", "n=3")
    assert res.code == 2 and "param knobs only exist inside a benchmark run" in res.err
    rb = hone("rollback")
    assert rb.code == 0 and "restored file:" in rb.out
    assert conf.read_text() == "threads = 2\n"
    assert "nothing changed" in hone("status").out
