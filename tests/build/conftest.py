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


def assert_trained_and_measured(result: dict[str, Any], variant: str, scenarios: set[str]) -> None:
    """``variant`` built, its training build verified instrumented, a profile with counts for
    each of ``scenarios``, and a timed row against the default."""
    b = build(result, variant)
    assert b["status"] == "ok", b
    assert b["profile_problems"] == [], b["profile_problems"]
    stages = {s["name"]: s for s in json.loads(Path(b["manifest"]).read_text())["stages"]}
    assert stages["training build"]["verification"].startswith("ok: instrumented"), stages["training build"]
    assert stages["optimizing build"]["verification"].split(":")[0] in ("ok", "not verifiable")
    prof = next(p for p in result["profiles"].values() if p["kind"] == variant)
    assert {s["scenario"] for s in prof["scenarios"]} == scenarios
    assert all(s["total_count"] > 0 for s in prof["scenarios"])
    (r,) = rows(result, variant)
    assert r["time_ratio"] is not None and r["verdict"], r
