"""``hone compare --fail-on`` (exit 4 after reporting), the CI summary ($GITHUB_STEP_SUMMARY,
--summary) and the exports for other tools, end to end on real commands. Effects are 4× or
nil (the same command twice): this VM is shared and noisy (2× read inconclusive in 8 rounds
while the suite loaded both cores)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

GATE_EXIT = 4


def _verdicts(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    return [c["verdict"] for row in doc["rows"] for c in row["comparisons"].values()]


def test_a_slower_candidate_exits_4_after_reporting_and_names_it(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.json"
    r = hone("compare", "sleep 0.01", "sleep 0.04", "-n", "old", "-n", "new", "--rounds", "8", "--max-time", "0",
             "--fail-on", "slower", "--export-json", out)
    assert r.code == GATE_EXIT, r.out + r.err
    assert _verdicts(out) == ["slower"]  # the export was written before the gate exit
    assert "slower" in r.out  # and the table printed
    err = [line for line in r.err.splitlines() if line.startswith("hone: error:")]
    assert len(err) == 1 and err[0].startswith("hone: error: --fail-on slower: new is slower than old: +")


def test_a_faster_candidate_passes_a_slower_gate(hone) -> None:  # type: ignore[no-untyped-def]
    r = hone("compare", "sleep 0.04", "sleep 0.01", "--rounds", "8", "--max-time", "0", "--fail-on", "slower")
    assert r.code == 0, r.out + r.err
    assert "faster" in r.out


def test_identical_commands_pass_the_gate(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r.json"
    # Rounds double until the CI lies within ±5% (equivalent), or, on a loaded machine, the
    # budget ends (inconclusive): either passes a slower gate. A false "faster" passes it too; it
    # is the test's α/2 by design (it came up once in a suite run that loaded both cores).
    r = hone("compare", "sleep 0.01", "sleep 0.01", "--rounds", "10", "--threshold", "5", "--max-time", "20s",
             "--fail-on", "slower", "--export-json", out)
    assert r.code == 0, r.out + r.err
    assert _verdicts(out)[0] != "slower"


def test_inconclusive_fails_the_gate_only_when_listed(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Five rounds: the signed-rank test needs six to reach p < 0.05, so the verdict is
    # inconclusive whatever the timings (six rounds of `true` could, rarely, read "slower").
    common = ["compare", "true", "true", "--rounds", "5", "--warmup", "0", "--max-time", "0"]
    lenient = hone(*common, "--fail-on", "slower", "--export-json", tmp_path / "a.json")
    assert _verdicts(tmp_path / "a.json") == ["inconclusive"]
    assert lenient.code == 0, lenient.err
    strict = hone(*common, "--fail-on", "slower,inconclusive", "--export-json", tmp_path / "b.json")
    assert _verdicts(tmp_path / "b.json") == ["inconclusive"]
    assert strict.code == GATE_EXIT, strict.err
    assert "--fail-on slower,inconclusive: B: true is inconclusive against A: true" in strict.err


def test_any_sweep_row_trips_the_gate(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = hone("compare", "sleep 0.01", "sleep {t}", "-n", "old", "-n", "new", "--sweep", "t=0.01,0.04",
             "--rounds", "8", "--max-time", "0", "--fail-on", "slower", "--export-json", tmp_path / "r.json")
    assert r.code == GATE_EXIT, r.out + r.err
    assert _verdicts(tmp_path / "r.json")[1] == "slower"
    assert "t=0.04: new is slower than old" in r.err and "t=0.01:" not in r.err


def test_step_summary_is_appended_and_summary_file_gets_the_same(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    mine = tmp_path / "summary.md"
    r = hone("compare", "sleep 0.01", "sleep 0.04", "-n", "old", "-n", "new", "--rounds", "8", "--max-time", "0",
             "--fail-on", "slower", "--summary", mine, env={"GITHUB_STEP_SUMMARY": str(step)})
    assert r.code == GATE_EXIT, r.err
    text = mine.read_text()
    assert step.read_text() == "earlier step\n" + text + "\n"  # appended, the job's earlier text kept
    assert text.startswith("### hone compare: wall_time, lower is better, reference old\n")
    assert "- **new** vs old: **slower**, +" in text and "95% CI [" in text
    assert "**Gate `--fail-on slower`: failed** — new is slower than old" in text
    assert "|old|8|" in text and "|new|8|" in text  # the means table
    assert "|Scenario|Variant|Ratio vs old|" in text  # the verdict table


def test_summary_given_the_step_summary_file_is_written_once(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    step = tmp_path / "step.md"
    r = hone("compare", "true", "true", "--rounds", "3", "--warmup", "0", "--max-time", "0", "--summary", step,
             env={"GITHUB_STEP_SUMMARY": str(step)})
    assert r.code == 0, r.err
    assert step.read_text().count("### hone compare") == 1


def test_unwritable_step_summary_is_a_warning_not_a_failure(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    step = tmp_path / "no-such-dir" / "step.md"
    r = hone("compare", "true", "true", "--rounds", "3", "--warmup", "0", "--max-time", "0",
             env={"GITHUB_STEP_SUMMARY": str(step)})
    assert r.code == 0, r.err
    assert "warning: cannot append to $GITHUB_STEP_SUMMARY" in r.err


def test_exports_for_other_tools_and_report_renders_them_again(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    files = {k: tmp_path / f"r.{k}" for k in ("json", "hyperfine", "bmf", "gab", "benchstat", "summary")}
    r = hone("compare", "sleep 0.01", "sleep 0.04", "-n", "old", "-n", "new", "--rounds", "6", "--max-time", "0",
             "--metric", "wall_time", "--export-json", files["json"], "--export-hyperfine", files["hyperfine"],
             "--export-bmf", files["bmf"], "--export-gab", files["gab"], "--export-benchstat", files["benchstat"],
             "--summary", files["summary"])
    assert r.code == 0, r.err
    assert "github-action-benchmark export: use tool: customSmallerIsBetter" in r.out
    results = json.loads(files["hyperfine"].read_text())["results"]
    assert [x["command"] for x in results] == ["old", "new"] and all(len(x["times"]) == 6 for x in results)
    assert 0.009 < results[0]["mean"] < results[1]["mean"] < 0.1  # wall seconds
    bmf = json.loads(files["bmf"].read_text())
    assert bmf["new"]["latency"]["value"] == pytest.approx(results[1]["mean"] * 1e9)  # ns, Bencher's latency
    assert [e["name"] for e in json.loads(files["gab"].read_text())] == ["old", "new"]
    assert "old vs new: +" in files["benchstat"].read_text()
    for kind in ("hyperfine", "bmf", "gab", "benchstat", "summary"):
        again = hone("report", files["json"], f"--{kind}", "-")
        assert again.code == 0, again.err
        assert again.out == files[kind].read_text(), kind


@pytest.fixture(scope="module")
def hyperfine_bin() -> str:
    path = shutil.which("hyperfine")
    if path is None:
        pytest.skip("needs hyperfine (deps/apt-packages.txt; make test installs it)")
    return path


def _hyperfine(binary: str, tmp_path: Path, *args: str) -> list[dict]:
    out = tmp_path / "hyperfine.json"
    subprocess.run([binary, "--runs", "3", "--style", "none", "--export-json", str(out), *args], check=True,
                   capture_output=True, timeout=120)
    return json.loads(out.read_text())["results"]


def _shape(result: dict) -> list[tuple[str, str]]:
    """Each field with its JSON type (numbers as one type: hyperfine writes 0.0 and 0 alike)."""
    def kind(v: object) -> str:
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, int | float):
            return "number"
        if isinstance(v, list):
            return "list of " + ",".join(sorted({kind(x) for x in v}))
        if isinstance(v, dict):
            return "object of " + ",".join(sorted({kind(x) for x in v.values()}))
        return type(v).__name__

    return [(k, kind(v)) for k, v in result.items()]


def test_hyperfine_export_has_hyperfines_own_fields_and_types(hone, hyperfine_bin: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real = _hyperfine(hyperfine_bin, tmp_path, "sleep 0.001", "sleep 0.002")
    out = tmp_path / "hone.json"
    r = hone("compare", "sleep 0.001", "sleep 0.002", "--rounds", "3", "--max-time", "0", "--export-hyperfine", out)
    assert r.code == 0, r.err
    ours = json.loads(out.read_text())["results"]
    assert [_shape(x) for x in ours] == [_shape(x) for x in real]
    assert [x["command"] for x in ours] == [x["command"] for x in real]


def test_hyperfine_export_of_a_sweep_has_hyperfines_parameters(hone, hyperfine_bin: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real = _hyperfine(hyperfine_bin, tmp_path, "-L", "t", "0.001,0.002", "sleep {t}")
    out = tmp_path / "hone.json"
    r = hone("compare", "sleep {t}", "sleep 0.001", "--sweep", "t=0.001,0.002", "--rounds", "3", "--max-time", "0",
             "--export-hyperfine", out)
    assert r.code == 0, r.err
    ours = json.loads(out.read_text())["results"][::2]  # the first command at each value
    assert [_shape(x) for x in ours] == [_shape(x) for x in real]
    assert [(x["command"], x["parameters"]) for x in ours] == [(x["command"], x["parameters"]) for x in real]


@pytest.mark.parametrize("value", ["worse", "slower,,faster,x", ",", "Slower"])
def test_a_bad_fail_on_is_one_line_exit_2_before_any_run(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    from hone.cli import run

    assert run(["compare", "true", "true", "--fail-on", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hone: error: --fail-on {value}: expected verdicts from faster, slower, equivalent, "
                   "inconclusive separated by commas"]
