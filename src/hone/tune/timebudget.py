"""``hone tune``'s clock: the estimate of a study's duration, and ``--max-time``.

After the baseline hone knows what one run costs here (the baseline's measured time over its
runs, the configuration's apply included) and prints what the rest will take: the trials ×
(warm-up + repeats) runs, the confirmation's rounds × arms, and the ablation's — at most every
knob changed (k + 1 arms), then the baseline, the minimal configuration and the winner (3 arms).

The baseline's runs say little of slow configurations (a compression level, a sync setting):
when the search's trials so far (3 or more) cost 1.5× more or less a run than the estimate
assumed (a restart per configuration, which the baseline's runs never pay, is often that much),
a new estimate line says so (:meth:`TimeBudget.revised`).

With a budget, the search stops before a trial that would not fit, keeping time for the
confirmation and the ablation at the cost per run measured so far (the trials' own, ask and
tell included). Their rounds are planned to take at most half of the time left after the
baseline (the planned rounds when they fit; never fewer than the minimum the paired tests
need for p < 0.05), and each is fitted again to what is really left before it starts. When even
their fewest rounds take more than half, the search keeps its half by giving up, in turn, the
ablation's time (it runs only if the time left allows, as under ``--max-runs``) and all but one
candidate of the confirmation. Every cut is a line of the output and of the result.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hone.core.durations import format_duration
from hone.core.errors import HoneError
from hone.stats.paired import min_rounds_for_alpha

MIN_ROUNDS = min_rounds_for_alpha(0.05)
#: A new estimate when the trials' cost per run strays this factor from the last one stated …
REVISE_FACTOR = 1.5
#: … over this many trials since it was stated.
REVISE_TRIALS = 3
#: Arms of the ablation's second block: the baseline, the minimal configuration, the winner.
FINAL_ARMS = 3


@dataclass
class Plan:
    """The work left after the baseline."""

    trials: int  # trials still to run
    runs_per_trial: int  # warm-up + repeats
    confirm_arms: int  # the candidates and the baseline; 0: no confirmation
    confirm_rounds: int
    ablation_arms: int  # the winner and one arm per changed knob (an upper bound until it is known); 0: none
    ablation_rounds: int
    warmup_rounds: int  # discarded rounds before each interleaved block
    workers: int = 1
    done: int = 0  # trials the study had finished before this session

    def confirm_runs(self, rounds: int, arms: int | None = None) -> int:
        arms = self.confirm_arms if arms is None else arms
        return (rounds + self.warmup_rounds) * arms if arms else 0

    def ablation_runs(self, rounds: int, arms: int | None = None) -> int:
        arms = self.ablation_arms if arms is None else arms
        return (rounds + self.warmup_rounds) * (arms + FINAL_ARMS) if arms else 0


def _done_by(seconds: float) -> str:
    """The wall-clock time ``seconds`` from now: the time of day, with the date when not today."""
    finish = dt.datetime.now() + dt.timedelta(seconds=max(0.0, seconds))
    return finish.strftime("%H:%M:%S") if finish.date() == dt.date.today() else finish.strftime("%Y-%m-%d %H:%M")


class TimeBudget:
    """The session's clock: estimates, the search's stopping rule and the rounds that fit."""

    def __init__(self, max_s: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_s = max_s
        self.clock = clock
        self.start = clock()
        self.per_run = math.nan  # seconds per benchmark run, from the latest measured block
        self.baseline_per_run = math.nan
        self.plan: Plan | None = None
        self.cap = 0  # the most rounds the confirmation and the ablation may use
        self.estimate_s = math.nan  # this session, as planned after the baseline (budget included)
        self.full_estimate_s = math.nan  # the same without the budget
        self.ablation_s = 0.0  # the ablation's part of estimate_s: it runs only for a winner changing 2+ knobs
        self.expected_trials: int | None = None
        self.trial_times: list[float] = []
        self._last: float | None = None
        self._ablation_cap = 0
        self.ablation_reserved = True  # False: the ablation runs only if the time left allows
        self.confirm_arms = 0  # the confirmation's arms the time allows (the plan's, or 2: one candidate)
        self.ablation_skipped: tuple[float, float] | None = None  # (seconds it needs, seconds left)
        self._post_runs = 0  # the confirmation's and the ablation's runs, as estimated
        self._stated: tuple[float, int] = (math.nan, 0)  # the cost per run last stated, and trials then
        self.stopped: str | None = None
        self.cuts: list[str] = []
        self._said = 0
        self.earlier_s = 0.0  # seconds an interrupted session of the same job spent (``--resume``)

    def elapsed(self) -> float:
        return self.clock() - self.start

    def left(self) -> float:
        return math.inf if self.max_s is None else self.max_s - self.earlier_s - self.elapsed()

    def resume(self, earlier_s: float) -> None:
        """A ``--resume`` continues the job's budget: ``earlier_s`` seconds were spent by the
        interrupted session (to its last run). Raises HoneError when nothing is left."""
        self.earlier_s = max(0.0, earlier_s)
        if self.max_s is not None and self.left() <= 0:
            raise HoneError(f"--max-time {format_duration(self.max_s)}: the interrupted session spent "
                            f"{format_duration(self.earlier_s)} of it: nothing is left",
                            hint=f"allow more than {format_duration(self.earlier_s)} (the whole job's time)")

    def note_runs(self, seconds: float, runs: int) -> None:
        """A measured block: ``runs`` benchmark runs took ``seconds`` in all."""
        if runs > 0 and seconds > 0:
            self.per_run = seconds / runs

    def note_baseline(self, baseline: dict[str, Any], seconds: float | None, warmup: int) -> None:
        """The baseline's cost per run: ``seconds`` for its warm-ups and runs when this session
        measured it (apply included), else the wall time of the runs the study stored."""
        runs = baseline.get("runs") or []
        if seconds is not None:
            self.note_runs(seconds, len(runs) + warmup)
        else:
            walls = [float(r["wall_s"]) for r in runs if r.get("wall_s") is not None]
            if walls:
                self.note_runs(sum(walls), len(walls))

    def unsaid(self) -> list[str]:
        """The cuts not reported yet (each is reported once)."""
        new, self._said = self.cuts[self._said:], len(self.cuts)
        return new

    def begin(self, plan: Plan, max_runs: int | None = None) -> str:
        """Plan the rounds, estimate the session and return the estimate line. ``max_runs``: the
        benchmark runs the session may still start (--max-runs): the ablation is counted only
        within what the search and the confirmation leave of them."""
        self.plan = plan
        self.baseline_per_run = self.per_run
        self.cap = max(plan.confirm_rounds, plan.ablation_rounds)
        self.confirm_arms = plan.confirm_arms
        if not math.isfinite(self.per_run):
            return "no estimate: the baseline's run time is unknown"
        t_trial = self.per_run * plan.runs_per_trial / max(1, plan.workers)
        ablation_most = math.inf if max_runs is None else max(
            0, max_runs - plan.trials * plan.runs_per_trial - plan.confirm_runs(plan.confirm_rounds))
        post_runs = plan.confirm_runs(plan.confirm_rounds) + min(plan.ablation_runs(plan.ablation_rounds),
                                                                 ablation_most)
        self._post_runs, self._stated = post_runs, (self.per_run, len(self.trial_times))
        self.full_estimate_s = self.elapsed() + plan.trials * t_trial + post_runs * self.per_run
        self.estimate_s, trials = self.full_estimate_s, plan.trials
        self.ablation_s = min(plan.ablation_runs(plan.ablation_rounds), ablation_most) * self.per_run
        if self.max_s is not None:
            self._plan_cap()
            reserve = self._reserve(self.per_run)
            trials = max(0, min(plan.trials, math.floor((self.left() - reserve) / t_trial)))
            self.estimate_s = self.elapsed() + trials * t_trial + reserve
            self.ablation_s = plan.ablation_runs(min(plan.ablation_rounds, self.cap)) * self.per_run
            self._post_runs = round(reserve / self.per_run) if self.per_run > 0 else 0
        self.expected_trials = trials
        parts = [f"{plan.trials} trial{'s' if plan.trials != 1 else ''} × {plan.runs_per_trial} "
                 f"run{'s' if plan.runs_per_trial != 1 else ''}"
                 + (f" on {plan.workers} workers" if plan.workers > 1 else "")]
        if plan.confirm_arms:
            parts.append(f"confirmation {plan.confirm_runs(min(plan.confirm_rounds, self.cap), self.confirm_arms)}"
                         " runs")
        ablation = min(plan.ablation_runs(min(plan.ablation_rounds, self.cap)), ablation_most)
        if plan.ablation_arms and not self.ablation_reserved:
            parts.append("ablation only if the time left allows")
            self.ablation_s = 0.0
        elif plan.ablation_arms and ablation:
            parts.append(f"ablation ≤ {ablation} runs")
        parts.append(f"~{format_duration(self.per_run)} a run")
        line = (f"~{format_duration(self.estimate_s)} ({', '.join(parts)}), done by "
                f"~{_done_by(self.estimate_s - self.elapsed())}")
        if self.ablation_s > 0:
            line += (f"; ~{format_duration(self.estimate_s - self.ablation_s)} without the ablation (it runs only "
                     "when the winner changes two or more knobs)")
        if self.max_s is not None:
            if trials < plan.trials:
                line += (f"; --max-time {format_duration(self.max_s)}: ~{trials} of the {plan.trials} trials fit "
                         f"(all would take ~{format_duration(self.full_estimate_s)}), the search stops when the "
                         "next one would not")
            else:
                line += f"; within --max-time {format_duration(self.max_s)}"
            if self.earlier_s:
                line += f" ({format_duration(self.earlier_s)} of it spent by the interrupted session)"
        return line

    def _plan_cap(self) -> None:
        """The most rounds that keep the confirmation and the ablation within half of the
        time left (at least the minimum; the planned rounds when they fit). When even the
        minimum does not fit, the ablation is not reserved, then the confirmation keeps one
        candidate: the search keeps its half (a 3-minute budget of 3-second runs once ran no
        trial at all, its time held for a worst-case ablation)."""
        plan = self.plan
        assert plan is not None
        half = self.left() / 2
        first = self._reserve(self.per_run, MIN_ROUNDS)
        if first > half and plan.ablation_arms:
            self.ablation_reserved = False
            self.cuts.append(f"no time kept for the ablation: with the confirmation, even {MIN_ROUNDS} rounds "
                             f"would take ~{format_duration(first)} of the {format_duration(self.left())} --max-time "
                             "leaves after the baseline (the search keeps at least half); it runs if the time "
                             "left allows")
        single = self._reserve(self.per_run, MIN_ROUNDS)
        if single > half and self.confirm_arms > 2:
            self.confirm_arms = 2
            self.cuts.append(f"the confirmation: 1 candidate instead of {plan.confirm_arms - 1} (at {MIN_ROUNDS} "
                             f"rounds: ~{format_duration(single)} of the {format_duration(self.left())} --max-time "
                             "leaves after the baseline; the search keeps at least half)")
        top = max(plan.confirm_rounds, plan.ablation_rounds if self.ablation_reserved else 0)
        for cap in range(top, MIN_ROUNDS - 1, -1):
            self.cap = cap
            if self._reserve(self.per_run) <= half:
                break
        if self.cap < top:
            self.cuts.append(
                f"{self._after()}: at most {self.cap} rounds instead of {top} (at {top} rounds: "
                f"~{format_duration(self._reserve(self.per_run, top))} of the {format_duration(self.left())} "
                "--max-time leaves after the baseline; the search keeps at least half)")

    def _reserve(self, per_run: float, cap: int | None = None) -> float:
        plan = self.plan
        assert plan is not None
        cap = self.cap if cap is None else cap
        runs = plan.confirm_runs(min(plan.confirm_rounds, cap), self.confirm_arms)
        if self.ablation_reserved:
            runs += plan.ablation_runs(min(plan.ablation_rounds, cap))
        return runs * per_run

    def _trial_cost(self) -> tuple[float, float] | None:
        """A trial's seconds (the search's mean so far, else the baseline's runs) and a run's;
        None without --max-time or an estimate."""
        if self.max_s is None or self.plan is None or not math.isfinite(self.per_run):
            return None
        runs = max(1, self.plan.runs_per_trial)
        if self.trial_times:
            t_trial = sum(self.trial_times) / len(self.trial_times)
            return t_trial, t_trial / runs
        return self.per_run * runs, self.per_run

    def trials_left(self) -> int | None:
        """The trials that still fit before :meth:`stop_search` stops the search, at the trials'
        mean time so far (None without --max-time or an estimate)."""
        cost = self._trial_cost()
        if cost is None or cost[0] <= 0:
            return None
        t_trial, per_run = cost
        return max(0, math.floor((self.left() - self._reserve(per_run)) / t_trial))

    def stop_search(self) -> bool:
        """Called before each trial: True when the next one would not fit with time kept for
        the confirmation and the ablation (the reason is :attr:`stopped`)."""
        now = self.clock()
        if self._last is not None:
            self.trial_times.append(now - self._last)
        self._last = now
        cost = self._trial_cost()
        if cost is None:
            return False
        t_trial, per_run = cost
        reserve = self._reserve(per_run)
        left = self.left()
        if left >= t_trial + reserve:
            return False
        after = f" and {self._after()} (~{format_duration(reserve)})" if reserve > 0 else ""
        self.stopped = (f"the next trial (~{format_duration(t_trial)}){after} would not fit in the "
                        f"{format_duration(max(0.0, left))} --max-time leaves")
        return True

    def revised(self) -> str | None:
        """A new estimate line (None: none is due): the search's trials so far cost
        :data:`REVISE_FACTOR`× more or less a run than the last estimate assumed, over
        :data:`REVISE_TRIALS` trials or more since it was made. Called between trials."""
        plan, (stated, at) = self.plan, self._stated
        done = len(self.trial_times)
        if plan is None or plan.workers > 1 or done - at < REVISE_TRIALS or not stated > 0:
            return None
        t_trial = sum(self.trial_times) / done
        per_run = t_trial / max(1, plan.runs_per_trial)
        if 1 / REVISE_FACTOR < per_run / stated < REVISE_FACTOR:
            return None
        self._stated = (per_run, done)
        trials = max(0, (plan.trials if self.expected_trials is None else self.expected_trials) - done)
        rest = min(trials * t_trial + self._post_runs * per_run, max(0.0, self.left()))
        after = " and ".join(w for w, on in (("the confirmation", plan.confirm_arms),
                                              ("the ablation", plan.ablation_arms)) if on)
        return (f"the trials so far took ~{format_duration(per_run)} a run, not ~{format_duration(stated)}: "
                f"~{format_duration(rest)} more ({trials} trial{'s' if trials != 1 else ''} at most"
                + (f", then {after}" if after else "") + f"), done by ~{_done_by(rest)}")

    def end_search(self) -> None:
        """The search is over: its trials give the cost per run from here on."""
        if self._last is not None and self.stopped is None:
            self.trial_times.append(self.clock() - self._last)
        self._last = None
        if self.trial_times and self.plan is not None:
            self.note_runs(sum(self.trial_times), len(self.trial_times) * max(1, self.plan.runs_per_trial))

    def confirm_rounds(self, planned: int, arms: int, ablation_arms: int) -> int:
        """The confirmation's rounds: the planned ones (within the cap) when they and the
        ablation after them fit in the time left, else fewer, never below the minimum."""
        plan = self.plan
        planned = max(planned, MIN_ROUNDS)
        if self.max_s is None or plan is None or not math.isfinite(self.per_run):
            self._ablation_cap = plan.ablation_rounds if plan else 0
            return planned
        c_top, a_top = min(planned, self.cap), min(plan.ablation_rounds, self.cap)
        if not self.ablation_reserved:  # it takes what the confirmation leaves, if that is enough
            ablation_arms = 0
        left = self.left()
        for s in range(max(c_top, a_top), MIN_ROUNDS - 1, -1):
            c, a = min(c_top, s), min(a_top, s)
            need = (plan.confirm_runs(c, arms) + plan.ablation_runs(a, ablation_arms)) * self.per_run
            if need <= left:
                break
        self._ablation_cap = a
        if c < c_top:
            self.cuts.append(f"confirmation: {c} rounds instead of {c_top} ({self._why(left, need)})")
        elif need > left:
            self.cuts.append(f"confirmation: {c} rounds, the fewest the paired test needs ({self._why(left, need)})")
        return c

    def ablation_rounds(self, planned: int, arms: int, least: int = MIN_ROUNDS) -> int:
        """The ablation's rounds for ``arms`` leave-one-out arms, fitted like the confirmation's
        (``least``: the fewest, 1 for runs that repeat identically); 0 when it was not kept time
        for and even ``least`` rounds do not fit (:attr:`ablation_skipped` says why)."""
        plan = self.plan
        planned = max(planned, least)
        if self.max_s is None or plan is None or not math.isfinite(self.per_run):
            return planned
        top = max(least, min(planned, self._ablation_cap or planned))
        left = self.left()
        for a in range(top, least - 1, -1):
            need = plan.ablation_runs(a, arms) * self.per_run
            if need <= left:
                break
        if need > left and not self.ablation_reserved:
            self.ablation_skipped = (need, max(0.0, left))
            self.cuts.append(f"ablation skipped: even {least} round{'s' if least != 1 else ''} take "
                             f"~{format_duration(need)}, --max-time leaves {format_duration(max(0.0, left))}")
            return 0
        if a < top:
            self.cuts.append(f"ablation: {a} round{'s' if a != 1 else ''} instead of {top} ({self._why(left, need)})")
        elif need > left:
            fewest = "the fewest the paired test needs" if least == MIN_ROUNDS else "the fewest there are"
            self.cuts.append(f"ablation: {a} round{'s' if a != 1 else ''}, {fewest} ({self._why(left, need)})")
        return a

    def _after(self) -> str:
        """What the search keeps time for, in words."""
        ablation = self.plan is not None and self.plan.ablation_arms > 0 and self.ablation_reserved
        return "the confirmation and the ablation" if ablation else "the confirmation"

    def _why(self, left: float, need: float) -> str:
        over = f", ~{format_duration(need - left)} over" if need > left else ""
        return (f"--max-time leaves {format_duration(max(0.0, left))}, at ~{format_duration(self.per_run)} a run "
                f"these take ~{format_duration(need)}{over}")

    def to_dict(self, trials_total: int) -> dict[str, Any]:
        """The budget, the estimate and the time spent, for the result document (``trials_total``:
        the study's finished trials)."""
        def num(v: float) -> float | None:
            return v if math.isfinite(v) else None

        done = self.plan.done if self.plan else 0
        return {"max_time_s": self.max_s, "estimate_s": num(self.estimate_s),
                "full_estimate_s": num(self.full_estimate_s), "ablation_estimate_s": num(self.ablation_s),
                "expected_trials": self.expected_trials,
                "per_run_s": num(self.baseline_per_run), "spent_s": self.elapsed(), "spent_earlier_s": self.earlier_s,
                "planned_trials": self.plan.trials if self.plan else None, "trials_run": trials_total - done,
                "search_stopped": self.stopped, "cuts": list(self.cuts)}
