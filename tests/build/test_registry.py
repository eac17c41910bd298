"""Conformance of the build-mode registry (``hone.build.modes.PROFILE_MODES``): every profile
mode declares its name (the key, a token ``--mode`` accepts), the tools it needs and a
description, and builds without touching the machine (tools are looked for in preflight)."""

from __future__ import annotations

from typing import get_args

import pytest

from hone.build.modes import PROFILE_MODES, ProfileMode
from hone.build.recipe import PROFILE_TOKENS, ProfileKind, parse_mode


def test_the_registry_is_what_mode_strings_name() -> None:
    assert set(PROFILE_MODES) == set(PROFILE_TOKENS) == set(get_args(ProfileKind))


@pytest.mark.parametrize("name", list(PROFILE_MODES))
def test_mode_declares_its_name_tools_and_description(name: str) -> None:
    cls = PROFILE_MODES[name]
    assert issubclass(cls, ProfileMode) and not getattr(cls, "__abstractmethods__", None)
    assert cls.kind == name
    assert isinstance(cls.description, str) and cls.description.strip()
    assert isinstance(cls.tools, tuple) and cls.tools
    assert all(isinstance(t, str) and t.strip() and " " not in t for t in cls.tools)
    text = cls.describe()
    assert text.startswith(f"{name}: ") and cls.description in text
    assert all(t in text for t in cls.tools)


@pytest.mark.parametrize("name", list(PROFILE_MODES))
def test_mode_builds_without_preflight_and_parses_as_a_mode(name: str) -> None:
    mode = PROFILE_MODES[name]()
    assert mode.kind == name and mode.versions == {}
    assert mode.describe() == type(mode).describe()
    assert mode.problems("") == []
    recipe = parse_mode(name, "cargo" if name == "instr-rust" else "make")
    assert recipe.profile == name
