"""Calibrate `hone compare`'s verdict on this machine (figures, not a timed test).

1. False positives: A/A experiments (the same cheap CPU-bound command as both variants,
   CPU-time metric) → how often the verdict says "faster" or "slower". Goal ≤ 5%.
2. Power: the command against a copy doing 2% more CPU work → how often the verdict says
   "slower" at 10, 20 and 40 rounds. Goal ≥ 80% at ≤ 40 rounds.

To finish in about a minute, the experiments resample real measurements: one pool of
interleaved rounds is measured, then every experiment draws its rounds from that pool
without replacement, keeping each round's runs together. The pool is made of blocks of two
rounds, exactly what ``hone compare A A'`` and ``hone compare A B`` run (``run_interleaved``,
two variants in a seeded random order): an A/A' round (A' identical to A) and an A/B round
(B = +2% work), the two rounds in random order, so both questions see the same machine.
For contrast, a second pool runs all A then all A' (no interleaving) and A/A experiments take
contiguous windows of it. (Pools saved before 2026-11-22 05:00 ran A, A', B in one round.)

    python benchmarks/stats_calibration.py [--pool-rounds 400] [--experiments 500]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

from hone.run.benchmark import Measurement
from hone.run.process import run_process
from hone.run.schedule import Variant, run_interleaved
from hone.stats.paired import ESTIMATORS, HEAVY_TAIL, compare_paired, location_se, resolve_estimator

VERDICTS = ("faster", "slower", "no difference", "inconclusive")
SPIN_C = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 0;
    volatile unsigned long x = 0;
    for (long i = 0; i < n; i++) x += (unsigned long)i * i;
    return 0;
}
"""


def build_spin(workdir: Path) -> list[str]:
    """A loop whose CPU work is argv-controlled: C if a compiler exists, else Python."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        (workdir / "spin.c").write_text(SPIN_C)
        run_process([cc, "-O2", "-o", str(workdir / "spin"), str(workdir / "spin.c")], timeout=120, check=True)
        return [str(workdir / "spin")]
    return [sys.executable, "-S", "-c", "import sys\nfor _ in range(int(sys.argv[1])): pass"]


def cpu_of(argv: list[str], repeats: int = 7) -> float:
    """Median CPU seconds of ``argv`` over ``repeats`` runs."""
    return statistics.median(run_process(argv, timeout=60).cpu_s for _ in range(repeats))


def command_variant(name: str, argv: list[str]) -> Variant:
    def run() -> Measurement:
        res = run_process(argv, timeout=60)
        m = Measurement.from_process(res)
        if not res.ok:
            m.error = res.describe_failure()
        return m

    return Variant(name=name, run=run)


def rate_line(label: str, k: int, n: int) -> str:
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = float(ci.low), float(ci.high)
    return f"{label}: {k}/{n} = {k / n:.1%}  (95% CI {lo:.1%}–{hi:.1%})"


def measure_pools(args: argparse.Namespace) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, np.ndarray],
                                                      list[list[str]]]:
    """Measure the interleaved pool (per block an A/A' round and an A/B round, in random
    order) and the sequential contrast pool (all A, then all A'); CPU seconds, NaN for a
    failed run. Keys: A and A' of the A/A' rounds, A@B and B of the A/B rounds."""
    with tempfile.TemporaryDirectory(prefix="hone-calib-") as tmp:
        spin = build_spin(Path(tmp))
        # Size the loop for ~target-ms of CPU, then make B exactly 2% more *total* CPU
        # (startup included): B's extra iterations cover 2% of A's whole CPU time.
        base = cpu_of([*spin, "0"])
        probe = 10_000_000
        per_iter = max((cpu_of([*spin, str(probe)]) - base) / probe, 1e-12)
        n_a = max(1, int((args.target_ms / 1000 - base) / per_iter))
        cpu_a = base + n_a * per_iter
        n_b = n_a + int(0.02 * cpu_a / per_iter)
        print(f"workload: {' '.join(spin)} N  (startup {base * 1000:.2f} ms CPU, {per_iter * 1e9:.2f} ns/iteration)")
        print(f"  A = A' = N {n_a} (~{cpu_a * 1000:.1f} ms CPU);  B = N {n_b} (+2.0% CPU time expected)")

        variants = [command_variant("A", [*spin, str(n_a)]), command_variant("A'", [*spin, str(n_a)]),
                    command_variant("B", [*spin, str(n_b)])]
        run_interleaved(variants, rounds=1, warmup=2, seed=args.seed)  # warm-up only
        rng = random.Random(args.seed)
        cpu: dict[str, list[float]] = {"A": [], "A'": [], "A@B": [], "B": []}
        orders: list[list[str]] = []
        for _ in range(args.pool_rounds):
            pairs = [("A'", variants[1]), ("B", variants[2])]
            rng.shuffle(pairs)
            for other, variant in pairs:
                rnd = run_interleaved([variants[0], variant], rounds=1, warmup=0, seed=rng.randrange(2**31))
                a, o = rnd.runs["A"][0], rnd.runs[other][0]
                cpu["A" if other == "A'" else "A@B"].append(a.cpu_s if a.ok else math.nan)
                cpu[other].append(o.cpu_s if o.ok else math.nan)
                orders.append(rnd.order[0])

        # The contrast: no interleaving, all A then all A'.
        seq_a = [variants[0].run() for _ in range(args.sequential_runs)]
        seq_a2 = [variants[1].run() for _ in range(args.sequential_runs)]
    return ({k: np.array(v) for k, v in cpu.items()},
            (np.array([m.cpu_s for m in seq_a]), np.array([m.cpu_s for m in seq_a2])), orders)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool-rounds", type=int, default=400, help="interleaved rounds measured (default 400)")
    ap.add_argument("--sequential-runs", type=int, default=120, help="runs per block of the A-then-A' pool")
    ap.add_argument("--experiments", type=int, default=500, help="experiments per figure (default 500)")
    ap.add_argument("--aa-rounds", type=int, default=20, help="rounds per A/A experiment (default 20)")
    ap.add_argument("--target-ms", type=float, default=15.0, help="CPU time per run of A, in ms")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--estimator", choices=ESTIMATORS, default="auto",
                    help="compare_paired estimator (default auto, what `hone compare` uses)")
    ap.add_argument("--save-pool", type=Path, help="write the measured pools (CPU seconds) to this .npz")
    ap.add_argument("--load-pool", type=Path, help="re-analyse pools saved by --save-pool instead of measuring")
    args = ap.parse_args()
    threshold, alpha = 0.01, 0.05
    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]

    if args.load_pool:
        saved = np.load(args.load_pool)
        cpu = {k: saved[f"cpu_{i}"] for i, k in enumerate(("A", "A'", "B"))}
        # Pools of the older design (A, A', B in one round) have no separate A of the A/B rounds.
        cpu["A@B"] = saved["cpu_3"] if "cpu_3" in saved else cpu["A"]
        design = "pairs" if "cpu_3" in saved else "triples"
        seq = (saved["seq_a"], saved["seq_a2"])
        orders = [str(o).split(",") for o in saved["order"]]
        load_start, load_end = (float(x) for x in saved["load"])
        args.pool_rounds, args.sequential_runs = len(cpu["A"]), len(seq[0])
        print(f"pools loaded from {args.load_pool}")
    else:
        cpu, seq, orders = measure_pools(args)
        design = "pairs"
        load_end = os.getloadavg()[0]
        if args.save_pool:
            np.savez(args.save_pool, cpu_0=cpu["A"], cpu_1=cpu["A'"], cpu_2=cpu["B"], cpu_3=cpu["A@B"],
                     seq_a=seq[0], seq_a2=seq[1],
                     order=np.array([",".join(o) for o in orders]), load=np.array([load_start, load_end]))
    failed = sum(int(np.isnan(v).sum()) for v in cpu.values())
    measured = time.perf_counter() - t0

    rng = random.Random(args.seed)
    cv_a, cv_a2, cv_b = (float(np.nanstd(cpu[k]) / np.nanmean(cpu[k])) for k in ("A", "A'", "B"))
    pool_effect = float(np.exp(np.nanmedian(np.log(cpu["B"] / cpu["A@B"]))) - 1) * 100
    shape = ("blocks of an A/A' round and an A/B round" if design == "pairs"
             else "rounds of A, A', B (older design)")
    print(f"pool: {args.pool_rounds} {shape} (+2 warm-up rounds), {failed} failed runs; "
          f"CPU-time CV A {cv_a:.1%}, A' {cv_a2:.1%}, B {cv_b:.1%}; measured B/A {pool_effect:+.2f}% (median)")
    sd_pair = float(np.nanstd(np.log(cpu["B"] / cpu["A@B"]), ddof=1))
    aa_log = np.log(cpu["A'"] / cpu["A"])
    aa_bias, aa_se = float(np.nanmean(aa_log)), float(np.nanstd(aa_log, ddof=1) / math.sqrt(len(aa_log)))
    print(f"machine: {os.cpu_count()} CPUs, 1-min load average {load_start:.2f} at start, {load_end:.2f} after "
          f"measuring; sd of the per-round log ratio B/A {sd_pair:.3f} (pairing within a round removes part "
          f"of the CV)")
    print(f"pool A'/A mean log ratio {aa_bias * 100:+.2f}% ± {aa_se * 100:.2f}% (SE): a chance offset of the pool "
          f"is shared by every resampled A/A experiment, so it can only raise the false rate below")
    print(f"run order: interleaved, every round its variants once in a fresh random order (seed {args.seed}); "
          f"first rounds: {' | '.join(','.join(o) for o in orders[:5])} …")
    print(f"experiments resample real measured rounds from that pool (without replacement within an "
          f"experiment; rounds keep their pairing); verdict rule: CI excludes 0, test p < {alpha}, "
          f"|effect| ≥ {threshold:.0%}; estimator {args.estimator} (auto = hone compare's default: per experiment, "
          f"the Welsch M-estimate + sign-flip randomization test + its inverted CI when its rounds' tail ratio > "
          f"{HEAVY_TAIL}, else the 20% trimmed mean + BCa "
          f"bootstrap CI (2000 resamples) + Wilcoxon)")

    rounds_idx = list(range(args.pool_rounds))

    def experiments(ref: str, cand: str, n: int) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for e in range(args.experiments):
            idx = rng.sample(rounds_idx, n)
            c = compare_paired(cpu[ref][idx], cpu[cand][idx], threshold=threshold, alpha=alpha, seed=e,
                               estimator=args.estimator)
            counts[c.verdict] += 1
        return counts

    aa = experiments("A", "A'", args.aa_rounds)
    fp = aa["faster"] + aa["slower"]
    print()
    print(f"A/A, {args.experiments} experiments x {args.aa_rounds} interleaved rounds, CPU time: {aa}")
    print("  " + rate_line("false 'faster/slower' rate", fp, args.experiments) + "   goal ≤ 5%: "
          + ("PASS" if fp / args.experiments <= 0.05 else "FAIL"))
    # A and A' are the same command in random positions, so within a round their labels are
    # exchangeable: swapping them at random per round keeps every real measurement but
    # removes the pool's chance offset (what a fresh experiment would not share).
    swapped = dict.fromkeys(VERDICTS, 0)
    for e in range(args.experiments):
        idx = rng.sample(rounds_idx, args.aa_rounds)
        flip = np.array([rng.random() < 0.5 for _ in idx])
        a, a2 = cpu["A"][idx], cpu["A'"][idx]
        swapped[compare_paired(np.where(flip, a2, a), np.where(flip, a, a2), threshold=threshold, alpha=alpha,
                               seed=e, estimator=args.estimator).verdict] += 1
    print("  " + rate_line("same, A/A' labels swapped at random within rounds (pool offset removed)",
                           swapped["faster"] + swapped["slower"], args.experiments))

    # Same A/A question without interleaving: contiguous windows of the A-block and A'-block.
    n, counts = args.aa_rounds, dict.fromkeys(VERDICTS, 0)
    for e in range(args.experiments):
        s = rng.randrange(0, args.sequential_runs - n + 1)
        counts[compare_paired(seq[0][s:s + n], seq[1][s:s + n], threshold=threshold, alpha=alpha,
                              seed=e, estimator=args.estimator).verdict] += 1
    print(f"  contrast, all A then all A' ({args.sequential_runs}+{args.sequential_runs} runs, windows of {n}): "
          + rate_line("false rate", counts["faster"] + counts["slower"], args.experiments))

    print()
    print(f"power for B = A + 2% CPU time, {args.experiments} experiments per N:")
    reached = None
    for n in (10, 20, 40, 80):
        res = experiments("A@B", "B", n)
        ok = res["slower"]
        if reached is None and n <= 40 and ok / args.experiments >= 0.8:
            reached = n
        print(f"  {n:>2} rounds: " + rate_line("called 'slower'", ok, args.experiments)
              + f"; wrong direction {res['faster']}, no difference {res['no difference']}, "
              f"inconclusive {res['inconclusive']}")
    print("  goal ≥ 80% at ≤ 40 rounds: " + (f"PASS (from {reached} rounds)" if reached else "FAIL"))
    # Rounds for 80% power at this noise: ((z_{1-α/2} + z_0.8)·sd/effect)², with sd the
    # spread the trimmed estimator sees (its standard error x √n over the whole pool).
    pool_lr = np.log(cpu["B"] / cpu["A@B"])
    pool_lr = pool_lr[np.isfinite(pool_lr)]
    used, tails = resolve_estimator(pool_lr, args.estimator)
    sd_robust = location_se(pool_lr, used) * math.sqrt(pool_lr.size)
    effect, z = math.log1p(0.02), sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(0.8)
    need = (z * sd_robust / effect) ** 2
    print(f"  at this noise (whole pool: tail ratio {tails:.2f} → {used}; its sd-equivalent {sd_robust:.3f}, plain sd "
          f"{sd_pair:.3f}) 80% power for "
          f"2% needs about {math.ceil(need)} rounds (large-N approximation, ignoring the ≥ {threshold:.0%} rule; "
          f"small-N exact tests need more, see above); "
          f"40 rounds reach it only when that sd "
          f"is ≤ {effect * math.sqrt(40) / z:.3f}")
    print(f"\nmeasuring {measured:.0f} s, total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
