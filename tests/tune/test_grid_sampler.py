"""--sampler grid in hone's ask/tell loop (Optuna's GridSampler stops studies itself)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path


def test_grid_sampler_stops_at_the_end_of_its_grid(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent("""\
        benchmark:
          command: [python3, -c, "import sys; print('v:', (int(sys.argv[1]) - 3) ** 2)", "{a}"]
        metrics:
          - {name: v, extract: {regex: 'v: (\\d+)'}, goal: minimize}
        knobs:
          - {name: a, kind: param, values: [1, 2, 3], default: 1}
        """))
    out = tmp_path / "r.json"
    res = hone("tune", spec, "--sampler", "grid", "--trials", "4", "--confirm", "0", "--json", out)
    assert res.code == 0, res.err
    assert "Traceback" not in res.err
    data = json.loads(out.read_text())
    # the search ends with the grid: 3 configurations, the baseline's (a = 1) one of them
    assert data["trials"] in (2, 3) and data["failed_trials"] == 0
    assert "every one of the 3 configurations is measured" in res.out
