"""Anchors: other tuners on the same problems, seeds, noise and budgets (see the package doc).

Each anchor maximises the problem's score of one noisy run (A-Tune's weighted % change vs the
default). ``trace(problem, seed, budget, noise)`` returns every configuration it evaluated and
the score it observed; :func:`best_prefix` turns a trace into the recommendation at a budget. An
anchor that recommends something else than its best observation (SMAC's intensified incumbent)
returns it as a third element; an anchor whose search depends on the budget (SMAC sizes its
initial design by it) is listed in :data:`PER_BUDGET` and runs one session per budget.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable

from problems import Config, Problem

from . import Outcome

#: (configs, scores) or (configs, scores, the engine's recommendation at the session's budget)
Trace = tuple[list[Config], list[float]] | tuple[list[Config], list[float], Config | None]


def observer(problem: Problem, seed: int, noise: float) -> Callable[[Config], float]:
    """The value an anchor sees for a configuration: the score of one noisy run (seeded)."""
    rng = random.Random(f"anchor:{problem.name}:{seed}:{noise}")

    def observe(cfg: Config) -> float:
        return problem.score(problem.observe(problem.default | cfg, rng, noise))
    return observe


def best_prefix(trace: Trace, budget: int) -> Config | None:
    configs, scores = trace[0], trace[1]
    if not configs:
        return None
    n = min(budget, len(configs))
    i = max(range(n), key=lambda j: scores[j])
    return configs[i]


def random_search(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    rng = random.Random(f"random:{problem.name}:{seed}")
    observe = observer(problem, seed, noise)
    configs = [{k.name: k.uniform(rng) for k in problem.knobs} for _ in range(budget)]
    return configs, [observe(c) for c in configs]


def _hone_search(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    from .hone_engine import search_only

    return search_only(problem, seed, budget, noise)


def _hone_search_ts(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    from .hone_engine import search_only

    return search_only(problem, seed, budget, noise, {"gp.thompson_share": 0.5})


ANCHORS: dict[str, Callable[[Problem, int, int, float], Trace]] = {"random": random_search,
                                                                    "hone-search": _hone_search,
                                                                    "hone-search-ts": _hone_search_ts}
#: anchors whose search depends on the budget: one session per budget instead of prefixes of one
PER_BUDGET: set[str] = set()


def cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children (the anchors' subprocess workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def run(name: str, problem: Problem, seed: int, budgets: list[int], noise: float) -> dict[int, Outcome]:
    """One session of ``name`` to the largest budget (one per budget for :data:`PER_BUDGET`); the
    outcome at every budget."""
    if name in PER_BUDGET:
        return {b: _session(name, problem, seed, b, noise, [b])[b] for b in budgets}
    return _session(name, problem, seed, max(budgets), noise, budgets)


def _session(name: str, problem: Problem, seed: int, budget: int, noise: float,
             budgets: list[int]) -> dict[int, Outcome]:
    started = cpu_seconds()
    trace = ANCHORS[name](problem, seed, budget, noise)
    seconds = cpu_seconds() - started
    configs, scores = trace[0], trace[1]
    own = len(trace) > 2

    def recommended(b: int) -> Config | None:
        if own and b >= budget:
            return trace[2]  # type: ignore[misc]
        return best_prefix(trace, b)
    return {b: Outcome(recommended=recommended(b), runs=min(b, len(configs)), trials=min(b, len(configs)),
                       seconds=seconds, evaluated=configs[:b], observed=scores[:b]) for b in budgets}


def register(name: str, fn: Callable[[Problem, int, int, float], Trace], per_budget: bool = False) -> None:
    ANCHORS[name] = fn
    if per_budget:
        PER_BUDGET.add(name)


