"""Bad specs: one exact line naming file, line, field and expectation; exit 2; no change."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hone.core.errors import SpecError
from hone.knobs import check_spec
from hone.spec import load_spec

GOOD = """\
name: demo
benchmark:
  command: [echo, "ops: 5"]
  repeats: 2
metrics:
  - name: ops
    extract: {regex: 'ops: (\\d+)'}
    goal: maximize
knobs:
  - {name: level, kind: param, values: [1, 3, 9]}
  - {name: mode, kind: env, values: [a, b]}
  - {name: cache, kind: param, range: [5, 500], log: true}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hone.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SpecError) as info:
        check_spec(load_spec(path))
    return info.value.message


def test_good_spec_loads_with_types_inferred(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD)).spec
    assert spec.knob("level").ordinal and spec.knob("level").type == "categorical"
    assert spec.knob("cache").type == "int" and spec.knob("cache").log
    assert spec.knob("mode").ordinal is False
    assert spec.metrics[0].goal == "maximize"


def test_bad_range_low_not_below_high(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("range: [5, 500]", "range: [5, 1]"))
    assert error_of(path) == f"{path}:12: knobs[2].range: expected [low, high] with low < high, got [5, 1]"


def test_unknown_key_is_an_error_not_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("  repeats: 2", "  repeets: 2"))
    message = error_of(path)
    assert message.startswith(f"{path}:4: benchmark.repeets: unknown key (expected one of: command,")


def test_bad_type(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("repeats: 2", "repeats: many"))
    assert error_of(path) == f"{path}:4: benchmark.repeats: expected an integer, got 'many'"


def test_missing_benchmark(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nmetrics:\n  - name: cpu_time\n")
    assert error_of(path) == f"{path}:1: benchmark: required key missing"


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    assert error_of(path) == f"{path}: cannot read: No such file or directory"


def test_unknown_knob_kind(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("kind: env", "kind: enviro"))
    assert error_of(path) == (
        f"{path}:11: knobs[1].kind: expected one of param, env, sysctl, sysfs, file, script, library, binary,"
        " got 'enviro'"
    )


def test_placeholder_without_param(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('[echo, "ops: 5"]', '[echo, "{nope}"]'))
    assert "placeholder {nope} names no param knob" in error_of(path)


def test_metric_without_extract_must_be_builtin(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("    extract: {regex: 'ops: (\\d+)'}\n", ""))
    assert error_of(path).startswith(f"{path}:6: metrics[0]: expected an extract for metric 'ops'")


def test_sysctl_absent_on_this_kernel_fails_at_validation(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "  - {name: kernel.no_such_knob_hone, kind: sysctl, range: [1, 9]}\n")
    assert error_of(path) == (
        f"{path}:13: knobs[3]: sysctl kernel.no_such_knob_hone does not exist on this kernel"
        " (/proc/sys/kernel/no_such_knob_hone)"
    )


def test_dangerous_knob_needs_opt_in(tmp_path: Path) -> None:
    knob = "  - {name: cpu1, kind: sysfs, path: /sys/devices/system/cpu/cpu1/online, values: [0, 1]}\n"
    path = write(tmp_path, GOOD + knob)
    if not Path("/sys/devices/system/cpu/cpu1/online").exists():
        pytest.skip("no cpu1 online switch on this machine")
    assert "takes a CPU offline; add allow_dangerous: true" in error_of(path)
    path.write_text(textwrap.dedent(GOOD) + knob.replace("values: [0, 1]", "values: [0, 1], allow_dangerous: true"))
    assert load_spec(path).spec.knob("cpu1").allow_dangerous


def test_regex_needs_a_group(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("'ops: (\\d+)'", "'ops: \\d+'"))
    expected = "metrics[0].extract.regex: expected a regex with one capturing group, got 'ops: \\d+'"
    assert error_of(path) == f"{path}:7: {expected}"


def test_coerce_checks_domain() -> None:
    from hone.spec.models import ParamKnobSpec

    knob = ParamKnobSpec(name="n", kind="param", range=[1, 10])
    assert knob.coerce("7") == 7
    with pytest.raises(ValueError, match=r"expected an integer in \[1, 10\], got '11'"):
        knob.coerce("11")
    with pytest.raises(ValueError, match="expected an integer"):
        knob.coerce("2.5")
    ordinal = ParamKnobSpec(name="p", kind="param", values=[1024, 4096])
    assert ordinal.coerce("4096") == 4096 and ordinal.ordinal


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("range: [5, 500]", "range: [5, 1]"), "knobs[2].range: expected [low, high] with low < high, got [5, 1]"),
        (("repeats: 2", "repeets: 2"), "benchmark.repeets: unknown key"),
    ],
)
def test_cli_prints_one_line_and_exits_2_and_changes_nothing(  # type: ignore[no-untyped-def]
    hone, tmp_path: Path, state_dir: Path, edit, expected
) -> None:
    path = write(tmp_path, GOOD.replace(*edit))
    result = hone("run", path)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in result.err
    assert not (state_dir / "journal.jsonl").exists()
