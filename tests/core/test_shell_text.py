"""hone.core.shell_text: placeholders in shell text become variable references, by quoting context.

The property tests run the rewritten text under real shells: for any value (no NUL) the
command prints exactly the value, and injection attempts never create a file."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hone.core.shell_text import (
    ShellTextError,
    bind,
    bind_argv,
    placeholder_variables,
    rewrite,
    shell_script_index,
)

SHELLS = [s for s in ("sh", "bash") if shutil.which(s)]
FRAGMENTS = [
    "; touch pwned", "$(touch pwned)", "`touch pwned`", "'", '"', "\n", "$IFS", "${IFS}", "*", "?", "[a]",
    "\\", "'; touch pwned; '", '"; touch pwned; "', "\nEOF\ntouch pwned\n", "}", ")", "$n", "{n}", "$value",
    "\t", " ", "&& touch pwned", "| touch pwned", "\\'", "~", "-n", "-e", "$((1+1))", "'\"$(touch pwned)\"'",
]
VALUES = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), max_size=24),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text("ab $'\"\\\n", max_size=4)), max_size=6).map("".join),
)
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

Expect = Callable[[str], str]
BRACE_TEMPLATES: list[tuple[str, Expect]] = [
    ("printf '%s' {n}", lambda v: v),
    ("printf '%s' \"{n}\"", lambda v: v),
    ("printf '%s' \"a{n}b\"", lambda v: f"a{v}b"),
    ("printf '%s' '{n}'", lambda v: v),
    ("printf '%s' 'a {n} b'", lambda v: f"a {v} b"),
    ("printf '%s' x{n}'y'\"z\"", lambda v: f"x{v}yz"),
    ("printf '%s' {n}{n}", lambda v: v + v),
    ("printf '%s' \"$(printf '%s.' {n})\"", lambda v: v + "."),
    ("printf '%s' \"$(printf '%s.' \"{n}\")\"", lambda v: v + "."),
    ("printf '%s' \"$(printf '%s.' '{n}')\"", lambda v: v + "."),
    ("x=`printf '%s.' {n}`; printf '%s' \"$x\"", lambda v: v + "."),
    ("printf '%s' \"`printf '%s.' \\\"{n}\\\"`\"", lambda v: v + "."),
    ("printf '%s' \"`printf '%s.' '{n}'`\"", lambda v: v + "."),
    ("cat <<EOF\n{n}\nEOF", lambda v: v + "\n"),
    ("cat <<-EOF\n\t<{n}>\n\tEOF", lambda v: f"<{v}>\n"),
    ("cat <<'EOF'\n$x {m}\nEOF\nprintf '%s' {n}", lambda v: "$x {m}\n" + v),
    ("printf '%s' \"${unset_var:-{n}}\"", lambda v: v),
    ("f() { printf '%s' {n}; }; f", lambda v: v),
    ("# {n} is not bound in a comment\nprintf '%s' {n}#", lambda v: v + "#"),
    ("case {n} in *) printf '%s' \"{n}\";; esac", lambda v: v),
    ("printf '%s' \"$(case x in (y) ;; x) printf '%s' {n};; esac)\"", lambda v: v.rstrip("\n")),
    ("printf '%s' \"$( (printf '%s' {n}); printf .)\"", lambda v: v + "."),
]
DOLLAR_TEMPLATES: list[tuple[str, Expect]] = [
    ("printf '%s' $value", lambda v: v),
    ("printf '%s' \"$value\"", lambda v: v),
    ("printf '%s' ${value}", lambda v: v),
    ("printf '%s' '$value'", lambda v: v),
    ("printf '%s' '${value}'", lambda v: v),
    ("printf '%s' 'pre $value post'", lambda v: f"pre {v} post"),
    ("printf '%s' \"$(printf '%s.' $value)\"", lambda v: v + "."),
    ("printf '%s' $value$value", lambda v: v + v),
    ("cat <<EOF\n[$value]\nEOF", lambda v: f"[{v}]\n"),
]


def run_shell(shell: str, text: str, env: dict[str, str], cwd: Path) -> bytes:
    res = subprocess.run([shell, "-c", text], env={**os.environ, **env}, cwd=cwd, capture_output=True, timeout=10)
    assert res.returncode == 0, (text, res.stderr)
    return res.stdout


def check_prints_value(shell: str, template: str, expect: Expect, value: str, cwd: Path, **kw: str) -> None:
    style = kw.get("style", "braces")
    name = "n" if style == "braces" else "value"
    text, env = bind(template, {name: value}, style=style)  # type: ignore[arg-type]
    if style == "dollar":
        env["value"] = value
    assert run_shell(shell, text, env, cwd) == expect(value).encode(), text
    assert list(cwd.iterdir()) == [], "the value ran as code"


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("template", "expect"), BRACE_TEMPLATES, ids=[t for t, _ in BRACE_TEMPLATES])
@PROPERTY
@given(value=VALUES)
def test_brace_placeholder_prints_exactly_the_value_in_every_context(
        shell: str, template: str, expect: Expect, value: str, tmp_path: Path) -> None:
    check_prints_value(shell, template, expect, value, tmp_path)


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("template", "expect"), DOLLAR_TEMPLATES, ids=[t for t, _ in DOLLAR_TEMPLATES])
@PROPERTY
@given(value=VALUES)
def test_dollar_reference_prints_exactly_the_value_in_every_context(
        shell: str, template: str, expect: Expect, value: str, tmp_path: Path) -> None:
    check_prints_value(shell, template, expect, value, tmp_path, style="dollar")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.integers(-10**12, 10**12))
def test_integer_inside_arithmetic_is_evaluated_as_a_number(value: int, tmp_path: Path) -> None:
    text, env = bind("printf '%s' $(( {n} * 2 ))", {"n": str(value)})
    assert run_shell("sh", text, env, tmp_path) == str(value * 2).encode()


@pytest.mark.parametrize("value", ["1; touch pwned", "a[$(touch pwned)]", "x", "1+1", ""])
def test_non_integer_inside_arithmetic_is_refused(value: str) -> None:
    with pytest.raises(ShellTextError, match=r"benchmark.command: \{n\}: it stands inside \$\(\(…\)\)"):
        bind("echo $(( {n} + 1 ))", {"n": value}, what="benchmark.command")


def test_dollar_name_inside_arithmetic_is_checked_too() -> None:
    template = rewrite("echo $((value * 2)) $(( $value ))", ["value"], style="dollar")
    assert template.arithmetic == {"value"}
    with pytest.raises(ShellTextError, match="expected an integer"):
        template.environment({"value": "a[$(touch pwned)]"})


def test_sed_script_in_single_quotes_gets_the_value(tmp_path: Path) -> None:
    conf = tmp_path / "redis.conf"
    conf.write_text("port 6379\nsupervised systemd\n")
    text, env = bind("sed -i 's/supervised .*/supervised  $value/g' redis.conf", {"value": "no"}, style="dollar")
    assert text == "sed -i 's/supervised .*/supervised  '\"$value\"'/g' redis.conf"
    run_shell("sh", text, {**env, "value": "no"}, tmp_path)
    assert conf.read_text() == "port 6379\nsupervised  no\n"


# ---------------------------------------------------------------- rewriting, unit by unit


@pytest.mark.parametrize(("text", "expected"), [
    ("echo {n}", 'echo "$HONE_PARAM_n"'),
    ('echo "a {n}"', 'echo "a ${HONE_PARAM_n}"'),
    ("echo 'a {n} b'", "echo 'a '\"$HONE_PARAM_n\"' b'"),
    ("echo '{n}'", 'echo "$HONE_PARAM_n"'),
    ("echo `echo {n}`", 'echo `echo "$HONE_PARAM_n"`'),
    ('echo "`echo {n}`"', 'echo "`echo \\"$HONE_PARAM_n\\"`"'),
    ("cat <<EOF\n{n}\nEOF\n", "cat <<EOF\n${HONE_PARAM_n}\nEOF\n"),
    ("# {n}\necho {n}", '# {n}\necho "$HONE_PARAM_n"'),
    ("echo \\{n} \"\\{n}\"", "echo \\{n} \"\\{n}\""),
    ("awk '{print}' {m}", "awk '{print}' {m}"),
    ("echo ${n}", "echo ${n}"),
    ('echo "$(case a in a) echo {n};; esac)"', 'echo "$(case a in a) echo "$HONE_PARAM_n";; esac)"'),
    ('echo "$(echo case; echo {n})"', 'echo "$(echo case; echo "$HONE_PARAM_n")"'),
])
def test_rewrite_by_context(text: str, expected: str) -> None:
    assert rewrite(text, ["n"]).text == expected


@pytest.mark.parametrize(("text", "where"), [
    ("cat <<'EOF'\n{n}\nEOF", "quoted here-document"),
    ('cat <<"EOF"\n{n}\nEOF', "quoted here-document"),
    ("cat <<\\EOF\n{n}\nEOF", "quoted here-document"),
    ("cat <<-'EOF'\n\t{n}\n\tEOF", "quoted here-document"),
    ("printf $'a {n}\\n'", r"inside \$'…'"),
    ("echo ${{n}}", "parameter name"),
])
def test_context_that_substitutes_nothing_is_refused_naming_the_placeholder(text: str, where: str) -> None:
    with pytest.raises(ShellTextError, match=rf"benchmark.command: \{{n\}}: it stands .*{where}"):
        rewrite(text, ["n"], what="benchmark.command")


def test_quoted_heredoc_refuses_dollar_reference_too() -> None:
    with pytest.raises(ShellTextError, match=r"\$value: it stands inside a quoted here-document"):
        rewrite("cat > f <<'EOF'\nmode $value\nEOF", ["value"], style="dollar", what="")


def test_value_with_nul_byte_is_refused() -> None:
    with pytest.raises(ShellTextError, match=r"knob n: \{n\}: the value .* contains a NUL byte"):
        bind("echo {n}", {"n": "a\0b"}, what="knob n")
    with pytest.raises(ShellTextError, match="NUL byte"):
        bind_argv(["echo", "{n}"], {"n": "a\0b"})


def test_value_over_128_kib_is_refused_before_exec() -> None:
    with pytest.raises(ShellTextError, match="more than the 128 KiB"):
        bind("echo {n}", {"n": "x" * 200_000})


def test_dollar_rewrite_is_idempotent() -> None:
    once = rewrite("a $value '$value' \"$value\" 's/x/$value/' ${value}", ["value"], style="dollar").text
    assert rewrite(once, ["value"], style="dollar").text == once


def test_dollar_reference_needs_the_whole_name() -> None:
    assert rewrite("echo $valuex $value_1 ${values}", ["value"], style="dollar").text == \
        "echo $valuex $value_1 ${values}"


def test_placeholder_variables_are_distinct_shell_names() -> None:
    assert placeholder_variables(["a.b", "a_b", "n"]) == {"a.b": "HONE_PARAM_a_b", "a_b": "HONE_PARAM_a_b_2",
                                                          "n": "HONE_PARAM_n"}


@pytest.mark.parametrize(("argv", "index"), [
    (["sh", "-c", "x"], 2),
    (["/bin/bash", "-lc", "x", "name", "arg"], 2),
    (["bash", "-o", "pipefail", "-e", "-c", "x"], 5),
    (["sh", "-c", "-e", "x"], 3),
    (["busybox", "sh", "-c", "x"], 3),
    (["env", "-i", "A=1", "nice", "-n", "5", "timeout", "-s", "KILL", "10", "dash", "-c", "x"], 12),
    (["setsid", "-w", "taskset", "-c", "0", "zsh", "-c", "x"], 7),
    (["sh", "script.sh", "-c"], None),
    (["python3", "-c", "print(1)"], None),
    (["sh", "-c"], None),
    (["taskset", "-p", "1", "sh", "-c", "x"], None),
])
def test_shell_script_index_finds_the_c_argument(argv: list[str], index: int | None) -> None:
    assert shell_script_index(argv) == index


def test_bind_argv_binds_the_script_and_fills_other_elements_in_place(tmp_path: Path) -> None:
    value = "3; touch pwned"
    argv, env = bind_argv(["sh", "-c", 'printf "%s|%s" {n} "$1"', "name", "{n}"], {"n": value})
    assert argv == ["sh", "-c", 'printf "%s|%s" "$HONE_PARAM_n" "$1"', "name", value]
    res = subprocess.run(argv, env={**os.environ, **env}, cwd=tmp_path, capture_output=True, text=True, timeout=10)
    assert res.stdout == f"{value}|{value}" and list(tmp_path.iterdir()) == []


TOKENS = ["{n}", "'", '"', "`", "$", "(", ")", "{", "}", ";", " ", "\n", "<<", "<<-", "E", "#", "\\", "printf %s ",
          "$((", "))", "${x:-", "$'", "$n", "\t", "&&", "|"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(template=st.lists(st.sampled_from(TOKENS), max_size=16).map("".join))
def test_any_template_either_binds_or_is_refused_and_never_runs_the_value(template: str, tmp_path: Path) -> None:
    try:
        text, env = bind(template, {"n": "1$(touch pwned)`touch pwned`;touch pwned"})
    except ShellTextError as exc:
        assert "{n}: it stands" in exc.message or "expected an integer" in exc.message
        return
    subprocess.run(["sh", "-c", text], env={**os.environ, **env}, cwd=tmp_path, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=10)
    assert not (tmp_path / "pwned").exists(), text
