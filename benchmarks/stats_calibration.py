"""Calibrate every A/B caller of hone's one engine on this machine (figures, not a timed test).

For each caller — ``hone compare`` (sequential looks), the tune confirmation and ablation,
``hone pgo``'s evaluation, the doctor's experiments — with its own settings:

1. A/A false positives: both arms the same CPU-bound command (a C spin loop of ~15 ms CPU,
   CPU time); how often the verdict says "faster" or "slower". Goal ≤ 5%.
2. A/A outcomes: the share that ends ``equivalent`` (CI within ±1%) vs ``inconclusive``.
3. Power (``hone compare``'s default budget): the loop against a copy doing 2% more CPU work;
   how often the verdict says "slower". Goal ≥ 80%.

How, within ~15–25 minutes (longer on noisy days, when A/A comparisons run to more rounds):

* ``hone compare`` (default budget: a look at 20 rounds, then 40, 80, 160, 320 while not
  decisive, α spent Pocock-type over the looks, ``--max-time 3m``): one pool of real
  interleaved rounds is measured — blocks of an A/A' round and an A/B round in random order,
  two variants a round as ``hone compare`` runs them — then the real engine
  (``run_experiment`` + ``compare_arms``, the settings ``hone compare`` builds) runs each
  experiment on arms that replay that pool's rounds (without replacement within an
  experiment, a round's two runs kept together; A/A' labels swapped at random per round,
  which the random run order makes exchangeable, so the pool's chance offset is not shared by
  every experiment). The 3-minute budget does not bind for this command (320 rounds × ~40 ms),
  so replaying changes no look. A few live ``hone compare`` runs (the console script, the
  same default budget) check the replay.
* tune confirmation (6 rounds, fixed; the ablation uses the same settings), pgo evaluation
  (7 rounds, fixed, the default + 2 noise builds + the variant, all the same binary here) and
  doctor experiments (10 rounds, fixed): live, through the callers' own functions
  (``confirm_candidates``, ``time_scenario`` + ``scenario_rows``, ``run_doctor_experiment``).
  Their A/A and +2% at their fixed rounds are also replayed from the pool.
* The same replays on the pools of other days in benchmarks/stats-pools (``*pairs*.npz``,
  400 blocks each, several from noisier days): the same figures on quieter and noisier days.

    python benchmarks/stats_calibration.py [--quick] [--pool-blocks 3000] [--experiments 1000]
        [--caller-comparisons 400] [--live-compare 25] [--stored [POOL …]] [--stored-experiments 300]
        [--designs] [--skip-live] [--save-pool F | --load-pool F]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats as sps

from hone.core.metrics import value
from hone.core.process import run_process
from hone.experiment import ExperimentSettings, compare_arms, run_experiment
from hone.experiment import sequential as seq
from hone.run.benchmark import Measurement
from hone.run.schedule import InterleavedResult, Variant, run_interleaved
from hone.stats.paired import HEAVY_TAIL, PairedComparison, tail_ratio

VERDICTS = ("faster", "slower", "equivalent", "inconclusive")
THRESHOLD, ALPHA = 0.01, 0.05
SPIN_C = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    volatile unsigned long x = 0;
    for (long i = 0; i < n; i++) x += (unsigned long)i * i;
    return 0;
}
"""
HONE = str(Path(sys.executable).with_name("hone"))


# ---------------------------------------------------------------- the workload


def build_spin(workdir: Path) -> list[str]:
    """A C loop whose CPU work is argv-controlled (pgo's scenarios need a binary)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise SystemExit("stats_calibration.py needs a C compiler (cc or gcc)")
    (workdir / "spin.c").write_text(SPIN_C)
    run_process([cc, "-O2", "-o", str(workdir / "spin"), str(workdir / "spin.c")], timeout=120, check=True)
    return [str(workdir / "spin")]


def cpu_of(argv: list[str], repeats: int = 7) -> float:
    """Median CPU seconds of ``argv`` over ``repeats`` runs."""
    return statistics.median(run_process(argv, timeout=60).cpu_s for _ in range(repeats))


def size_loop(spin: list[str], target_ms: float) -> tuple[int, int]:
    """Iterations for ~``target_ms`` of CPU (A), and B's: 2% more of A's *total* CPU time
    (startup included)."""
    base = cpu_of([*spin, "0"])
    probe = 10_000_000
    per_iter = max((cpu_of([*spin, str(probe)]) - base) / probe, 1e-12)
    n_a = max(1, int((target_ms / 1000 - base) / per_iter))
    cpu_a = base + n_a * per_iter
    n_b = n_a + int(0.02 * cpu_a / per_iter)
    print(f"workload: {' '.join(spin)} N  (startup {base * 1000:.2f} ms CPU, {per_iter * 1e9:.2f} ns/iteration); "
          f"A = A' = N {n_a} (~{cpu_a * 1000:.1f} ms CPU), B = N {n_b} (+2.0% CPU time)")
    return n_a, n_b


def command_variant(name: str, argv: list[str]) -> Variant:
    def run() -> Measurement:
        res = run_process(argv, timeout=60)
        m = Measurement.from_process(res)
        if not res.ok:
            m.error = res.describe_failure()
        return m

    return Variant(name=name, run=run)


def rate_line(label: str, k: int, n: int) -> str:
    if n == 0:
        return f"{label}: 0/0"
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{label}: {k}/{n} = {k / n:.1%} (95% CI {float(ci.low):.1%}–{float(ci.high):.1%})"


# ---------------------------------------------------------------- the pool of real rounds


@dataclass
class Pool:
    """CPU seconds of real interleaved rounds: A and A' of the A/A' rounds, A@B and B of the
    A/B rounds (NaN for a failed run), with the machine's load around them."""

    cpu: dict[str, np.ndarray]
    seconds: float = math.nan
    load: tuple[float, float] = (math.nan, math.nan)
    sequential: tuple[np.ndarray, np.ndarray] | None = None

    def size(self) -> int:
        return len(self.cpu["A"])


def measure_pool(spin: list[str], n_a: int, n_b: int, blocks: int, seed: int, sequential_runs: int) -> Pool:
    """Blocks of an A/A' round and an A/B round, in random order, each two variants in a
    random order (what ``hone compare A A'`` and ``hone compare A B`` run); then, for contrast,
    all A then all A'."""
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    variants = [command_variant("A", [*spin, str(n_a)]), command_variant("A'", [*spin, str(n_a)]),
                command_variant("B", [*spin, str(n_b)])]
    run_interleaved(variants, rounds=1, warmup=2, seed=seed)  # warm-up only
    rng = random.Random(seed)
    cpu: dict[str, list[float]] = {"A": [], "A'": [], "A@B": [], "B": []}
    for _ in range(blocks):
        pairs = [("A'", variants[1]), ("B", variants[2])]
        rng.shuffle(pairs)
        for other, variant in pairs:
            rnd = run_interleaved([variants[0], variant], rounds=1, warmup=0, seed=rng.randrange(2**31))
            a, o = rnd.runs["A"][0], rnd.runs[other][0]
            cpu["A" if other == "A'" else "A@B"].append(a.cpu_s if a.ok else math.nan)
            cpu[other].append(o.cpu_s if o.ok else math.nan)
    seq_a = np.array([variants[0].run().cpu_s for _ in range(sequential_runs)])
    seq_a2 = np.array([variants[1].run().cpu_s for _ in range(sequential_runs)])
    return Pool({k: np.array(v) for k, v in cpu.items()}, time.perf_counter() - t0, (load0, os.getloadavg()[0]),
                (seq_a, seq_a2))


def save_pool(pool: Pool, path: Path) -> None:
    seq_a, seq_a2 = pool.sequential if pool.sequential else (np.array([]), np.array([]))
    np.savez(path, cpu_0=pool.cpu["A"], cpu_1=pool.cpu["A'"], cpu_2=pool.cpu["B"], cpu_3=pool.cpu["A@B"],
             seq_a=seq_a, seq_a2=seq_a2, load=np.array(pool.load), seconds=np.array([pool.seconds]))


def load_pool(path: Path) -> Pool:
    """A pool saved by ``--save-pool`` (also the older ones in benchmarks/stats-pools: those of
    three variants a round have no separate A of the A/B rounds)."""
    saved = np.load(path)
    cpu = {k: saved[f"cpu_{i}"] for i, k in enumerate(("A", "A'", "B"))}
    cpu["A@B"] = saved["cpu_3"] if "cpu_3" in saved else cpu["A"]
    seqs = (saved["seq_a"], saved["seq_a2"]) if "seq_a" in saved and saved["seq_a"].size else None
    load = tuple(float(x) for x in saved["load"]) if "load" in saved else (math.nan, math.nan)
    seconds = float(saved["seconds"][0]) if "seconds" in saved else math.nan
    return Pool(cpu, seconds, (load[0], load[1]), seqs)


def describe_pool(pool: Pool) -> dict[str, float]:
    """Print the pool's noise: CV, the per-round log ratios' spread and tail ratio."""
    aa = np.log(pool.cpu["A'"] / pool.cpu["A"])
    ab = np.log(pool.cpu["B"] / pool.cpu["A@B"])
    aa, ab = aa[np.isfinite(aa)], ab[np.isfinite(ab)]
    cv = float(np.nanstd(pool.cpu["A"]) / np.nanmean(pool.cpu["A"]))
    effect = float(np.exp(np.median(ab)) - 1) * 100
    core = float(np.mean(np.abs(aa) < 0.005))
    out = {"cv": cv, "tail_aa": tail_ratio(aa), "tail_ab": tail_ratio(ab), "sd_aa": float(np.std(aa, ddof=1)),
           "effect_pct": effect, "core": core, "kurtosis": float(sps.kurtosis(aa))}
    failed = sum(int(np.isnan(v).sum()) for v in pool.cpu.values())
    print(f"pool: {pool.size()} blocks of an A/A' round and an A/B round ({pool.seconds:.0f} s, {failed} failed runs; "
          f"1-min load {pool.load[0]:.2f} → {pool.load[1]:.2f} on {os.cpu_count()} CPUs)")
    print(f"  CPU-time CV {cv:.1%}; per-round log ratio A'/A: sd {out['sd_aa']:.3f}, tail ratio {out['tail_aa']:.2f} "
          f"(normal 1.00, Laplace 1.38; auto picks the Welsch M-estimate above {HEAVY_TAIL}), excess kurtosis "
          f"{out['kurtosis']:.1f}, {core:.0%} of rounds within ±0.5%; B/A: tail ratio {out['tail_ab']:.2f}, "
          f"median {effect:+.2f}% (+2% built in)")
    return out


# ---------------------------------------------------------------- replaying rounds through the engine


def _measurement(cpu: float) -> Measurement:
    if not math.isfinite(cpu):
        return Measurement(math.nan, math.nan, math.nan, math.nan, 0, -1, False, error="failed in the pool")
    return Measurement(wall_s=cpu, cpu_s=cpu, user_s=cpu, sys_s=0.0, max_rss_kb=0, returncode=0, timed_out=False)


def replay_variants(ref: np.ndarray, cand: np.ndarray, rounds: np.ndarray, swap: np.ndarray) -> list[Variant]:
    """Two arms whose j-th runs are pool round ``rounds[j]`` (each arm runs once per engine
    round, so the j-th runs of both arms are one engine round and one pool round)."""
    calls = {"ref": 0, "cand": 0}

    def arm(name: str) -> Callable[[], Measurement]:
        def run() -> Measurement:
            j = calls[name]
            calls[name] += 1
            i = int(rounds[j])
            mine, other = (ref[i], cand[i]) if name == "ref" else (cand[i], ref[i])
            return _measurement(other if swap[j] else mine)
        return run

    return [Variant("ref", arm("ref")), Variant("cand", arm("cand"))]


def cpu_figure(m: Measurement) -> float:
    return value(m, "cpu_time")


@dataclass
class Outcome:
    """One comparison's end: its final verdict, rounds, tail ratio and estimator."""

    verdict: str
    rounds: int
    tail: float
    estimator: str
    looks: int = 1


def engine_experiment(variants: list[Variant], settings: ExperimentSettings) -> Outcome:
    """The engine as ``hone compare`` runs it, two arms, ``cand`` against ``ref`` on CPU time."""
    last: dict[str, PairedComparison] = {}

    def analyse(result: InterleavedResult, alpha: float) -> bool:
        last["c"] = compare_arms(result.runs, "ref", cpu_figure, goal="minimize", threshold=settings.threshold,
                                 alpha=alpha, seed=settings.seed, estimator=settings.estimator)["cand"]
        return last["c"].decisive

    result = run_experiment(variants, settings, analyse=analyse)
    c = last["c"]
    return Outcome(c.verdict, c.n, c.tail_ratio, c.estimator, len(result.looks))


def compare_settings(seed: int, rounds: int = 20, max_rounds: int | None = None,
                     max_time: float | None = 180.0) -> ExperimentSettings:
    """``hone compare``'s defaults (``CompareSettings``: 20 rounds, 1 warm-up, ±1%, α 0.05,
    auto, ``--max-time 3m``, ``--max-rounds`` 16 × rounds)."""
    return ExperimentSettings(rounds=rounds, warmup=1, seed=seed, threshold=THRESHOLD, alpha=ALPHA,
                              estimator="auto", max_rounds=max_rounds, max_time=max_time)


def replay(pool: Pool, ref: str, cand: str, experiments: int, settings_of: Callable[[int], ExperimentSettings],
           seed: int, swap: bool) -> list[Outcome]:
    rng = np.random.default_rng(seed)
    out = []
    for e in range(experiments):
        order = rng.permutation(pool.size())
        flips = rng.random(pool.size()) < 0.5 if swap else np.zeros(pool.size(), dtype=bool)
        out.append(engine_experiment(replay_variants(pool.cpu[ref], pool.cpu[cand], order, flips), settings_of(e)))
    return out


# ---------------------------------------------------------------- tallies


@dataclass
class Tally:
    """Verdict counts of one caller's comparisons and what their rounds looked like."""

    label: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, verdict: str) -> int:
        return sum(o.verdict == verdict for o in self.outcomes)

    @property
    def n(self) -> int:
        return len(self.outcomes)

    def false_rate(self) -> float:
        return (self.count("faster") + self.count("slower")) / max(1, self.n)

    def share(self, verdict: str) -> float:
        return self.count(verdict) / max(1, self.n)

    def print_aa(self) -> None:
        fp = self.count("faster") + self.count("slower")
        print(f"{self.label}: {dict((v, self.count(v)) for v in VERDICTS)}  ({self.seconds:.0f} s)")
        print("  " + rate_line("false 'faster'/'slower'", fp, self.n) + "   goal ≤ 5%: "
              + ("PASS" if fp / max(1, self.n) <= 0.05 else "FAIL"))
        print(f"  equivalent {self.share('equivalent'):.1%}, inconclusive {self.share('inconclusive'):.1%}; "
              f"rounds at the end: median {statistics.median(o.rounds for o in self.outcomes):.0f} "
              f"(max {max(o.rounds for o in self.outcomes)})")
        self.print_tails()

    def print_tails(self) -> None:
        tails = [o.tail for o in self.outcomes if math.isfinite(o.tail)]
        welsch = [o for o in self.outcomes if o.estimator == "welsch"]
        if not tails:
            return
        q = np.quantile(tails, [0.1, 0.5, 0.9])
        fp_w = sum(o.verdict in ("faster", "slower") for o in welsch)
        other = [o for o in self.outcomes if o.estimator != "welsch"]
        fp_o = sum(o.verdict in ("faster", "slower") for o in other)
        print(f"  tail ratio of each comparison's rounds: 10/50/90% {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}; "
              f"heavy-tailed (> {HEAVY_TAIL}, Welsch) {len(welsch)}/{len(self.outcomes)}: false {fp_w}; "
              f"others (trimmed mean) {len(other)}: false {fp_o}")

    def print_power(self) -> None:
        ok = self.count("slower")
        print(f"{self.label}: {dict((v, self.count(v)) for v in VERDICTS)}  ({self.seconds:.0f} s)")
        print("  " + rate_line("called 'slower' (power)", ok, self.n) + "   goal ≥ 80%: "
              + ("PASS" if ok / max(1, self.n) >= 0.8 else "FAIL"))
        print(f"  rounds at the end: median {statistics.median(o.rounds for o in self.outcomes):.0f}, "
              f"mean {statistics.fmean(o.rounds for o in self.outcomes):.0f}")


def timed(label: str, fn: Callable[[], list[Outcome]]) -> Tally:
    t0 = time.perf_counter()
    outcomes = fn()
    return Tally(label, outcomes, time.perf_counter() - t0)


# ---------------------------------------------------------------- live callers


@contextlib.contextmanager
def private_state() -> Iterator[Path]:
    """A private hone state and machine directory (the callers below change nothing on the
    machine: their arms are commands and param knobs)."""
    with tempfile.TemporaryDirectory(prefix="hone-calib-state-") as tmp:
        old = {k: os.environ.get(k) for k in ("HONE_STATE_DIR", "HONE_MACHINE_DIR")}
        os.environ["HONE_STATE_DIR"] = str(Path(tmp) / "state")
        os.environ["HONE_MACHINE_DIR"] = str(Path(tmp) / "machine")
        (Path(tmp) / "state").mkdir()
        (Path(tmp) / "machine").mkdir()
        try:
            yield Path(tmp)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def live_compare(spin: list[str], n_a: int, n_other: int, count: int, seed: int, workdir: Path) -> list[Outcome]:
    """``hone compare 'spin N' 'spin N2'`` with its default budget, the console script."""
    out = []
    for e in range(count):
        doc = workdir / f"compare-{n_other}-{e}.json"
        cmd = [HONE, "compare", " ".join([*spin, str(n_a)]), " ".join([*spin, str(n_other)]), "-n", "ref", "-n", "cand",
               "--metric", "cpu_time", "--seed", str(seed + e), "--export-json", str(doc)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"})
        if proc.returncode != 0 or not doc.exists():
            print(f"  hone compare failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-300:]}")
            continue
        row = json.loads(doc.read_text())["rows"][0]
        c = row["comparisons"]["cand"]
        out.append(Outcome(c["verdict"], int(c["n"]), float(c.get("tail_ratio") or math.nan),
                           str(c.get("estimator")), len(row.get("looks", []))))
    return out


TUNE_SPEC = """\
name: calib
benchmark:
  command: [{spin}, "{{n}}"]
  timeout: 60
  repeats: 1
  warmup: 0
metrics:
  - {{name: cpu_time}}
knobs:
  - {{name: n, kind: param, values: [{n_a}], default: {n_a}}}
"""


def tune_aa(spin: list[str], n_a: int, comparisons: int, seed: int, workdir: Path) -> list[Outcome]:
    """The tune confirmation as ``hone tune`` runs it (``confirm_candidates``, ``--confirm 6``,
    top 3 candidates and the baseline), every candidate the baseline's own configuration."""
    from hone.run.configure import Configurator
    from hone.spec import load_spec
    from hone.tune.confirm import Candidate, confirm_candidates
    from hone.tune.objective import build_objective

    path = workdir / "calib.yaml"
    path.write_text(TUNE_SPEC.format(spin=json.dumps(spin[0]), n_a=n_a))
    loaded = load_spec(path)
    objective = build_objective(loaded.spec.metrics)
    configurator = Configurator(loaded)
    out = []
    try:
        for e in range(math.ceil(comparisons / 3)):
            cands = [Candidate(f"trial {i}", i, {"n": n_a}, {}) for i in range(3)]
            for conf in confirm_candidates(loaded, configurator, objective, cands, rounds=6, warmup=1, seed=seed + e):
                c = conf.comparison
                out.append(Outcome(c.verdict, c.n, c.tail_ratio, c.estimator))
    finally:
        configurator.restore()
    return out[:comparisons]


def pgo_aa(spin: list[str], n_a: int, comparisons: int, seed: int) -> tuple[list[Outcome], list[str]]:
    """``hone pgo``'s evaluation (``time_scenario`` + ``scenario_rows``, 7 rounds, 1 warm-up,
    the default, two noise builds and the variant): every binary the same. Returns the paired
    outcomes and the final verdicts (against the noise floor)."""
    from hone.build.correctness import Reference
    from hone.build.evaluate import scenario_rows, time_scenario
    from hone.build.scenario import Scenario

    binary = Path(spin[0])
    scn = Scenario("spin", f"{{binary}} {n_a}")
    binaries = {"default": binary, "noise-1": binary, "noise-2": binary, "variant": binary}
    out, final = [], []
    for e in range(comparisons):
        timing = time_scenario(scn, binaries, Reference(0, ""), rounds=7, warmup=1, seed=seed + e, timeout=60,
                               cwd=None)
        rows, _ = scenario_rows(timing, {}, binaries, {n: n for n in binaries})
        c = timing.comparisons["variant"]
        out.append(Outcome(c.verdict, c.n, c.tail_ratio, c.estimator))
        final.append(next(r["verdict"] for r in rows if r["variant"] == "variant"))
    return out, final


def doctor_aa(spin: list[str], n_a: int, comparisons: int, seed: int) -> list[Outcome]:
    """A doctor experiment (``run_doctor_experiment``, 10 rounds, 1 warm-up) of the same
    command twice, on CPU time."""
    from hone.diagnose.experiment import run_doctor_experiment
    from hone.diagnose.rules.base import Experiment, ExperimentVariant, Target

    argv = [*spin, str(n_a)]
    target = Target(argv, metric="cpu_time", goal="minimize", unit="s")
    exp = Experiment("a/a", "the same command", [ExperimentVariant("a", argv), ExperimentVariant("b", argv)])
    out = []
    for e in range(comparisons):
        c = run_doctor_experiment(exp, target, rounds=10, seed=seed + e).comparisons.get("b")
        if c is not None:
            out.append(Outcome(c.verdict, c.n, c.tail_ratio, c.estimator))
    return out


# ---------------------------------------------------------------- other designs (what-if, --designs)


def obrien_fleming(alpha: float, t: float) -> float:
    """Lan-DeMets O'Brien-Fleming-type spending: 2 − 2Φ(z_{α/2}/√t)."""
    t = min(1.0, max(t, 1e-9))
    return float(2 - 2 * sps.norm.cdf(sps.norm.ppf(1 - alpha / 2) / math.sqrt(t)))


def designs(pool: Pool, experiments: int, seed: int) -> list[tuple[str, Tally, Tally]]:
    """The same pool through other plans: fixed rounds, other growth, O'Brien-Fleming spending."""
    plans: list[tuple[str, Callable[[int], ExperimentSettings], Callable[[float, float], float] | None]] = [
        ("fixed 20 rounds", lambda e: compare_settings(seed + e, max_time=None), None),
        ("fixed 80 rounds", lambda e: compare_settings(seed + e, rounds=80, max_time=None), None),
        ("fixed 320 rounds", lambda e: compare_settings(seed + e, rounds=320, max_time=None), None),
        ("Pocock type, 20 → 80 (4×)", lambda e: compare_settings(seed + e, max_rounds=80), None),
        ("Pocock type, 20 → 320 (16×, hone)", lambda e: compare_settings(seed + e), None),
        ("O'Brien-Fleming type, 20 → 320", lambda e: compare_settings(seed + e), obrien_fleming),
    ]
    out = []
    original = seq.spent
    for label, settings_of, spending in plans:
        seq.spent = spending or original  # type: ignore[assignment]
        try:
            aa = timed(label, lambda s=settings_of: replay(pool, "A", "A'", experiments, s, seed, swap=True))
            pw = timed(label, lambda s=settings_of: replay(pool, "A@B", "B", experiments, s, seed + 1, swap=False))
        finally:
            seq.spent = original
        out.append((label, aa, pw))
        print(f"  {label}: A/A false {aa.false_rate():.1%}, equivalent {aa.share('equivalent'):.1%}; power "
              f"{pw.share('slower'):.1%}, mean rounds A/A {statistics.fmean(o.rounds for o in aa.outcomes):.0f}, "
              f"+2% {statistics.fmean(o.rounds for o in pw.outcomes):.0f}", flush=True)
    return out


# ---------------------------------------------------------------- main

#: The fixed-round callers: their rounds (tune's --confirm default, pgo's --rounds, doctor's --rounds).
FIXED = (("tune confirmation / ablation", 6), ("pgo evaluation", 7), ("doctor experiment", 10))
STORED = Path(__file__).resolve().parent / "stats-pools"


def fixed_settings(seed: int, rounds: int) -> ExperimentSettings:
    return compare_settings(seed, rounds=rounds, max_time=None)


def pool_figures(pool: Pool, experiments: int, seed: int) -> dict[str, Tally]:
    """Every caller's settings on one pool: ``hone compare``'s default budget and the fixed
    rounds of the others, A/A (labels swapped at random per round) and +2%."""
    out = {"compare A/A": timed("A/A", lambda: replay(pool, "A", "A'", experiments, compare_settings, seed,
                                                      swap=True)),
           "compare +2%": timed("+2% CPU time", lambda: replay(pool, "A@B", "B", experiments, compare_settings,
                                                               seed + 1, swap=False))}
    for label, rounds in FIXED:
        def settings_of(e: int, r: int = rounds) -> ExperimentSettings:
            return fixed_settings(seed + e, r)

        out[f"{label} A/A"] = timed(label, lambda s=settings_of: replay(pool, "A", "A'", experiments, s, seed + 2,
                                                                         swap=True))
        out[f"{label} +2%"] = timed(label, lambda s=settings_of: replay(pool, "A@B", "B", experiments, s, seed + 3,
                                                                         swap=False))
    return out


def stored_pools(paths: list[Path], experiments: int, seed: int) -> None:
    """Replay every caller's settings on pools measured on other days (noisier ones)."""
    print("\n| pool | CPU-time CV | tail ratio A'/A | compare A/A false | equivalent | inconclusive "
          "| A/A median rounds | compare +2% power | +2% mean rounds | fixed 6 / 7 / 10 rounds: A/A false "
          "| +2% power |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    pooled: dict[str, list[Outcome]] = {}
    for path in paths:
        pool = load_pool(path)
        aa = np.log(pool.cpu["A'"] / pool.cpu["A"])
        aa = aa[np.isfinite(aa)]
        cv = float(np.nanstd(pool.cpu["A"]) / np.nanmean(pool.cpu["A"]))
        got = pool_figures(pool, experiments, seed)
        for k, t in got.items():
            pooled.setdefault(k, []).extend(t.outcomes)
        ca, cp = got["compare A/A"], got["compare +2%"]
        fixed_fp = " / ".join(f"{got[f'{lbl} A/A'].false_rate():.1%}" for lbl, _ in FIXED)
        fixed_pw = " / ".join(f"{got[f'{lbl} +2%'].share('slower'):.0%}" for lbl, _ in FIXED)
        print(f"| {path.stem} | {cv:.1%} | {tail_ratio(aa):.2f} | {ca.false_rate():.1%} | {ca.share('equivalent'):.1%} "
              f"| {ca.share('inconclusive'):.1%} | {statistics.median(o.rounds for o in ca.outcomes):.0f} "
              f"| {cp.share('slower'):.1%} | {statistics.fmean(o.rounds for o in cp.outcomes):.0f} | {fixed_fp} "
              f"| {fixed_pw} |", flush=True)
    all_aa = Tally("all stored pools, hone compare A/A", pooled["compare A/A"])
    all_pw = Tally("all stored pools, hone compare +2%", pooled["compare +2%"])
    print(f"\npooled over {len(paths)} stored pools:")
    all_aa.print_aa()
    all_pw.print_power()
    for label, _ in FIXED:
        t = Tally(label, pooled[f"{label} A/A"])
        print(f"  {label} A/A: " + rate_line("false", t.count("faster") + t.count("slower"), t.n)
              + f"; equivalent {t.share('equivalent'):.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool-blocks", type=int, default=3000, help="blocks of an A/A' and an A/B round (default 3000)")
    ap.add_argument("--sequential-runs", type=int, default=100, help="runs per block of the A-then-A' contrast")
    ap.add_argument("--experiments", type=int, default=1000,
                    help="replayed experiments per caller and figure on the measured pool (default 1000)")
    ap.add_argument("--caller-comparisons", type=int, default=400,
                    help="live A/A comparisons of the tune, pgo and doctor callers each (default 400)")
    ap.add_argument("--live-compare", type=int, default=25,
                    help="live `hone compare` runs of A/A and of +2%% each, default budget (default 25)")
    ap.add_argument("--stored", type=Path, nargs="*", default=None,
                    help="pools of other days to replay too (default: benchmarks/stats-pools/*pairs*.npz; "
                         "none: --stored with no file)")
    ap.add_argument("--stored-experiments", type=int, default=300,
                    help="replayed experiments per caller and figure on each stored pool (default 300)")
    ap.add_argument("--target-ms", type=float, default=15.0, help="CPU time per run of A, in ms")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--designs", action="store_true", help="also replay other look plans (fixed, 4×, O'Brien-Fleming)")
    ap.add_argument("--quick", action="store_true", help="a fifth of everything (~5 min)")
    ap.add_argument("--skip-live", action="store_true", help="only the pool and its replays")
    ap.add_argument("--save-pool", type=Path, help="write the measured pool (CPU seconds) to this .npz")
    ap.add_argument("--load-pool", type=Path, help="replay a saved pool instead of measuring one")
    args = ap.parse_args()
    if args.stored is None:
        args.stored = sorted(STORED.glob("*pairs*.npz"), key=lambda p: (len(p.stem), p.stem))
    if args.quick:
        args.pool_blocks, args.experiments, args.caller_comparisons, args.live_compare = 600, 200, 80, 5
        args.stored_experiments, args.stored = 60, args.stored[:4]
    t0 = time.perf_counter()
    print(f"machine: {os.cpu_count()} CPUs, 1-min load average {os.getloadavg()[0]:.2f}; "
          f"verdicts at threshold ±{THRESHOLD:.0%}, α {ALPHA}, estimator auto everywhere")
    summary: list[tuple[str, str, Tally | None, str]] = []
    with tempfile.TemporaryDirectory(prefix="hone-calib-") as tmp, private_state():
        work = Path(tmp)
        spin = build_spin(work)
        n_a, n_b = size_loop(spin, args.target_ms)
        pool = load_pool(args.load_pool) if args.load_pool else measure_pool(
            spin, n_a, n_b, args.pool_blocks, args.seed, args.sequential_runs)
        if args.save_pool and not args.load_pool:
            save_pool(pool, args.save_pool)
        noise = describe_pool(pool)
        if pool.sequential is not None:
            a, a2 = pool.sequential
            hits, windows = 0, 200
            rng = random.Random(args.seed)
            for e in range(windows):
                s = rng.randrange(0, len(a) - 20 + 1)
                c = compare_arms({"ref": [_measurement(x) for x in a[s:s + 20]],
                                  "cand": [_measurement(x) for x in a2[s:s + 20]]}, "ref", cpu_figure,
                                 goal="minimize", threshold=THRESHOLD, alpha=ALPHA, seed=e)["cand"]
                hits += c.verdict in ("faster", "slower")
            print("  contrast, no interleaving (all A, then all A', 20-run windows): "
                  + rate_line("false 'faster'/'slower'", hits, windows))

        print(f"\n== hone compare: default budget (a look at 20 rounds, then 40, 80, 160, 320 while not decisive; "
              f"α spent Pocock-type; --max-time 3m), the engine on replayed pool rounds, {args.experiments} "
              "experiments each", flush=True)
        figures = pool_figures(pool, args.experiments, args.seed)
        aa, power = figures["compare A/A"], figures["compare +2%"]
        aa.print_aa()
        power.print_power()
        summary += [("hone compare (replayed pool)", "A/A", aa, ""), ("hone compare (replayed pool)", "+2%", power, "")]
        if args.live_compare and not args.skip_live:
            print(f"\n== hone compare, live (the console script, default budget): {args.live_compare} A/A and "
                  f"{args.live_compare} +2% runs", flush=True)
            live_aa = timed("live A/A", lambda: live_compare(spin, n_a, n_a, args.live_compare, args.seed, work))
            live_aa.print_aa()
            live_pw = timed("live +2%", lambda: live_compare(spin, n_a, n_b, args.live_compare, args.seed + 500,
                                                             work))
            if live_pw.n:
                live_pw.print_power()
            summary += [("hone compare (live)", "A/A", live_aa, ""), ("hone compare (live)", "+2%", live_pw, "")]

        print(f"\n== the other callers' fixed rounds on the pool (replayed, {args.experiments} each; pgo: the paired "
              "verdict, no noise probes)", flush=True)
        for label, rounds in FIXED:
            fa, fp = figures[f"{label} A/A"], figures[f"{label} +2%"]
            false = fa.count("faster") + fa.count("slower")
            print(f"  {label}, {rounds} rounds: A/A " + rate_line("false", false, fa.n)
                  + f", equivalent {fa.share('equivalent'):.1%}; +2% "
                  + rate_line("'slower'", fp.count("slower"), fp.n))
            summary += [(f"{label} (replayed pool)", "A/A", fa, f"{rounds} rounds"),
                        (f"{label} (replayed pool)", "+2%", fp, f"{rounds} rounds")]

        if not args.skip_live:
            print(f"\n== the other callers, live A/A ({args.caller_comparisons} comparisons each)", flush=True)
            tune = timed("tune confirmation (confirm_candidates, 6 rounds, top 3 + baseline)",
                         lambda: tune_aa(spin, n_a, args.caller_comparisons, args.seed, work))
            tune.print_aa()
            finals: list[str] = []

            def run_pgo() -> list[Outcome]:
                outcomes, got = pgo_aa(spin, n_a, args.caller_comparisons, args.seed)
                finals.extend(got)
                return outcomes

            pgo = timed("pgo evaluation (time_scenario, 7 rounds, default + 2 noise builds + variant)", run_pgo)
            pgo.print_aa()
            final = Counter(finals)
            print(f"  after the noise floor: {dict(final)}; "
                  + rate_line("false 'faster'/'slower'", final["faster"] + final["slower"], len(finals)))
            doctor = timed("doctor experiment (run_doctor_experiment, 10 rounds)",
                           lambda: doctor_aa(spin, n_a, args.caller_comparisons, args.seed))
            doctor.print_aa()
            summary += [("tune confirmation / ablation (live)", "A/A", tune, "6 rounds"),
                        ("pgo evaluation (live)", "A/A", pgo,
                         f"7 rounds; after the floor {(final['faster'] + final['slower']) / max(1, len(finals)):.1%}"),
                        ("doctor experiment (live)", "A/A", doctor, "10 rounds")]
        if args.designs:
            print(f"\n== other look plans on the same pool ({args.experiments} experiments each)", flush=True)
            designs(pool, args.experiments, args.seed + 7)

    print("\n| caller | arms | comparisons | faster/slower | equivalent | inconclusive | median rounds | note |")
    print("|---|---|---|---|---|---|---|---|")
    for caller, arms, t, note in summary:
        if t is None or not t.n:
            continue
        wrong = t.count("faster") + (t.count("slower") if arms == "A/A" else 0)
        fs = (f"**{t.false_rate():.1%}** false" if arms == "A/A"
              else f"**{t.share('slower'):.1%}** slower, {wrong} faster")
        print(f"| {caller} | {arms} | {t.n} | {fs} | {t.share('equivalent'):.1%} | {t.share('inconclusive'):.1%} | "
              f"{statistics.median(o.rounds for o in t.outcomes):.0f} | {note} |")
    print(f"\npool: tail ratio A'/A {noise['tail_aa']:.2f}, B/A {noise['tail_ab']:.2f}; CPU-time CV {noise['cv']:.1%}")
    if args.stored:
        print(f"\n== pools of other days (benchmarks/stats-pools; real rounds of this VM, two variants a round), every "
              f"caller's settings replayed, {args.stored_experiments} experiments per figure", flush=True)
        stored_pools(args.stored, args.stored_experiments, args.seed)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
