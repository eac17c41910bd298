"""Looking at an experiment while it grows, without inflating false verdicts: α spending.

An experiment runs its first rounds, and while the verdict is not decisive it doubles the
rounds (a planned look at each doubling) up to a maximum set before it starts — by
``max_rounds``, or by a time budget divided by the time one round took in the warm-up. The
total error rate α is spent over the looks with the Lan-DeMets spending function of Pocock
type, α(t) = α · ln(1 + (e − 1)·t), t = rounds so far / the planned maximum; each look tests
(and draws its CI) at its increment α(t_k) − α(t_{k−1}). Whatever the correlation between
looks, the chance of a false faster/slower/equivalent over all of them is at most their sum,
α (Bonferroni), so no test of ours needs a distribution across looks — the randomization
and rank tests stay exact at each look.

Why Pocock-type and not O'Brien-Fleming: users wait for the answer; O'Brien-Fleming
spends almost nothing early (a 20-round look of a 1000-round plan would need p < 10⁻⁷), so
clear effects would run to the end. Pocock-type stops clear cases at the first looks and
keeps most of α for the last ones. If the budget ends the experiment before the planned
maximum (rounds took longer than planned), the last look spends all that is left: the
timing of looks may change as long as it does not depend on the data, and time does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def spent(alpha: float, t: float) -> float:
    """α spent by information time ``t`` (0 < t ≤ 1): α · ln(1 + (e − 1)·t)."""
    return alpha * math.log(1.0 + (math.e - 1.0) * min(1.0, max(0.0, t)))


@dataclass
class LookPlan:
    """The looks of one experiment: at ``first`` rounds, then doubling up to ``maximum``."""

    first: int
    maximum: int
    alpha: float

    def __post_init__(self) -> None:
        self.maximum = max(self.maximum, self.first)
        self._spent = 0.0

    @property
    def sequential(self) -> bool:
        return self.maximum > self.first

    def next_rounds(self, done: int) -> int | None:
        """The rounds the next look should have (None: the plan is done)."""
        if done >= self.maximum:
            return None
        return min(self.maximum, max(self.first, 2 * done)) if done else self.first

    def alpha_at(self, rounds: int, last: bool = False) -> float:
        """The α of the look at ``rounds`` (call once per look, in order); ``last`` spends
        whatever is left (the final look, whenever it comes)."""
        if not self.sequential:
            return self.alpha
        total = self.alpha if last or rounds >= self.maximum else spent(self.alpha, rounds / self.maximum)
        step = max(total - self._spent, 0.0)
        self._spent = max(self._spent, total)
        return step
