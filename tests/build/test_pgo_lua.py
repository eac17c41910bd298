"""One real-program PGO round, trimmed: Debian's Lua 5.4 with instr-gcc from a spec,
trained on one script and evaluated on another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.build.conftest import EXAMPLES, build, read_json, rows

pytestmark = pytest.mark.integration


def test_lua_instr_gcc_round_from_a_spec(hone, lua_sources: Path, tmp_path: Path) -> None:
    spec = tmp_path / "lua.yaml"
    spec.write_text(f"""
name: lua-trimmed
benchmark: {{command: "true"}}
build:
  system: make
  dir: {lua_sources}
  binary: lua
  command: [make, -f, Makefile.hone, "-j{{jobs}}"]
  train:
    - {{name: train-string, command: "{{binary}} {EXAMPLES}/lua-bench/string.lua 8000", weight: 2}}
    - {{name: train-fib, command: "{{binary}} {EXAMPLES}/lua-bench/fib.lua 20"}}
  evaluate:
    - {{name: binary-trees, command: "{{binary}} {EXAMPLES}/lua-bench/binary-trees.lua 10"}}
  modes: [instr-gcc]
  rounds: 6
  noise_builds: 0
""")
    out = tmp_path / "r.json"
    res = hone("pgo", spec, "--workdir", tmp_path / "work", "--json", out, timeout=400)
    assert res.code == 0, res.err
    result = read_json(out)
    b = build(result, "instr-gcc")
    assert b["status"] == "ok" and b["profile_problems"] == []
    (r,) = rows(result, "instr-gcc")
    # Lua 5.4.4 gcc PGO on binary-trees: 0.9797 of the instructions in three builds here (the
    # count is exact run to run; nbody's varies by 2% — Lua seeds its string hash with the time
    # and addresses — and once read 0.994). A build without the profile reads 1.000.
    assert r["instructions_ratio"] < 0.99, r
    assert len(r["time_ci"]) == 2 and r["time_ci"][0] <= r["time_ratio"] <= r["time_ci"][1]
    manifest = json.loads(Path(b["manifest"]).read_text())
    assert "-fprofile-use" in " ".join(manifest["stages"][-1]["flags"]["cflags"])
    assert {s["scenario"] for s in manifest["profiles"][0]["scenarios"]} == {"train-string", "train-fib"}
    assert not list((tmp_path / "work").rglob("tree"))  # build trees removed after each build
    assert not (lua_sources / "lua").exists()  # the original tree was never built in
