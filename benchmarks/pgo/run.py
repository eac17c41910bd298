"""Benchmark: hone pgo on real programs — per program and mode, instruction-count and
CPU-time ratio vs the -O2 default on each evaluate scenario, with 95% CI; the variant
hone picks; and a hand-built gcc PGO of Lua with the documented flags for comparison.

    .venv/bin/python benchmarks/pgo/run.py                 # lua, zstd, rust toy (~30–60 min)
    .venv/bin/python benchmarks/pgo/run.py --only lua
    .venv/bin/python benchmarks/pgo/run.py --render-only   # tables from out/*.json

Writes out/<program>.json (hone's --json) and RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLES = REPO / "examples" / "pgo"
HONE = str(Path(sys.executable).with_name("hone"))

# Anchors measured by hand on this VM (docs/machine-facts.md): Lua 5.4.4, instructions vs -O2.
ANCHORS = {"instr-gcc": -5.0, "lto": -5.5, "instr-gcc+lto": -8.7, "instr-clang": -3.6, "lto-thin": -6.7,
           "instr-clang+lto-thin": -13.1}

PROGRAMS: dict[str, list[str]] = {
    "lua": [str(EXAMPLES / "lua.yaml")],
    "zstd": [str(EXAMPLES / "zstd.yaml")],
    "rust-toy": ["--cargo", str(EXAMPLES / "toy-rust"), "--binary", "target/release/toy",
                 "--train", "@train-axmrsja {binary} 400000", "--train", "@train-mix:2 {binary} 100000 aMxRjs",
                 "--evaluate", "@eval-default {binary} 3000000", "--evaluate", "@eval-other {binary} 1500000 axRmsja",
                 "--mode", "instr-rust", "--mode", "lto", "--mode", "instr-rust+lto", "--mode", "bolt",
                 "--mode", "instr-rust+bolt"],
}


def run_hone(program: str, workroot: Path) -> Path:
    out = HERE / "out" / f"{program}.json"
    out.parent.mkdir(exist_ok=True)
    work = workroot / program
    if work.exists():
        shutil.rmtree(work)
    argv = [HONE, "pgo", *PROGRAMS[program], "--workdir", str(work), "--json", str(out)]
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, cwd=REPO / "examples" / "pgo" if program == "rust-toy" else REPO)
    return out


# ------------------------------------------------------------------ hand-built reference


def _cachegrind_ir(argv: list[str], cwd: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg",
                        *argv], cwd=cwd, check=True, capture_output=True)
        for line in Path(tmp, "cg").read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("no cachegrind summary")


def hand_built_lua(result: dict[str, Any]) -> dict[str, float]:
    """gcc -O2 and gcc PGO of Lua built by hand (make + documented flags, no hone code);
    instruction change in % on each evaluate scenario of the hone run."""
    lua = EXAMPLES / "third_party" / "lua"
    train = [s["command"] for s in result["scenarios"]["train"]]
    evaluate = {s["name"]: s["command"] for s in result["scenarios"]["evaluate"]}
    with tempfile.TemporaryDirectory(prefix="hand-lua-") as tmp:
        tree = Path(tmp) / "lua"
        shutil.copytree(lua, tree, ignore=shutil.ignore_patterns("*.o", "*.a", "lua"))

        def make(flags: str) -> None:
            env = {**os.environ, "CC": "gcc", "CFLAGS": flags, "LDFLAGS": flags}
            subprocess.run(["make", "-f", "Makefile.hone", "clean"], cwd=tree, check=True, capture_output=True)
            subprocess.run(["make", "-f", "Makefile.hone", "-j2"], cwd=tree, env=env, check=True, capture_output=True)

        def argv(cmd: str) -> list[str]:
            # The program itself, not a shell: cachegrind does not follow children.
            return shlex.split(cmd.replace("{binary}", str(tree / "lua")))

        make("-O2")
        base = {n: _cachegrind_ir(argv(c), EXAMPLES) for n, c in evaluate.items()}
        make("-O2 -fprofile-generate")
        for cmd in train:
            subprocess.run(argv(cmd), cwd=EXAMPLES, check=True, capture_output=True)
        make("-O2 -fprofile-use -fprofile-correction")
        pgo = {n: _cachegrind_ir(argv(c), EXAMPLES) for n, c in evaluate.items()}
    return {n: (pgo[n] / base[n] - 1) * 100 for n in evaluate}


# ------------------------------------------------------------------ tables


def _pct(r: float | None) -> str:
    return "–" if r is None else f"{(r - 1) * 100:+.1f}%"


def _geo(values: list[float | None]) -> float | None:
    good = [v for v in values if v is not None and v > 0]
    if not good or len(good) != len(values):
        return None
    return math.exp(sum(math.log(v) for v in good) / len(good))


def render_program(name: str, result: dict[str, Any], hand: dict[str, float] | None) -> str:
    rows = result["variants"]
    scenarios = [s["name"] for s in result["scenarios"]["evaluate"]]
    variants = [b["variant"] for b in result["builds"] if b["status"] == "ok"]
    clang_base = {r["scenario"]: r["instructions_ratio"] for r in rows if r["variant"] == "clang"}
    out = [f"## {name}", "",
           f"{result['rounds']} interleaved rounds per scenario; CPU time (user+sys); default = gcc -O2"
           f" (cargo: rustc release profile). Layout-noise floor per scenario: "
           + ", ".join(f"{k} ±{v:.1f}%" for k, v in result["noise_floor_pct"].items()) + ".", ""]
    out += ["| mode | scenario | instructions vs default | time vs default [95% CI] | branch misp. | verdict |",
            "|---|---|---|---|---|---|"]
    for v in variants:
        for s in scenarios:
            r = next((x for x in rows if x["variant"] == v and x["scenario"] == s), None)
            if r is None or v == "default":
                continue
            ci = r.get("time_ci") or [None, None]
            ci_txt = f"[{_pct(ci[0])}, {_pct(ci[1])}]" if ci[0] is not None else ""
            out.append(f"| {v} | {s} | {_pct(r['instructions_ratio'])} | {_pct(r['time_ratio'])} {ci_txt} |"
                       f" {_pct(r['branch_mispredicts_ratio'])} | {r['verdict']} |")
    out += ["", "| mode | instructions, geo-mean | vs clang -O2 | time, geo-mean | anchor (Lua, by hand) |",
            "|---|---|---|---|---|"]
    for v in variants:
        if v == "default" or v.startswith("noise-"):
            continue
        vr = [next((x for x in rows if x["variant"] == v and x["scenario"] == s), {}) for s in scenarios]
        gi = _geo([x.get("instructions_ratio") for x in vr])
        gt = _geo([x.get("time_ratio") for x in vr])
        vs_clang = ""
        if clang_base and ("clang" in v or v == "lto-thin") and v != "clang":
            rel = [x.get("instructions_ratio") / clang_base[s] if x.get("instructions_ratio") and clang_base.get(s)
                   else None for x, s in zip(vr, scenarios, strict=True)]
            vs_clang = _pct(_geo(rel))
        anchor = f"{ANCHORS[v]:+.1f}%" if name == "lua" and v in ANCHORS else ""
        out.append(f"| {v} | {_pct(gi)} | {vs_clang} | {_pct(gt)} | {anchor} |")
    bad = [b for b in result["builds"] if b["status"] != "ok"]
    for b in bad:
        out.append(f"\n**{b['variant']}: {b['status']}** — {b['error']}")
    best = result["best"]
    out += ["", f"hone's pick: **{best.get('variant') or 'none'}** — {best['reason']}"
            + (f" (time {_pct(best['time_ratio_geomean'])}, instructions {_pct(best['instructions_ratio_geomean'])})"
               if best.get("variant") else "")]
    if best.get("fewest_instructions"):
        fi = best["fewest_instructions"]
        out[-1] += f"; fewest instructions: {fi['variant']} ({_pct(fi['instructions_ratio_geomean'])})."
    if hand:
        hv = _geo([1 + x / 100 for x in hand.values()])
        out += ["", "Hand-built gcc PGO (make, `-O2 -fprofile-generate` → same train scripts → `-O2 -fprofile-use`),"
                " instructions vs hand-built -O2: " + ", ".join(f"{k} {v:+.1f}%" for k, v in hand.items())
                + f"; geo-mean {_pct(hv)}."]
    for w in result.get("warnings", []):
        out.append(f"\nwarning: {w}")
    out.append(f"\n(total {result['seconds']:.0f} s)")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=sorted(PROGRAMS))
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--no-hand", action="store_true", help="skip the hand-built Lua reference")
    ap.add_argument("--workroot", default=str(Path(tempfile.gettempdir()) / "hone-pgo-bench"))
    args = ap.parse_args()
    programs = args.only or list(PROGRAMS)
    if not args.render_only:
        subprocess.run(["bash", str(EXAMPLES / "fetch-sources.sh")], check=True)
        for p in programs:
            run_hone(p, Path(args.workroot))
    parts = ["# hone pgo benchmark\n", "Ratios are variant / default; negative = fewer instructions / less time.\n"]
    for p in PROGRAMS:
        path = HERE / "out" / f"{p}.json"
        if not path.exists():
            continue
        result = json.loads(path.read_text())
        hand = None
        hand_path = HERE / "out" / "lua-hand.json"
        if p == "lua" and not args.no_hand:
            if not args.render_only or not hand_path.exists():
                hand = hand_built_lua(result)
                hand_path.write_text(json.dumps(hand, indent=2))
            else:
                hand = json.loads(hand_path.read_text())
        parts.append(render_program(p, result, hand))
    text = "\n".join(parts)
    (HERE / "RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
