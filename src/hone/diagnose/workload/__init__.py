"""Workload analysis: observe a command, running processes or the machine, and name the workload class.

Public surface: :func:`observe_command`, :func:`observe_pids`, :func:`observe_system` (→ an
:class:`Observation` holding :class:`Signals`), :func:`classify` (signals → an
:class:`Analysis`: traits that hold, classes with scores and evidence, the verdict),
:data:`CLASS_NAMES` (the fixed vocabulary presets refer to), :data:`TRAITS`, :data:`CLASSES`.
"""

from __future__ import annotations

from typing import Any

from hone.diagnose.workload.classes import CLASS_NAMES, CLASSES
from hone.diagnose.workload.classify import Analysis, classify
from hone.diagnose.workload.observe import Observation, observe_command, observe_pids, observe_system
from hone.diagnose.workload.signals import SIGNALS, Signals
from hone.diagnose.workload.traits import TRAITS

ANALYSE_FORMAT = "hone-analyse/1"


def analyse_document(obs: Observation, analysis: Analysis) -> dict[str, Any]:
    """The ``hone-analyse/1`` result (docs/formats.md): how the workload was observed, the
    signals, the traits, every class with its score and evidence, the verdict."""
    return {"format": ANALYSE_FORMAT, **obs.to_json(), **analysis.to_json()}


__all__ = ["ANALYSE_FORMAT", "CLASSES", "CLASS_NAMES", "SIGNALS", "TRAITS", "Analysis", "Observation", "Signals",
           "analyse_document", "classify", "observe_command", "observe_pids", "observe_system"]
