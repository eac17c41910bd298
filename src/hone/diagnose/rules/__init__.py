"""Doctor rules, one a file. :data:`RULES` maps each rule's name to it, in the order they
are evaluated in (ranking is by score afterwards)."""

from __future__ import annotations

from hone.diagnose.rules.audit import AuditRule
from hone.diagnose.rules.base import (
    DoctorContext,
    Experiment,
    ExperimentVariant,
    Finding,
    Rule,
    Target,
)
from hone.diagnose.rules.context_switches import ContextSwitchRule
from hone.diagnose.rules.filesystem import FilesystemRule
from hone.diagnose.rules.frontend import FrontendRule
from hone.diagnose.rules.ipc import IpcRule
from hone.diagnose.rules.kernel_time import KernelTimeRule
from hone.diagnose.rules.migrations import MigrationRule
from hone.diagnose.rules.miss_ratios import MissRatioRule
from hone.diagnose.rules.off_cpu import OffCpuRule
from hone.diagnose.rules.page_faults import PageFaultRule
from hone.diagnose.rules.small_io import SmallIoRule

RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        KernelTimeRule(), FilesystemRule(), SmallIoRule(), AuditRule(), ContextSwitchRule(), MigrationRule(),
        PageFaultRule(), OffCpuRule(), IpcRule(), MissRatioRule(), FrontendRule(),
    )
}

__all__ = ["RULES", "DoctorContext", "Experiment", "ExperimentVariant", "Finding", "Rule", "Target"]
