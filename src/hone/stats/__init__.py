"""Statistics: summaries, paired ratios, bootstrap CIs, tests, verdicts. Knows nothing
about Optuna, knobs or processes — numbers in, numbers out."""

from hone.stats.summary import Summary, summarize

__all__ = ["Summary", "summarize"]
