"""The spec: pydantic models and loaders (hone YAML; A-Tune YAML lives in ``atune``)."""

from hone.spec._yaml import format_loc
from hone.spec.loader import LoadedSpec, load_spec
from hone.spec.models import (
    BUILTIN_METRICS,
    Benchmark,
    Extract,
    KnobBase,
    Metric,
    Spec,
    Tune,
    to_argv,
)

__all__ = [
    "BUILTIN_METRICS",
    "Benchmark",
    "Extract",
    "KnobBase",
    "LoadedSpec",
    "Metric",
    "Spec",
    "Tune",
    "format_loc",
    "load_spec",
    "to_argv",
]
