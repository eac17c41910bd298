"""A knob that does not take a trial's value goes back to its starting state at once: the
search goes on from a known state, or, when it cannot be put back (a ``set`` that mangles
what it edits), the job stops before another trial changes it further."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

BENCH = "import pathlib; print('score:', 10 + float(pathlib.Path('level').read_text().split('=')[1]))\n"


def _spec(tmp: Path, set_cmd: str, knob_range: str) -> Path:
    (tmp / "bench.py").write_text(BENCH)
    (tmp / "level").write_text("LEVEL = 6\n")
    spec = tmp / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: put-back
        benchmark: {{command: [{sys.executable}, bench.py], timeout: 20, repeats: 1}}
        metrics:
          - {{name: score, extract: {{regex: 'score: ([-0-9.]+)'}}, goal: maximize}}
        knobs:
          - name: level
            kind: script
            shell: true
            get: "sed -n 's/^LEVEL = //p' {tmp}/level"
            set: {json.dumps(set_cmd.format(f=tmp / "level"))}
            {knob_range}
        tune: {{trials: 6, seed: 2, top_k: 1}}
    """))
    return spec


def test_a_knob_that_refuses_a_value_is_put_back_and_the_search_goes_on(hone, tmp_path: Path) -> None:
    # values above 6 are clamped to 6 (as the kernel clamps some sysctls)
    set_cmd = "v=$value; [ $v -gt 6 ] && v=6; sed -i \"s/^LEVEL = .*/LEVEL = $v/\" {f}"
    spec = _spec(tmp_path, set_cmd, "values: [2, 8, 3, 9]")
    res = hone("tune", spec, "--sampler", "grid", "--trials", "4", "--confirm", "0", "--no-ablation",
               "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["trials"] == 4 and doc["failed_trials"] == 2, res.out
    assert "does not hold its value" in res.out
    assert (tmp_path / "level").read_text() == "LEVEL = 6\n"
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_knob_that_cannot_be_put_back_stops_the_job(hone, tmp_path: Path) -> None:
    # A-Tune's digits-only sed with a float: 2.5 over "6" reads "2.5", then 7.25 over "2"
    # leaves "7.25.5", and "6" over "7" leaves "6.25.5": no trial may write it again
    set_cmd = "sed -i 's/^LEVEL = [0-9]*/LEVEL = '\"$value\"'/' {f}"
    spec = _spec(tmp_path, set_cmd, "type: float\n            range: [1, 9]")
    res = hone("tune", spec, "--sampler", "random", "--confirm", "0", "--no-ablation")
    assert res.code == 3, res.err + res.out
    assert "could not be put back" in res.err and "stopped before another configuration changes it" in res.err, \
        res.err
    written = (tmp_path / "level").read_text().split("=")[1].strip()
    assert written.count(".") == 2, written  # one mangled write and its failed put-back, no more
    assert "script:level" in hone("status").out
    assert hone("rollback").code != 0  # the journal keeps it: the file cannot be fixed by its own set
