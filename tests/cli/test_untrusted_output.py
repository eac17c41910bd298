"""Text from outside hone (benchmark output, knob values, paths) is printed as it is,
never read as Rich markup: ``[/bold]`` in a benchmark's stderr or a knob value is data."""

from __future__ import annotations

import textwrap
from pathlib import Path


def test_failing_trial_whose_stderr_closes_a_markup_tag_does_not_crash_tune(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the baseline run succeeds (it leaves a marker), every trial after it fails with
    # markup-like text on stderr
    bench = 'if [ -e done ]; then echo "[/bold] broke [red]" >&2; exit 1; fi; touch done; echo score: 1'
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: {bench!r}, shell: true, timeout: 20}}
        metrics:
          - {{name: score, extract: {{regex: 'score: ([0-9.]+)'}}, goal: maximize}}
        knobs:
          - {{name: x, kind: param, values: [1, 2, 3], default: 1}}
        tune: {{trials: 2, seed: 1, confirm: 0}}
        """))
    res = hone("tune", spec, "--study", "markup")
    assert res.code == 0, res.err + res.out
    assert "Traceback" not in res.err
    assert "[/bold] broke [red]" in res.out
    assert "trials: 2 (2 failed)" in res.out


def test_knob_value_that_looks_like_markup_is_shown_by_apply_and_status(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "app[red].conf"
    conf.write_text("mode = plain\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        benchmark: {{command: ["true"]}}
        knobs:
          - {{name: mode, kind: file, path: '{conf}', key: mode, values: ['[/x] v', plain]}}
        """))
    res = hone("apply", spec, "--set", "mode=[/x] v")
    assert res.code == 0, res.err
    assert "plain -> [/x] v" in res.out
    assert conf.read_text() == "mode = [/x] v\n"
    status = hone("status")
    assert status.code == 0, status.err
    assert "Traceback" not in status.err
    assert "[/x] v" in status.out and "app[red].conf" in status.out
    assert hone("rollback").code == 0
    assert conf.read_text() == "mode = plain\n"
