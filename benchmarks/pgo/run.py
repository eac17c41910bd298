"""Benchmark: hone pgo on real programs — per program and mode, instruction-count and
CPU-time ratio vs the -O2 default on each evaluate scenario, with 95% CI; the variant
hone picks; and a hand-built gcc PGO (make and the documented flags, no hone code) of Lua,
of a classic Makefile project and of Redis for comparison.

    .venv/bin/python benchmarks/pgo/run.py                 # every program (~40–70 min)
    .venv/bin/python benchmarks/pgo/run.py --only lua      # ~15 min
    .venv/bin/python benchmarks/pgo/run.py --only classic-make   # ~1 min (gcc and clang Makefiles)
    .venv/bin/python benchmarks/pgo/run.py --only redis    # ~13 min: a server, judged on SET/GET req/s
    .venv/bin/python benchmarks/pgo/run.py --render-only   # tables from out/*.json

Writes out/<program>.json (hone's --json), out/<program>-hand.json and RESULTS.md; what was
seen during a run (load on the machine, …) goes in out/<program>-notes.md, shown under its tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLES = REPO / "examples" / "pgo"
HONE = str(Path(sys.executable).with_name("hone"))

# Anchors measured by hand on this VM (docs/machine-facts.md): Lua 5.4.4, instructions vs -O2.
ANCHORS = {"instr-gcc": -5.0, "lto": -5.5, "instr-gcc+lto": -8.7, "instr-clang": -3.6, "lto-thin": -6.7,
           "instr-clang+lto-thin": -13.1}

# The classic Makefile (CC = gcc / CC = clang assigned in the Makefile): modest loop counts for
# cachegrind, large enough (~0.1–0.3 s) for CPU time.
CLASSIC = EXAMPLES / "classic-make"
CLASSIC_SCENARIOS = ["--binary", "classic", "--train", "@abcd:3 {binary} 3000000 abcd",
                     "--train", "@zz {binary} 1000000 zzab", "--evaluate", "@mixed {binary} 40000000 abzc",
                     "--evaluate", "@zzzc {binary} 30000000 zzzc"]

PROGRAMS: dict[str, list[str]] = {
    "lua": [str(EXAMPLES / "lua.yaml")],
    "zstd": [str(EXAMPLES / "zstd.yaml")],
    "rust-toy": ["--cargo", str(EXAMPLES / "toy-rust"), "--binary", "target/release/toy",
                 "--train", "@train-axmrsja {binary} 400000", "--train", "@train-mix:2 {binary} 100000 aMxRjs",
                 "--evaluate", "@eval-default {binary} 3000000", "--evaluate", "@eval-other {binary} 1500000 axRmsja",
                 "--mode", "instr-rust", "--mode", "lto", "--mode", "instr-rust+lto", "--mode", "bolt",
                 "--mode", "instr-rust+bolt"],
    "classic-make": ["--make", str(CLASSIC), *CLASSIC_SCENARIOS, "--mode", "instr-gcc", "--mode", "lto",
                     "--mode", "instr-gcc+lto"],
    # Makefile.clang says CC = clang: its own run, its default is that Makefile's clang -O2.
    "classic-make-clang": ["--make", str(CLASSIC), "--build-command", "make -f Makefile.clang", *CLASSIC_SCENARIOS,
                           "--mode", "instr-clang"],
    "redis": [str(EXAMPLES / "redis.yaml"), "--mode", "instr-gcc", "--mode", "lto", "--mode", "instr-gcc+lto"],
}
# `--only NAME` runs every part of a program.
GROUPS = {"classic-make": ["classic-make", "classic-make-clang"]}


def clang_path(workroot: Path) -> str:
    """PATH with a plain ``clang`` (this machine has only clang-16; Makefile.clang calls clang)."""
    bin_dir = workroot / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    if not (bin_dir / "clang").exists():
        (bin_dir / "clang").symlink_to("/usr/bin/clang-16")
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def run_hone(program: str, workroot: Path) -> Path:
    out = HERE / "out" / f"{program}.json"
    out.parent.mkdir(exist_ok=True)
    work = workroot / program
    if work.exists():
        shutil.rmtree(work)
    argv = [HONE, "pgo", *PROGRAMS[program], "--workdir", str(work), "--json", str(out)]
    env = {**os.environ, "PATH": clang_path(workroot)} if program == "classic-make-clang" else None
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, cwd=REPO / "examples" / "pgo" if program == "rust-toy" else REPO, env=env)
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


def _pick_or(result: dict[str, Any], fallback: str) -> str:
    """hone's pick, or ``fallback`` (its gcc PGO variant) when it picked none."""
    return result["best"].get("variant") or fallback


def _binary(result: dict[str, Any], variant: str) -> Path:
    return Path(next(b["binary"] for b in result["builds"] if b["variant"] == variant))


def hand_built_classic(result: dict[str, Any]) -> dict[str, Any]:
    """gcc -O2 and gcc PGO of examples/pgo/classic-make built by hand (its own Makefile; the
    profile flags ride in CC because its link line passes no CFLAGS), trained on the hone run's
    train scenarios; instructions (cachegrind) on each evaluate scenario for those two and for
    hone's default and hone's pick, measured the same way."""
    t0 = time.perf_counter()
    train = [s["command"] for s in result["scenarios"]["train"]]
    evaluate = {s["name"]: s["command"] for s in result["scenarios"]["evaluate"]}
    pick = _pick_or(result, "instr-gcc")
    with tempfile.TemporaryDirectory(prefix="hand-classic-") as tmp:
        tree = Path(tmp) / "classic-make"
        shutil.copytree(CLASSIC, tree)

        def make(cc: str, keep: str) -> Path:
            for f in [*tree.glob("*.o"), tree / "classic"]:
                f.unlink(missing_ok=True)  # not `make clean`: it deletes the .gcda
            subprocess.run(["make", f"CC={cc}"], cwd=tree, check=True, capture_output=True, timeout=300)
            return Path(shutil.copy2(tree / "classic", Path(tmp) / keep))

        def argv(cmd: str, binary: Path) -> list[str]:
            return shlex.split(cmd.replace("{binary}", str(binary)))

        binaries = {"hand -O2": make("gcc", "classic-O2")}
        instr = make("gcc -fprofile-generate", "classic-instr")
        for cmd in train:
            subprocess.run(argv(cmd, instr), cwd=tree, check=True, capture_output=True, timeout=300)
        binaries["hand PGO"] = make("gcc -fprofile-use -fprofile-correction", "classic-pgo")
        binaries["hone default"] = _binary(result, "default")
        binaries[f"hone pick ({pick})"] = _binary(result, pick)
        ir = {name: {s: _cachegrind_ir(argv(c, b), tree) for s, c in evaluate.items()} for name, b in binaries.items()}
    return {"instructions": ir, "pick": pick, "seconds": round(time.perf_counter() - t0, 1)}


REDIS = EXAMPLES / "third_party" / "redis"
REDIS_MAKE = ["make", "MALLOC=libc", "BUILD_TLS=no", "-j2"]


def _wait_port(port: int, open_: bool, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.2)
            if (sock.connect_ex(("127.0.0.1", port)) == 0) == open_:
                return
        time.sleep(0.1)
    raise RuntimeError(f"port {port} still {'closed' if open_ else 'open'} after {limit:g} s")


def hand_built_redis(result: dict[str, Any], workroot: Path, rounds: int) -> dict[str, Any]:
    """Redis built by hand with its own Makefile: -O2, and gcc PGO (OPTIMIZATION="-O2
    -fprofile-generate=DIR", the train load against it, SIGTERM, OPTIMIZATION="-O2
    -fprofile-use=DIR -fprofile-correction"; DIR outside the tree because Redis's Makefile
    cleans *.gcda whenever its flags change). Then the same measurement hone's evaluation
    makes (its A/B engine, interleaved randomized rounds, each run a fresh server under the
    evaluate load: SET/GET req/s and the server's CPU time), on hone's default, noise probe,
    instr-gcc and pick together with the two hand-built servers."""
    from hone.build.correctness import Reference
    from hone.build.evaluate import service_rows, time_service_scenario
    from hone.build.scenario import Scenario
    from hone.build.service import ServiceLoad
    from hone.spec import load_spec

    t0 = time.perf_counter()
    loaded = load_spec(EXAMPLES / "redis.yaml")
    service = loaded.spec.service
    assert service is not None and service.start is not None and service.ready is not None
    port = service.ready.address()[1]  # type: ignore[index]
    root = workroot / "redis-hand"
    if root.exists():
        shutil.rmtree(root)
    tree, profdir, keep = root / "redis", root / "profile", root / "bin"
    keep.mkdir(parents=True)
    shutil.copytree(REDIS, tree, symlinks=True)
    log = root / "build.log"

    def build(name: str, *extra: str) -> Path:
        with log.open("a") as out:
            out.write(f"### {name}: {' '.join([*REDIS_MAKE, *extra])}\n")
            out.flush()
            subprocess.run(["make", "distclean"], cwd=tree, check=True, stdout=out, stderr=subprocess.STDOUT,
                           timeout=600)
            subprocess.run([*REDIS_MAKE, *extra], cwd=tree, check=True, stdout=out, stderr=subprocess.STDOUT,
                           timeout=1800)
        return Path(shutil.copy2(tree / "src" / "redis-server", keep / name))

    hand_o2 = build("redis-server-O2")
    instr = build("redis-server-instr", f"OPTIMIZATION=-O2 -fprofile-generate={profdir}",
                  "REDIS_LDFLAGS=-fprofile-generate")
    for scn in result["scenarios"]["train"]:
        argv = [str(instr) if a == "{binary}" else a for a in service.start]  # type: ignore[union-attr]
        _wait_port(port, False, 30)
        with (root / "train-server.log").open("ab") as out:
            server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
            try:
                _wait_port(port, True, 30)
                subprocess.run(["sh", "-c", scn["command"]], cwd=EXAMPLES, check=True, capture_output=True,
                               timeout=600)
            finally:
                server.send_signal(signal.SIGTERM)  # Redis exits normally: the .gcda are written
                server.wait(timeout=60)
        _wait_port(port, False, 30)
    gcda = len(list(profdir.rglob("*.gcda")))
    hand_pgo = build("redis-server-pgo", f"OPTIMIZATION=-O2 -fprofile-use={profdir} -fprofile-correction"
                     " -Wmissing-profile")
    missing = sorted({m.rsplit("#", 1)[-1] for m in re.findall(r"‘([^’]+)\.gcda’ profile count data file not found",
                                                              log.read_text(errors="replace"))})
    build_s = time.perf_counter() - t0

    pick = _pick_or(result, "instr-gcc")
    binaries = {"default": _binary(result, "default")}
    binaries.update({b["variant"]: Path(b["binary"]) for b in result["builds"]
                     if b["kind"] == "noise" and b["status"] == "ok"})
    for v in dict.fromkeys(["instr-gcc", pick]):
        binaries[v] = _binary(result, v)
    binaries.update({"hand -O2": hand_o2, "hand PGO": hand_pgo})
    (ev,) = result["scenarios"]["evaluate"]
    scn = Scenario(ev["name"], ev["command"])
    load = ServiceLoad(loaded)
    try:
        timing = time_service_scenario(scn, binaries, Reference(0, ""), load, rounds=rounds, warmup=1, seed=7,
                                       timeout=600, cwd=EXAMPLES, threshold=0.01)
    finally:
        load.close()
    rows, floor = service_rows(timing, binaries, {k: k for k in binaries})
    return {"rows": rows, "noise_floor_pct": floor, "rounds": rounds, "pick": pick, "train_gcda_files": gcda,
            "missing_profile": missing, "build_seconds": round(build_s, 1),
            "seconds": round(time.perf_counter() - t0, 1)}


# ------------------------------------------------------------------ tables


def _pct(r: float | None) -> str:
    return "–" if r is None else f"{(r - 1) * 100:+.1f}%"


def _geo(values: list[float | None]) -> float | None:
    good = [v for v in values if v is not None and v > 0]
    if not good or len(good) != len(values):
        return None
    return math.exp(sum(math.log(v) for v in good) / len(good))


def render_program(name: str, result: dict[str, Any], hand: dict[str, float] | None,
                   default: str = "gcc -O2 (cargo: rustc release profile)") -> str:
    rows = result["variants"]
    scenarios = [s["name"] for s in result["scenarios"]["evaluate"]]
    variants = [b["variant"] for b in result["builds"] if b["status"] == "ok"]
    clang_base = {r["scenario"]: r["instructions_ratio"] for r in rows if r["variant"] == "clang"}
    out = [f"## {name}", "",
           f"{result['rounds']} interleaved rounds per scenario; CPU time (user+sys); default = {default}."
           f" Layout-noise floor per scenario: "
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


def render_classic_hand(hand: dict[str, Any]) -> str:
    ir = hand["instructions"]
    scenarios = list(next(iter(ir.values())))
    base = {"hand PGO": "hand -O2", f"hone pick ({hand['pick']})": "hone default", "hand -O2": "hone default"}
    out = ["", "Hand-built gcc PGO without hone (`make CC=\"gcc -fprofile-generate\"` — the Makefile's link line"
           " passes no CFLAGS, so the flags ride in CC —, the same train commands, then `make CC=\"gcc"
           " -fprofile-use -fprofile-correction\"`) against hone's pick, instructions from one cachegrind run each"
           " (repeatable to ~0.03%):", "",
           "| binary | " + " | ".join(f"{s} instructions" for s in scenarios) + " | vs | change, geo-mean |",
           "|---|" + "---|" * len(scenarios) + "---|---|"]
    for name, per in ir.items():
        ref = base.get(name)
        change = _pct(_geo([per[s] / ir[ref][s] for s in scenarios])) if ref else ""
        out.append(f"| {name} | " + " | ".join(f"{per[s]:,}" for s in scenarios) + f" | {ref or ''} | {change} |")
    out.append(f"\n(hand-built reference and cachegrind runs: {hand['seconds']:.0f} s)")
    return "\n".join(out) + "\n"


def _change(fig: dict[str, Any]) -> str:
    if fig.get("verdict") == "reference" or fig.get("ratio") is None:
        return "—"
    lo, hi = fig.get("ci_pct") or (math.nan, math.nan)
    return f"{(fig['ratio'] - 1) * 100:+.1f}% [{lo:+.1f}, {hi:+.1f}]"


def _service_table(rows: list[dict[str, Any]], metrics: list[str]) -> list[str]:
    out = ["| variant | " + " | ".join(f"{m} median | {m} vs default [95% CI]" for m in metrics)
           + " | server CPU median | CPU vs default [95% CI] | verdict |",
           "|---|" + "---|---|" * len(metrics) + "---|---|---|"]
    for r in rows:
        figs = r["metrics"]
        cpu = ("—" if r["verdict"] == "reference" or r.get("time_ratio") is None else
               f"{(r['time_ratio'] - 1) * 100:+.1f}% [{(r['time_ci'][0] - 1) * 100:+.1f},"
               f" {(r['time_ci'][1] - 1) * 100:+.1f}]")
        cells = " | ".join(f"{figs[m]['median']:,.0f} | {_change(figs[m])}" for m in metrics)
        out.append(f"| {r['variant']} | {cells} | {r['cpu_s_median']:.3f} s | {cpu} | {r['verdict']} |")
    return out


def render_service(name: str, result: dict[str, Any], hand: dict[str, Any] | None) -> str:
    metrics = [m["name"] for m in result["service"]["metrics"]]
    (scn,) = result["scenarios"]["evaluate"]
    out = [f"## {name}", "",
           f"A server: every variant runs as the service, {result['rounds']} interleaved randomized rounds, each run a"
           f" fresh server under `{scn['command']}`; {', '.join(metrics)} from its output, the server's CPU time"
           " (user+sys) from /proc. Default = the project's Makefile (gcc -O2). Layout-noise floor on"
           f" {metrics[0]}: ±{next(iter(result['noise_floor_pct'].values())):.1f}%. CIs: 95%, change in %.", ""]
    out += _service_table(result["variants"], metrics)
    for b in result["builds"]:
        if b["status"] != "ok":
            out.append(f"\n**{b['variant']}: {b['status']}** — {b['error']}")
    best = result["best"]
    out += ["", f"hone's pick: **{best.get('variant') or 'none'}** — {best['reason']}"]
    for w in result.get("warnings", []):
        out.append(f"\nwarning: {w}")
    out.append(f"\n(hone pgo: {result['seconds']:.0f} s)")
    if hand:
        out += ["", "Hand-built without hone (Redis's Makefile: `make MALLOC=libc BUILD_TLS=no"
                " OPTIMIZATION=\"-O2 -fprofile-generate=DIR\"`, the train load against it, SIGTERM, then"
                " `OPTIMIZATION=\"-O2 -fprofile-use=DIR -fprofile-correction\"`; OPTIMIZATION reaches Redis's"
                " sources and hiredis, the other bundled deps keep their own flags), measured with hone's binaries in"
                f" the same interleaved rounds ({hand['rounds']}, the A/B engine hone's evaluation uses)."
                f" {hand['train_gcda_files']} .gcda files trained; objects without a profile in the PGO build:"
                f" {', '.join(hand['missing_profile']) or 'none'}."
                f" Layout-noise floor on {metrics[0]}: ±{hand['noise_floor_pct']:.1f}%.", ""]
        out += _service_table(hand["rows"], metrics)
        out.append(f"\n(hand-built builds and training {hand['build_seconds']:.0f} s; with the measurement"
                   f" {hand['seconds']:.0f} s)")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=sorted({*PROGRAMS, *GROUPS}))
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--no-hand", action="store_true", help="skip the hand-built references")
    ap.add_argument("--workroot", default=str(Path(tempfile.gettempdir()) / "hone-pgo-bench"))
    args = ap.parse_args()
    programs = [q for p in args.only or PROGRAMS for q in GROUPS.get(p, [p])]
    workroot = Path(args.workroot)
    if not args.render_only:
        subprocess.run(["bash", str(EXAMPLES / "fetch-sources.sh"), *(["redis"] if "redis" in programs else [])],
                       check=True)
        for p in programs:
            run_hone(p, workroot)
    parts = ["# hone pgo benchmark\n", "Ratios are variant / default; negative = fewer instructions / less time.\n"]
    for p in PROGRAMS:
        path = HERE / "out" / f"{p}.json"
        if not path.exists():
            continue
        result = json.loads(path.read_text())
        hand_path = HERE / "out" / f"{p}-hand.json"
        hand: Any = None
        if p in ("lua", "classic-make", "redis") and not args.no_hand:
            if (p in programs and not args.render_only) or (p == "lua" and not hand_path.exists()):
                hand = (hand_built_lua(result) if p == "lua" else hand_built_classic(result) if p == "classic-make"
                        else hand_built_redis(result, workroot, result["rounds"]))
                hand_path.write_text(json.dumps(hand, indent=2) + "\n")
            elif hand_path.exists():
                hand = json.loads(hand_path.read_text())
        if p == "redis":
            parts.append(render_service(p, result, hand))
        elif p == "classic-make":
            parts.append(render_program(p, result, None) + (render_classic_hand(hand) if hand else ""))
        elif p == "classic-make-clang":
            parts.append(render_program(p, result, None, default="Makefile.clang's own build (clang -O2)"))
        else:
            parts.append(render_program(p, result, hand))
        notes = HERE / "out" / f"{p}-notes.md"
        if notes.exists():
            parts.append(notes.read_text())
    text = "\n".join(parts)
    (HERE / "RESULTS.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
