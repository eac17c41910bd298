"""``--sampler gp`` (and ``auto``): Gaussian-process Bayesian optimisation on hone's encoding.

One concern a module: :mod:`.settings` (every switch and constant, one frozen object),
:mod:`.encoding` (knobs → levels → model inputs: ordered value lists and int ranges as an index
scaled to [0, 1], ``log`` ranges in log space, categoricals one-hot), :mod:`.model` (the
scikit-learn GP: Matérn 5/2 with a length scale per input and an estimated noise term; exact
measurements stay exact), :mod:`.acquisition` (log expected improvement, Thompson samples),
:mod:`.candidates` (Latin-hypercube starts, random points, trust-region points around the best
observation, single-knob neighbours, line probes), :mod:`.ranking` (the posterior mean's order of
evaluated configurations) and :mod:`.sampler` (the Optuna sampler that puts them together).

The loop: the baseline ``hone tune`` measured (:data:`ATTR_BASELINE_POINT`) as the first
observation, a few seeded Latin-hypercube starts (the first too: before any trial completes, the
space comes from :data:`ATTR_SPACE`), then EI maximised over candidates — every
configuration when the discrete space is small, else random points, trust-region points,
neighbours of the best few and a short hill-climb on EI; a seeded coin makes every other
suggestion a Thompson sample over the same candidates instead. The objective is modelled in log
when every value is positive, else by its ranks, so a few catastrophic values cannot flatten the
model (failed trials enter just beyond the worst). When the measurements are noisy (the study's
:data:`ATTR_NOISE_CV` that ``hone tune`` stores from its baseline repeats), in spaces too large
to enumerate every 6th suggestion from 30 observations on is a line probe.
Configurations already measured, failed or running are never suggested again (running trials of
fleet workers enter the model as a constant liar). Infeasible trials (Optuna constraints) enter
the model at the worst feasible value. Everything is a function of the study's trials and
``(seed, trial number)``: same seed, same observations, same suggestion. Multi-objective studies
are handed to the ``fallback`` sampler.
"""

from hone.tune.gp.acquisition import log_expected_improvement
from hone.tune.gp.candidates import trust_region_length
from hone.tune.gp.encoding import Column, columns, enumerable, model_columns
from hone.tune.gp.model import ATTR_INTERRUPTED
from hone.tune.gp.sampler import ATTR_BASELINE_POINT, ATTR_NOISE_CV, ATTR_SPACE, ATTR_START, HoneGPSampler
from hone.tune.gp.settings import GPSettings

__all__ = ["ATTR_BASELINE_POINT", "ATTR_INTERRUPTED", "ATTR_NOISE_CV", "ATTR_SPACE", "ATTR_START", "Column",
           "GPSettings", "HoneGPSampler", "columns", "enumerable", "log_expected_improvement", "model_columns",
           "trust_region_length"]
