"""``hone compare`` sweep values reach ``--shell`` commands and hooks as data, never as code."""

from __future__ import annotations

import json
from pathlib import Path


def test_sweep_value_with_command_substitution_never_runs(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "--shell", "printf '%s\\n' {c} >> a.txt", "printf '%s\\n' \"{c}\" >> b.txt",
               "--sweep", "c=1,$(touch pwned),`touch pwned2`", "--rounds", "2", "--warmup", "0",
               "--export-json", tmp_path / "r.json", cwd=tmp_path)
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    for name in ("a.txt", "b.txt"):
        assert set((tmp_path / name).read_text().splitlines()) == {"1", "$(touch pwned)", "`touch pwned2`"}
    assert [row["sweep_value"] for row in json.loads((tmp_path / "r.json").read_text())["rows"]] == [
        "1", "$(touch pwned)", "`touch pwned2`"]


def test_prepare_and_cleanup_under_shell_get_the_sweep_value_as_data(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "--shell", "true {c}", "true '{c}'", "--sweep", "c=x; touch pwned",
               "--prepare", "printf '%s\\n' '{c}' >> prepared.txt", "--cleanup", "printf '%s\\n' {c} >> cleaned.txt",
               "--rounds", "2", "--warmup", "0", cwd=tmp_path)
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert set((tmp_path / "prepared.txt").read_text().splitlines()) == {"x; touch pwned"}
    assert set((tmp_path / "cleaned.txt").read_text().splitlines()) == {"x; touch pwned"}


def test_sh_c_command_without_shell_flag_binds_its_script(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "sh -c 'printf \"%s\\n\" {c} >> a.txt'", "sh -c 'true {c}'",
               "--sweep", "c=$(touch pwned)", "--rounds", "2", "--warmup", "0", cwd=tmp_path)
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert set((tmp_path / "a.txt").read_text().splitlines()) == {"$(touch pwned)"}
