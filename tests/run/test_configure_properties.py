"""Property: any sequence of configurations over any subset of knobs on one config file,
whatever the file's start (keys present, absent, commented out, duplicated, quoted), sets
exactly the configuration's keys, leaves every other key at its start and every other
line as it was — and the session's restore gives back the original bytes."""

from __future__ import annotations

import re
import tempfile
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hone.knobs._config_formats import get_value
from hone.run.configure import Configurator
from hone.run.journal import Journal, MachineLock
from hone.spec import load_spec

KEYS = ("alpha", "beta", "gamma", "delta")
VALUES = ("1", "20", "300", "on", "off")


def _line(kind: str, key: str, value: str) -> list[str]:
    return {
        "present": [f"{key} = {value}"],
        "commented": [f"#{key} = {value}"],
        "duplicated": [f"{key} = {value}", "# between", f"{key} = {value}9"],
        "quoted": [f"{key} = '{value}'"],
        "trailing": [f"{key} = {value}    # why"],
        "absent": [],
    }[kind]


starts = st.lists(
    st.tuples(st.sampled_from(KEYS), st.sampled_from(["present", "commented", "duplicated", "quoted", "trailing",
                                                     "absent"]), st.sampled_from(VALUES)),
    min_size=0, max_size=6,
).map(lambda items: "".join(f"{line}\n" for k, kind, v in items for line in _line(kind, k, v)))
extra_lines = st.lists(st.sampled_from(["# a comment", "", "other = 5", "[not a section]", "x=1"]), max_size=3)
configs = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=4)
steps = st.lists(st.one_of(configs, st.just("restore")), min_size=1, max_size=6)


def _others(text: str) -> list[str]:
    """The lines that are no knob's active key line."""
    return [line for line in text.splitlines() if not re.match(r"\s*(alpha|beta|gamma|delta)\s*=", line)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=starts, extra=extra_lines, sequence=steps, no_trailing_newline=st.booleans())
def test_configurations_are_exact_and_restore_is_byte_identical(start: str, extra: list[str],
                                                                 sequence: list[object],
                                                                 no_trailing_newline: bool) -> None:
    original = start + "".join(f"{e}\n" for e in extra)
    if no_trailing_newline:
        original = original.rstrip("\n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        conf = root / "app.conf"
        conf.write_bytes(original.encode())
        spec = root / "hone.yaml"
        knobs = "".join(f"  - {{name: {k}, kind: file, path: {conf}, key: {k}, values: {list(VALUES)}}}\n"
                        for k in KEYS)
        spec.write_text(textwrap.dedent("""\
            benchmark: {command: ["true"]}
            knobs:
            """) + knobs)
        loaded = load_spec(spec)
        with MachineLock(root):
            configurator = Configurator(loaded, Journal(root / "state"))
            for step in sequence:
                if step == "restore":
                    assert configurator.restore() == []
                    assert conf.read_bytes() == original.encode()
                    continue
                assert isinstance(step, dict)
                configurator.apply(step)
                text = conf.read_text()
                for key in KEYS:
                    want = step.get(key, get_value(original, "conf", key))
                    assert get_value(text, "conf", key) == want
                assert [line for line in _others(text) if line] == [line for line in _others(original) if line]
                configurator.verify()
            assert configurator.restore() == []
            assert conf.read_bytes() == original.encode()
            assert Journal(root / "state").active() == []
