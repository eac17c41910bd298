"""hone — a performance-tuning engine for Linux programs and systems.

The pipeline (README.md, "Layout"; module contracts in docs/CONTRACTS.md):
spec → knobs/run → stats → tune → report.
"""

__version__ = "0.1.0"
