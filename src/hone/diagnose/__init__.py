"""Diagnose: capabilities, ``perf stat`` profiles, flame graphs, bpftrace probes, doctor rules.

Public surface: :func:`probe_capabilities`, :func:`profile_command`, :func:`record_flame`,
:func:`diff_flame`, :func:`run_doctor`. The rest is private to the verbs.
"""

from __future__ import annotations

from hone.diagnose.capabilities import Capabilities, probe_capabilities
from hone.diagnose.flame import diff_flame, record_flame, record_offcpu
from hone.diagnose.profile import ProfileResult, profile_command, profile_pid

__all__ = [
    "Capabilities",
    "ProfileResult",
    "diff_flame",
    "probe_capabilities",
    "profile_command",
    "profile_pid",
    "record_flame",
    "record_offcpu",
]
