"""``hone report`` on a result file that is cut short or lacks fields: one line naming the
file and what is missing, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HONE_BIN


@pytest.fixture(scope="module")
def compare_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real ``hone compare`` result, made once for the module."""
    out = tmp_path_factory.mktemp("result") / "c.json"
    subprocess.run([HONE_BIN, "compare", "true", "true", "-r", "3", "--export-json", str(out)], check=True,
                   capture_output=True, timeout=120, env={**os.environ, "HONE_STATE_DIR": str(out.parent)})
    return json.loads(out.read_text())


@pytest.mark.parametrize("cut", ["rows", "rows[0].variants[0].runs", "metric"])
@pytest.mark.parametrize("export", [(), ("--markdown", "-")])
def test_result_missing_a_field_is_one_line(hone, tmp_path: Path, compare_result: dict[str, Any], cut: str,  # type: ignore[no-untyped-def]
                                            export: tuple[str, ...]) -> None:
    data = json.loads(json.dumps(compare_result))
    if cut == "rows[0].variants[0].runs":
        del data["rows"][0]["variants"][0]["runs"]
    else:
        del data[cut]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(data))
    res = hone("report", path, *export)
    assert res.code == 2 and "Traceback" not in res.err, res.err
    assert res.err == f"hone: error: {path}: not a complete hone-compare/2 result: field '{cut}' missing\n"
    assert res.out == ""


def test_tune_result_with_a_field_of_the_wrong_shape_is_one_line(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"format": "hone-tune/1", "best_candidate": ["not", "a", "mapping"]}))
    res = hone("report", path)
    assert res.code == 2 and "Traceback" not in res.err
    assert res.err.startswith(f"hone: error: {path}: not a complete hone-tune/1 result: field 'spec' missing")
