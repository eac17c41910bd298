"""``hone tune``'s budget in benchmark runs: ``--max-runs`` (A-Tune's ``iterations``).

Users pay per benchmark run, so every run hone starts counts: the baseline's warm-ups and
repeats, every trial's warm-ups and runs, the confirmation's and the
ablation's rounds (each round, warm-up rounds too, runs every arm once). hone never retries a
failed run; a failed run counts like any other.

Planned up front, before anything runs (like ``--max-time``, :mod:`hone.tune.timebudget`): the
baseline first; then a reserve for the confirmation, and for the ablation when it fits, of at
most a fifth of the budget (``share``) — fewer rounds first (never fewer than the paired tests
need), then no ablation in the reserve, then fewer candidates, down to the smallest confirmation
(one candidate) — and the search gets the rest (docs/decisions/0040-lean-run-budget.md); runs
a trial cap leaves idle go to the reserve too, before anything is cut. Runs
that repeat exactly, and one candidate's runs pooled with the baseline's, need fewer confirmation
rounds (``confirm_min``, docs/decisions/0045, 0046); runs that repeat identically one round an
ablation block (``ablation_min``), run on what the search leaves only (``ablation_reservable``, 0098).
Before each trial the search stops when that trial's runs and the reserve would not fit. The
confirmation and the ablation are fitted again to what is really left. A
budget below the baseline + one trial + the smallest confirmation is refused before anything runs.

The budget is the job's: a session that did not finish (killed, Ctrl-C, an error) leaves its runs
in the study, and the ``--resume`` that continues it has only the rest (``earlier``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hone.core.errors import HoneError
from hone.stats.paired import min_rounds_for_alpha

MIN_ROUNDS = min_rounds_for_alpha(0.05)
#: Arms of the ablation's second block: the baseline, the minimal configuration, the winner.
FINAL_ARMS = 3
PHASES = ("baseline", "search", "confirmation", "ablation")


def _s(n: int) -> str:
    return "" if n == 1 else "s"


@dataclass(frozen=True)
class RunPlan:
    """What the session would run, in benchmark runs."""

    baseline: int  # the baseline's warm-ups + repeats (0: the study has it already)
    trial_first: int  # a trial's runs (warm-up + 1 with one run per trial, else warm-up + repeats)
    confirm_arms: int  # the candidates and the baseline; 0: no confirmation
    confirm_rounds: int
    ablation_arms: int  # leave-one-out arms at most (every knob changed, + the winner); 0: none
    ablation_rounds: int
    warmup_rounds: int  # discarded rounds before each interleaved block
    trials: int  # the most trials this session may run (--trials)
    confirm_min: int = MIN_ROUNDS  # the fewest rounds its test can decide on (fewer for exact runs)
    ablation_min: int = MIN_ROUNDS  # the same for the ablation's (1 for identical runs)
    ablation_reservable: bool = True  # False: the ablation runs only on what the search leaves

    def confirm_runs(self, rounds: int, arms: int) -> int:
        return (max(rounds, self.confirm_min) + self.warmup_rounds) * arms if arms else 0

    def ablation_runs(self, rounds: int, arms: int) -> int:
        return (max(rounds, self.ablation_min) + self.warmup_rounds) * (arms + FINAL_ARMS) if arms else 0

    def pruned_runs(self, rounds: int, arms: int) -> int:
        """The ablation by importance: the baseline, the winner and ``arms`` pruned arms, one block."""
        return (max(rounds, self.ablation_min) + self.warmup_rounds) * (2 + arms) if arms else 0


class RunBudget:
    """Counts every benchmark run by phase and, with ``max_runs``, keeps the session within it."""

    def __init__(self, max_runs: int | None, source: str = "--max-runs", share: float = 0.2) -> None:
        self.max_runs = max_runs
        self.share = share  # of max_runs, at most, for the confirmation (and the ablation) reserve
        self.source = source  # where the budget was given, for the error that refuses it
        self.spent = dict.fromkeys(PHASES, 0)
        self.phase = "baseline"
        self.plan: RunPlan | None = None
        self.confirm_arms = 0  # as reserved
        self.confirm_rounds = 0
        self.ablation_reserved = False
        self.reserve = 0  # runs kept for the confirmation (and the ablation when reserved)
        self.ablation_reserve = 0  # the ablation's part of it
        self.search_runs: int | None = None  # runs the search may use, as planned
        self.stopped: str | None = None
        self.ablation_skipped: tuple[int, int] | None = None  # (runs it needs, runs left) when it did not fit
        self._skip_cut: int | None = None  # the index in cuts of the line that says so
        self.cuts: list[str] = []
        self._plan_said: dict[str, str] = {}  # a plan's cuts by kind: a plan made again replaces them
        self._said = 0
        self.earlier = 0  # runs an interrupted session of the same job spent (``--resume``)
        self.listener: Callable[[int], None] | None = None  # told the job's runs after each run

    @property
    def available(self) -> int | None:
        """This session's runs: the budget less what an interrupted session spent."""
        return None if self.max_runs is None else self.max_runs - self.earlier

    # ---------------------------------------------------------------- counting

    def count(self, *_: object) -> None:
        """One benchmark run of the current phase (a callback for every run hone starts)."""
        self.spent[self.phase] += 1
        if self.listener is not None:
            self.listener(self.earlier + self.total)

    @property
    def total(self) -> int:
        return sum(self.spent.values())

    def left(self) -> int | None:
        available = self.available
        return None if available is None else available - self.total

    def unsaid(self) -> list[str]:
        new, self._said = self.cuts[self._said:], len(self.cuts)
        return new

    # ---------------------------------------------------------------- planning

    @staticmethod
    def minimum(plan: RunPlan) -> int:
        """The fewest runs a session can do with: the baseline, one trial, the smallest confirmation."""
        return plan.baseline + plan.trial_first + (plan.confirm_runs(plan.confirm_min, 2) if plan.confirm_arms else 0)

    def begin(self, plan: RunPlan) -> str | None:
        """Plan the session (see the module docstring) and return the plan's line (None without
        a budget). Raises HoneError when ``max_runs`` is below :meth:`minimum`."""
        self.plan = plan
        self.confirm_arms, self.confirm_rounds = plan.confirm_arms, max(plan.confirm_rounds, plan.confirm_min)
        self.ablation_reserved = plan.ablation_arms > 0
        avail = self.available
        if avail is None:
            return None
        need = self.minimum(plan)
        if avail < need:
            parts = [f"the baseline ({plan.baseline} run{_s(plan.baseline)})" if plan.baseline else "",
                     f"one trial ({plan.trial_first} run{_s(plan.trial_first)})",
                     f"the smallest confirmation ({plan.confirm_runs(plan.confirm_min, 2)} runs: {plan.confirm_min}"
                     + (f" + {plan.warmup_rounds} warm-up" if plan.warmup_rounds else "")
                     + " rounds × 2 arms)" if plan.confirm_arms else ""]
            parts = [p for p in parts if p]
            listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
            if self.earlier:
                raise HoneError(f"{self.source}: {self.max_runs} benchmark runs, {self.earlier} of them spent by the "
                                f"interrupted session: the {avail} left are too few: {listed} need at least {need}",
                                hint=f"allow {self.earlier + need} runs or more (the whole job's), or --confirm 0")
            raise HoneError(f"{self.source}: {self.max_runs} benchmark runs are too few: {listed} need at least "
                            f"{need}", hint=f"allow {need} runs or more, or --confirm 0 to skip the confirmation")
        self._plan_reserve()
        self.search_runs = avail - plan.baseline - self.reserve
        expected = min(plan.trials, self.search_runs // plan.trial_first)
        self._note_trial_cap(self.search_runs - plan.trials * plan.trial_first)
        search = f"search ≤ {self.search_runs} (~{expected} trial{_s(expected)} of {plan.trial_first} run" \
                 f"{_s(plan.trial_first)}"
        parts = ([f"baseline {plan.baseline}"] if plan.baseline else []) + [search + ")"]
        if self.confirm_arms:
            parts.append(f"confirmation {plan.confirm_runs(self.confirm_rounds, self.confirm_arms)} "
                         f"({self.confirm_rounds} round{_s(self.confirm_rounds)} × {self.confirm_arms} arms"
                         + (f" + {plan.warmup_rounds} warm-up" if plan.warmup_rounds else "") + ")")
        if plan.ablation_arms:
            parts.append(f"ablation ≤ {self.ablation_reserve}"
                         if self.ablation_reserved else "ablation only if the runs left allow it")
        if self.earlier:
            return (f"≤ {avail} benchmark runs (--max-runs {self.max_runs}, {self.earlier} spent by the interrupted "
                    f"session): {', '.join(parts)}")
        return f"≤ {self.max_runs} benchmark runs (--max-runs): {', '.join(parts)}"

    def _plan_cut(self, kind: str, text: str | None) -> None:
        """The plan's cut of ``kind`` is now ``text`` (None: there is none). A plan made again (after
        the baseline) updates the one an earlier plan gave, in place, or takes it back."""
        old = self._plan_said.pop(kind, None)
        at = self.cuts.index(old) if old is not None and old in self.cuts else None
        if text is None:
            if at is not None:
                del self.cuts[at]
                self._said -= at < self._said
            return
        self._plan_said[kind] = text
        if at is None:
            self.cuts.append(text)
        else:
            self.cuts[at] = text

    def _note_trial_cap(self, idle: int) -> None:
        """A run budget the user pays for, partly left idle by a trial cap: a cut that says so
        before anything runs."""
        assert self.plan is not None
        n = self.plan.trials
        self._plan_cut("trial cap", None if idle <= 0 else
                       f"--max-runs {self.max_runs}: the trial cap holds the search to {n} trial{_s(n)} (--trials, "
                       f"or tune.trials in the spec); the search's other {idle} run{_s(idle)} go to the "
                       "confirmation and the ablation only as far as they need them (raise the cap to search "
                       "with them)")

    def replan(self, **changes: int | bool) -> str | None:
        """Plan again with ``changes`` to the plan (fields of :class:`RunPlan`), after the baseline
        showed what a trial needs; the runs already spent stay spent. Returns the new plan's line
        (None without a budget)."""
        if self.plan is None:
            return None
        plan = dataclasses.replace(self.plan, **changes)  # type: ignore[arg-type]
        if self.max_runs is None:
            self.plan = plan
            self.confirm_arms = plan.confirm_arms
            return None
        return self.begin(plan)

    def _reserve_for(self, arms: int, rounds: int, ablation: bool) -> int:
        plan = self.plan
        assert plan is not None
        runs = plan.confirm_runs(min(plan.confirm_rounds, rounds), arms)
        if ablation:
            runs += plan.ablation_runs(min(plan.ablation_rounds, rounds), plan.ablation_arms)
        return runs

    def _plan_reserve(self) -> None:
        """The confirmation's (and the ablation's) reserve: within ``share`` of the budget when
        possible — fewer rounds, then no ablation, then fewer candidates."""
        plan = self.plan
        avail = self.available
        assert plan is not None and avail is not None
        if not plan.confirm_arms:
            self.reserve, self.ablation_reserved = 0, False
            self._plan_cut("reserve", None)
            return
        # runs a trial cap leaves idle cost the search nothing: the reserve may have them as well
        idle = avail - plan.baseline - plan.trials * plan.trial_first
        cap = max(int(self.share * avail), idle)
        least = plan.confirm_min
        top = max(plan.confirm_rounds, plan.ablation_rounds, least)
        options = ([(plan.confirm_arms, r, True) for r in range(top, least - 1, -1)]
                   if plan.ablation_arms and plan.ablation_reservable else [])
        options += [(plan.confirm_arms, r, False) for r in range(max(plan.confirm_rounds, least), least - 1, -1)]
        options += [(a, least, False) for a in range(plan.confirm_arms - 1, 1, -1)]
        arms, rounds, ablation = next((o for o in options if self._reserve_for(*o) <= cap), (2, least, False))
        self.confirm_arms, self.confirm_rounds = arms, min(max(plan.confirm_rounds, least), rounds)
        self.ablation_reserved = ablation
        self.reserve = self._reserve_for(arms, rounds, ablation)
        self.ablation_reserve = self.reserve - self._reserve_for(arms, rounds, False)
        full = self._reserve_for(plan.confirm_arms, top, bool(plan.ablation_arms) and plan.ablation_reservable)
        if self.reserve >= full:
            self._plan_cut("reserve", None)
        else:
            what = [f"{arms - 1} candidate{_s(arms - 1)} instead of {plan.confirm_arms - 1}"
                    if arms < plan.confirm_arms else "",
                    f"{self.confirm_rounds} rounds instead of {max(plan.confirm_rounds, least)}"
                    if self.confirm_rounds < max(plan.confirm_rounds, least) else "",
                    "the ablation not reserved (it runs only if the runs left allow it)"
                    if plan.ablation_arms and not ablation else ""]
            pct = f"{100 * self.share:g}% of the budget"
            share, most = (f"the {cap} runs the trial cap leaves",) * 2 if cap == idle else (pct, "at most " + pct)
            label = f"--max-runs {self.max_runs}" + (f" ({avail} left)" if self.earlier else "")
            self._plan_cut("reserve", f"{label}: {', '.join(w for w in what if w)} (all would take "
                           f"{full} runs; the confirmation gets {most}, the search the rest)"
                           if self.reserve <= cap else
                           f"{label}: the smallest confirmation ({self.reserve} runs) takes more "
                           f"than {share}")

    # ---------------------------------------------------------------- the search

    def trials_cap(self, done: int) -> int:
        """The study's trial budget for :func:`hone.tune.study.run_trials` (``done``: trials the
        study had): each trial costs at least one run."""
        plan = self.plan
        assert plan is not None
        if self.search_runs is None:
            return done + plan.trials
        return done + min(plan.trials, self.search_runs)

    def stop_search(self) -> bool:
        """Asked before each trial: True when its first runs and the reserve would not fit."""
        left = self.left()
        if left is None or self.plan is None:
            return False
        if left - self.reserve >= self.plan.trial_first:
            return False
        self.stopped = (f"the next trial ({self.plan.trial_first} run{_s(self.plan.trial_first)}) and the runs kept "
                        f"for what follows ({self.reserve}) would not fit in the {left} --max-runs leaves")
        return True

    # ---------------------------------------------------------------- after the search

    def confirmation(self, arms: int, rounds: int, ablation_arms: int) -> tuple[int, int]:
        """The confirmation's arms and rounds: ``rounds`` when they and, if reserved, the ablation
        (``ablation_arms`` leave-one-out arms; 0: none) fit in the runs left — more than the reserve's
        when the search stopped early (a trial cap) — else fewer rounds, then fewer candidates (never
        fewer than 2 arms)."""
        plan, left = self.plan, self.left()
        least = plan.confirm_min if plan is not None else MIN_ROUNDS
        rounds = max(rounds, least)
        if left is None or plan is None:
            return arms, rounds
        reserved = min(rounds, self.confirm_rounds)  # a cut below this is news; the plan said the rest
        reserved_ablation = self.ablation_reserved and ablation_arms
        ablation = plan.ablation_runs(plan.ablation_min, ablation_arms) if reserved_ablation else 0
        for extra in dict.fromkeys((ablation, 0)):  # keep the ablation's runs if possible
            for a in range(arms, 1, -1):
                for r in range(rounds, least - 1, -1):
                    if plan.confirm_runs(r, a) + extra <= left:
                        if a < arms or r < reserved:
                            self.cuts.append(f"confirmation: {a - 1} candidate{_s(a - 1)}, {r} round{_s(r)} "
                                             f"({plan.confirm_runs(r, a)} runs; --max-runs leaves {left})")
                        return a, r
        self.cuts.append(f"confirmation skipped: the smallest needs {plan.confirm_runs(least, 2)} runs, "
                         f"--max-runs leaves {left}")
        return 0, 0

    def ablation(self, rounds: int, arms: int, least: int = MIN_ROUNDS) -> int | None:
        """The ablation's rounds for ``arms`` leave-one-out arms (counted with its second block),
        fewer when they do not fit, never fewer than ``least``; None when even the fewest do not
        (it is skipped)."""
        plan, left = self.plan, self.left()
        rounds = max(rounds, least)
        if left is None or plan is None:
            return rounds
        for r in range(rounds, least - 1, -1):
            if plan.ablation_runs(r, arms) <= left:
                if r < rounds:
                    self.cuts.append(f"ablation: {r} round{_s(r)} instead of {rounds} "
                                     f"({plan.ablation_runs(r, arms)} runs at most; --max-runs leaves {left})")
                return r
        self.ablation_skipped, self._skip_cut = (plan.ablation_runs(least, arms), left), len(self.cuts)
        rounds_need = f"{least} round needs" if least == 1 else f"{least} rounds need"
        self.cuts.append(f"ablation skipped: even {rounds_need} up to {self.ablation_skipped[0]}"
                         f" runs, --max-runs leaves {left}")
        return None

    def pruned(self, rounds: int, most: int, least: int = MIN_ROUNDS) -> tuple[int, int] | None:
        """The ablation by importance's rounds and pruned arms (up to ``most``) when leave-one-out
        did not fit: ``rounds`` with as many arms as fit, else fewer rounds (rounds decide, arms
        only refine); None when not even one arm at the fewest rounds fits (the ablation is then
        skipped as it was).
        Only what is left is spent: reserving it took runs from the search and lost quality
        on the tuning suite (docs/decisions/0096)."""
        plan, left = self.plan, self.left()
        if plan is None or most < 1:
            return None
        rounds = max(rounds, least)
        if left is None:
            return rounds, most
        fits = [(r, a) for r in range(rounds, least - 1, -1) for a in range(most, 0, -1)
                if plan.pruned_runs(r, a) <= left]
        if not fits:
            return None
        r, a = fits[0]
        text = (f"the baseline, the winner and {a} pruned configuration{_s(a)}, {r} round{_s(r)} "
                f"({plan.pruned_runs(r, a)} runs)")
        if self.ablation_skipped is not None and self._skip_cut is not None:
            self.cuts[self._skip_cut] = (f"ablation by importance: leave-one-out needs up to "
                                         f"{self.ablation_skipped[0]} runs, --max-runs leaves {left}: {text}")
        else:
            self.cuts.append(f"ablation by importance: {text}; --max-runs leaves {left}")
        self.ablation_skipped = None  # the winner is ablated after all
        return r, a

    def to_dict(self) -> dict[str, Any]:
        """The result document's part: the budget and the runs spent by phase."""
        plan = self.plan
        planned = None
        if self.max_runs is not None and plan is not None and self.search_runs is not None:
            planned = {"baseline": plan.baseline, "search": self.search_runs,
                       "confirmation": self.reserve - self.ablation_reserve, "ablation": self.ablation_reserve}
        return {"max_runs": self.max_runs, "runs_spent": dict(self.spent), "runs_total": self.total,
                "runs_planned": planned, "runs_earlier": self.earlier}
