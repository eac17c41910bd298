"""hone pgo scenarios: ``{binary}`` reaches the shell as a variable quoted for its context."""

from __future__ import annotations

from pathlib import Path

import pytest

from hone.build.scenario import Scenario, run_scenario


@pytest.mark.parametrize("command", ['printf "%s|" {binary}', 'printf "%s|" "{binary}"',
                                     "printf \"%s|\" '{binary}'", 'printf "%s|" "$(printf %s {binary})"'])
def test_binary_path_with_spaces_and_shell_syntax_is_one_word_in_any_quoting(command: str, tmp_path: Path) -> None:
    binary = tmp_path / "my dir $(touch pwned)" / "prog \"x\" 'y' *"
    binary.parent.mkdir()
    binary.write_text("")
    res = run_scenario(Scenario("s", command), binary, timeout=10, cwd=tmp_path)
    assert res.ok, res.stderr
    assert res.stdout == f"{binary}|"
    assert not (tmp_path / "pwned").exists()
