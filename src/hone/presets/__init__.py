"""Presets: versioned knob sets for common workloads, with rationale, source and risk per
setting, resolved with includes (tuned's ``include=``), bound to this machine, applied through
the journal, and verified by measurement (only settings the ablation shows a gain for are kept).

Public API: :func:`load_catalogue`, :func:`for_classes`, :func:`get_preset`, :class:`Preset`.
"""

from hone.presets.catalogue import for_classes, get_preset, load_catalogue, user_dir
from hone.presets.model import CLASSES, RISKS, Preset, Setting

__all__ = ["CLASSES", "RISKS", "Preset", "Setting", "for_classes", "get_preset", "load_catalogue", "user_dir"]
