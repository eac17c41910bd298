"""``hone tune`` on bad names, bad numbers, a failing baseline, ``--json -`` and a
configuration that fails: one clear line and the right exit code, a parseable stdout, no
failed configuration measured twice."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from tests.tune.conftest import write_workload


def test_study_name_that_climbs_out_of_the_state_dir_is_refused(workload, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=2)
    escaped = f"{workload.name}-escaped"
    res = hone("tune", spec, "--study", f"../../{escaped}", "--confirm", "0")
    assert res.code == 2 and "Traceback" not in res.err
    assert "--study" in res.err and "expected a name usable as a file name" in res.err
    assert not (state_dir.parent / f"{escaped}.html").exists()
    assert not (state_dir / "studies.db").exists()  # nothing ran


def test_spec_name_that_is_a_path_is_refused(workload, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=2)
    spec.write_text(spec.read_text().replace("name: tiny", "name: ../../tiny"))
    res = hone("tune", spec)
    assert res.code == 2
    assert res.err.strip() == (f"{spec}:2: name: expected a name usable as a file name (no '/', not '.' or '..', "
                               "at most 200 characters), got '../../tiny'")


def test_atune_project_that_climbs_out_of_the_state_dir_is_refused(hone, tmp_path: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    escaped = f"{tmp_path.name}-escaped"
    client = tmp_path / "client.yaml"
    client.write_text(f'project: "../../{escaped}"\niterations: 1\nbenchmark: "echo tps: 1"\n'
                      'evaluations: [{name: tps, info: {get: "echo 1", type: negative}}]\n')
    server = tmp_path / "server.yaml"
    server.write_text('project: "x"\nobject: [{name: k, info: {get: "echo 1", set: "true", options: ["1", "2"]}}]\n')
    res = hone("tune", client, "--atune-server", server, "--confirm", "0")
    assert res.code == 2
    assert res.err.startswith(f"{client}:1: project: expected a name usable as a file name")
    assert not (state_dir.parent / f"{escaped}.yaml").exists()
    assert not (state_dir / "atune").exists()


@pytest.mark.parametrize(("option", "value"), [
    ("--trials", "0"), ("--trials", "-2"), ("--repeats", "0"), ("--repeats", "-2"), ("--top-k", "0"),
    ("--confirm", "-1"), ("--max-runs", "0"),
])
def test_out_of_range_numbers_are_refused_not_replaced(workload, hone, state_dir: Path, option: str,  # type: ignore[no-untyped-def]
                                                       value: str) -> None:
    spec = write_workload(workload, trials=2)
    res = hone("tune", spec, option, value)
    assert res.code == 2 and "Traceback" not in res.err
    assert f"Invalid value for '{option}'" in res.err and f"{value} is not in the range" in res.err
    assert not (workload / "runs.log").exists()  # the benchmark never ran


def test_failing_baseline_is_a_workload_failure_exit_1(workload, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=2)
    (workload / "bench.py").write_text("import sys\nprint('broken', file=sys.stderr)\nsys.exit(3)\n")
    res = hone("tune", spec)
    assert res.code == 1, res.err
    assert "the baseline (current configuration) fails" in res.err and "exited with code 3" in res.err


def test_json_to_stdout_is_the_only_thing_on_stdout(workload, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=3)
    res = hone("tune", spec, "--json", "-", "--confirm", "0")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["format"] == "hone-tune/2" and doc["trials"] == 3
    assert "trial 3/3" in res.err and "HTML report:" in res.err  # the human lines went to stderr


def test_configuration_that_failed_is_not_suggested_again(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # x = 3 fails; seed 0 is a case where the GP's first suggestions were independent random
    # draws (no completed trial yet) that picked 3 again and again
    log = tmp_path / "xs.log"
    (tmp_path / "bench.py").write_text(textwrap.dedent(f"""\
        import sys
        x = int(sys.argv[1])
        open({str(log)!r}, "a").write(f"{{x}}\\n")
        if x == 3:
            sys.exit("x = 3 breaks")
        print("score:", x)
        """))
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [{sys.executable}, bench.py, "{{x}}"], timeout: 20}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}, goal: maximize}}]
        knobs: [{{name: x, kind: param, values: [1, 2, 3, 4], default: 1}}]
        tune: {{trials: 4, seed: 0, confirm: 0, sampler: gp}}
        """))
    res = hone("tune", spec, "--study", "fails-once", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    xs = [int(v) for v in log.read_text().split()]
    assert xs[0] == 1  # the baseline, at the default
    assert sorted(xs[1:]) == [2, 3, 4]  # three trials, the configurations the baseline left, 3 once
    doc = json.loads((tmp_path / "r.json").read_text())
    study = optuna.load_study(study_name="fails-once", storage=doc["storage"])
    assert len(study.get_trials(states=(TrialState.FAIL,))) == 1


def _script_knob_spec(tmp_path: Path, get: str, set_: str, trials: int = 12) -> Path:
    (tmp_path / "bench.py").write_text("print('score: 1')\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: [{sys.executable}, bench.py], timeout: 20}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}, goal: maximize}}]
        knobs:
          - {{name: x, kind: param, values: [1, 2, 3, 4, 5, 6, 7, 8], default: 1}}
          - {{name: depth, kind: script, shell: true, get: {get!r}, set: {set_!r}, type: int, range: [1, 64]}}
        tune: {{trials: {trials}, seed: 1, confirm: 0}}
        """))
    return spec


def test_knob_whose_set_changes_nothing_stops_the_search_after_five_trials(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A-Tune's memcached example: a sed pattern that never matches, so get reads the old value
    # after every set; without the stop all 12 trials fail and the job ends with nothing learnt.
    (tmp_path / "depth").write_text("8\n")
    spec = _script_knob_spec(tmp_path, f"cat {tmp_path / 'depth'}", f"sed -i 's/^9999$/$value/' {tmp_path / 'depth'}")
    res = hone("tune", spec, "--study", "broken-knob")
    assert res.code == 2 and "Traceback" not in res.err, res.err
    assert "knob depth failed in each of the first 5 trials, at every value tried" in res.err
    assert "script depth reads '8'" in res.err and "search stopped" in res.err
    assert res.out.count("FAILED") == 5
    assert (tmp_path / "depth").read_text() == "8\n"
    assert "nothing changed" in hone("status").out


def test_failed_trials_are_counted_by_the_knob_at_fault(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # depth takes values up to 32 only: the trials above fail at it and the summary says so
    (tmp_path / "depth").write_text("8\n")
    path = tmp_path / "depth"
    spec = _script_knob_spec(tmp_path, f"cat {path}", f'[ "$value" -le 32 ] && echo "$value" > {path}', trials=10)
    res = hone("tune", spec, "--json", tmp_path / "r.json")
    assert res.code == 0, res.err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["failed_trials"] > 0 and doc["failed_knobs"] == {"depth": doc["failed_trials"]}
    assert f"({doc['failed_trials']} failed); failed at depth ({doc['failed_trials']})" in res.out
    assert path.read_text() == "8\n"
    shown = hone("report", tmp_path / "r.json")
    assert shown.code == 0 and f"failed at depth ({doc['failed_trials']})" in shown.out


def test_script_knob_whose_get_prints_nothing_is_refused_before_anything_runs(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A pipeline hides the missing command (A-Tune's `ethtool -k eth0 | grep … | awk …`): exit 0, no value
    spec = _script_knob_spec(tmp_path, "hone-no-such-tool -k eth0 | awk '{print $2}'", "true")
    res = hone("tune", spec)
    assert res.code == 2 and "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert f"{spec}:5: knobs[1]: script knob depth: get printed nothing (stderr: " in res.err
    assert "hone-no-such-tool: not found" in res.err and "could not put it back" in res.err
    assert not (tmp_path / "bench.log").exists()


def test_script_knob_whose_get_prints_two_lines_is_refused_before_anything_runs(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A-Tune's MariaDB pair: `grep sort_buffer_size` also finds myisam_sort_buffer_size; no value
    # hone sets reads back as two lines, so every trial would fail at its read-back
    conf = tmp_path / "my.cnf"
    conf.write_text("sort_buffer_size = 1048576\nmyisam_sort_buffer_size = 262144\n")
    spec = _script_knob_spec(tmp_path, f"grep sort_buffer_size {conf} | awk -F= '{{print $2}}'",
                             f"sed -i 's/sort_buffer_size.*/sort_buffer_size = $value/' {conf}")
    res = hone("tune", spec)
    assert res.code == 2 and "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert (f"{spec}:5: knobs[1]: script knob depth: get printed 2 lines ('1048576', '262144'), not one value"
            in res.err)
    assert "does its grep match other lines too?" in res.err
    assert conf.read_text() == "sort_buffer_size = 1048576\nmyisam_sort_buffer_size = 262144\n"
    assert not (tmp_path / "bench.log").exists()
    # anchored, it is one line and the job runs
    spec = _script_knob_spec(tmp_path, f"grep '^sort_buffer_size' {conf} | awk -F= '{{print $2}}'", "true", trials=1)
    assert hone("tune", spec, "--confirm", "0").code == 0


def test_a_two_line_get_is_accepted_when_a_value_of_the_knob_has_two_words(tmp_path: Path) -> None:
    from hone.knobs.script import several_lines
    from hone.spec.models import ScriptKnobSpec

    model = ScriptKnobSpec(name="cpus", kind="script", get="cat f", set="true", values=["0 1", "0"])
    assert several_lines("cpus", model, "0\n1\n") is None
    model = ScriptKnobSpec(name="cpus", kind="script", get="cat f", set="true", values=["0", "1"])
    why = several_lines("cpus", model, "0\n1\n")
    assert why is not None and "grep" not in why.message and "get printed 2 lines ('0', '1')" in why.message
