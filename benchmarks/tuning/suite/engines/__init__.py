"""Engines the suite compares: each takes a problem, a seed, a budget in benchmark runs and a
noise level, and names the configuration it would recommend.

* ``hone`` (:mod:`.hone_engine`) — the real ``hone tune --max-runs B`` pipeline; one session per
  budget (its plan depends on the budget).
* Anchors (:mod:`.anchors`) — other tuners, given the problem's score of each noisy run as the
  value to maximise, one run per evaluation; they recommend their best observation, as A-Tune,
  OpenTuner and SMAC report theirs. One session of the largest budget serves every smaller one
  (their searches do not depend on the budget): the recommendation at B is the best of the
  first B evaluations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Config = dict[str, Any]


@dataclass
class Outcome:
    """What one session recommends (None: keep the default) and what it cost."""

    recommended: Config | None
    runs: int
    trials: int
    seconds: float  # CPU seconds of the engine's process
    evaluated: list[Config] = field(default_factory=list)  # every configuration run, in order
    observed: list[float] = field(default_factory=list)  # anchors: the score each run reported
