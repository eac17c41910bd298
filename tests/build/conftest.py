"""Fixtures for hone pgo tests: copies of our example projects (never the originals)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "pgo"


@pytest.fixture
def project(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``project("toy-c")`` → a fresh copy of examples/pgo/toy-c under tmp_path."""

    def _copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns("target", "third_party"))
        return dest

    return _copy


@pytest.fixture(scope="session")
def lua_sources() -> Path:
    """Debian's Lua 5.4 sources (fetch-sources.sh is idempotent; set-up already ran it)."""
    lua = EXAMPLES / "third_party" / "lua"
    if not (lua / "src" / "lua.c").exists() or not (lua / "Makefile.hone").exists():
        subprocess.run(["bash", str(EXAMPLES / "fetch-sources.sh")], check=True, timeout=600)
    return lua


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def rows(result: dict[str, Any], variant: str) -> list[dict[str, Any]]:
    return [r for r in result["variants"] if r["variant"] == variant]


def build(result: dict[str, Any], variant: str) -> dict[str, Any]:
    return next(b for b in result["builds"] if b["variant"] == variant)
