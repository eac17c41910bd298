"""The tuning suite's one runner: engines × problems × seeds × noise × budgets → results.

    python benchmarks/tuning/run.py                                  # what `make bench-tuning` runs
    python benchmarks/tuning/run.py --half development --engines hone 'hone:repeats=1' --seeds 5
    python benchmarks/tuning/run.py --report results.json            # re-render results.md only
    python benchmarks/tuning/run.py --compare hone 'hone:gp.X=1' --report results.jsonl lab.jsonl

Every session's row is appended to a cache (``--cache``, JSON lines) as it finishes, so an
interrupted run resumes where it stopped and engines measured at different times share one
table. Quality = share of the attainable gain over the default (suite/problems.py); the
recommendation is judged by its true value. See README.md for what each column means.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "suite"))
SPLIT = HERE / "split.json"
BUDGETS = (30, 60, 120)
NOISES = (0.0, 0.05)
#: a cell with fewer seeds is shown but neither bold nor counted in a comparison (one lucky seed)
MIN_SEEDS = 3
DEFAULT_ENGINES = ("hone", "atune", "tpe", "optuna-gp", "opentuner", "smac", "random")
#: split.json's groups: the two halves, then "unseen" (problems added after the split, never decided on)
GROUPS = ("development", "held-out", "unseen")


def groups(split: dict[str, Any], order: tuple[str, ...] = GROUPS) -> list[str]:
    """The groups of ``order`` that ``split`` has (a split from before the unseen group has two)."""
    return [g for g in order if g in split]


def load_split() -> dict[str, list[str]]:
    return json.loads(SPLIT.read_text())


def make_split(names: list[str], families: dict[str, str], seed: int = 24) -> dict[str, Any]:
    """Half of each family to development, half held out, at random (once; see README)."""
    rng = random.Random(seed)
    dev: list[str] = []
    held: list[str] = []
    for fam in sorted(set(families.values())):
        members = sorted(n for n in names if families[n] == fam)
        rng.shuffle(members)
        k = len(members) // 2 + (len(members) % 2 if len(dev) <= len(held) else 0)
        dev += members[:k]
        held += members[k:]
    return {"seed": seed, "made": time.strftime("%Y-%m-%d"), "development": sorted(dev), "held-out": sorted(held)}


def parse_engine(text: str) -> tuple[str, dict[str, Any]]:
    """``hone:repeats=1,gp.log_y=false`` → ("hone", {"repeats": 1, "gp.log_y": False})."""
    name, _, rest = text.partition(":")
    settings: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        k, _, v = item.partition("=")
        word = v.lower() in ("true", "false", "null")  # any case: "False" is no string setting
        settings[k] = json.loads(v.lower() if word else v) if word or v[:1] in "-0123456789[" else v
    return name, settings


def job(args: tuple[str, str, int, float, tuple[int, ...]]) -> list[dict[str, Any]]:
    engine, problem_name, seed, noise, budgets = args
    import engines.library  # noqa: F401  (registers the library anchors)
    from engines import anchors, hone_engine
    from problems import all_problems

    problem = all_problems()[problem_name]()
    name, settings = parse_engine(engine)
    rows = []
    if name == "hone":
        outcomes = {b: hone_engine.run(problem, seed, b, noise, settings) for b in budgets}
    else:
        outcomes = anchors.run(name, problem, seed, list(budgets), noise)
    for b, o in outcomes.items():
        best_seen = max((problem.quality(c) for c in o.evaluated), default=0.0)
        rows.append({"engine": engine, "problem": problem_name, "seed": seed, "noise": noise, "budget": b,
                     "quality": problem.quality(o.recommended), "kept_default": o.recommended is None,
                     "changed": sorted(k for k, v in problem.default.items() if o.recommended[k] != v)
                     if o.recommended is not None else [],
                     "best_evaluated": best_seen, "runs": o.runs, "trials": o.trials,
                     "cpu_s": round(o.seconds, 2)})
    return rows


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["engine"], r["problem"], r["seed"], r["noise"], r["budget"])


def read_cache(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out[_key(r)] = r
    return list(out.values())


# ----------------------------------------------------------------------------- report

def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def signed_rank_p(d: list[float]) -> float:
    """Two-sided Wilcoxon signed-rank p of paired differences (1 when all are zero)."""
    from scipy.stats import wilcoxon

    return float(wilcoxon(d, zero_method="zsplit").pvalue) if any(abs(x) > 1e-12 for x in d) else 1.0


def by_seed(rows: list[dict[str, Any]]) -> dict[tuple[str, str, float, int], dict[int, float]]:
    """(engine, problem, noise, budget) → {seed: quality}."""
    out: dict[tuple[str, str, float, int], dict[int, float]] = {}
    for r in rows:
        out.setdefault((r["engine"], r["problem"], r["noise"], r["budget"]), {})[r["seed"]] = r["quality"]
    return out


def ahead_of(q: dict[tuple[str, str, float, int], dict[int, float]], engine: str, others: list[str],
             problem: str, noise: float, budget: int, alpha: float = 0.05) -> list[tuple[str, float, float]]:
    """The engines of ``others`` ahead of ``engine`` on one cell, paired by seed: (engine, mean
    paired difference, signed-rank p) where the difference is positive at p < ``alpha``, on at
    least :data:`MIN_SEEDS` shared seeds. Why: with six engines near a tie, which median is the
    highest is mostly luck; this asks whether any engine is shown to do better."""
    mine = q.get((engine, problem, noise, budget), {})
    out = []
    for e in others:
        theirs = q.get((e, problem, noise, budget), {})
        seeds = sorted(set(mine) & set(theirs))
        if len(seeds) < MIN_SEEDS:
            continue
        d = [theirs[s] - mine[s] for s in seeds]
        p = signed_rank_p(d)
        if statistics.mean(d) > 0 and p < alpha:
            out.append((e, statistics.mean(d), p))
    return out


def cells(rows: list[dict[str, Any]]) -> dict[tuple[str, str, float, int], list[float]]:
    out: dict[tuple[str, str, float, int], list[float]] = {}
    for r in rows:
        out.setdefault((r["engine"], r["problem"], r["noise"], r["budget"]), []).append(r["quality"])
    return out


def report(rows: list[dict[str, Any]], split: dict[str, list[str]]) -> str:
    """results.md: per half, budget and noise, the median quality of each engine per problem."""
    c = cells(rows)
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    engines.sort(key=lambda e: (not e.startswith("hone"), e))
    lines = ["# Tuning suite results", "",
             "Median quality over seeds (share of the attainable gain over the default, judged on the true value "
             "of what each engine recommends; 1 = the optimum, 0 = the default kept). **Bold**: the best median "
             f"of the row. `n` = seeds; a cell of fewer than {MIN_SEEDS} seeds is shown but never bold nor counted. "
             "Generated by `run.py`; README.md explains the columns.", ""]
    lines += goals(c, split, engines, by_seed(rows))
    for half in groups(split):
        probs = [p for p in split[half] if any(k[1] == p for k in c)]  # measured problems only
        for noise in sorted({r["noise"] for r in rows}):
            for budget in sorted({r["budget"] for r in rows}):
                present = [e for e in engines if any((e, p, noise, budget) in c for p in probs)]
                if not present:
                    continue
                lines += [f"## {half}, {budget} runs, noise {100 * noise:g}%", "",
                          "| problem | " + " | ".join(present) + " |", "|---|" + "---|" * len(present)]
                wins = dict.fromkeys(present, 0)
                ties = dict.fromkeys(present, 0)
                meds: dict[str, list[float]] = {e: [] for e in present}
                for p in probs:
                    vals = {e: _median(c.get((e, p, noise, budget), [])) for e in present}
                    seeds = {e: len(c.get((e, p, noise, budget), [])) for e in present}
                    finite = [v for e, v in vals.items() if v == v and seeds[e] >= MIN_SEEDS]
                    top = max(finite) if finite else float("nan")
                    row = []
                    for e in present:
                        v, n = vals[e], seeds[e]
                        if v == v and n >= MIN_SEEDS:
                            meds[e].append(v)
                            if v >= top:
                                wins[e] += 1
                            if v >= top - 0.01:
                                ties[e] += 1
                        best = v >= top and n >= MIN_SEEDS
                        row.append("–" if v != v else (f"**{v:.3f}**" if best else f"{v:.3f}") + f" ({n})")
                    lines.append(f"| {p} | " + " | ".join(row) + " |")
                lines.append("| **median over problems** | " + " | ".join(
                    f"{_median(meds[e]):.3f}" if len(meds[e]) == len(probs) else f"({len(meds[e])} of {len(probs)})"
                    for e in present) + " |")
                lines.append("| best median (within 0.01) | " + " | ".join(
                    f"{wins[e]} ({ties[e]}) of {len(meds[e])}" for e in present) + " |")
                lines.append("")
        lines += noise_cost(c, probs, half, engines)
    return "\n".join(lines) + "\n"


def goals(c: dict[tuple[str, str, float, int], list[float]], split: dict[str, list[str]],
          engines: list[str], q: dict[tuple[str, str, float, int], dict[int, float]], engine: str = "hone",
          budget: int = 60) -> list[str]:
    """The issue's goals for ``engine`` at ``budget`` runs, per half: on how many problems its
    median quality is the best of all engines (and within 0.01 of it), on how many no engine is
    ahead of it paired by seed (:func:`ahead_of`; ``q``), its median over problems against the
    best other engine's, and on how many problems 5% noise costs it at most 0.01."""
    if engine not in engines:
        return []
    out = [f"## Goals: `{engine}` at {budget} runs", "",
           "| half | noise | best median of all engines | within 0.01 of the best | no engine ahead (paired, p < 0.05) "
           "| median over problems (best other engine) | noise costs ≤ 0.01 |", "|---|---|---|---|---|---|---|"]
    behind: list[str] = []
    for half in groups(split, ("held-out", "unseen", "development")):
        probs = [p for p in split[half] if any(k[1] == p for k in c)]  # measured problems only
        for noise in (0.0, 0.05):
            rows, mine_at, clear = [], [], 0
            for p in probs:
                vals = {e: _median(c[(e, p, noise, budget)]) for e in engines
                        if len(c.get((e, p, noise, budget), [])) >= MIN_SEEDS}
                if engine in vals and len(vals) > 1:
                    rows.append((vals[engine], max(v for e, v in vals.items() if e != engine)))
                    mine_at.append(p)
                    ahead = ahead_of(q, engine, [e for e in vals if e != engine], p, noise, budget)
                    clear += not ahead
                    behind += [f"{half}, {100 * noise:g}%: {e} on {p} ({d:+.3f}, p = {pv:.3f})" for e, d, pv in ahead]
            if not rows:
                continue
            others = [e for e in engines if e != engine]
            # another engine's median over the same problems, when it has enough seeds on all of them
            best_other = max(((_median([_median(c[(e, p, noise, budget)]) for p in mine_at]), e) for e in others
                              if all(len(c.get((e, p, noise, budget), [])) >= MIN_SEEDS for p in mine_at)),
                             default=(float("nan"), "–"))
            cost = _noise_pairs(c, engine, probs, budget)
            mine = _median([h for h, _ in rows])
            out.append(f"| {half} | {100 * noise:g}% | {sum(h >= o for h, o in rows)} of {len(rows)} | "
                       f"{sum(h >= o - 0.01 for h, o in rows)} of {len(rows)} | {clear} of {len(rows)} | "
                       f"{mine:.3f} ({best_other[1]} "
                       f"{best_other[0]:.3f}) | " + (f"{sum(n >= f - 0.01 for n, f in cost)} of {len(cost)}"
                                                    if noise and cost else "") + " |")
    out += ["", "Engines ahead of `" + engine + "`, paired by seed (mean difference over the shared seeds, "
            "two-sided signed-rank p, not corrected for the 6 engines compared): "
            + ("; ".join(behind) if behind else "none") + "."]
    return [*out, ""]


def _noise_pairs(c: dict[tuple[str, str, float, int], list[float]], engine: str, probs: list[str],
                 budget: int) -> list[tuple[float, float]]:
    """(median at 5% noise, median noise-free) of ``engine`` per problem where both cells have
    :data:`MIN_SEEDS` seeds."""
    return [(_median(c[(engine, p, 0.05, budget)]), _median(c[(engine, p, 0.0, budget)])) for p in probs
            if min(len(c.get((engine, p, n, budget), [])) for n in (0.05, 0.0)) >= MIN_SEEDS]


def noise_cost(c: dict[tuple[str, str, float, int], list[float]], probs: list[str], half: str,
               engines: list[str]) -> list[str]:
    """Per engine and budget: problems whose median quality under 5% noise is within 0.01 of noise-free."""
    out = [f"### {half}: noise costs at most 1 point (median quality at 5% vs 0%)", "",
           "| engine | " + " | ".join(f"{b} runs" for b in BUDGETS) + " |", "|---|" + "---|" * len(BUDGETS)]
    any_row = False
    for e in engines:
        row = []
        for b in BUDGETS:
            pairs = _noise_pairs(c, e, probs, b)
            row.append(f"{sum(n >= f - 0.01 for n, f in pairs)} of {len(pairs)}" if pairs else "–")
        if any(x != "–" for x in row):
            any_row = True
            out.append(f"| {e} | " + " | ".join(row) + " |")
    return [*out, ""] if any_row else []


# ----------------------------------------------------------------------------- a variant against hone

def compare(rows: list[dict[str, Any]], split: dict[str, Any], base: str, variant: str) -> str:
    """``variant`` against ``base`` on the seeds both have, per half, budget and noise: each problem's
    medians and its paired differences over seeds (Wilcoxon signed-rank, two-sided), then the
    problems' mean differences tested the same way. Why paired: on the rugged problems one session
    moves a median of 10 seeds by 0.2 (docs/decisions/0050-0052), and counting the problems whose
    median moved cannot tell a reshuffled search from a better one."""
    q = by_seed([r for r in rows if r["engine"] in (base, variant)])
    out = [f"# {variant} against {base}", ""]
    for half in groups(split):
        for budget in BUDGETS:
            for noise in NOISES:
                lines, means = [], []
                for prob in split[half]:
                    a, b = q.get((base, prob, noise, budget), {}), q.get((variant, prob, noise, budget), {})
                    seeds = sorted(set(a) & set(b))
                    if len(seeds) < MIN_SEEDS:
                        continue
                    d = [b[s] - a[s] for s in seeds]
                    means.append(statistics.mean(d))
                    ma, mb = statistics.median(a[s] for s in seeds), statistics.median(b[s] for s in seeds)
                    lines.append(f"| {prob} | {len(seeds)} | {ma:.3f} | {mb:.3f} | {means[-1]:+.3f} "
                                 f"| {signed_rank_p(d):.3f} |")
                if not lines:
                    continue
                out += [f"## {half}, {budget} runs, noise {noise:.0%}", "",
                        "| problem | seeds | median (base) | median (variant) | mean paired difference | p |",
                        "|---|---|---|---|---|---|", *lines, "",
                        f"Over {len(means)} problems: mean difference {statistics.mean(means):+.3f}, "
                        f"{sum(m > 0 for m in means)} up and {sum(m < 0 for m in means)} down, "
                        f"p = {signed_rank_p(means):.3f} (signed-rank test of the problems' mean differences).", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", nargs="+", default=list(DEFAULT_ENGINES))
    ap.add_argument("--half", choices=(*GROUPS, "all"), default="all")
    ap.add_argument("--problems", nargs="+")
    ap.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    ap.add_argument("--noise", nargs="+", type=float, default=list(NOISES))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path, default=HERE / "results.jsonl")
    ap.add_argument("--out", type=Path, default=HERE / "results.md")
    ap.add_argument("--report", nargs="*", type=Path, help="only re-render --out from these caches")
    ap.add_argument("--compare", nargs=2, metavar=("BASE", "VARIANT"),
                    help="paired comparison of two engines on the --report caches (default --cache)")
    ap.add_argument("--make-split", action="store_true", help="split the problems once (refused if split.json exists)")
    args = ap.parse_args()

    from problems import all_problems

    if args.make_split:
        if SPLIT.exists():
            sys.exit("split.json exists: the split is made once")
        names = list(all_problems())
        fams = {n: all_problems()[n]().family for n in names}
        SPLIT.write_text(json.dumps(make_split(names, fams), indent=1) + "\n")
        print(SPLIT.read_text())
        return
    split = load_split()
    if args.compare or args.report is not None:
        rows = [r for p in (args.report or [args.cache]) for r in read_cache(p)]
        if args.compare:
            print(compare(rows, split, *args.compare))
            return
        args.out.write_text(report(rows, split))
        print(args.out.read_text())
        return
    probs = args.problems or ([p for g in groups(split) for p in split[g]] if args.half == "all" else split[args.half])
    known = set(all_problems())
    missing = [p for p in probs if p not in known]
    if missing and args.problems:
        sys.exit(f"problems not available here: {', '.join(missing)}")
    if missing:  # a table of the split not measured yet (measure_tables.py NAME): said, then skipped
        print(f"skipped, not available here: {', '.join(missing)} (see README.md)", flush=True)
        probs = [p for p in probs if p in known]
    done = {_key(r) for r in read_cache(args.cache)}
    todo = []
    for e in args.engines:
        for p in probs:
            for noise in args.noise:
                for seed in range(args.seed0, args.seed0 + args.seeds):
                    budgets = tuple(b for b in args.budgets if (e, p, seed, noise, b) not in done)
                    if budgets:
                        todo.append((e, p, seed, noise, budgets))
    print(f"{len(todo)} sessions to run ({len(done)} rows cached in {args.cache})", flush=True)
    started = time.time()
    with args.cache.open("a") as fh, ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for i, rows in enumerate(pool.map(job, todo), 1):
            for r in rows:
                fh.write(json.dumps(r) + "\n")
            fh.flush()
            r0 = rows[0]
            print(f"[{i}/{len(todo)} {time.time() - started:.0f}s] {r0['engine']} {r0['problem']} seed {r0['seed']} "
                  f"noise {r0['noise']}: " + ", ".join(f"{r['budget']}: {r['quality']:.3f}" for r in rows),
                  flush=True)
    rows = read_cache(args.cache)
    args.out.write_text(report(rows, split))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
