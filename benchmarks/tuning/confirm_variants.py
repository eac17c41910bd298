"""Confirmation strategies on the same searches, 5% noise, measured 2026-11-23 (session 6): none kept.

confirm_model.py charges ``hone tune``'s confirmation (top 3 by observed value × 6 interleaved
rounds = 18 evaluations) to a budget of 120. Could the same 18 evaluations pick better? Each
seed's search (102 trials of hone's sampler) is run once; every strategy then confirms on it,
and a configuration's j-th re-measurement is the same draw whichever strategy asks for it
(paired). Strategies: ``obs3x6`` (hone tune's), ``pm3x6`` / ``pma3x6`` (top 3 by the GP's
posterior mean among the best-observed few / among all), ``mix21x6`` (2 by observation + 1 by
posterior mean), ``obs6x3``, successive halving ``shK…`` (K candidates × r1 rounds, the best 2–3
by mean go on; the winner by the mean of all its re-measurements).

    python benchmarks/tuning/confirm_variants.py --seeds 20        # ~5 min
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import zlib
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import confirm_model
from problems import PROBLEMS, Problem

HERE = Path(__file__).resolve().parent
NOISE, TRIALS = 0.05, 102
Cfg = dict[str, Any]


def search(job: tuple[str, int]) -> tuple[str, int, list[tuple[float, Cfg]], list[int], list[int]]:
    pname, seed = job
    sampler, study, rows = confirm_model.search(PROBLEMS[pname](), NOISE, seed, TRIALS)
    ranked = [t.number for t in sampler.rank_trials(study)]
    ranked_all = [t.number for t in sampler.rank_trials(study, top=TRIALS)]
    return pname, seed, rows, ranked, ranked_all


def _key(cfg: Cfg) -> str:
    return json.dumps(cfg, sort_keys=True, default=str)


def strategies(problem: Problem, seed: int, rows: list[tuple[float, Cfg]], ranked: list[int],
               ranked_all: list[int]) -> dict[str, Cfg]:
    def distinct(order: list[int]) -> list[Cfg]:
        out, seen = [], set()
        for n in order:
            if _key(rows[n][1]) not in seen:
                seen.add(_key(rows[n][1]))
                out.append(rows[n][1])
        return out

    def measure(cfg: Cfg, j: int) -> float:  # the j-th re-measurement of cfg: the same for every strategy
        rng = np.random.default_rng([seed, zlib.crc32(_key(cfg).encode()), j, 7])
        return math.log(problem.value(cfg) * (1 + NOISE * rng.standard_normal()))

    def confirm(cands: list[Cfg], rounds: int, start: int = 0) -> dict[str, list[float]]:
        return {_key(c): [measure(c, start + j) for j in range(rounds)] for c in cands}

    def best(cands: list[Cfg], scores: dict[str, list[float]]) -> Cfg:
        return min(cands, key=lambda c: (statistics.fmean(scores[_key(c)]), cands.index(c)))

    def merge(a: list[Cfg], b: list[Cfg]) -> list[Cfg]:
        out = list(a)
        out += [c for c in b if _key(c) not in {_key(x) for x in out}]
        return out

    def halving(cands: list[Cfg], r1: int, keep: int, r2: int) -> Cfg:
        first = confirm(cands, r1)
        top = sorted(cands, key=lambda c: statistics.fmean(first[_key(c)]))[:keep]
        more = confirm(top, r2, start=r1)
        return best(top, {_key(c): first[_key(c)] + more[_key(c)] for c in top})

    obs = distinct(sorted(range(len(rows)), key=lambda n: (rows[n][0], n)))
    pm, pma = distinct(ranked), distinct(ranked_all)
    plans: dict[str, Callable[[], Cfg]] = {
        "obs3x6": lambda: best(obs[:3], confirm(obs[:3], 6)),
        "pm3x6": lambda: best(pm[:3], confirm(pm[:3], 6)),
        "pma3x6": lambda: best(pma[:3], confirm(pma[:3], 6)),
        "mix21x6": lambda: best(merge(obs[:2], pm)[:3], confirm(merge(obs[:2], pm)[:3], 6)),
        "obs6x3": lambda: best(obs[:6], confirm(obs[:6], 3)),
        "sh4mix": lambda: halving(merge(obs[:2], pm)[:4], 2, 2, 5),
        "sh6mix": lambda: halving(merge(obs[:3], pm)[:6], 2, 2, 3),
        "sh9obs": lambda: halving(obs[:9], 1, 3, 3),
        "best observed (no confirmation)": lambda: obs[0],
    }
    return {name: plan() for name, plan in plans.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--problems", nargs="*", default=["sqlite", "zlib", "sparse-8of2", "mixint-ellipsoid"])
    args = ap.parse_args()
    with Pool(2) as pool:
        searches = pool.map(search, [(p, s) for p in args.problems for s in range(args.seeds)])
    regrets: dict[str, dict[str, list[float]]] = {}
    for pname, seed, rows, ranked, ranked_all in searches:
        problem = PROBLEMS[pname]()
        for name, cfg in strategies(problem, seed, rows, ranked, ranked_all).items():
            regrets.setdefault(name, {}).setdefault(pname, []).append(
                (problem.value(cfg) - problem.optimum) / problem.optimum * 100)
    lines = [f"5% noise, seeds 0–{args.seeds - 1}, search {TRIALS} trials + 18 confirmation evaluations; "
             "mean true regret % of the recommendation", "",
             "| strategy | " + " | ".join(args.problems) + " |", "|---|" + "---|" * len(args.problems)]
    for name, per in regrets.items():
        lines.append(f"| {name} | " + " | ".join(f"{statistics.fmean(per[p]):.2f}" for p in args.problems) + " |")
    text = "\n".join(lines) + "\n"
    (HERE / "confirm-variants.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
