"""Param values in a ``shell: true`` benchmark (and ``[sh, -c, …]`` argv) arrive as data:
through ``hone run --set`` and through the values a sampler suggests, never run as code."""

from __future__ import annotations

import json
from pathlib import Path

INJECTIONS = ["3; touch pwned", "$(touch pwned)", "`touch pwned`", "3' ; touch pwned; '", '3"; touch pwned; "']


def write_spec(tmp_path: Path, benchmark: str, extra_knob: str = "") -> Path:
    values = json.dumps(["3", *INJECTIONS])
    spec = tmp_path / "hone.yaml"
    spec.write_text(
        f"benchmark:\n{benchmark}"
        "metrics:\n  - {name: score, extract: {regex: 'score: ([0-9]+)'}}\n"
        f"knobs:\n  - {{name: n, kind: param, values: {values}, default: '3'}}\n{extra_knob}"
    )
    return spec


def test_set_value_with_shell_syntax_is_one_word_in_shell_benchmark(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, '  command: "echo score: {n}; printf %s {n} > seen.txt"\n  shell: true\n')
    res = hone("run", spec, "--set", "n=3; touch pwned", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "seen.txt").read_text() == "3; touch pwned"


def test_prepare_and_cleanup_hooks_get_the_value_as_data(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, '  command: "echo score: 1"\n  shell: true\n'
                                "  prepare: \"printf '%s' {n} > prepared.txt\"\n"
                                "  cleanup: \"printf '%s' '{n}' > cleaned.txt\"\n")
    res = hone("run", spec, "--set", "n=$(touch pwned)")
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "prepared.txt").read_text() == "$(touch pwned)"
    assert (tmp_path / "cleaned.txt").read_text() == "$(touch pwned)"


def test_argv_sh_c_benchmark_binds_the_script_too(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, '  command: [sh, -c, "echo score: 1; printf %s {n} > seen.txt"]\n')
    res = hone("run", spec, "--set", "n=`touch pwned`")
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "seen.txt").read_text() == "`touch pwned`"


def test_values_a_sampler_suggests_never_run_as_code(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, "  command: \"echo score: 1; printf '%s\\\\n' {n} >> seen.txt\"\n  shell: true\n")
    res = hone("tune", spec, "--sampler", "grid", "--trials", str(len(INJECTIONS) + 1), "--repeats", "1",
               "--confirm", "0", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert json.loads((tmp_path / "r.json").read_text())["failed_trials"] == 0
    assert set(INJECTIONS) <= set((tmp_path / "seen.txt").read_text().splitlines())


def test_placeholder_in_quoted_heredoc_is_a_one_line_spec_error(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, "  command: \"cat <<'EOF'\\nscore: {n}\\nEOF\"\n  shell: true\n")
    res = hone("run", spec)
    assert res.code == 2
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.err
    assert "benchmark.command: {n}: it stands inside a quoted here-document" in lines[0]
    assert str(spec) in lines[0]
