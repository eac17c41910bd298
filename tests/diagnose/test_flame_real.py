"""Real perf + inferno: the hottest function is the widest frame; a differential graph of
two builds marks the function that changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hone.diagnose.folded import hottest, inclusive_totals, parse_folded, widest_child

pytestmark = pytest.mark.integration


def _caller_of(stacks: dict[str, float], func: str) -> str:
    for stack in stacks:
        frames = stack.split(";")
        if func in frames[1:]:
            return frames[frames.index(func) - 1]
    raise AssertionError(f"{func} not in any stack")


def test_hottest_function_is_the_widest_frame(hone, c_programs, caps, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("flame", "-o", tmp_path, "--name", "hot", "--", c_programs["cpu_hot"], "40000000", timeout=120)
    assert res.code == 0, res.err
    stacks = parse_folded((tmp_path / "hot.folded").read_text())
    assert hottest(stacks, 1)[0][0] == "hot_spin"
    # Among its siblings (called by the same parent) hot_spin has the widest frame.
    assert widest_child(stacks, _caller_of(stacks, "hot_spin")) == "hot_spin"
    totals = inclusive_totals(stacks)
    assert totals["hot_spin"] > 3 * totals["warm_spin"]
    svg = (tmp_path / "hot.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "hot_spin" in svg
    doc = json.loads((tmp_path / "hot.speedscope.json").read_text())
    assert doc["profiles"][0]["type"] == "sampled"
    for name in ("hot.svg", "hot.folded", "hot.speedscope.json"):
        assert str(tmp_path / name) in res.out  # paths printed


def test_differential_graph_marks_the_changed_function(hone, c_programs, caps, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from hone.diagnose.flame import record_flame

    # Recorded in-process (same perf + inferno as the CLI, without two more CLI start-ups).
    for name in ("cpu_hot", "cpu_hot_changed"):
        record_flame([str(c_programs[name]), "30000000"], tmp_path / name, caps, name=name)
    res = hone("flame", "--diff", tmp_path / "cpu_hot", tmp_path / "cpu_hot_changed", "-o", tmp_path, timeout=60)
    assert res.code == 0, res.err
    # The function that grew most (in share of samples) is the one whose work changed.
    grew = [line for line in res.out.splitlines() if re.search(r"\(\+[0-9.]+ pt\)", line)]
    gains = {line.split()[0]: float(re.search(r"\(\+([0-9.]+) pt\)", line).group(1)) for line in grew}
    assert max(gains, key=gains.__getitem__) == "changed_spin", res.out
    svg = (tmp_path / "diff.svg").read_text()
    # inferno colours frames that grew red: rgb(255,x,x) with x < 255.
    m = re.search(r"<title>changed_spin \([^)]*\)</title><rect[^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", svg)
    assert m, "changed_spin frame not found in the differential SVG"
    r, g, b = map(int, m.groups())
    assert r == 255 and g < 200 and b < 200
    m = re.search(r"<title>warm_spin \([^)]*\)</title><rect[^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)\"", svg)
    assert m and not (int(m.group(1)) == 255 and int(m.group(2)) < 200)  # unchanged code is not marked red
    assert (tmp_path / "diff-reverse.svg").exists()


def test_flame_diff_of_a_missing_file_is_one_line_error(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.folded").write_text("p;f 1\n")
    (tmp_path / "empty").mkdir()
    res = hone("flame", "--diff", tmp_path / "a.folded", tmp_path / "empty", "-o", tmp_path)
    assert res.code == 2
    assert "Traceback" not in res.err and "expected one .folded file" in res.err


def test_off_cpu_graph_records_blocking_stacks(caps, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from hone.diagnose.flame import record_offcpu

    if not caps.tracefs_mounted:
        pytest.skip("tracefs is not mounted")
    # sleep blocks in the kernel: every switch-out stack passes through the scheduler.
    result = record_offcpu(["sleep", "0.2"], tmp_path, caps, name="off")
    assert result.kind == "off-CPU" and result.samples >= 1
    assert any("schedule" in f for f, _ in result.hottest)
    assert result.svg.exists() and result.folded.exists()
