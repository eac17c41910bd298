"""hone — a performance-tuning engine for Linux programs and systems.

The pipeline (see DESIGN.md): spec → knobs/run → stats → tune → report.
"""

__version__ = "0.1.0"
