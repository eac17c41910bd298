"""Script knobs bind ``$value`` in shell text by quoting context: in ``[sh, -c, …]`` argv, with
``shell: true`` (A-Tune's single-quoted ``sed`` idiom included) and on remote hosts."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from hone.core.errors import HoneError
from hone.knobs import driver_for
from hone.knobs.remote import RemoteDriver
from hone.spec.models import ScriptKnobSpec


def write_spec(tmp_path: Path, knob: str, copy: str) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(f"benchmark: {{command: [cp, {json.dumps(copy)}, seen.txt]}}\nknobs:\n{knob}\n")
    return spec


def test_argv_sh_c_set_gets_value_as_data_not_code(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "knob.txt"
    state.write_text("old\n")
    knob = ("  - {name: label, kind: script, get: [cat, " + json.dumps(str(state)) + "],\n"
            "     set: [sh, -c, " + json.dumps(f"echo $value > {state}") + "]}")
    res = hone("run", write_spec(tmp_path, knob, str(state)), "--set", "label=a; touch pwned", cwd=tmp_path)
    assert res.code == 0, res.err
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "seen.txt").read_text() == "a; touch pwned\n"
    assert state.read_text() == "old\n"  # restored after the run


def test_shell_true_sed_in_single_quotes_substitutes_the_value(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    conf = tmp_path / "redis.conf"
    conf.write_text("port 6379\nsupervised systemd\n")
    knob = ("  - name: supervised\n    kind: script\n    shell: true\n"
            f"    get: \"sed -n 's/^supervised *//p' {conf}\"\n"
            f"    set: \"sed -i 's/supervised .*/supervised  $value/g' {conf}\"\n"
            "    values: [systemd, 'no']")
    res = hone("run", write_spec(tmp_path, knob, str(conf)), "--set", "supervised=no", cwd=tmp_path)
    assert res.code == 0, res.err
    assert (tmp_path / "seen.txt").read_text() == "port 6379\nsupervised  no\n"


def test_shell_true_value_with_quotes_stays_data_inside_single_quotes(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    driver = driver_for(ScriptKnobSpec(name="k", kind="script", shell=True, get=["cat", str(out)],
                                   set=f"printf '%s' 'v=$value' > {out}"))
    driver.write("x'; touch pwned; '")
    assert out.read_text() == "v=x'; touch pwned; '"
    assert not (Path.cwd() / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_remote_script_carries_the_value_in_env_for_the_remote_shell(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    model = ScriptKnobSpec(name="k", kind="script", get=["cat", str(out)], hosts=["node1"],
                       set=["sh", "-c", f"printf %s $value > {out}"])
    argv = RemoteDriver(model, "node1")._script(model.set, "$(touch pwned) *")
    assert argv[:2] == ["env", "value=$(touch pwned) *"]
    # sshd hands the remote side one string to its login shell: shlex.join of the argv.
    subprocess.run(["sh", "-c", shlex.join(argv)], cwd=tmp_path, check=True, timeout=10)
    assert out.read_text() == "$(touch pwned) *"
    assert not (tmp_path / "pwned").exists()


def test_value_with_nul_byte_is_a_user_error_not_a_crash(tmp_path: Path) -> None:
    driver = driver_for(ScriptKnobSpec(name="k", kind="script", shell=True, get=["true"], set="echo $value"))
    with pytest.raises(HoneError, match=r"script knob k: .*NUL byte"):
        driver.write("a\0b")


def test_value_in_quoted_heredoc_is_a_one_line_spec_error(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    knob = ("  - name: k\n    kind: script\n    shell: true\n    get: 'true'\n"
            "    set: \"cat > f <<'EOF'\\nmode $value\\nEOF\"\n    values: [a]")
    res = hone("run", write_spec(tmp_path, knob, "f"), cwd=tmp_path)
    assert res.code == 2 and "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert "$value: it stands inside a quoted here-document (<<'EOF')" in res.err
